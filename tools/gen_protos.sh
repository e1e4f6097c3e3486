#!/usr/bin/env bash
# Regenerates the Python modules (*_pb2.py) of sparseflow's protobuf messages and services.
#
# The .proto files live in sparseflow/_src/framework/proto/ (graphs, tensors, configs,
# checkpoints) and sparseflow/_src/distributed/proto/ (the master and worker services). They are
# compiled from the repository root, so generated modules import each other as
# sparseflow._src.<layer>.proto.X_pb2. Services are served and called through their descriptors
# (sparseflow/_src/distributed/rpc.py), so no *_pb2_grpc.py stubs are generated.
# Needs grpcio-tools (it bundles protoc). The generated files are committed; rerun this script
# after editing a .proto file and commit both.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python}"
PROTO_DIRS=("sparseflow/_src/framework/proto" "sparseflow/_src/distributed/proto")
WKT_INCLUDE="$("$PYTHON" -c 'import os, grpc_tools; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"

cd "$ROOT"
for dir in "${PROTO_DIRS[@]}"; do
  [ -d "$dir" ] || continue
  rm -f "$dir"/*_pb2.py
  "$PYTHON" -m grpc_tools.protoc -I. -I"$WKT_INCLUDE" --python_out=. "$dir"/*.proto
  ls "$dir"/*_pb2.py | wc -l | xargs echo "generated modules in $dir:"
done
"$PYTHON" -m grpc_tools.protoc --version
