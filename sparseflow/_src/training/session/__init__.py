"""Training loops: monitored sessions, session hooks, Scaffold, SessionManager, Coordinator, progress bar.

Modules: ``session_run_hook`` (the hook protocol), ``basic_hooks`` (StopAtStepHook,
CheckpointSaverHook, LoggingTensorHook, NanTensorHook, ...), ``progress`` (ProgressBar,
ProgressBarHook), ``scaffold``, ``session_manager``, ``coordinator``, ``queue_runner`` and
``monitored_session``; ``summary_hooks`` (SummarySaverHook, ProfilerHook).
The public names are re-exported by ``tf.train``.
"""

from sparseflow._src.training.session.basic_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
)
from sparseflow._src.training.session.coordinator import Coordinator
from sparseflow._src.training.session.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    SessionCreator,
    SingularMonitoredSession,
    WorkerSessionCreator,
)
from sparseflow._src.training.session.progress import ProgressBar, ProgressBarHook
from sparseflow._src.training.session.queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from sparseflow._src.training.session.scaffold import Scaffold
from sparseflow._src.training.session.session_manager import SessionManager
from sparseflow._src.training.session.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from sparseflow._src.training.session.summary_hooks import ProfilerHook, SummarySaverHook
from sparseflow._src.training.summary.writer import summary_iterator

__all__ = [
    "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "SecondOrStepTimer",
    "StopAtStepHook", "CheckpointSaverHook", "CheckpointSaverListener", "LoggingTensorHook", "NanTensorHook",
    "NanLossDuringTrainingError", "StepCounterHook", "FinalOpsHook", "FeedFnHook", "GlobalStepWaiterHook",
    "ProgressBar", "ProgressBarHook", "Scaffold", "SessionManager", "Coordinator", "SessionCreator",
    "ChiefSessionCreator", "WorkerSessionCreator", "MonitoredSession", "SingularMonitoredSession",
    "MonitoredTrainingSession", "QueueRunner", "add_queue_runner", "start_queue_runners", "SummarySaverHook",
    "ProfilerHook", "summary_iterator",
]
