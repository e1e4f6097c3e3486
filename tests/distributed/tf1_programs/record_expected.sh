#!/usr/bin/env bash
# Records TensorFlow's RESULT lines for the distributed TF1 programs (run by hand, not in CI):
#   TFPY=/path/to/venv-with-tensorflow/bin/python bash record_expected.sh
# TensorFlow 2.21 (tf.compat.v1). Its servers bind every interface, so each cluster runs in a private
# network namespace with only loopback up. Writes <program>.expected next to each program.
set -euo pipefail
cd "$(dirname "$0")"
TFPY="${TFPY:-/work/tfenv/bin/python}"
record() {  # program ps workers
  unshare -rn sh -c "ip link set lo up; exec $TFPY run_cluster_program.py --module tensorflow --ps $2 --workers $3 $1" \
    | grep -E '^RESULT [a-z_]+ ' > "${1%.py}.expected"
  echo "${1%.py}.expected: $(wc -l < "${1%.py}.expected") lines"
}
record d01_between_graph.py 1 1
record d02_sync_replicas.py 1 2
record d03_partitioned_embedding.py 2 1
record d04_local_server.py 1 1
record d05_partial_run.py 1 1
"$TFPY" -c 'import tensorflow as tf; print("TensorFlow", tf.__version__)'
