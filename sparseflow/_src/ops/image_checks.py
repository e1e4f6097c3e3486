"""Shape checks shared by the ``tf.image`` composites, as TensorFlow's image functions make them: a
static error when the shape is known to be wrong, an Assert op (run before the image is used) when it
is not known, nothing when it is known to be right.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     image_dimensions(tf.placeholder(tf.float32, [2, None, 4, 3]), 4)[0]
    2
"""

from __future__ import annotations

from sparseflow._src.framework.graph import get_default_graph, name_scope
from sparseflow._src.framework.tensor_conversion import is_tensor as _is_tensor
from sparseflow._src.ops import array_ops, check_ops, core_ops
from sparseflow._src.ops.control_flow_ops import Assert

__all__: list[str] = []


def is_tensor(x) -> bool:
    """A graph value (Tensor or Variable), as opposed to a Python or NumPy number."""
    return _is_tensor(x)


def with_dependencies(dependencies, tensor, name=None):
    """``tensor`` through an Identity that runs after ``dependencies`` (``tensor`` itself when none)."""
    if not dependencies:
        return tensor
    with name_scope(name, "control_dependency", [tensor]) as scope:
        with get_default_graph().control_dependencies(dependencies):
            return core_ops.identity(tensor, name=scope)


def assert_that(cond, error, message):
    """[] when ``cond`` is a true Python value, ``error(message)`` raised when false, [Assert] for a tensor."""
    if is_tensor(cond):
        return [Assert(cond, [message])]
    if not cond:
        raise error(message)
    return []


def image_dimensions(image, rank):
    """The dimensions of ``image``: ints where static, scalar tensors where not."""
    if image.shape.is_fully_defined():
        return image.shape.as_list()
    static = image.shape.with_rank(rank).as_list()
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def check_at_least_3d(image, require_static=True):
    """The checks of an image of rank >= 3 whose inner three dimensions are positive."""
    try:
        shape = image.shape.with_rank(3) if image.shape.ndims is None else image.shape.with_rank_at_least(3)
    except ValueError as e:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.") from e
    if require_static and not shape.is_fully_defined():
        raise ValueError("'image' must be fully defined.")
    inner = shape[-3:]
    if any(d == 0 for d in inner.as_list()):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {shape}")
    if inner.is_fully_defined():
        return []
    return [check_ops.assert_positive(array_ops.shape(image)[-3:], ["inner 3 dims of 'image.shape' must be > 0."]),
            check_ops.assert_greater_equal(array_ops.rank(image), 3,
                                           message="'image' must be at least three-dimensional.")]


def assert_at_least_3d(image):
    return with_dependencies(check_at_least_3d(image, require_static=False), image)


def check_3d(image, require_static=True):
    try:
        shape = image.shape.with_rank(3)
    except ValueError as e:
        raise ValueError(f"'image' (shape {image.shape}) must be three-dimensional.") from e
    if require_static and not shape.is_fully_defined():
        raise ValueError(f"'image' (shape {shape}) must be fully defined.")
    if any(d == 0 for d in shape.as_list()):
        raise ValueError(f"all dims of 'image.shape' must be > 0: {shape}")
    if shape.is_fully_defined():
        return []
    return [check_ops.assert_positive(array_ops.shape(image), ["all dims of 'image.shape' must be > 0."])]


def assert_grayscale(image):
    """``image`` after the checks of a grayscale image (rank >= 2, last dimension 1)."""
    try:
        shape = image.shape.with_rank(2) if image.shape.ndims is None else image.shape.with_rank_at_least(2)
    except ValueError as e:
        raise ValueError(f"A grayscale image (shape {image.shape}) must be at least two-dimensional.") from e
    if shape.is_fully_defined():
        if shape.as_list()[-1] != 1:
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        return image
    checks = [check_ops.assert_equal(array_ops.shape(image)[-1], 1,
                                     message="Last dimension of a grayscale image should be size 1."),
              check_ops.assert_greater_equal(array_ops.rank(image), 3,
                                             message="A grayscale image must be at least two-dimensional.")]
    return with_dependencies(checks, image)


def batched(image):
    """(4-D image, whether the input was already a batch): 3-D and unknown-rank images get a batch of one."""
    shape = image.shape
    if shape.ndims == 3:
        return array_ops.expand_dims(image, 0), False
    if shape.ndims is None:
        image = array_ops.expand_dims(image, 0)
        image.set_shape([None] * 4)
        return image, False
    if shape.ndims != 4:
        raise ValueError(f"'image' (shape {shape}) must have either 3 or 4 dimensions.")
    return image, True


def unbatched(image, is_batch):
    return image if is_batch else array_ops.squeeze(image, axis=[0])
