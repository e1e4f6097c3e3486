"""Image codecs: decoding PNG, JPEG, GIF and BMP (each op recognizes any format, as TensorFlow 2's),
encoding PNG and JPEG, JPEG shapes and crops, and the ``is_jpeg`` / ``decode_image`` wrappers.

Decoded pixels are compared exactly. Encoded bytes depend on the encoder's settings (zlib level and
row filters, JPEG Huffman tables and headers), so the entries' ``canonical`` compares what they
decode to: a PNG's size, type and pixels (read here), a JPEG's pixels (read by Pillow).

Inputs: PNGs and BMPs written here (8 and 16 bits, gray, gray+alpha, RGB, RGBA, palette, top-down
rows), JPEGs and a two-frame GIF stored below (written once by Pillow); bad data, truncated data,
wrong channel counts, crops outside the image, contents that are not scalars.
"""

from __future__ import annotations

import base64
import io
import struct
import zlib

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png_bytes(pixels: np.ndarray, color_type: int, depth: int = 8, extra: bytes = b"", filt: int = 0) -> bytes:
    """A PNG of ``pixels`` ([h, w, samples] or [h, w] palette indices), every row with filter ``filt``
    (0 none, 1 sub)."""
    h = pixels.shape[0]
    samples = pixels.astype(">u2") if depth == 16 else pixels.astype(np.uint8)
    rows = samples.reshape(h, -1).view(np.uint8).astype(np.int64)
    if filt == 1:
        bpp = max(1, rows.shape[1] // (pixels.shape[1]))
        rows = np.concatenate([rows[:, :bpp], (rows[:, bpp:] - rows[:, :-bpp]) % 256], axis=1)
    raw = np.concatenate([np.full((h, 1), filt), rows], axis=1).astype(np.uint8).tobytes()
    header = struct.pack(">IIBBBBB", pixels.shape[1], h, depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + extra + _chunk(b"IDAT", zlib.compress(raw)) +
            _chunk(b"IEND", b""))


def bmp_bytes(pixels: np.ndarray, top_down: bool = False) -> bytes:
    """An uncompressed 24- or 32-bit BMP of RGB(A) ``pixels`` [h, w, 3 or 4]."""
    h, w, c = pixels.shape
    row = ((8 * c * w + 31) // 32) * 4
    bgr = np.concatenate([pixels[..., 2::-1], pixels[..., 3:]], axis=-1).astype(np.uint8)
    rows = bgr if top_down else bgr[::-1]
    body = b"".join(r.tobytes().ljust(row, b"\0") for r in rows)
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, 8 * c, 0, len(body), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + 40 + len(body), 0, 0, 54) + info + body


def png_content(values: np.ndarray) -> np.ndarray:
    """PNG bytes replaced by (width, height, bit depth, color type, unfiltered samples): equal images
    written with other zlib settings or row filters compare equal."""
    def one(data: bytes) -> bytes:
        pos, idat, ihdr = 8, b"", None
        while pos < len(data):
            n = struct.unpack(">I", data[pos:pos + 4])[0]
            kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
            pos += 12 + n
            if kind == b"IHDR":
                ihdr = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT":
                idat += body
        w, h, depth, ctype = ihdr[:4]
        bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype] * depth // 8
        raw, stride = zlib.decompress(idat), w * bpp
        out, prev = bytearray(), [0] * stride
        for r in range(h):
            kind, line, cur = raw[r * (stride + 1)], raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)], []
            for i in range(stride):
                a, up, c = (cur[i - bpp] if i >= bpp else 0), prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + up - c
                pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                paeth = a if pa <= pb and pa <= pc else up if pb <= pc else c
                cur.append((line[i] + (0, a, up, (a + up) // 2, paeth)[kind]) & 255)
            out += bytes(cur)
            prev = cur
        return repr((w, h, depth, ctype)).encode() + bytes(out)

    return np.array([one(bytes(v)) for v in values.reshape(-1)], dtype=object).reshape(values.shape)


def jpeg_pixels(values: np.ndarray) -> np.ndarray:
    """JPEG bytes replaced by the size and pixels they decode to (read by Pillow, in sparseflow's tests)."""
    from PIL import Image

    def one(data: bytes) -> bytes:
        im = Image.open(io.BytesIO(bytes(data)))
        return repr((im.mode, im.size)).encode() + im.tobytes()

    return np.array([one(v) for v in values.reshape(-1)], dtype=object).reshape(values.shape)


_RGB_JPEG = (
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMU"
    "FRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQU"
    "FBQUFBQUFBT/wAARCAAMABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUF"
    "BAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVW"
    "V1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi"
    "4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAEC"
    "AxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVm"
    "Z2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq"
    "8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD5Q8H/AAN+5/o/6V7j4P8Agb9z/R/0r3Hwf4R0z5P3Fe4eD/COmfJ+4r5rDZtUPJ4A8QMX"
    "7m5//9k="
)
_GRAY_JPEG = (
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAUDBAQEAwUEBAQFBQUGBwwIBwcHBw8LCwkMEQ8SEhEPERETFhwXExQaFRERGCEYGh0d"
    "Hx8fExciJCIeJBweHx7/wAALCAAMABABAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUF"
    "BAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVW"
    "V1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi"
    "4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/APIv+FSf9Ov/AI7R/wAKk/6df/Ha+2P+Ea0n/n3o/wCEa0n/AJ96/9k="
)
_PROGRESSIVE_JPEG = (
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAx"
    "NDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDRgyIRwhMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIy"
    "MjIyMjIyMjL/wgARCAAIAAgDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAb/xAAUAQEAAAAAAAAAAAAAAAAAAAAD/9oA"
    "DAMBAAIQAxAAAAGeBH//xAAWEAADAAAAAAAAAAAAAAAAAAAAAwT/2gAIAQEAAQUCXMf/xAAXEQADAQAAAAAAAAAAAAAAAAAAAgMS"
    "/9oACAEDAQE/AY3fJ//EABYRAQEBAAAAAAAAAAAAAAAAAAEAAv/aAAgBAgEBPwE03//EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAI"
    "AQEABj8Cf//EABUQAQEAAAAAAAAAAAAAAAAAAABh/9oACAEBAAE/IYv/2gAMAwEAAgADAAAAEA//xAAWEQADAAAAAAAAAAAAAAAA"
    "AAAAESH/2gAIAQMBAT8QX0//xAAVEQEBAAAAAAAAAAAAAAAAAAAAEf/aAAgBAgEBPxCJ/8QAFhAAAwAAAAAAAAAAAAAAAAAAADHB"
    "/9oACAEBAAE/EESf/9k="
)
_GIF = (
    "R0lGODlhCAAGAIIAAFpaSjVaOEs8OA9QIzUoJ1oKLjUKHA8KCyH/C05FVFNDQVBFMi4wAwEAAAAh+QQACgAAACwAAAAACAAGAAAI"
    "JAAPCDRgoIBBgQcIGiwgkIBDARAHSCQAMaLEAAEAaLyIUSOAgAAh+QQBCgAIACwAAAAACAAGAILw9fXL9ePh1+Ol687Lw9LwpdnL"
    "pcelpbYIJAABCAxAcMAAgQAKGhTAUAABgwMaEph44ECBiwYMVLSIUWPFgAA7"
)


def _b64(text):
    return base64.b64decode("".join(text))


RGB_JPEG, GRAY_JPEG, PROGRESSIVE_JPEG, GIF = (_b64(t) for t in (_RGB_JPEG, _GRAY_JPEG, _PROGRESSIVE_JPEG, _GIF))

_Y, _X = np.mgrid[0:5, 0:7]
RGB8 = np.stack([_X * 30, _Y * 50, (_X + _Y) * 19], -1).astype(np.uint8)
RGBA8 = np.concatenate([RGB8, (RGB8[..., :1] + 40)], -1).astype(np.uint8)
GRAY16 = ((_X * 9000 + _Y * 701) % 65536).astype(np.uint16)[..., None]
PALETTE = _chunk(b"PLTE", bytes([0, 0, 0, 255, 0, 0, 10, 200, 30, 40, 50, 250]))

PNG_RGB = png_bytes(RGB8, 2)
PNG_RGB_SUB = png_bytes(RGB8, 2, filt=1)
PNG_RGBA = png_bytes(RGBA8, 6)
PNG_GRAY = png_bytes(RGB8[..., 1:2], 0)
PNG_GRAY_ALPHA = png_bytes(RGBA8[..., 2:4], 4)
PNG_GRAY16 = png_bytes(GRAY16, 0, depth=16)
PNG_PALETTE = png_bytes((_X + _Y) % 4, 3, extra=PALETTE)
PNG_PALETTE_TRNS = png_bytes((_X + _Y) % 4, 3, extra=PALETTE + _chunk(b"tRNS", bytes([0, 128])))
BMP24 = bmp_bytes(RGB8)
BMP32 = bmp_bytes(RGBA8)
BMP_TOP_DOWN = bmp_bytes(RGB8[:, :5], top_down=True)


def s(data: bytes) -> np.ndarray:
    return np.array(data, dtype=object)


_NONE = (None,)


def _samples(op, extra=()):
    """The decode samples every decode op shares (each op recognizes every format)."""
    return [Sample("png_rgb", {"contents": s(PNG_RGB)}), Sample("jpeg_rgb", {"contents": s(RGB_JPEG)}),
            Sample("bad_data", {"contents": s(b"not an image at all")}),
            Sample("not_scalar", {"contents": np.array([PNG_RGB, PNG_RGB], dtype=object)})] + list(extra)


def _decode_image(tf, contents, **attrs):
    return tf.image.decode_image(contents, **attrs)


def _is_jpeg(tf, contents):
    return tf.image.is_jpeg(contents)


def _channels(name, data, channels, **attrs):
    return Sample(name, {"contents": s(data)}, {"channels": channels, **attrs})


ENTRIES = [
    OpEntry("DecodePng", _samples("DecodePng", [
        Sample("png_sub_filter", {"contents": s(PNG_RGB_SUB)}),
        Sample("png_rgba", {"contents": s(PNG_RGBA)}), Sample("png_gray", {"contents": s(PNG_GRAY)}),
        Sample("png_gray_alpha", {"contents": s(PNG_GRAY_ALPHA)}),
        Sample("png_palette", {"contents": s(PNG_PALETTE)}),
        Sample("png_palette_transparency", {"contents": s(PNG_PALETTE_TRNS)}),
        Sample("png_gray16", {"contents": s(PNG_GRAY16)}, {"dtype": "uint16"}),
        Sample("png_gray16_as_uint8", {"contents": s(PNG_GRAY16)}),
        Sample("png_rgb_as_uint16", {"contents": s(PNG_RGB)}, {"dtype": "uint16"}),
        _channels("rgb_to_gray", PNG_RGB, 1), _channels("rgba_to_gray", PNG_RGBA, 1),
        _channels("rgba_to_rgb", PNG_RGBA, 3), _channels("gray_to_rgb", PNG_GRAY, 3),
        _channels("gray_alpha_to_rgba", PNG_GRAY_ALPHA, 4), _channels("rgb_to_rgba", PNG_RGB, 4),
        _channels("gray16_to_rgb", PNG_GRAY16, 3, dtype="uint16"),
        _channels("two_channels", PNG_RGB, 2),
        Sample("bmp", {"contents": s(BMP24)}),
        Sample("gif", {"contents": s(GIF)}),
        Sample("truncated", {"contents": s(PNG_RGB[:60])}),
    ]), dtypes=_NONE),
    OpEntry("DecodeJpeg", _samples("DecodeJpeg", [
        Sample("gray", {"contents": s(GRAY_JPEG)}), Sample("progressive", {"contents": s(PROGRESSIVE_JPEG)}),
        _channels("rgb_to_gray", RGB_JPEG, 1), _channels("gray_to_rgb", GRAY_JPEG, 3),
        _channels("four_channels", RGB_JPEG, 4),
        Sample("ratio2", {"contents": s(RGB_JPEG)}, {"ratio": 2}),
        Sample("ratio4_gray", {"contents": s(GRAY_JPEG)}, {"ratio": 4}),
        Sample("ratio3", {"contents": s(RGB_JPEG)}, {"ratio": 3}),
        Sample("truncated", {"contents": s(RGB_JPEG[:200])}),
        Sample("accurate_dct", {"contents": s(RGB_JPEG)}, {"dct_method": "INTEGER_ACCURATE"}),
        Sample("no_fancy_upscaling", {"contents": s(RGB_JPEG)}, {"fancy_upscaling": False}),
        Sample("accurate_no_fancy", {"contents": s(RGB_JPEG)}, {"dct_method": "INTEGER_ACCURATE",
                                                                "fancy_upscaling": False}),
        Sample("fast_dct_ratio2", {"contents": s(RGB_JPEG)}, {"dct_method": "INTEGER_FAST", "ratio": 2}),
        Sample("gif", {"contents": s(GIF)}), Sample("bmp", {"contents": s(BMP24)}),
    ]), dtypes=_NONE),
    OpEntry("DecodeAndCropJpeg", [
        Sample("inside", {"contents": s(RGB_JPEG), "crop_window": np.array([2, 3, 5, 6], np.int32)}),
        Sample("gray_channels3", {"contents": s(GRAY_JPEG), "crop_window": np.array([0, 0, 12, 4], np.int32)},
               {"channels": 3}),
        Sample("outside", {"contents": s(RGB_JPEG), "crop_window": np.array([8, 0, 5, 4], np.int32)}),
        Sample("bad_window", {"contents": s(RGB_JPEG), "crop_window": np.array([0, 0, 2], np.int32)}),
    ], dtypes=_NONE),
    OpEntry("ExtractJpegShape", [
        Sample("rgb", {"contents": s(RGB_JPEG)}), Sample("gray", {"contents": s(GRAY_JPEG)}),
        Sample("int64", {"contents": s(PROGRESSIVE_JPEG)}, {"output_type": "int64"}),
        Sample("png", {"contents": s(PNG_RGB)}),
    ], dtypes=_NONE),
    OpEntry("DecodeGif", [
        Sample("two_frames", {"contents": s(GIF)}), Sample("bad_data", {"contents": s(b"GIF89a garbage")}),
        Sample("png", {"contents": s(PNG_RGB)}),
    ], dtypes=_NONE),
    OpEntry("DecodeBmp", [
        Sample("bmp24", {"contents": s(BMP24)}), Sample("bmp32", {"contents": s(BMP32)}),
        Sample("top_down", {"contents": s(BMP_TOP_DOWN)}), _channels("bmp32_to_rgb", BMP32, 3),
        _channels("bmp24_to_rgba", BMP24, 4), Sample("truncated", {"contents": s(BMP24[:80])}),
        Sample("png", {"contents": s(PNG_RGB)}),
    ], dtypes=_NONE),
    OpEntry("DecodeImage", [
        Sample("png", {"contents": s(PNG_RGBA)}), Sample("jpeg", {"contents": s(RGB_JPEG)}),
        Sample("gif", {"contents": s(GIF)}), Sample("bmp", {"contents": s(BMP24)}),
        Sample("gif_first_frame", {"contents": s(GIF)}, {"expand_animations": False}),
        Sample("png_float", {"contents": s(PNG_RGB)}, {"dtype": "float32"}),
        Sample("png16_float", {"contents": s(PNG_GRAY16)}, {"dtype": "float32"}),
        Sample("jpeg_uint16", {"contents": s(GRAY_JPEG)}, {"dtype": "uint16"}),
        Sample("gif_uint16", {"contents": s(GIF)}, {"dtype": "uint16"}),
        Sample("bmp_uint16", {"contents": s(BMP24)}, {"dtype": "uint16"}),
        Sample("jpeg_float", {"contents": s(RGB_JPEG)}, {"dtype": "float32"}),
        Sample("gray_png_as_rgb", {"contents": s(PNG_GRAY)}, {"channels": 3}),
        Sample("gif_gray", {"contents": s(GIF)}, {"channels": 1}),
        Sample("unknown", {"contents": s(b"\x00\x01\x02\x03 data")}),
    ], dtypes=_NONE),
    OpEntry("DecodeImage", [
        Sample("png_float64", {"contents": s(PNG_RGB)}, {"dtype": "float64"}),
        Sample("jpeg_channels", {"contents": s(RGB_JPEG)}, {"channels": 1, "expand_animations": False}),
        Sample("gif", {"contents": s(GIF)}),
    ], name="decode_image", build=_decode_image, dtypes=_NONE),
    OpEntry("Substr", [
        Sample("jpeg", {"contents": s(RGB_JPEG)}), Sample("png", {"contents": s(PNG_RGB)}),
        Sample("batch", {"contents": np.array([RGB_JPEG, PNG_RGB, b"\xff\xd8"], dtype=object)}),
    ], name="is_jpeg", build=_is_jpeg, dtypes=_NONE),
    OpEntry("EncodePng", [
        Sample("rgb", {"image": T(RGB8)}), Sample("rgba", {"image": T(RGBA8)}),
        Sample("gray", {"image": T(RGB8[..., :1])}), Sample("gray_alpha", {"image": T(RGBA8[..., 2:])}),
        Sample("best_compression", {"image": T(RGB8)}, {"compression": 9}),
        Sample("no_compression", {"image": T(RGB8)}, {"compression": 0}),
        Sample("five_channels", {"image": T(np.zeros((2, 2, 5)))}),
        Sample("rank2", {"image": T(np.zeros((2, 2)))}),
    ], dtypes=("uint8", "uint16"), canonical=png_content),
    OpEntry("EncodeJpeg", [
        Sample("rgb", {"image": RGB8}), Sample("gray", {"image": RGB8[..., :1]}),
        Sample("quality50", {"image": RGB8}, {"quality": 50}),
        Sample("no_chroma_downsampling", {"image": RGB8}, {"chroma_downsampling": False}),
        Sample("progressive_optimized", {"image": RGB8}, {"progressive": True, "optimize_size": True}),
        Sample("gray_format", {"image": RGB8[..., :1]}, {"format": "grayscale"}),
        Sample("format_mismatch", {"image": RGB8}, {"format": "grayscale"}),
        Sample("two_channels", {"image": RGBA8[..., :2]}),
        Sample("bad_quality", {"image": RGB8}, {"quality": 101}),
    ], dtypes=_NONE, canonical=jpeg_pixels),
    OpEntry("EncodeJpegVariableQuality", [
        Sample("q30", {"images": RGB8, "quality": np.int32(30)}),
        Sample("q100_gray", {"images": RGB8[..., 1:2], "quality": np.int32(100)}),
        Sample("quality_vector", {"images": RGB8, "quality": np.array([30, 40], np.int32)}),
    ], dtypes=_NONE, canonical=jpeg_pixels),
]
