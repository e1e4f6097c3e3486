"""CPU kernels of the checkpoint ops (SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename/-spec).

They read and write tensor bundles through sparseflow._src.framework.tensor_bundle, a
self-contained module (it imports only the framework layer). Errors keep their class: a missing
tensor is NotFoundError ("Key w2 not found in checkpoint"), damaged files DataLossError naming
the file and the tensor; the runtime adds the op's name and the user's line.
"""

from __future__ import annotations

import os

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework import tensor_bundle as bundle
from sparseflow._src.kernels.registry import register_kernel


def _text(x) -> str:
    if isinstance(x, np.ndarray):
        if x.size != 1:
            raise errors.InvalidArgumentError(None, None, f"Expected a scalar string, got shape {list(x.shape)}.")
        x = x.reshape(()).item()
    if isinstance(x, (bytes, np.bytes_)):
        return bytes(x).decode("utf-8")
    return str(x)


def _make_parent(prefix: str) -> str:
    """Creates the directory of a checkpoint prefix if its own parent exists, as TensorFlow's bundle
    writer does (one level: a deeper missing path stays an error, which Saver reports)."""
    parent = os.path.dirname(prefix)
    if parent and not os.path.isdir(parent) and os.path.isdir(os.path.dirname(parent) or "."):
        try:
            os.mkdir(parent)
        except FileExistsError:
            pass
        except OSError as e:
            raise errors.NotFoundError(None, None, f"Cannot create the directory {parent} of checkpoint prefix "
                                                   f"{prefix}: {e.strerror}") from None
    return prefix


def _texts(x) -> list[str]:
    return [_text(v) for v in np.asarray(x, dtype=object).ravel()]


@register_kernel("SaveV2")
def _save_v2(node):
    dts = [dtypes.as_dtype(d).base_dtype for d in node.attrs["dtypes"]]

    def compute(prefix, tensor_names, shape_and_slices, *tensors):
        names, specs = _texts(tensor_names), _texts(shape_and_slices)
        if not (len(names) == len(specs) == len(tensors)):
            raise errors.InvalidArgumentError(None, None, f"SaveV2 got {len(names)} names, {len(specs)} slice specs "
                                                          f"and {len(tensors)} tensors; they must match.")
        with bundle.BundleWriter(_make_parent(_text(prefix))) as w:
            for name, spec, value, dt in zip(names, specs, tensors, dts):
                if spec.strip():
                    full = [int(d) for d in spec.split(" ")[:-1]]
                    w.add_slice(name, full, spec, value, dt)
                else:
                    w.add(name, value, dt)

    return compute


@register_kernel("RestoreV2")
def _restore_v2(node):
    dts = [dtypes.as_dtype(d).base_dtype for d in node.attrs["dtypes"]]

    def compute(prefix, tensor_names, shape_and_slices):
        names, specs = _texts(tensor_names), _texts(shape_and_slices)
        if not (len(names) == len(specs) == len(dts)):
            raise errors.InvalidArgumentError(None, None, f"RestoreV2 got {len(names)} names and {len(specs)} slice "
                                                          f"specs for {len(dts)} dtypes; they must match.")
        path = _text(prefix)
        with bundle.BundleReader(path) as r:
            missing = [n for n in names if not r.has(n)]
            if missing:
                more = f" (also missing: {', '.join(missing[1:])})" if len(missing) > 1 else ""
                raise errors.NotFoundError(None, None, f"Key {missing[0]} not found in checkpoint {path}{more}")
            out = []
            for name, spec, dt in zip(names, specs, dts):
                saved = r.dtype(name)
                if saved != dt:
                    raise errors.InvalidArgumentError(
                        None, None, f"tensor_name = {name}; expected dtype {dt.name} does not equal original "
                                    f"dtype {saved.name} (checkpoint {path})")
                out.append(r.read_slice(name, spec))
        # A single-output op returns its value itself, not a 1-tuple.
        return out[0] if len(out) == 1 else tuple(out)

    return compute


@register_kernel("MergeV2Checkpoints")
def _merge_v2(node):
    delete_old_dirs = bool(node.attrs.get("delete_old_dirs", True))

    def compute(checkpoint_prefixes, destination_prefix):
        bundle.merge_bundles(_texts(checkpoint_prefixes), _make_parent(_text(destination_prefix)), delete_old_dirs)

    return compute


@register_kernel("ShardedFilename")
def _sharded_filename(node):
    return lambda basename, shard, num_shards: np.array(
        f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}".encode(), dtype=object)


@register_kernel("ShardedFilespec")
def _sharded_filespec(node):
    return lambda basename, num_shards: np.array(f"{_text(basename)}-?????-of-{int(num_shards):05d}".encode(),
                                                 dtype=object)
