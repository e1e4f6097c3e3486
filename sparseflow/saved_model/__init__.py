"""``tf.saved_model`` (TF1): SavedModelBuilder, loader, simple_save, signatures and constants."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.builder import SavedModelBuilder, simple_save
from sparseflow._src.training.saved_model.builder import SavedModelBuilder as Builder
from sparseflow._src.training.saved_model.constants import (
    ASSETS_DIRECTORY,
    ASSETS_KEY,
    CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    GPU,
    LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY,
    PREDICT_INPUTS,
    PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS,
    REGRESS_INPUTS,
    REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION,
    SERVING,
    TPU,
    TRAINING,
    VARIABLES_DIRECTORY,
    VARIABLES_FILENAME,
)
from sparseflow._src.training.saved_model.loader import contains_saved_model, load, maybe_saved_model_directory
from sparseflow._src.training.saved_model.main_op import main_op_with_restore
from sparseflow._src.training.saved_model.signature_def_utils import (
    build_signature_def,
    build_tensor_info,
    classification_signature_def,
    get_tensor_from_tensor_info,
    is_valid_signature,
    predict_signature_def,
    regression_signature_def,
)
from sparseflow.saved_model import (
    builder,
    constants,
    loader,
    main_op,
    signature_constants,
    signature_def_utils,
    tag_constants,
    utils,
)
