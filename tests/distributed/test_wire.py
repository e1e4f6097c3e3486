"""wire.py's tensor codec."""

import numpy as np

from sparseflow._src.distributed import wire


def test_a_big_endian_array_goes_as_its_little_endian_dtype():
    big = np.arange(6, dtype=">f4").reshape(2, 3)
    back = wire.tensor_from_proto(wire.tensor_to_proto(big))
    assert back.dtype == np.float32 and np.array_equal(back, big)
