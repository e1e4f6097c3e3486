"""The names of the SavedModel format: files, directories, collections, tags and signature keys
(``tf.saved_model.constants``, ``tag_constants``, ``signature_constants``).

Example:
    >>> from sparseflow._src.training.saved_model import constants
    >>> constants.SERVING, constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY, constants.SAVED_MODEL_FILENAME_PB
    ('serve', 'serving_default', 'saved_model.pb')
"""

# files and directories
ASSETS_DIRECTORY = "assets"
EXTRA_ASSETS_DIRECTORY = "assets.extra"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"

# graph collections
ASSETS_KEY = "saved_model_assets"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
TRAIN_OP_KEY = "saved_model_train_op"

# reserved signature keys (TF2-written TF1 graphs carry their init / train op there)
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"

# tags (tag_constants)
SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

# signature keys and method names (signature_constants)
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"
REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"

# the Any type of asset records, as TensorFlow names it (so TensorFlow can unpack ours)
ASSET_FILE_DEF_TYPE_URL = "type.googleapis.com/tensorflow.AssetFileDef"
