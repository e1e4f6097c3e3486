"""tf.train.ClusterSpec: the forms it accepts, its queries and its errors."""

import pytest

from sparseflow._src.distributed.cluster_spec import ClusterSpec


def test_dense_and_sparse_jobs_round_trip_through_cluster_def():
    c = ClusterSpec({"worker": ["h:1", "h:2"], "ps": {3: "h:9"}})
    assert c.jobs == ["ps", "worker"]
    assert c.as_dict() == {"ps": {3: "h:9"}, "worker": ["h:1", "h:2"]}
    assert c.job_tasks("ps") == [None, None, None, "h:9"]
    assert ClusterSpec(c.as_cluster_def()) == c
    assert ClusterSpec(c) == c.as_dict()
    assert c.tasks() == [("ps", 3, "h:9"), ("worker", 0, "h:1"), ("worker", 1, "h:2")]


def test_unknown_job_and_task_are_named():
    c = ClusterSpec({"worker": ["h:1"]})
    with pytest.raises(ValueError, match="No such job in cluster: 'ps'"):
        c.num_tasks("ps")
    with pytest.raises(ValueError, match="No task with index 4 in job 'worker'"):
        c.task_address("worker", 4)


@pytest.mark.parametrize("bad", [{"worker": [1]}, {"worker": {-1: "h:1"}}, {"worker": 5}, ["h:1"]])
def test_malformed_clusters_are_refused(bad):
    with pytest.raises(TypeError):
        ClusterSpec(bad)


def test_bad_job_name_is_refused():
    with pytest.raises(ValueError, match="Invalid job name"):
        ClusterSpec({"my job": ["h:1"]})
