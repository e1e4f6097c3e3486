"""``tf.sysconfig``: how sparseflow was built (pure Python: no C++ library to link custom ops to).

Example:
    >>> import sparseflow as tf
    >>> tf.sysconfig.MONOLITHIC_BUILD
    0
"""

# ruff: noqa: F401
from sparseflow._src.platform.build_info import (
    CXX11_ABI_FLAG,
    CXX_VERSION,
    MONOLITHIC_BUILD,
    get_build_info,
    get_compile_flags,
    get_include,
    get_lib,
    get_link_flags,
)
