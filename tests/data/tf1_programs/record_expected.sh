#!/usr/bin/env bash
# Records TensorFlow's RESULT lines for the data-layer TF1 programs in this folder (run by hand, not in CI):
#   TFPY=/path/to/venv-with-tensorflow/bin/python bash record_expected.sh
# TensorFlow 2.21 (tf.compat.v1). Writes <program>.expected next to each program.
set -euo pipefail
cd "$(dirname "$0")"
TFPY="${TFPY:-/work/tfenv/bin/python}"
for prog in p[0-9][0-9]_*.py; do
  TF_CPP_MIN_LOG_LEVEL=3 TF_ENABLE_ONEDNN_OPTS=0 "$TFPY" "$prog" | grep -E '^RESULT ' > "${prog%.py}.expected"
  echo "${prog%.py}.expected: $(wc -l < "${prog%.py}.expected") lines"
done
"$TFPY" -c 'import tensorflow as tf; print("TensorFlow", tf.__version__)'
