"""The tensor-bundle format: round trips, slices, merging, and refusing damaged or partial files."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes, tensor_codec
from sparseflow._src.framework import tensor_bundle as bundle
from sparseflow._src.framework.tensor_bundle import BundleReader, BundleWriter, merge_bundles
from sparseflow._src.training.checkpoint import checkpoint_management as cm

ALL_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
              "uint32", "uint64", "bool", "complex64", "complex128", "string"]


def _value(dtype_name, shape, seed=0):
    rng = np.random.RandomState(seed)
    dt = dtypes.as_dtype(dtype_name)
    if dt == dtypes.string:
        flat = [("é" * i).encode() + bytes([i % 256, 0, 255]) for i in range(int(np.prod(shape)))]
        return np.array(flat, dtype=object).reshape(shape)
    if dt == dtypes.bool:
        return np.asarray(rng.rand(*shape) > 0.5)
    if dt.is_complex:
        return np.asarray(rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dt.as_numpy_dtype)
    if dt.is_integer:
        info = np.iinfo(dt.as_numpy_dtype)
        return rng.randint(max(info.min, -1000), min(info.max, 1000), size=shape).astype(dt.as_numpy_dtype)
    return np.asarray(rng.randn(*shape)).astype(dt.as_numpy_dtype)


def _write(prefix, tensors):
    with BundleWriter(prefix) as w:
        for name, (value, dt) in tensors.items():
            w.add(name, value, dt)
    return prefix


@pytest.fixture
def sample(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    tensors = {"a/kernel": (np.arange(12, dtype=np.float32).reshape(3, 4), "float32"),
               "b/bias": (np.array([1, 2, 3], dtype=np.int64), "int64"),
               "c/names": (np.array([b"x", b"yz"], dtype=object), "string")}
    return _write(prefix, tensors), tensors


# ------------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("dtype_name", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)])
def test_every_dtype_and_shape_round_trips(tmp_path, dtype_name, shape):
    value = _value(dtype_name, shape)
    prefix = _write(str(tmp_path / "ckpt"), {"t": (value, dtype_name)})
    with BundleReader(prefix) as r:
        got = r.read("t")
        assert r.dtype("t") == dtypes.as_dtype(dtype_name)
        assert r.shape("t") == list(shape)
    assert got.shape == tuple(shape)
    if dtype_name == "string":
        assert got.dtype == object and got.tolist() == value.tolist()
    else:
        assert got.dtype == np.dtype(dtypes.as_dtype(dtype_name).as_numpy_dtype)
        np.testing.assert_array_equal(got, value)


def test_str_elements_are_stored_as_utf8(tmp_path):
    prefix = _write(str(tmp_path / "s"), {"s": (np.array(["ünï", ""], dtype=object), "string")})
    assert BundleReader(prefix).read("s").tolist() == ["ünï".encode(), b""]


def test_read_values_are_private_writable_copies(sample):
    prefix, _ = sample
    r = BundleReader(prefix)
    a = r.read("a/kernel")
    a[0, 0] = 99.0
    assert r.read("a/kernel")[0, 0] == 0.0


def test_files_and_names(sample):
    prefix, tensors = sample
    assert sorted(os.listdir(os.path.dirname(prefix))) == ["model.ckpt.data-00000-of-00001", "model.ckpt.index"]
    r = BundleReader(prefix)
    assert r.names() == sorted(tensors)
    assert r.has("b/bias") and not r.has("nope")
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        r.read("nope")


def test_missing_bundle_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        BundleReader(str(tmp_path / "absent"))


def test_writer_refuses_duplicate_and_bad_names(tmp_path):
    w = BundleWriter(str(tmp_path / "d"))
    w.add("x", np.zeros(2))
    with pytest.raises(ValueError, match="twice"):
        w.add("x", np.ones(2))
    with pytest.raises(ValueError, match="non-empty strings"):
        w.add("", np.ones(2))
    w.abort()
    assert os.listdir(tmp_path) == []


def test_writer_needs_an_existing_directory(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="No such directory"):
        BundleWriter(str(tmp_path / "missing" / "ckpt"))


# ------------------------------------------------------------------------------------ slices
def test_slices_reassemble_into_any_partitioning(tmp_path):
    full = np.arange(24, dtype=np.float32).reshape(6, 4)
    prefix = str(tmp_path / "sliced")
    with BundleWriter(prefix) as w:  # saved from 2 shards
        w.add_slice("emb", [6, 4], "6 4 0,3:-", full[:3])
        w.add_slice("emb", [6, 4], [(3, 3), (0, 4)], full[3:])
    r = BundleReader(prefix)
    assert r.shape("emb") == [6, 4] and r.is_sliced("emb")
    np.testing.assert_array_equal(r.read("emb"), full)
    for start, length in [(0, 2), (2, 2), (4, 2)]:  # read back as 3 shards
        np.testing.assert_array_equal(r.read_slice("emb", f"6 4 {start},{length}:-"), full[start:start + length])
    np.testing.assert_array_equal(r.read_slice("emb", "6 4 1,4:1,2"), full[1:5, 1:3])


def test_whole_tensor_can_be_read_as_a_slice(sample):
    prefix, tensors = sample
    np.testing.assert_array_equal(BundleReader(prefix).read_slice("a/kernel", "3 4 1,2:-"),
                                  tensors["a/kernel"][0][1:3])


def test_uncovered_slice_and_overlaps_are_errors(tmp_path):
    prefix = str(tmp_path / "partial")
    with BundleWriter(prefix) as w:
        w.add_slice("t", [4], "4 0,2", np.zeros(2))
        with pytest.raises(ValueError, match="overlap"):
            w.add_slice("t", [4], "4 1,2", np.zeros(2))
    with pytest.raises(tf.errors.NotFoundError, match="do not cover"):
        BundleReader(prefix).read("t")
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice spec"):
        BundleReader(prefix).read_slice("t", "5 0,2")


@pytest.mark.parametrize("spec", ["4 8 0,2", "4 x -:-", "4 8 0,5:-", "4 8 0,2:9,1"])
def test_bad_slice_specs_are_rejected(spec):
    with pytest.raises(ValueError, match="Bad slice spec"):
        tensor_codec.parse_shape_and_slice(spec)


# ------------------------------------------------------------------------------------ merging
def test_merge_bundles_renames_data_and_writes_one_index(tmp_path):
    a = _write(str(tmp_path / "part-0"), {"x": (np.ones(3, np.float32), None)})
    b = _write(str(tmp_path / "part-1"), {"y": (np.array([b"q"], dtype=object), None)})
    dst = str(tmp_path / "merged")
    merge_bundles([a, b], dst)
    assert sorted(os.listdir(tmp_path)) == ["merged.data-00000-of-00002", "merged.data-00001-of-00002",
                                            "merged.index"]
    r = BundleReader(dst)
    assert r.names() == ["x", "y"] and r.read("y").tolist() == [b"q"]
    np.testing.assert_array_equal(r.read("x"), np.ones(3))


def test_merge_refuses_clashing_names(tmp_path):
    a = _write(str(tmp_path / "a"), {"x": (np.ones(1), None)})
    b = _write(str(tmp_path / "b"), {"x": (np.ones(1), None)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="'x' is in more than one"):
        merge_bundles([a, b], str(tmp_path / "m"))
    assert not bundle.bundle_exists(str(tmp_path / "m"))


# ------------------------------------------------------------------------------------ damage is refused
def _read_all(prefix):
    with BundleReader(prefix) as r:
        return {n: r.read(n) for n in r.names()}


def test_every_single_bit_flip_in_the_index_is_refused(sample):
    prefix, _ = sample
    path = bundle.index_path(prefix)
    original = open(path, "rb").read()
    for pos in range(len(original)):
        damaged = bytearray(original)
        damaged[pos] ^= 1 << (pos % 8)
        open(path, "wb").write(bytes(damaged))
        with pytest.raises(tf.errors.DataLossError, match="model.ckpt.index"):
            _read_all(prefix)


def test_every_truncation_of_the_index_is_refused(sample):
    prefix, _ = sample
    path = bundle.index_path(prefix)
    original = open(path, "rb").read()
    for n in range(len(original)):
        open(path, "wb").write(original[:n])
        with pytest.raises(tf.errors.DataLossError, match="model.ckpt.index"):
            _read_all(prefix)


def test_index_errors_name_the_tensor(sample):
    prefix, _ = sample
    path = bundle.index_path(prefix)
    original = open(path, "rb").read()
    pos = original.index(b"b/bias") + 2  # inside the name field of that entry record
    damaged = bytearray(original)
    damaged[pos] ^= 0x10
    open(path, "wb").write(bytes(damaged))
    with pytest.raises(tf.errors.DataLossError, match=r"model\.ckpt\.index is corrupt: tensor entry 2 of 3"):
        _read_all(prefix)
    open(path, "wb").write(original[:original.index(b"c/names") - 20])
    with pytest.raises(tf.errors.DataLossError, match=r"truncated or corrupt after tensor 'b/bias'"):
        _read_all(prefix)


def test_every_bit_flip_in_the_data_is_refused_naming_file_and_tensor(sample):
    prefix, tensors = sample
    path = bundle.data_path(prefix, 0, 1)
    original = open(path, "rb").read()
    entries = {e.name: e for e in bundle.parse_index("i", open(bundle.index_path(prefix), "rb").read())[1]}
    for pos in range(len(original)):
        owner = [n for n, e in entries.items() if e.offset <= pos < e.offset + e.size]
        damaged = bytearray(original)
        damaged[pos] ^= 0x80
        open(path, "wb").write(bytes(damaged))
        if pos < 32:  # the data file header
            with pytest.raises(tf.errors.DataLossError, match="does not belong to index"):
                _read_all(prefix)
        elif owner:
            with pytest.raises(tf.errors.DataLossError, match=f"{path}.*'{owner[0]}' fails its CRC-32"):
                _read_all(prefix)
        else:  # alignment padding between tensors: never read
            assert set(_read_all(prefix)) == set(tensors)


def test_truncated_data_names_file_and_tensor(sample):
    prefix, _ = sample
    path = bundle.data_path(prefix, 0, 1)
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-3])
    r = BundleReader(prefix)
    np.testing.assert_array_equal(r.read("a/kernel"), np.arange(12).reshape(3, 4))
    with pytest.raises(tf.errors.DataLossError, match=f"{path} is truncated: tensor 'c/names'"):
        r.read("c/names")


def test_data_file_of_another_save_is_refused(tmp_path, sample):
    prefix, _ = sample
    other = _write(str(tmp_path / "other"), {"a/kernel": (np.zeros((3, 4), np.float32), None)})
    os.replace(bundle.data_path(other, 0, 1), bundle.data_path(prefix, 0, 1))
    with pytest.raises(tf.errors.DataLossError, match="does not belong to index .* 'a/kernel'"):
        BundleReader(prefix).read("a/kernel")


def test_missing_data_file_is_refused(sample):
    prefix, _ = sample
    os.remove(bundle.data_path(prefix, 0, 1))
    with pytest.raises(tf.errors.DataLossError, match="is missing .*tensor 'b/bias'"):
        BundleReader(prefix).read("b/bias")


def test_newer_format_version_is_refused(sample):
    prefix, _ = sample
    path = bundle.index_path(prefix)
    raw = bytearray(open(path, "rb").read())
    raw[8] = 99
    open(path, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="format version 99"):
        BundleReader(prefix)


def test_checkpoint_modules_never_unpickle():
    import sparseflow._src.training.checkpoint as pkg

    folder = os.path.dirname(pkg.__file__)
    for name in os.listdir(folder):
        if name.endswith(".py"):
            source = open(os.path.join(folder, name)).read()
            for banned in ("import pickle", "pickle.", "allow_pickle", "eval(", "exec("):
                assert banned not in source, (name, banned)


# ------------------------------------------------------------------------------------ atomic writes
def test_commit_order_is_data_then_index_each_renamed_from_a_temp_file(tmp_path, monkeypatch):
    renames = []
    real = os.replace
    monkeypatch.setattr(bundle.os, "replace", lambda a, b: (renames.append((a, b)), real(a, b))[1])
    prefix = _write(str(tmp_path / "c"), {"x": (np.ones(2), None)})
    assert [os.path.basename(b) for _, b in renames] == ["c.data-00000-of-00001", "c.index"]
    assert all(".tempstate" in os.path.basename(a) for a, _ in renames)
    assert bundle.bundle_exists(prefix)


def test_failure_while_writing_the_index_leaves_nothing_visible(tmp_path, monkeypatch):
    def boom(path, payload):
        raise OSError("disk full")

    monkeypatch.setattr(bundle, "_write_durably", boom)
    prefix = str(tmp_path / "c")
    with pytest.raises(OSError, match="disk full"):
        _write(prefix, {"x": (np.ones(2), None)})
    assert not cm.checkpoint_exists(prefix)
    assert not [f for f in os.listdir(tmp_path) if "tempstate" in f or f.endswith(".index")]


def test_exception_while_adding_tensors_aborts_and_cleans_up(tmp_path):
    with pytest.raises(TypeError):
        with BundleWriter(str(tmp_path / "c")) as w:
            w.add("ok", np.ones(2))
            w.add("bad", np.array([object()], dtype=object), "string")
    assert os.listdir(tmp_path) == []


def test_process_killed_mid_save_leaves_previous_checkpoint_current(tmp_path):
    """A process that dies between the data rename and the index rename: no partial checkpoint."""
    d = str(tmp_path)
    prefix1 = _write(os.path.join(d, "model.ckpt-1"), {"w": (np.ones(3, np.float32), None)})
    cm.update_checkpoint_state(d, prefix1, [prefix1])
    script = textwrap.dedent(f"""
        import os, numpy as np
        from sparseflow._src.framework import tensor_bundle as bundle
        real_replace = os.replace
        def replace(src, dst):
            if dst.endswith(".index"):
                os._exit(3)   # killed: no cleanup, no exception handlers
            real_replace(src, dst)
        bundle.os.replace = replace
        with bundle.BundleWriter({os.path.join(d, 'model.ckpt-2')!r}) as w:
            w.add("w", np.zeros(3, np.float32))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == 3
    assert not cm.checkpoint_exists(os.path.join(d, "model.ckpt-2"))
    assert cm.latest_checkpoint(d) == prefix1
    np.testing.assert_array_equal(BundleReader(prefix1).read("w"), np.ones(3))


# ------------------------------------------------------------------------------------ the state file
def test_state_file_round_trip_and_relative_paths(tmp_path):
    d = str(tmp_path)
    for step in (1, 2):
        _write(os.path.join(d, f"m-{step}"), {"x": (np.ones(1), None)})
    cm.update_checkpoint_state(d, os.path.join(d, "m-2"), [os.path.join(d, "m-1"), os.path.join(d, "m-2")],
                               save_relative_paths=True)
    text = open(os.path.join(d, "checkpoint")).read()
    assert 'model_checkpoint_path: "m-2"' in text and 'all_model_checkpoint_paths: "m-1"' in text
    state = tf.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == os.path.join(d, "m-2")
    assert list(state.all_model_checkpoint_paths) == [os.path.join(d, "m-1"), os.path.join(d, "m-2")]
    assert tf.train.latest_checkpoint(d) == os.path.join(d, "m-2")
    assert tf.train.checkpoint_exists(os.path.join(d, "m-1"))


def test_state_file_problems(tmp_path):
    d = str(tmp_path)
    assert tf.train.get_checkpoint_state(d) is None and tf.train.latest_checkpoint(d) is None
    cm.update_checkpoint_state(d, os.path.join(d, "gone"))
    assert tf.train.latest_checkpoint(d) is None  # the state names files that do not exist
    open(os.path.join(d, "checkpoint"), "w").write("model_checkpoint_path: \"m-2\n garbage {")
    with pytest.raises(tf.errors.DataLossError, match="checkpoint is corrupt"):
        tf.train.latest_checkpoint(d)
    with pytest.raises(RuntimeError, match="conflicts with path used for checkpoint state"):
        cm.update_checkpoint_state(d, os.path.join(d, "checkpoint"))


def test_generate_checkpoint_state_proto_appends_the_newest():
    s = tf.train.generate_checkpoint_state_proto("/run", "/run/m-3", ["/run/m-1", "/run/m-2"])
    assert list(s.all_model_checkpoint_paths) == ["/run/m-1", "/run/m-2", "/run/m-3"]
    rel = tf.train.generate_checkpoint_state_proto("run", "run/m-3")
    assert rel.model_checkpoint_path == "m-3"


def test_remove_checkpoint_deletes_index_first(tmp_path):
    prefix = _write(str(tmp_path / "m-1"), {"x": (np.ones(1), None)})
    open(prefix + ".meta", "wb").write(b"")
    keep = _write(str(tmp_path / "m-10"), {"x": (np.ones(1), None)})
    tf.train.remove_checkpoint(prefix)
    assert sorted(os.listdir(tmp_path)) == ["m-10.data-00000-of-00001", "m-10.index"]
    assert cm.checkpoint_exists(keep)


@pytest.mark.parametrize("module", ["framework.tensor_bundle", "framework.tensor_codec",
                                    "training.checkpoint.checkpoint_management",
                                    "training.checkpoint.checkpoint_reader", "training.checkpoint.saveable",
                                    "training.checkpoint.saver", "training.checkpoint.meta_graph"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"sparseflow._src.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
