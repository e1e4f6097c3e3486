"""CPU kernels of Print, StringFormat and PrintV2: TensorFlow's text (tensor_format.py), written to
the running process's Python ``sys.stdout``/``sys.stderr`` (so a caller capturing them sees it), to
the log, or appended to a file.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.kernels.registry import register_kernel
from sparseflow._src.kernels.tensor_format import summarize_value


def _text(value) -> str:
    v = np.asarray(value).item() if not isinstance(value, (bytes, str)) else value
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


@register_kernel("Print", stateful=True)
def _print(node):
    message = node.attrs.get("message", "")
    first_n = node.attrs.get("first_n", -1)
    summarize = node.attrs.get("summarize", 3)
    lock = threading.Lock()
    calls = [0]

    def compute(value, *data):
        if first_n >= 0:
            with lock:
                if calls[0] >= first_n:
                    return value
                calls[0] += 1
        text = message + "".join(f"[{summarize_value(d, summarize)}]" for d in data)
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
        return value

    return compute


@register_kernel("StringFormat")
def _string_format(node):
    template = node.attrs.get("template", "%s")
    placeholder = node.attrs.get("placeholder", "%s")
    summarize = node.attrs.get("summarize", 3)
    pieces = template.split(placeholder)

    def compute(*inputs):
        if len(pieces) - 1 != len(inputs):
            raise errors.InvalidArgumentError(None, None, f"num placeholders in template and num inputs must match: "
                                                          f"{len(pieces) - 1} vs. {len(inputs)}")
        out = [pieces[0]]
        for value, piece in zip(inputs, pieces[1:]):
            out.append(summarize_value(value, summarize, print_v2=True))
            out.append(piece)
        return np.array("".join(out).encode(), dtype=object)

    return compute


@register_kernel("PrintV2", stateful=True)
def _print_v2(node):
    stream = node.attrs.get("output_stream", "stderr")
    end = node.attrs.get("end", "\n")
    log = {"log(info)": logging.info, "log(warning)": logging.warning, "log(error)": logging.error}.get(stream)
    if stream not in ("stdout", "stderr") and log is None and not stream.startswith("file://"):
        raise errors.InvalidArgumentError(None, None, f"{stream} is not a valid value for output_stream (stdout, "
                                                      f"stderr, log(info), log(warning), log(error) or file://...).")

    def compute(text):
        text = _text(text)
        if log is not None:
            log("%s", text)
        elif stream.startswith("file://"):
            with open(stream[len("file://"):], "a") as f:
                f.write(text + end)
        else:
            out = sys.stdout if stream == "stdout" else sys.stderr
            out.write(text + end)
            out.flush()

    return compute
