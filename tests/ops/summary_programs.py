"""Summary ops built and run with any TF1-style module ``tf``: tests/record_tf_reference.py records
TensorFlow's results into summary_expected.py, test_summary_ops.py runs them with sparseflow.

Serialized summaries are compared byte for byte (hex), images by their decoded pixels (PNG
encoders may differ in compression), audio clips byte for byte (WAV is uncompressed).
"""

import struct
import zlib

import numpy as np


def decode_png(data: bytes) -> np.ndarray:
    """The pixels of an 8-bit, non-interlaced PNG as ``[height, width * channels]`` uint8."""
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0, header
    bpp = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        prev = out[y - 1] if y else np.zeros(width * bpp, np.int32)
        cur = out[y]
        for x in range(width * bpp):
            a = cur[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = a
            elif kind == 2:
                pred = b
            elif kind == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + pred) & 0xFF
    return out.astype(np.uint8)


def error_line(e) -> str:
    """The line of an OpError's message that states the problem (TensorFlow wraps it in others)."""
    for line in e.message.splitlines():
        if line and not line.startswith(("Graph execution error", "Detected at", " ", "\t", "Node:")):
            return line
    return ""


def _inputs():
    rs = np.random.RandomState(3)
    hist = np.concatenate([rs.randn(50).astype(np.float32) * 3, [0.0, 0.0, 1e-13, -2.5, 1e6]]).astype(np.float32)
    img_f = rs.randn(2, 3, 4, 3).astype(np.float32)
    img_pos = np.abs(rs.randn(1, 2, 3, 1)).astype(np.float32) * 5
    img_u8 = rs.randint(0, 256, size=(3, 2, 2, 4)).astype(np.uint8)
    img_nan = img_f[:1].copy()
    img_nan[0, 0, 0, 0] = np.nan
    img_nan[0, 1, 1, 2] = np.inf
    audio = (np.sin(np.linspace(0, 20, 2 * 30 * 2)).reshape(2, 30, 2) * 1.2).astype(np.float32)
    return hist, img_f, img_pos, img_u8, img_nan, audio


def summaries(tf):
    """Names, types, tags and values of every summary op, and their errors."""
    hist, img_f, img_pos, img_u8, img_nan, audio = _inputs()
    out = {}
    with tf.Graph().as_default():
        ops = {"scalar": tf.summary.scalar("loss", tf.constant(0.25))}
        with tf.name_scope("train"):
            ops["scalar_family"] = tf.summary.scalar("acc", tf.constant(3, tf.int64), family="fam")
        ops["scalar_again"] = tf.summary.scalar("loss", tf.constant(-1.5, tf.float64))
        ops["histogram"] = tf.summary.histogram("weights", tf.constant(hist))
        ops["histogram_empty"] = tf.summary.histogram("empty", tf.zeros([0]))
        ops["histogram_ints"] = tf.summary.histogram("ints", tf.constant([1, 2, 2, 3, -7], tf.int32))
        ops["image"] = tf.summary.image("imgs", tf.constant(img_f), max_outputs=2)
        ops["image_positive"] = tf.summary.image("pos", tf.constant(img_pos))
        ops["image_uint8"] = tf.summary.image("u8", tf.constant(img_u8), max_outputs=2)
        ops["image_nonfinite"] = tf.summary.image("nan", tf.constant(img_nan), max_outputs=1)
        ops["audio"] = tf.summary.audio("snd", tf.constant(audio), 8000, max_outputs=3)
        ops["audio_mono"] = tf.summary.audio("mono", tf.constant(audio[:, :, 0]), 16000.0, max_outputs=1)
        ops["text"] = tf.summary.text("note", tf.constant(["hello", "world"]))
        ops["tensor"] = tf.summary.tensor_summary("tens", tf.constant([[1.5, 2.0], [3.0, 4.0]]),
                                                  summary_description="desc", display_name="Tens")
        ops["tensor_int"] = tf.summary.tensor_summary("tens2", tf.constant([1, 2], tf.int64))
        ops["merge"] = tf.summary.merge([ops["scalar"], ops["scalar_family"]])
        ops["merge_all"] = tf.summary.merge_all()
        out["names"] = {k: [t.op.name, t.op.type] for k, t in ops.items()}
        out["collection"] = [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]
        with tf.Session() as sess:
            values = sess.run(ops)
            for key, blob in sorted(values.items()):
                s = tf.Summary.FromString(blob)
                entries = []
                for v in s.value:
                    if v.HasField("image"):
                        pixels = decode_png(v.image.encoded_image_string)
                        entries.append([v.tag, v.image.height, v.image.width, v.image.colorspace,
                                        pixels.ravel().tolist()])
                    elif v.HasField("audio"):
                        a = v.audio
                        entries.append([v.tag, a.sample_rate, a.num_channels, a.length_frames, a.content_type,
                                        a.encoded_audio_string.hex()])
                    else:
                        entries.append([v.tag, v.SerializeToString().hex()])
                out[key] = entries
            errors = {
                "histogram_nan": tf.summary.histogram("h", tf.constant([1.0, np.nan])),
                "histogram_inf": tf.summary.histogram("hi", tf.constant([np.inf, 1.0])),
                "merge_duplicate": tf.summary.merge([ops["scalar"], ops["scalar"]]),
                "scalar_vector": tf.summary.scalar("v", tf.constant([1.0, 2.0])),
                "image_two_channels": tf.summary.image("im2", tf.zeros([1, 2, 2, 2])),
            }
            for key, t in sorted(errors.items()):
                try:
                    sess.run(t)
                    out["error_" + key] = None
                except tf.errors.OpError as e:
                    out["error_" + key] = [type(e).__name__, error_line(e)]
    return out
