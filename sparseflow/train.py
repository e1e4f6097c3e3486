"""``tf.train``: optimizers, learning-rate schedules, checkpoints, training sessions and hooks, queue
runners and queue-based input pipelines."""

# ruff: noqa: F401, F403
from sparseflow._src.distributed.cluster_spec import ClusterSpec
from sparseflow._src.distributed.server import Server
from sparseflow._src.framework.file_io import write_graph
from sparseflow._src.framework.proto.example_pb2 import Example, SequenceExample
from sparseflow._src.framework.proto.feature_pb2 import (
    BytesList,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
)
from sparseflow._src.training.checkpoint import *
from sparseflow._src.training.device_setter import *
from sparseflow._src.training.input_pipeline import *
from sparseflow._src.training.optimizer import *
from sparseflow._src.training.session import *
