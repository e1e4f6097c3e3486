"""``tf.nest``: nested structures (lists, tuples, namedtuples, dicts by sorted key) and their leaves.

Example:
    >>> import sparseflow as tf
    >>> tf.nest.flatten({"b": [1, 2], "a": 3}), tf.nest.map_structure(lambda x: x * 2, (1, [2]))
    ([3, 1, 2], (2, [4]))
"""

# ruff: noqa: F401
from sparseflow._src.ops.functional_ops import assert_same_structure, flatten, map_structure, pack_sequence_as
from sparseflow._src.ops.functional_ops import is_sequence as is_nested
