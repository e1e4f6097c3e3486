"""CPU kernels, one module per op family. Importing this package registers all of them."""

from sparseflow._src.kernels import (  # noqa: F401 - imported to register kernels
    accumulator_kernels,
    array_kernels,
    constant_kernels,
    control_flow_kernels,
    core_kernels,
    embedding_kernels,
    feature_kernels,
    fused_kernels,
    io_kernels,
    lookup_kernels,
    math_kernels,
    nn_kernels,
    queue_kernels,
    random_kernels,
    sendrecv_kernels,
    sparse_kernels,
    state_kernels,
    string_kernels,
    training_kernels,
)
