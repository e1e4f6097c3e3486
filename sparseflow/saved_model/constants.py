"""``tf.saved_model.constants``."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.constants import (
    ASSETS_DIRECTORY,
    ASSETS_KEY,
    LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION,
    VARIABLES_DIRECTORY,
    VARIABLES_FILENAME,
)
