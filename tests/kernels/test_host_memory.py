"""host_memory: glibc keeps freed buffers for reuse unless the user said otherwise."""

from sparseflow._src.kernels import host_memory


def test_opt_out_and_user_tunables_leave_the_allocator_alone(monkeypatch):
    monkeypatch.setenv("SPARSEFLOW_KEEP_FREED_BUFFERS", "0")
    assert host_memory._apply() is False
    monkeypatch.delenv("SPARSEFLOW_KEEP_FREED_BUFFERS")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000000")
    assert host_memory._apply() is False


def test_applies_on_glibc(monkeypatch):
    for name in host_memory._USER_TUNABLES + ("SPARSEFLOW_KEEP_FREED_BUFFERS",):
        monkeypatch.delenv(name, raising=False)
    assert host_memory._apply() is (host_memory._glibc() is not None)
    assert host_memory.keep_freed_buffers() in (True, False)
