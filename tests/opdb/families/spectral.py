"""The FFT family: FFT, IFFT, RFFT, IRFFT over 1, 2 and 3 inner dimensions.

Batches, lengths that crop and that zero-pad the input, odd and even lengths, empty batches and
zero lengths, inputs of too small a rank and ``fft_length`` of the wrong size. The gradients (complex
on one side) are checked against finite differences in tests/grad/test_spectral_grad.py.
"""

from __future__ import annotations

from tests.opdb.spec import OpEntry, Sample, empty, i32, regular

_RANK = {"": 1, "2D": 2, "3D": 3}


def _complex_samples(rank):
    return [
        Sample("single", {"input": regular(*[3, 4, 2][:rank])}),
        Sample("batch", {"input": regular(*[2, 3, 4, 2][: rank + 1])}),
        Sample("empty_batch", {"input": empty(*[0, 3, 2, 2][: rank + 1])}),
        Sample("too_low_rank", {"input": regular(*[3, 2][: rank - 1])}),
    ]


def _real_samples(rank, forward):
    base = [4, 3, 6][-rank:] if forward else [4, 3, 4][-rank:]
    full = [4, 3, 6][-rank:]
    return [
        Sample("natural", {"input": regular(2, *base), "fft_length": i32(full)}),
        Sample("padded", {"input": regular(2, *base), "fft_length": i32([n + 2 for n in full])}),
        Sample("cropped", {"input": regular(2, *base), "fft_length": i32([max(1, n - 1) for n in full])}),
        Sample("odd", {"input": regular(*base), "fft_length": i32(full[:-1] + [5])}),
        Sample("empty_batch", {"input": empty(0, *base), "fft_length": i32(full)}),
        Sample("zero_length", {"input": regular(2, *base), "fft_length": i32(full[:-1] + [0])}),
        Sample("wrong_length_count", {"input": regular(2, *base), "fft_length": i32(full + [2])}),
    ]


def _rfft(op_type):
    def build(tf, input, fft_length):
        pair = tf.complex64 if input.dtype == tf.float32 else tf.complex128
        return getattr(tf.raw_ops, op_type)(input=input, fft_length=fft_length, Tcomplex=pair)

    return build


def _irfft(op_type):
    def build(tf, input, fft_length):
        pair = tf.float32 if input.dtype == tf.complex64 else tf.float64
        return getattr(tf.raw_ops, op_type)(input=input, fft_length=fft_length, Treal=pair)

    return build


ENTRIES = []
# TensorFlow 2.21's RFFT/IRFFT (1-D, 2-D) gradients refuse an fft_length that crops the input or is odd (a
# build-time ValueError, or InvalidArgumentError at run time); sparseflow's gradient is defined there.
_CROPPED_GRAD_DIFFERS = {f"{name}:grad": "TensorFlow's gradient raises for a cropped or odd fft_length; "
                                         "sparseflow's returns one (not yet checked by finite differences there)"
                         for name in ("cropped", "odd")}

for _suffix, _rank in _RANK.items():
    ENTRIES += [
        OpEntry("FFT" + _suffix, _complex_samples(_rank), type_attr="Tcomplex", rtol=1e-5),
        OpEntry("IFFT" + _suffix, _complex_samples(_rank), type_attr="Tcomplex", rtol=1e-5),
        OpEntry("RFFT" + _suffix, _real_samples(_rank, True), type_attr="Treal", build=_rfft("RFFT" + _suffix),
                rtol=1e-5, differs=_CROPPED_GRAD_DIFFERS if _suffix != "3D" else {}),
        OpEntry("IRFFT" + _suffix, _real_samples(_rank, False), type_attr="Tcomplex",
                build=_irfft("IRFFT" + _suffix), rtol=1e-5, differs=_CROPPED_GRAD_DIFFERS if _suffix != "3D" else {}),
    ]
