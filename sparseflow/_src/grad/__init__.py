"""Autodiff: the gradient registry and ``tf.gradients``. Importing it registers every gradient."""

from sparseflow._src.grad import (  # noqa: F401 - imported to register gradient functions
    array_grad,
    array_manip_grad,
    collective_grad,
    control_flow_grad,
    data_flow_grad,
    embedding_grad,
    image_grad,
    io_grad,
    logging_grad,
    lookup_grad,
    math_grad,
    math_grad_linalg_solve,
    math_grad_special,
    nn_grad,
    pass_through,
    sparse_extra_grad,
    sparse_grad,
    spectral_grad,
    state_random_grad,
    string_grad,
)
