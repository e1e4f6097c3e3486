"""Throughput of a TF1 image input pipeline: JPEG bytes -> decode_jpeg -> random crop -> resize to
224 x 224 -> random flip, brightness, contrast -> per_image_standardization, one image per run of a
batch of ``--batch`` images, and of the resize kernels alone.

Prints one JSON line, e.g. ``{"images_per_s": 160.0, "decode_ms": ..., "resize_bilinear_ms": ...,
"resize_bicubic_ms": ..., "resize_area_ms": ..., "batch": 32}`` (medians over ``--runs`` runs after
one warm-up run). Needs the ``image`` extra (Pillow, simplejpeg).

Usage: ``python benchmarks/image_pipeline.py [--batch 32] [--runs 5] [--size 256]``
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import sparseflow as tf  # noqa: E402


def _jpegs(n, size):
    from PIL import Image

    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:size, 0:size]
    out = []
    for i in range(n):
        pixels = np.stack([(x + 7 * i) % 256, (y * 2) % 256, (x + y) % 256], -1).astype(np.uint8)
        pixels = np.clip(pixels.astype(int) + rng.integers(-8, 8, pixels.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
        out.append(buf.getvalue())
    return out


def _median_ms(sess, fetch, feed, runs):
    sess.run(fetch, feed)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(fetch, feed)
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args()
    data = _jpegs(args.batch, args.size)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        contents = tf.placeholder(tf.string, [args.batch])
        images = []
        for i in range(args.batch):
            image = tf.image.convert_image_dtype(tf.image.decode_jpeg(contents[i], channels=3), tf.float32)
            image = tf.random_crop(image, [args.size - 16, args.size - 16, 3])
            image = tf.image.resize_images(image, [224, 224])
            image = tf.image.random_flip_left_right(image)
            image = tf.image.random_brightness(image, 0.1)
            image = tf.image.random_contrast(image, 0.8, 1.2)
            images.append(tf.image.per_image_standardization(image))
        batch = tf.stack(images)
        decoded = tf.stack([tf.image.decode_jpeg(contents[i]) for i in range(args.batch)])
        pixels = tf.placeholder(tf.float32, [args.batch, args.size, args.size, 3])
        resizes = {m: tf.image.resize_images(pixels, [224, 224], method=k)
                   for m, k in (("bilinear", 0), ("bicubic", 2), ("area", 3))}
        with tf.Session() as sess:
            feed = {contents: np.array(data, dtype=object)}
            pipeline_ms = _median_ms(sess, batch, feed, args.runs)
            decode_ms = _median_ms(sess, decoded, feed, args.runs)
            raw = sess.run(decoded, feed).astype(np.float32) / 255
            result = {"images_per_s": round(args.batch / (pipeline_ms / 1000), 1), "pipeline_ms": round(pipeline_ms, 1),
                      "decode_ms": round(decode_ms, 1)}
            for method, op in resizes.items():
                result[f"resize_{method}_ms"] = round(_median_ms(sess, op, {pixels: raw}, args.runs), 1)
    result["batch"] = args.batch
    print(json.dumps(result))


if __name__ == "__main__":
    main()
