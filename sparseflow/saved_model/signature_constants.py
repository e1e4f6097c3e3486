"""``tf.saved_model.signature_constants``."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.constants import (
    CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    PREDICT_INPUTS,
    PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS,
    REGRESS_INPUTS,
    REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS,
)
