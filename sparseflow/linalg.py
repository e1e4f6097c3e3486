"""``tf.linalg``: public names re-exported from the implementation (TensorFlow's spellings:
``det``, ``inv``, ``diag``, ``band_part``, ``transpose``, ...)."""

# ruff: noqa: F401
from sparseflow._src.ops.array_shape_ops import matrix_transpose
from sparseflow._src.ops.array_shape_ops import matrix_transpose as transpose
from sparseflow._src.ops.clip_ops import global_norm
from sparseflow._src.ops.math_einsum import einsum
from sparseflow._src.ops.math_linalg import adjoint, eye, norm, svd, trace
from sparseflow._src.ops.math_linalg import diag as tensor_diag
from sparseflow._src.ops.math_linalg import diag_part as tensor_diag_part
from sparseflow._src.ops.math_linalg import log_matrix_determinant as slogdet
from sparseflow._src.ops.math_linalg import matrix_band_part as band_part
from sparseflow._src.ops.math_linalg import matrix_determinant as det
from sparseflow._src.ops.math_linalg import matrix_diag as diag
from sparseflow._src.ops.math_linalg import matrix_diag_part as diag_part
from sparseflow._src.ops.math_linalg import matrix_inverse as inv
from sparseflow._src.ops.math_linalg import matrix_set_diag as set_diag
from sparseflow._src.ops.math_linalg_solve import cholesky, cholesky_solve, logdet, matvec, qr
from sparseflow._src.ops.math_linalg_solve import matrix_solve as solve
from sparseflow._src.ops.math_linalg_solve import matrix_solve_ls as lstsq
from sparseflow._src.ops.math_linalg_solve import matrix_square_root as sqrtm
from sparseflow._src.ops.math_linalg_solve import matrix_triangular_solve as triangular_solve
from sparseflow._src.ops.math_linalg_solve import self_adjoint_eig as eigh
from sparseflow._src.ops.math_linalg_solve import self_adjoint_eigvals as eigvalsh
from sparseflow._src.ops.math_matmul import matmul, tensordot
from sparseflow._src.ops.math_misc_ops import cross
from sparseflow._src.ops.nn_norm_ops import l2_normalize
