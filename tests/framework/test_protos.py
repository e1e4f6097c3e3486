"""Protobuf messages: TensorFlow's field numbers and enum values on the wire, public aliases,
RunOptions/RunMetadata with a Session, and generated modules in step with the .proto files."""

import filecmp
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from google.protobuf import descriptor_pb2

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.proto import (
    attr_value_pb2,
    config_pb2,
    example_pb2,
    feature_pb2,
    function_pb2,
    graph_pb2,
    meta_graph_pb2,
    node_def_pb2,
    saver_pb2,
    step_stats_pb2,
    tensor_pb2,
    types_pb2,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTO_DIR = os.path.join(ROOT, "sparseflow", "_src", "framework", "proto")
PROTO_DIRS = [PROTO_DIR, os.path.join(ROOT, "sparseflow", "_src", "distributed", "proto")]


# ------------------------------------------------------------------ a tiny independent wire encoder
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num: int, value) -> bytes:
    """Wire encoding of one field: ints as varints, bytes/str as length-delimited."""
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint((num << 3) | 2) + _varint(len(data)) + data


def _fixed32_field(num: int, value: float) -> bytes:
    return _varint((num << 3) | 5) + np.float32(value).tobytes()


def test_node_def_parses_bytes_laid_out_with_tensorflow_field_numbers():
    # NodeDef{name=1, op=2, input=3, device=4, attr=5 (map entry key=1 value=2)}; AttrValue.type=6.
    attr_entry = _field(1, "T") + _field(2, _field(6, 1))
    blob = (_field(1, "head/MatMul") + _field(2, "MatMul") + _field(3, "x") + _field(3, "w/read:1")
            + _field(3, "^init") + _field(4, "/device:CPU:0") + _field(5, attr_entry))
    nd = node_def_pb2.NodeDef.FromString(blob)
    assert (nd.name, nd.op, nd.device) == ("head/MatMul", "MatMul", "/device:CPU:0")
    assert list(nd.input) == ["x", "w/read:1", "^init"]
    assert nd.attr["T"].type == types_pb2.DT_FLOAT


def test_graph_def_tensor_and_shape_field_numbers():
    # TensorShapeProto.dim=2 (Dim.size=1), unknown_rank=3; TensorProto dtype=1, shape=2, content=4,
    # float_val=5; AttrValue.tensor=8, shape=7, list=1 (ListValue.i=3); GraphDef node=1, versions=4.
    shape = _field(2, _field(1, 2)) + _field(2, _field(1, -1))
    tensor = _field(1, 1) + _field(2, _field(2, _field(1, 2))) + _field(4, np.float32([1.5, -2]).tobytes())
    attrs = (_field(5, _field(1, "value") + _field(2, _field(8, tensor)))
             + _field(5, _field(1, "shape") + _field(2, _field(7, shape)))
             + _field(5, _field(1, "ksize") + _field(2, _field(1, _field(3, bytes([1, 3])))))
             + _field(5, _field(1, "f") + _field(2, _fixed32_field(4, 0.25))))
    blob = _field(1, _field(1, "c") + _field(2, "Const") + attrs) + _field(4, _field(1, 2474))
    gd = graph_pb2.GraphDef.FromString(blob)
    nd = gd.node[0]
    assert gd.versions.producer == 2474
    assert nd.attr["value"].tensor.tensor_content == np.float32([1.5, -2]).tobytes()
    assert [d.size for d in nd.attr["shape"].shape.dim] == [2, -1]
    assert list(nd.attr["ksize"].list.i) == [1, 3]
    assert nd.attr["f"].f == 0.25
    assert tf.make_ndarray(nd.attr["value"].tensor).tolist() == [1.5, -2.0]


def test_data_type_enum_matches_sparseflow_dtypes():
    for d in dtypes.all_dtypes():
        tf_name = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}.get(d.name, d.name.upper())
        assert types_pb2.DataType.Value("DT_" + tf_name) == d.as_datatype_enum
        assert d._as_ref.as_datatype_enum == d.as_datatype_enum + 100


@pytest.mark.parametrize("message, fields", [
    (graph_pb2.GraphDef, {"node": 1, "versions": 4, "version": 3, "library": 2}),
    (node_def_pb2.NodeDef, {"name": 1, "op": 2, "input": 3, "device": 4, "attr": 5,
                            "experimental_debug_info": 6, "experimental_type": 7}),
    (attr_value_pb2.AttrValue, {"s": 2, "i": 3, "f": 4, "b": 5, "type": 6, "shape": 7, "tensor": 8, "list": 1,
                                "func": 10, "placeholder": 9}),
    (tensor_pb2.TensorProto, {"dtype": 1, "tensor_shape": 2, "version_number": 3, "tensor_content": 4,
                              "half_val": 13, "float_val": 5, "double_val": 6, "int_val": 7, "string_val": 8,
                              "scomplex_val": 9, "int64_val": 10, "bool_val": 11, "dcomplex_val": 12,
                              "resource_handle_val": 14, "variant_val": 15, "uint32_val": 16,
                              "uint64_val": 17}),
    (function_pb2.FunctionDef, {"signature": 1, "attr": 5, "arg_attr": 7, "node_def": 3, "ret": 4,
                                "control_ret": 6}),
    (config_pb2.ConfigProto, {"device_count": 1, "intra_op_parallelism_threads": 2,
                              "inter_op_parallelism_threads": 5, "gpu_options": 6, "allow_soft_placement": 7,
                              "log_device_placement": 8, "graph_options": 10, "operation_timeout_in_ms": 11,
                              "rpc_options": 13, "cluster_def": 14, "experimental": 16}),
    (config_pb2.GraphOptions, {"optimizer_options": 3, "build_cost_model": 4, "infer_shapes": 5,
                               "rewrite_options": 10}),
    (config_pb2.OptimizerOptions, {"do_common_subexpression_elimination": 1, "do_constant_folding": 2,
                                   "opt_level": 3, "global_jit_level": 5}),
    (config_pb2.RunOptions, {"trace_level": 1, "timeout_in_ms": 2, "inter_op_thread_pool": 3,
                             "output_partition_graphs": 5, "debug_options": 6}),
    (config_pb2.RunMetadata, {"step_stats": 1, "cost_graph": 2, "partition_graphs": 3, "function_graphs": 4}),
    (step_stats_pb2.NodeExecStats, {"node_name": 1, "all_start_micros": 2, "op_start_rel_micros": 3,
                                    "op_end_rel_micros": 4, "all_end_rel_micros": 5, "output": 7,
                                    "timeline_label": 8, "thread_id": 10}),
    (meta_graph_pb2.MetaGraphDef, {"meta_info_def": 1, "graph_def": 2, "saver_def": 3, "collection_def": 4,
                                   "signature_def": 5, "asset_file_def": 6}),
    (meta_graph_pb2.TensorInfo, {"name": 1, "dtype": 2, "tensor_shape": 3, "coo_sparse": 4}),
    (example_pb2.Example, {"features": 1}),
    (example_pb2.SequenceExample, {"context": 1, "feature_lists": 2}),
    (feature_pb2.Feature, {"bytes_list": 1, "float_list": 2, "int64_list": 3}),
    (feature_pb2.Features, {"feature": 1}),
    (feature_pb2.FeatureList, {"feature": 1}),
    (feature_pb2.FeatureLists, {"feature_list": 1}),
    (feature_pb2.BytesList, {"value": 1}),
    (feature_pb2.FloatList, {"value": 1}),
    (feature_pb2.Int64List, {"value": 1}),
    (saver_pb2.SaverDef, {"filename_tensor_name": 1, "save_tensor_name": 2, "restore_op_name": 3,
                          "max_to_keep": 4, "sharded": 5, "keep_checkpoint_every_n_hours": 6, "version": 7}),
])
def test_field_numbers_are_tensorflows(message, fields):
    got = {f.name: f.number for f in message.DESCRIPTOR.fields}
    assert {k: got.get(k) for k in fields} == fields


def test_reserved_tags_and_enum_values():
    def reserved(message):
        proto = descriptor_pb2.DescriptorProto()
        message.DESCRIPTOR.CopyToProto(proto)
        return [(r.start, r.end - 1) for r in proto.reserved_range]

    assert reserved(config_pb2.GraphOptions) == [(1, 1)]
    assert reserved(config_pb2.RunOptions) == [(4, 4)]
    assert reserved(function_pb2.FunctionDef) == [(2, 2)]
    assert (tf.RunOptions.NO_TRACE, tf.RunOptions.SOFTWARE_TRACE, tf.RunOptions.HARDWARE_TRACE,
            tf.RunOptions.FULL_TRACE) == (0, 1, 2, 3)
    assert (tf.OptimizerOptions.L1, tf.OptimizerOptions.L0) == (0, -1)
    assert saver_pb2.SaverDef.V2 == 2


@pytest.mark.parametrize("proto_dir", PROTO_DIRS, ids=["framework", "distributed"])
def test_every_proto_field_has_a_comment(proto_dir):
    for fname in sorted(os.listdir(proto_dir)):
        if not fname.endswith(".proto"):
            continue
        lines = open(os.path.join(proto_dir, fname)).read().splitlines()
        for i, line in enumerate(lines):
            s = line.strip()
            skip = s.startswith(("//", "option", "syntax", "reserved"))
            is_field = s.endswith(";") and "=" in s and not skip
            if is_field:
                commented = "//" in s or lines[i - 1].strip().startswith("//")
                assert commented, f"{fname}:{i + 1}: field without a comment: {s}"


def test_config_proto_as_tf1_programs_build_it():
    cfg = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True, log_device_placement=False,
                         inter_op_parallelism_threads=2, intra_op_parallelism_threads=1,
                         operation_timeout_in_ms=5000,
                         graph_options=tf.GraphOptions(optimizer_options=tf.OptimizerOptions(
                             opt_level=tf.OptimizerOptions.L0, do_constant_folding=False)))
    cfg.gpu_options.allow_growth = True
    cfg.graph_options.rewrite_options.constant_folding = 2
    again = tf.ConfigProto.FromString(cfg.SerializeToString())
    assert again == cfg and dict(again.device_count) == {"CPU": 2}
    opts = again.graph_options.optimizer_options
    assert opts.HasField("do_constant_folding") and not opts.do_constant_folding
    assert not opts.HasField("do_common_subexpression_elimination")
    assert isinstance(tf.GPUOptions(), config_pb2.GPUOptions)


def test_deterministic_serialization_of_maps():
    a, b = tf.NodeDef(name="n", op="Foo"), tf.NodeDef(name="n", op="Foo")
    for k in ["zeta", "alpha", "mid"]:
        a.attr[k].i = len(k)
    for k in ["mid", "zeta", "alpha"]:
        b.attr[k].i = len(k)
    assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def test_tensorflow_graphdefs_parse(shared_dir):
    counts = {"mlp_frozen.pb": 13, "logreg_frozen.pb": 8, "math_ops.pb": 30, "array_ops.pb": 35}
    for name, n in counts.items():
        with open(os.path.join(shared_dir, "tf-graphdefs", name), "rb") as f:
            blob = f.read()
        gd = tf.GraphDef.FromString(blob)
        assert len(gd.node) == n and gd.versions.producer > 0
        # Serializing what we parsed gives TensorFlow's bytes back (no field lost or renumbered).
        assert tf.GraphDef.FromString(gd.SerializeToString()) == gd
        assert len(gd.SerializeToString()) == len(blob)


def test_full_trace_fills_step_stats():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.identity(x, name="y")
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        out = sess.run(y, {x: np.float32([1, 2])}, options=options, run_metadata=meta)
    assert out.tolist() == [1.0, 2.0]
    names = [ns.node_name for dev in meta.step_stats.dev_stats for ns in dev.node_stats]
    assert "y" in names
    stats = [ns for dev in meta.step_stats.dev_stats for ns in dev.node_stats if ns.node_name == "y"][0]
    assert stats.output[0].tensor_description.dtype == types_pb2.DT_FLOAT
    assert [d.size for d in stats.output[0].tensor_description.shape.dim] == [2]
    assert tf.RunMetadata.FromString(meta.SerializeToString()) == meta


def test_generated_modules_match_proto_files(tmp_path):
    pytest.importorskip("grpc_tools", reason="grpcio-tools regenerates the *_pb2.py modules")
    script = os.path.join(ROOT, "tools", "gen_protos.sh")
    copy = tmp_path / "repo"
    for d in PROTO_DIRS:
        shutil.copytree(d, copy / os.path.relpath(d, ROOT))
    (copy / "tools").mkdir()
    shutil.copy(script, copy / "tools" / "gen_protos.sh")
    env = dict(os.environ, PYTHON=sys.executable)
    subprocess.run(["bash", str(copy / "tools" / "gen_protos.sh")], check=True, env=env, capture_output=True)
    for d in PROTO_DIRS:
        regenerated = copy / os.path.relpath(d, ROOT)
        pb2 = sorted(f for f in os.listdir(d) if f.endswith("_pb2.py"))
        protos = sorted(f[:-6] for f in os.listdir(d) if f.endswith(".proto"))
        assert sorted(f[:-7] for f in pb2) == protos
        _, mismatch, errors = filecmp.cmpfiles(d, regenerated, pb2, shallow=False)
        assert not mismatch and not errors, f"stale generated modules (run tools/gen_protos.sh): {mismatch}"
