#!/usr/bin/env bash
# Records what TensorFlow prints for the TF1 programs of this folder (run by hand, not in CI):
#   TFPY=/path/to/venv-with-tensorflow/bin/python bash record_expected.sh
# TensorFlow 2.21 (tf.compat.v1, graph mode, CPU). Writes <program>.expected (its RESULT lines) next to
# each program; each program was run three times and printed the same lines every time.
set -euo pipefail
cd "$(dirname "$0")"
TFPY="${TFPY:-/work/tfenv/bin/python}"
for program in s[0-9][0-9]_*.py; do
  "$TFPY" "$program" 2>/dev/null | grep -E '^RESULT ' > "${program%.py}.expected"
  echo "${program%.py}.expected: $(wc -l < "${program%.py}.expected") lines"
done
"$TFPY" -c 'import tensorflow as tf; print("TensorFlow", tf.__version__)' 2>/dev/null
