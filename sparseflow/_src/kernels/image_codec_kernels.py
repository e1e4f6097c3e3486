"""CPU kernels of the image codecs.

JPEGs are decoded by simplejpeg (libjpeg-turbo, as TensorFlow's: its fast integer DCT with fancy
upsampling by default, ``dct_method="INTEGER_ACCURATE"`` and ``fancy_upscaling`` as asked, so the
pixels are TensorFlow's), PNGs and GIFs by Pillow, JPEGs encoded by Pillow (libjpeg). Both are
imported when a kernel first runs, so sparseflow works without them until an image is coded. BMP
(uncompressed rows) is read here, and PNG is written here (zlib, unfiltered rows). Channel
conversions are TensorFlow's: gray from RGB is libpng's ``(9798 R + 19235 G + 3735 B) >> 15`` for
PNGs and libjpeg's luma for JPEGs, added alpha is opaque, 16-bit PNG samples become 8-bit by their
high byte and 8-bit ones 16-bit by multiplying with 257.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _pil():
    try:
        from PIL import Image
    except ImportError as e:
        raise errors.UnimplementedError(None, None, "decoding PNG and GIF images and encoding JPEGs needs Pillow: "
                                                    "pip install \"sparseflow[image]\" (or pip install pillow)") from e
    return Image


def _simplejpeg():
    try:
        import simplejpeg
    except ImportError as e:
        raise errors.UnimplementedError(None, None, "decoding JPEGs needs simplejpeg: pip install "
                                                    "\"sparseflow[image]\" (or pip install simplejpeg)") from e
    return simplejpeg


def sniff(data: bytes) -> str:
    """'jpeg', 'png', 'gif', 'bmp' or '' by the file's first bytes."""
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:4] in (b"GIF8",):
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return ""


def _contents(value, op_type):
    arr = np.asarray(value, dtype=object)
    if arr.ndim != 0:
        raise _invalid(f"contents must be scalar, got shape [{','.join(map(str, arr.shape))}]")
    data = arr.item()
    if isinstance(data, str):
        data = data.encode("latin-1")
    return bytes(data)


_UNKNOWN = "Unknown image file format. One of JPEG, PNG, GIF, BMP required."


# ---------------------------------------------------------------- channel conversion
def _gray(rgb, fmt):
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    if fmt == "jpeg":  # libjpeg's RGB -> Y (only reached for images Pillow did not decode to gray itself)
        y = (19595 * r + 38470 * g + 7471 * b + 32768) >> 16
    else:  # libpng's png_set_rgb_to_gray with TensorFlow's weights
        y = (9798 * r + 19235 * g + 3735 * b) >> 15
    return y.astype(rgb.dtype)[..., None]


def convert_channels(img, channels, fmt):
    """``img`` [h, w, c] with ``channels`` channels (0: as it is)."""
    c = img.shape[-1]
    if channels in (0, c):
        return img
    opaque = np.iinfo(img.dtype).max
    color = img[..., :3] if c >= 3 else np.repeat(img[..., :1], 3, axis=-1)
    if channels == 1:
        return img[..., :1] if c <= 2 else _gray(color, fmt)
    if channels == 2:
        gray = img[..., :1] if c <= 2 else _gray(color, fmt)
        alpha = img[..., c - 1:] if c in (2, 4) else np.full_like(gray, opaque)
        return np.concatenate([gray, alpha], axis=-1)
    if channels == 3:
        return color
    alpha = img[..., c - 1:] if c in (2, 4) else np.full(img.shape[:-1] + (1,), opaque, img.dtype)
    return np.concatenate([color, alpha], axis=-1)


def _as_dtype(img, dtype, fmt):
    """uint8/uint16/float32 from decoded uint8 or uint16 samples: 8-bit PNG samples become 16-bit ones by
    x * 257 (full range), the other formats' by x * 256, as TensorFlow converts them."""
    dtype = np.dtype(dtype)
    if img.dtype == dtype:
        return img
    if dtype == np.float32:
        return (img.astype(np.float32) * np.float32(1.0 / np.iinfo(img.dtype).max)).astype(np.float32)
    if dtype == np.uint16:
        return img.astype(np.uint16) * np.uint16(257 if fmt == "png" else 256)
    return (img >> 8).astype(np.uint8)


# ---------------------------------------------------------------- per format
def _open(data, what):
    image_mod = _pil()
    try:
        im = image_mod.open(io.BytesIO(data))
        im.load()
    except Exception as e:  # noqa: BLE001 - any decoder failure is bad data
        raise _invalid(f"Invalid {what} data, size {len(data)}: {e}") from e
    return im


def _png(data):
    if len(data) >= 26:
        depth, color_type = data[24], data[25]
        if depth == 16 and color_type in (2, 4, 6):
            raise errors.UnimplementedError(None, None, "16-bit color PNGs cannot be decoded yet (16-bit grayscale "
                                                        "can); convert the image to 8-bit")
    im = _open(data, "PNG")
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    elif im.mode == "1":
        im = im.convert("L")
    elif im.mode in ("L", "RGB") and "transparency" in im.info:
        im = im.convert("LA" if im.mode == "L" else "RGBA")
    arr = np.asarray(im)
    if im.mode.startswith("I"):
        arr = arr.astype(np.uint16)
    return arr[..., None] if arr.ndim == 2 else arr


def jpeg_header(data):
    """(height, width, channels) from a JPEG's header."""
    try:
        h, w, colorspace, _ = _simplejpeg().decode_jpeg_header(data)
    except ValueError as e:
        raise _invalid(f"Invalid JPEG data, size {len(data)}: {e}") from e
    return h, w, {"Gray": 1, "CMYK": 4, "YCCK": 4}.get(colorspace, 3)


def _jpeg(data, channels, ratio=1, fast_dct=True, fancy_upscaling=True, strict=True):
    h, w, stored = jpeg_header(data)
    if stored == 4:
        raise errors.UnimplementedError(None, None, "CMYK JPEGs cannot be decoded yet; convert the image to RGB")
    space = "GRAY" if channels == 1 or (channels == 0 and stored == 1) else "RGB"
    try:
        arr = _simplejpeg().decode_jpeg(data, colorspace=space, fastdct=fast_dct, fastupsample=not fancy_upscaling,
                                        min_height=-(-h // ratio), min_width=-(-w // ratio), min_factor=ratio,
                                        strict=strict)
    except ValueError as e:
        raise _invalid(f"Invalid JPEG data or crop window, data size {len(data)}: {e}") from e
    return arr.reshape(arr.shape[0], arr.shape[1], -1)


def _gif_frames(data):
    im = _open(data, "GIF")
    frames = []
    try:
        for i in range(getattr(im, "n_frames", 1)):
            im.seek(i)
            frames.append(np.asarray(im.convert("RGB")))
    except Exception as e:  # noqa: BLE001
        raise _invalid(f"Invalid GIF data, size {len(data)}: {e}") from e
    return np.stack(frames)


def _bmp(data):
    """An uncompressed 8/24/32-bit BMP as [h, w, 1/3/4] (TensorFlow's reading: BGR(A) rows to RGB(A))."""
    if len(data) < 30 or data[:2] != b"BM":
        raise _invalid(f"Invalid BMP data, size {len(data)}")
    offset = struct.unpack_from("<I", data, 10)[0]
    width, height = struct.unpack_from("<ii", data, 18)
    bpp = struct.unpack_from("<H", data, 28)[0]
    if bpp not in (8, 24, 32) or width <= 0 or height == 0:
        raise _invalid(f"BMP: only 8, 24 and 32 bits per pixel and a positive size are supported, got {bpp} bits "
                       f"and {width} x {height}")
    channels = bpp // 8
    row = ((8 * channels * width + 31) // 32) * 4
    rows = abs(height)
    if offset + row * rows > len(data):
        raise _invalid(f"Invalid BMP data: {rows} rows of {row} bytes from offset {offset} exceed its size "
                       f"{len(data)}")
    pix = np.frombuffer(data, np.uint8, row * rows, offset).reshape(rows, row)[:, :width * channels]
    pix = pix.reshape(rows, width, channels)
    if height > 0:
        pix = pix[::-1]
    if channels >= 3:
        pix = np.concatenate([pix[..., 2::-1], pix[..., 3:]], axis=-1)
    return np.ascontiguousarray(pix)


def decode(data, channels, dtype, op_type, animated=False, jpeg_options=None):
    """The image of ``data`` (any format ``op_type`` accepts)."""
    fmt = sniff(data)
    if fmt == "":
        raise _invalid(_UNKNOWN)
    wrong_op = fmt == "gif" or (fmt == "bmp") != (op_type == "DecodeBmp")
    if wrong_op and op_type not in ("DecodeImage", "DecodeGif"):
        wanted = "decode_bmp" if fmt == "bmp" else f"decode_{fmt}"
        raise _invalid(f"Trying to decode {fmt.upper()} format using {op_type}. Use `{wanted}` or `decode_image` "
                       f"instead.")
    if fmt == "gif":
        if channels not in (0, 3):
            raise _invalid(f"channels must be 0 or 3 for GIF, got {channels}")
        frames = _gif_frames(data)
        return _as_dtype(frames if animated else frames[0], dtype, fmt)
    if fmt == "jpeg":
        img = convert_channels(_jpeg(data, channels, **(jpeg_options or {})), channels, fmt)
    elif fmt == "png":
        img = convert_channels(_png(data), channels, fmt)
    else:
        img = convert_channels(_bmp(data), channels, fmt)
    return _as_dtype(img, dtype, fmt)


def _check_channels(channels, allowed, what):
    if channels not in allowed:
        raise _invalid(f"channels must be {', '.join(map(str, allowed[:-1]))} or {allowed[-1]} for {what}, got "
                       f"{channels}")


def _decoder(allowed, animated_gif=False):
    def factory(node):
        channels = int(node.attrs.get("channels", 0))
        dtype = node.attrs["dtype"].as_numpy_dtype if "dtype" in node.attrs else np.uint8
        expand = bool(node.attrs.get("expand_animations", True))

        def compute(contents):
            _check_channels(channels, allowed, node.op_type)
            data = _contents(contents, node.op_type)
            if node.op_type == "DecodeGif":
                if sniff(data) != "gif":
                    img = decode(data, 3, dtype, node.op_type)
                    return img[None]
                return decode(data, 0, dtype, node.op_type, animated=True)
            return decode(data, channels, dtype, node.op_type, animated=animated_gif and expand)

        return compute

    return factory


register_kernel("DecodePng")(_decoder((0, 1, 3, 4)))
register_kernel("DecodeBmp")(_decoder((0, 1, 3, 4)))
register_kernel("DecodeGif")(_decoder((0,)))
register_kernel("DecodeImage")(_decoder((0, 1, 3, 4), animated_gif=True))


def _jpeg_kernel(crop):
    def factory(node):
        a = node.attrs
        channels, ratio = int(a.get("channels", 0)), int(a.get("ratio", 1))
        method = a.get("dct_method", "")
        method = method.decode() if isinstance(method, bytes) else method
        options = {"ratio": ratio, "fast_dct": method != "INTEGER_ACCURATE",
                   "fancy_upscaling": bool(a.get("fancy_upscaling", True)),
                   "strict": not a.get("try_recover_truncated", False)}

        def compute(contents, crop_window=None):
            _check_channels(channels, (0, 1, 3), node.op_type)
            if ratio not in (1, 2, 4, 8):
                raise _invalid(f"ratio must be 1, 2, 4, or 8, got {ratio}")
            if method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
                raise _invalid(f"dct_method must be one of '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', got '{method}'")
            data = _contents(contents, node.op_type)
            if crop and sniff(data) != "jpeg":
                raise _invalid(_UNKNOWN if not sniff(data) else f"Invalid JPEG data or crop window, data size "
                                                                 f"{len(data)}")
            img = decode(data, channels, np.uint8, node.op_type, jpeg_options=options)
            if crop:
                window = np.asarray(crop_window)
                if window.shape != (4,):
                    raise _invalid(f"crop_window must be a vector of 4 elements, got shape {list(window.shape)}")
                y, x, h, w = (int(v) for v in window)
                if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > img.shape[0] or x + w > img.shape[1]:
                    raise _invalid(f"Invalid JPEG data or crop window: the window [{y}, {x}, {h}, {w}] is not "
                                   f"inside the image of {img.shape[0]} x {img.shape[1]}")
                img = img[y:y + h, x:x + w]
            return np.ascontiguousarray(img)

        return compute

    return factory


register_kernel("DecodeJpeg")(_jpeg_kernel(crop=False))
register_kernel("DecodeAndCropJpeg")(_jpeg_kernel(crop=True))


@register_kernel("ExtractJpegShape")
def _extract_jpeg_shape(node):
    out_dtype = node.attrs["output_type"].as_numpy_dtype

    def compute(contents):
        data = _contents(contents, node.op_type)
        if sniff(data) != "jpeg":
            raise _invalid(f"Invalid JPEG data, size {len(data)}")
        return np.array(jpeg_header(data), dtype=out_dtype)

    return compute


# ---------------------------------------------------------------- encoders
def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def encode_png(image: np.ndarray, compression: int = -1) -> bytes:
    """PNG bytes of a [h, w, 1-4] uint8 or uint16 image (unfiltered rows, zlib level ``compression``)."""
    h, w, c = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    samples = image.astype(">u2") if depth == 16 else image
    rows = np.concatenate([np.zeros((h, 1), np.uint8), samples.reshape(h, -1).view(np.uint8)], axis=1)
    header = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0)
    body = zlib.compress(rows.tobytes(), 6 if compression < 0 else compression)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")


@register_kernel("EncodePng")
def _encode_png(node):
    compression = int(node.attrs.get("compression", -1))

    def compute(image):
        image = np.asarray(image)
        if image.ndim != 3:
            raise _invalid(f"image must be 3-dimensional[{','.join(map(str, image.shape))}]")
        if not 1 <= image.shape[2] <= 4:
            raise _invalid(f"image must have 1, 2, 3, or 4 channels, got {image.shape[2]}")
        if not -1 <= compression <= 9:
            raise _invalid(f"compression should be in [-1,9], got {compression}")
        if image.shape[0] >= 2 ** 31 or image.shape[1] >= 2 ** 31:
            raise _invalid("image too large to encode")
        return np.array(encode_png(np.ascontiguousarray(image), compression), dtype=object)

    return compute


def encode_jpeg(image, quality=95, fmt="", progressive=False, optimize=False, chroma_downsampling=True,
                density_unit="in", x_density=300, y_density=300, xmp=b""):
    image = np.asarray(image)
    if image.ndim != 3:
        raise _invalid(f"image must be 3-dimensional[{','.join(map(str, image.shape))}]")
    c = image.shape[2]
    want = {"": (1, 3), "grayscale": (1,), "rgb": (3,)}[fmt]
    if c not in want:
        raise _invalid(f"image must have {' or '.join(map(str, want))} channels for format '{fmt}', got {c}")
    if not 0 <= quality <= 100:
        raise _invalid(f"quality must be in [0,100], got {quality}")
    if image.shape[0] >= 65536 or image.shape[1] >= 65536 or image.size == 0:
        raise _invalid(f"image must have a positive size below 65536, got {image.shape[0]} x {image.shape[1]}")
    image_mod = _pil()
    im = image_mod.fromarray(np.ascontiguousarray(image[..., 0] if c == 1 else image), "L" if c == 1 else "RGB")
    scale = 2.54 if density_unit == "cm" else 1.0  # Pillow writes dots per inch
    kwargs = {"quality": int(quality), "progressive": bool(progressive), "optimize": bool(optimize),
              "subsampling": 2 if chroma_downsampling else 0,
              "dpi": (round(x_density * scale), round(y_density * scale))}
    if xmp:
        kwargs["xmp"] = xmp
    out = io.BytesIO()
    im.save(out, format="JPEG", **kwargs)
    return out.getvalue()


@register_kernel("EncodeJpeg")
def _encode_jpeg(node):
    a = node.attrs

    def text(v):
        return v.decode() if isinstance(v, bytes) else v

    fmt, unit = text(a.get("format", "")), text(a.get("density_unit", "in"))
    xmp = a.get("xmp_metadata", b"")
    xmp = xmp.encode() if isinstance(xmp, str) else xmp

    def compute(image):
        return np.array(encode_jpeg(image, int(a.get("quality", 95)), fmt, a.get("progressive", False),
                                    a.get("optimize_size", False), a.get("chroma_downsampling", True), unit,
                                    int(a.get("x_density", 300)), int(a.get("y_density", 300)), xmp), dtype=object)

    return compute


@register_kernel("EncodeJpegVariableQuality")
def _encode_jpeg_variable_quality(node):
    def compute(images, quality):
        if np.ndim(quality) != 0:
            raise _invalid(f"quality must be a scalar, got shape [{','.join(map(str, np.shape(quality)))}]")
        return np.array(encode_jpeg(images, int(quality)), dtype=object)

    return compute
