"""tf.train.Saver, checkpoint readers and meta graphs, through real sessions."""

import os

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import tensor_bundle as bundle

X = np.random.RandomState(1).randn(64, 3).astype(np.float32)
Y = (X.dot([[1.0], [-2.0], [0.5]]) > 0).astype(np.float32)


def _model(seed=0, optimizer="adam"):
    tf.set_random_seed(seed)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("m"):
        w = tf.get_variable("w", [3, 4], initializer=tf.truncated_normal_initializer(stddev=0.5))
        b = tf.get_variable("b", [4], initializer=tf.zeros_initializer())
        v = tf.get_variable("v", [4, 1], initializer=tf.truncated_normal_initializer(stddev=0.5))
    logits = tf.matmul(tf.nn.tanh(tf.matmul(x, w) + b), v)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    step = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.05) if optimizer == "adam" else tf.train.GradientDescentOptimizer(0.1)
    train = opt.minimize(loss, global_step=step)
    return dict(x=x, y=y, w=w, loss=loss, step=step, train=train)


def _train(sess, m, k):
    for i in range(k):
        lo = (i * 16) % 64
        sess.run(m["train"], {m["x"]: X[lo:lo + 16], m["y"]: Y[lo:lo + 16]})
    return sess.run(m["loss"], {m["x"]: X, m["y"]: Y})


def _values(sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


# ------------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64, tf.int8, tf.int16, tf.int32, tf.int64,
                                   tf.uint8, tf.uint16, tf.uint32, tf.uint64, tf.bool, tf.complex64,
                                   tf.complex128, tf.string])
def test_variables_of_every_dtype_round_trip(tmp_path, dtype):
    if dtype == tf.string:
        value = np.array([[b"a", "ü".encode()], [b"", b"long" * 50]], dtype=object)
        scalar = np.array(b"s", dtype=object)
    elif dtype == tf.bool:
        value, scalar = np.array([[True, False], [False, True]]), np.array(True)
    else:
        np_t = dtype.as_numpy_dtype
        value, scalar = np.array([[1, 2], [3, 4]]).astype(np_t), np.array(7).astype(np_t)
    with tf.Graph().as_default():
        tf.Variable(value, name="a")
        tf.Variable(scalar, name="s")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        a2 = tf.Variable(np.zeros_like(value) if dtype != tf.string else np.full((2, 2), b"", dtype=object), name="a")
        s2 = tf.Variable(np.zeros_like(scalar) if dtype != tf.string else np.array(b"", dtype=object), name="s")
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)  # restoring initializes: no initializer run
            got, got_s = sess.run([a2, s2])
    assert got.tolist() == value.tolist() and np.asarray(got_s).tolist() == scalar.tolist()
    assert np.asarray(got_s).shape == ()


def test_saver_graph_matches_tensorflow_names():
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    d = saver.as_saver_def()
    assert (d.filename_tensor_name, d.save_tensor_name, d.restore_op_name) == \
        ("save/Const:0", "save/control_dependency:0", "save/restore_all")
    g = tf.get_default_graph()
    assert g.get_operation_by_name("save/SaveV2").type == "SaveV2"
    assert g.get_operation_by_name("save/RestoreV2").type == "RestoreV2"
    assert g.get_operation_by_name("save/Assign").type == "Assign"
    assert d.max_to_keep == 5 and d.version == tf.train.SaverDef.V2


# ------------------------------------------------------------------------------------ training state
def test_adam_slots_restore_and_training_continues_identically(tmp_path):
    with tf.Graph().as_default():
        m = _model(seed=3)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            _train(sess, m, 7)
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=m["step"])
            saved = _values(sess)
            loss_next = _train(sess, m, 6)
            after = _values(sess)
    assert os.path.basename(path) == "model.ckpt-7"
    assert {"beta1_power", "beta2_power", "m/w/Adam", "m/w/Adam_1", "global_step"} <= set(saved)
    with tf.Graph().as_default():
        m2 = _model(seed=99)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            restored = _values(sess)
            assert restored.keys() == saved.keys()
            for k in saved:
                np.testing.assert_array_equal(restored[k], saved[k], err_msg=k)
            assert _train(sess, m2, 6) == loss_next
            for k, v in _values(sess).items():
                np.testing.assert_array_equal(v, after[k], err_msg=k)


def test_max_to_keep_deletes_old_files_and_tracks_state(tmp_path):
    d = str(tmp_path)
    m = _model(optimizer="sgd")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = [saver.save(sess, os.path.join(d, "model.ckpt"), global_step=s) for s in (10, 20, 30)]
    assert saver.last_checkpoints == paths[1:]
    assert sorted(os.listdir(d)) == ["checkpoint"] + sorted(
        f"model.ckpt-{s}{ext}" for s in (20, 30) for ext in (".data-00000-of-00001", ".index", ".meta"))
    state = tf.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == paths[2]
    assert list(state.all_model_checkpoint_paths) == paths[1:]
    assert tf.train.latest_checkpoint(d) == paths[2]
    del m


def test_max_to_keep_none_keeps_all_files_and_only_the_latest_in_state(tmp_path):
    d = str(tmp_path)
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for s in range(3):
            saver.save(sess, os.path.join(d, "c"), global_step=s, write_meta_graph=False)
    assert len([f for f in os.listdir(d) if f.endswith(".index")]) == 3
    assert list(tf.train.get_checkpoint_state(d).all_model_checkpoint_paths) == [os.path.join(d, "c-2")]


def test_keep_checkpoint_every_n_hours_spares_old_checkpoints(tmp_path, monkeypatch):
    from sparseflow._src.training.checkpoint import saver as saver_mod

    clock = [1000.0]
    monkeypatch.setattr(saver_mod.time, "time", lambda: clock[0])
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for s in range(4):
            clock[0] += 1500.0  # 25 minutes per checkpoint
            saver.save(sess, str(tmp_path / "c"), global_step=s, write_meta_graph=False)
    kept = sorted(f[:-6] for f in os.listdir(tmp_path) if f.endswith(".index"))
    # The saver was made at t=1000, so the first hour mark is t=4600: c-0 (t=2500) and c-1 (t=4000)
    # are deleted when they fall out of max_to_keep, c-2 (t=5500) is the first past the mark and stays.
    assert kept == ["c-2", "c-3"]


# ------------------------------------------------------------------------------------ var_list
def test_var_list_dict_renames_and_list_subsets(tmp_path):
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable(3, name="b")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver({"renamed/a": a}).save(sess, str(tmp_path / "only_a"))
        path_b = tf.train.Saver([b]).save(sess, str(tmp_path / "only_b"))
    assert tf.train.list_variables(path) == [("renamed/a", [2])]
    assert tf.train.list_variables(path_b) == [("b", [])]
    with tf.Graph().as_default():
        other = tf.get_variable("other", [2], initializer=tf.zeros_initializer())
        with tf.Session() as sess:
            tf.train.Saver(var_list={"renamed/a": other}).restore(sess, path)
            np.testing.assert_array_equal(sess.run(other), [1.0, 2.0])


def test_var_list_errors():
    a = tf.Variable(1.0, name="a")
    with pytest.raises(ValueError, match="same saveable will be restored with two names"):
        tf.train.Saver({"x": a, "y": a})
    with pytest.raises(TypeError, match="not a Variable"):
        tf.train.Saver([tf.constant(1.0)])
    with pytest.raises(TypeError, match="dict or a list"):
        tf.train.Saver(a)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()
        empty = tf.train.Saver(allow_empty=True)
        with tf.Session() as sess:
            assert empty.save(sess, "/nonexistent/x", write_meta_graph=False) is None
            assert empty.restore(sess, "/nonexistent/x") is None


# ------------------------------------------------------------------------------------ errors
def test_restoring_a_missing_variable_names_it(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="w1")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        tf.Variable(1.0, name="w1")
        tf.Variable(2.0, name="w2")
        tf.Variable(3.0, name="w3")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError) as e:
                tf.train.Saver().restore(sess, path)
    msg = str(e.value)
    assert "Key w2 not found in checkpoint" in msg and "also missing: w3" in msg
    assert "'w2' (for variable w2:0)" in msg and "Variable name or other graph key that is missing" in msg


def test_dtype_and_shape_mismatches_are_invalid_argument(tmp_path):
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "ckpt"))
    for value, pattern in (([1, 2], "expected dtype int32 does not equal original dtype float"),
                           ([1.0, 2.0, 3.0], r"holds 'v' with shape \[2\], but variable v:0 has shape \[3\]")):
        with tf.Graph().as_default():
            tf.Variable(value, name="v")
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=pattern):
                tf.train.Saver().restore(sess, path)


def test_bad_paths(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(ValueError, match="when it is None"):
            saver.restore(sess, None)
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            saver.save(sess, str(tmp_path / "no" / "dir" / "ckpt"))
        with pytest.raises(ValueError, match="collides"):
            saver.save(sess, str(tmp_path / "checkpoint"))


def test_corrupt_checkpoint_is_refused_naming_file_and_tensor(tmp_path):
    v = tf.Variable(np.arange(8, dtype=np.float32), name="weights")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "ckpt"))
        data = bundle.data_path(path, 0, 1)
        raw = bytearray(open(data, "rb").read())
        raw[-5] ^= 0x01
        open(data, "wb").write(bytes(raw))
        sess.run(v.assign(np.zeros(8, np.float32)))
        with pytest.raises(tf.errors.DataLossError, match=f"{data} is corrupt: tensor 'weights'"):
            saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), np.zeros(8))  # nothing was loaded


def test_failed_save_leaves_the_previous_checkpoint_current(tmp_path, monkeypatch):
    d = str(tmp_path)
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = saver.save(sess, os.path.join(d, "m"), global_step=1)
        sess.run(v.assign(2.0))

        def crash(path, payload):
            raise OSError("simulated crash while writing the index")

        monkeypatch.setattr(bundle, "_write_durably", crash)
        with pytest.raises(tf.errors.OpError, match="simulated crash"):
            saver.save(sess, os.path.join(d, "m"), global_step=2)
        monkeypatch.undo()
        assert tf.train.latest_checkpoint(d) == first
        assert not tf.train.checkpoint_exists(os.path.join(d, "m-2"))
        assert not [f for f in os.listdir(d) if "tempstate" in f]
        saver.restore(sess, tf.train.latest_checkpoint(d))
        assert sess.run(v) == 1.0


# ------------------------------------------------------------------------------------ readers
def test_checkpoint_readers(tmp_path):
    tf.Variable(np.ones((2, 3), np.float32), name="dense/kernel")
    tf.Variable(np.array([b"a", b"b"], dtype=object), name="vocab")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step.assign(42))
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    d = str(tmp_path)
    (tmp_path / "empty").mkdir()
    assert tf.train.list_variables(d) == [("dense/kernel", [2, 3]), ("global_step", []), ("vocab", [2])]
    assert tf.train.load_variable(d, "global_step:0") == 42
    reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(d))
    assert reader.has_tensor("vocab") and not reader.has_tensor("nope")
    assert reader.get_tensor("vocab").tolist() == [b"a", b"b"]
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    assert reader.get_variable_to_shape_map()["dense/kernel"] == [2, 3]
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    assert tf.train.load_checkpoint(d).get_tensor("dense/kernel").sum() == 6.0
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(str(tmp_path / "empty"))


def test_init_from_checkpoint_warm_starts_by_scope(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("w", initializer=np.full((2, 2), 5.0, np.float32))
            tf.get_variable("b", initializer=np.full((2,), 6.0, np.float32))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            w = tf.get_variable("w", [2, 2], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        c = tf.get_variable("c", [1], initializer=tf.ones_initializer())
        tf.train.init_from_checkpoint(path, {"old/": "new/"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(w), np.full((2, 2), 5.0))
            np.testing.assert_array_equal(sess.run(b), [6.0, 6.0])
            np.testing.assert_array_equal(sess.run(c), [1.0])
        with pytest.raises(ValueError, match="Tensor old/c is not found"):
            tf.train.init_from_checkpoint(path, {"old/c": c})


# ------------------------------------------------------------------------------------ slices and shards
def _partitions(full_name, full_shape, rows, values):
    out, start = [], 0
    for i, n in enumerate(rows):
        v = tf.Variable(values[start:start + n], name=f"{full_name}/part_{i}")
        v._set_save_slice_info(tf.Variable.SaveSliceInfo(full_name, full_shape, [start, 0], [n, full_shape[1]]))
        out.append(v)
        start += n
    return out


def test_partitioned_variable_restores_into_a_different_number_of_shards(tmp_path):
    full = np.arange(12, dtype=np.float32).reshape(6, 2)
    with tf.Graph().as_default():
        parts = _partitions("emb", [6, 2], [3, 3], full)
        saver = tf.train.Saver(parts)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "ckpt"))
    np.testing.assert_array_equal(tf.train.load_variable(path, "emb"), full)
    with tf.Graph().as_default():
        parts = _partitions("emb", [6, 2], [2, 1, 3], np.zeros_like(full))
        with tf.Session() as sess:
            tf.train.Saver(parts).restore(sess, path)
            np.testing.assert_array_equal(np.concatenate(sess.run(parts)), full)


def test_sharded_saver_merges_device_bundles(tmp_path):
    with tf.device("/device:CPU:0"):
        a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable(3, name="b")
    saver = tf.train.Saver(sharded=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "sharded"), write_meta_graph=False)
        assert path == str(tmp_path / "sharded")
        # "a" (on CPU:0) and "b" (no device) form two device groups: two shard bundles, merged.
        assert sorted(os.listdir(tmp_path)) == ["checkpoint", "sharded.data-00000-of-00002",
                                                "sharded.data-00001-of-00002", "sharded.index"]
        sess.run([a.assign([0.0, 0.0]), b.assign(0)])
        saver.restore(sess, path)
        assert sess.run(a).tolist() == [1.0, 2.0] and sess.run(b) == 3


def test_failed_sharded_save_leaves_no_shard_bundles(tmp_path):
    a = tf.Variable([1.0, 2.0], name="a")  # shard 0 (no device) is written first ...
    with tf.device("/device:CPU:0"):
        tf.Variable(3, name="never_initialized")  # ... then shard 1 fails
    saver = tf.train.Saver(sharded=True)
    with tf.Session() as sess:
        sess.run(a.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="never_initialized"):
            saver.save(sess, str(tmp_path / "s"), write_meta_graph=False)
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------------------------ meta graphs
def test_import_meta_graph_recreates_collections_and_continues_training(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        m = _model(seed=5)
        tf.add_to_collection("train_op", m["train"])
        tf.add_to_collection("my_floats", 0.5)
        tf.add_to_collection("my_names", "hello")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            _train(sess, m, 4)
            path = saver.save(sess, os.path.join(d, "model"), global_step=m["step"])
            expected = _train(sess, m, 3)
    assert os.path.exists(path + ".meta")
    with tf.Graph().as_default() as g:
        new_saver = tf.train.import_meta_graph(path + ".meta")
        assert [v.op.name for v in tf.trainable_variables()] == ["m/w", "m/b", "m/v"]
        assert tf.train.get_global_step() is not None
        assert tf.get_collection("my_floats") == [0.5] and tf.get_collection("my_names") == [b"hello"]
        train_op = tf.get_collection("train_op")[0]
        with tf.Session() as sess:
            new_saver.restore(sess, path)
            for i in range(3):
                lo = (i * 16) % 64
                sess.run(train_op, {"x:0": X[lo:lo + 16], "y:0": Y[lo:lo + 16]})
            assert sess.run(g.get_tensor_by_name("Mean:0"), {"x:0": X, "y:0": Y}) == expected


def test_export_meta_graph_text_scope_and_clear_devices(tmp_path):
    with tf.device("/device:CPU:0"):
        v = tf.Variable(2.0, name="v")
    saver = tf.train.Saver()
    fn = str(tmp_path / "g.meta")
    mgd = tf.train.export_meta_graph(fn, as_text=True, saver_def=saver.as_saver_def(), clear_devices=True)
    assert open(fn).read().startswith("meta_info_def")
    assert all(not n.device for n in mgd.graph_def.node)
    assert "VariableV2" in [op.name for op in mgd.meta_info_def.stripped_op_list.op]
    with tf.Graph().as_default():
        imported = tf.train.import_meta_graph(fn, import_scope="copy")
        assert [x.name for x in tf.global_variables()] == ["copy/v:0"]
        assert imported.as_saver_def().restore_op_name == "copy/save/restore_all"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run("copy/v:0") == 2.0
    del v


def test_corrupt_meta_file_is_refused(tmp_path):
    fn = tmp_path / "bad.meta"
    fn.write_bytes(b"\xff\xfe not a proto {")
    with pytest.raises(tf.errors.DataLossError, match="bad.meta"):
        tf.train.import_meta_graph(str(fn))
    with pytest.raises(OSError, match="does not exist"):
        tf.train.import_meta_graph(str(tmp_path / "missing.meta"))
