"""What ``tf.VERSION``, ``tf.version`` and ``tf.sysconfig`` report about this build of sparseflow.

sparseflow is pure Python over NumPy, SciPy and numba: there is no C++ library of its own, so the
compiler is the one that built the running Python, the C++ ABI flag and monolithic-build flag are
0, and there are no headers or library to compile custom ops against (custom kernels are Python
functions registered with ``register_kernel``). GraphDefs it writes carry producer version 27.

Example:
    >>> import sparseflow as tf
    >>> tf.VERSION == tf.__version__, tf.sysconfig.get_build_info()["is_cuda_build"]
    (True, False)
"""

from __future__ import annotations

import platform

from sparseflow._src.version import __version__

__all__ = ["VERSION", "GIT_VERSION", "COMPILER_VERSION", "CXX11_ABI_FLAG", "CXX_VERSION", "MONOLITHIC_BUILD",
           "GRAPH_DEF_VERSION", "GRAPH_DEF_VERSION_MIN_CONSUMER", "GRAPH_DEF_VERSION_MIN_PRODUCER",
           "get_build_info", "get_include", "get_lib", "get_compile_flags", "get_link_flags"]

VERSION = __version__
GIT_VERSION = f"v{__version__}"  # a release's tag (sparseflow records no commit in its package)
COMPILER_VERSION = platform.python_compiler()
CXX11_ABI_FLAG = 0
CXX_VERSION = 0  # no C++ code: no C++ standard
MONOLITHIC_BUILD = 0
GRAPH_DEF_VERSION = 27  # the producer version of GraphDefs sparseflow writes (Graph.graph_def_versions)
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0


def get_build_info() -> dict:
    """The build's facts TensorFlow reports here: no CUDA, no ROCm, no TensorRT, CPU only.

    Example:
        >>> sorted(get_build_info())
        ['is_cuda_build', 'is_rocm_build', 'is_tensorrt_build', 'version']
    """
    return {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False, "version": VERSION}


def _no_native_library(what: str):
    raise NotImplementedError(
        f"tf.sysconfig.{what}(): sparseflow has no C++ headers or library to build custom ops against; its "
        f"kernels are Python functions: register an op with sparseflow._src.framework.op_def.register_op and its "
        f"kernel with sparseflow._src.kernels.registry.register_kernel.")


def get_include():
    _no_native_library("get_include")


def get_lib():
    _no_native_library("get_lib")


def get_compile_flags():
    _no_native_library("get_compile_flags")


def get_link_flags():
    _no_native_library("get_link_flags")
