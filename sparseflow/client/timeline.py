"""``timeline.Timeline``: a traced step (``RunMetadata.step_stats``) as a Chrome trace."""

# ruff: noqa: F401
from sparseflow._src.runtime.timeline import Timeline
