"""``tf.strings``: public names re-exported from the implementation (TF1 signatures).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sess.run(tf.strings.join(["a", "b"], separator="-"))
    b'a-b'
"""

from sparseflow._src.ops import string_ops as _string_ops
from sparseflow._src.ops.logging_ops import string_format as format  # noqa: F401, A001 - TensorFlow's name

for _name, _impl in _string_ops.STRINGS_NAMESPACE.items():
    globals()[_name] = getattr(_string_ops, _impl)
del _name, _impl

