"""``sparseflow launch --ray [ADDRESS]``: the tasks of a ps/chief/worker cluster as Ray actors.

Each task gets an actor (``ray_task.TaskRunner``, ``--ray-num-cpus`` CPUs reserved) on whatever
node Ray places it; the actor picks a port free on its node, and once every actor has answered,
the launcher hands each its ``TF_CONFIG`` (the whole cluster, its own task) and the actor runs the
command there as a child process. Its lines come back to the launcher, which prints them as
``[worker:0] line``; the rules are those of the local launcher (launcher.py): a task that fails
stops the others and sets the exit status, the ps tasks are stopped once the workers are done,
Ctrl-C / ``--timeout`` stop everything. A task whose actor dies (its node lost) fails with status 1.

ADDRESS is any address ``ray.init`` takes ("auto", "host:port", "ray://host:port"); every node
needs sparseflow, and the script at the launcher's path (or pass ``--ray-working-dir DIR``, which
Ray uploads). Without ADDRESS the launcher starts a local Ray instance for the job, in Ray's
single-machine mode so that Ray and the tasks use 127.0.0.1 only (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
before Ray is imported, usage statistics off), and shuts it down at the end. The actors are owned by
the launcher: Ray ends them (and so their tasks) when the launcher exits.

Ray is an optional dependency: ``pip install 'sparseflow[ray]'``.

Example (not run here: it starts Ray):
    >>> cluster = RayCluster(["train.py"], num_ps=1, num_workers=2)   # doctest: +SKIP
    >>> cluster.start().wait(timeout=600)                             # doctest: +SKIP
    0
"""

from __future__ import annotations

import math
import os
import threading
import time

from sparseflow._src.distributed.launcher import SupervisedJob, Task, port_range
from sparseflow._src.distributed.ray_task import TaskRunner

__all__ = ["RayCluster", "import_ray", "INSTALL_HINT"]

INSTALL_HINT = "pip install 'sparseflow[ray]' (or pip install ray)"
ACTOR_LOST_STATUS = 1
POLL_SECONDS = 0.5
LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024  # the tasks pass nothing through Ray's object store


def import_ray(local: bool):
    """Imports Ray (ImportError saying how to install it); ``local``: set up its single-machine mode."""
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # node address 127.0.0.1
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"sparseflow launch --ray needs Ray, which is not installed ({e}): {INSTALL_HINT}.") from None
    if local and os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0":
        constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
        if getattr(constants, "ENABLE_RAY_CLUSTER", False):
            constants.ENABLE_RAY_CLUSTER = False  # Ray was imported before the variable was set
    return ray


class RayCluster(SupervisedJob):
    """Runs ``command`` once per task of a ps/chief/worker cluster, each in a Ray actor (see the
    module docstring). ``address``: a Ray cluster's, or None for a local instance. Arguments as
    ``LocalCluster``'s, and ``num_cpus`` (per actor), ``working_dir`` (Ray's runtime_env) and
    ``start_timeout`` (seconds for Ray to place and start the actors)."""

    def __init__(self, command, num_ps=1, num_workers=1, chief=False, address=None, port_base=None, python=True,
                 env=None, out=None, err=None, grace_period=5.0, num_cpus=1.0, working_dir=None,
                 start_timeout=120.0):
        command = list(command)
        if not command:
            raise ValueError("No command to launch: give a script (and its arguments).")
        if num_cpus < 0:
            raise ValueError(f"--ray-num-cpus must be >= 0, got {num_cpus}.")
        super().__init__(num_ps, num_workers, chief, env, out, err, grace_period)
        self.command, self.python = command, python
        self.address = address or None
        self.ports = None if port_base is None else port_range(port_base, len(self.tasks))
        self.num_cpus, self.working_dir, self.start_timeout = float(num_cpus), working_dir, float(start_timeout)
        self.ray = import_ray(local=self.address is None)
        self._actors: dict[str, object] = {}
        self._pollers: list[threading.Thread] = []
        self._owns_ray = False

    # ------------------------------------------------------------------ start
    def _init_ray(self):
        ray = self.ray
        if ray.is_initialized():
            return
        kwargs = {"log_to_driver": False, "include_dashboard": False}
        if self.working_dir:
            kwargs["runtime_env"] = {"working_dir": self.working_dir}
        if self.address is None:
            cpus = max(os.cpu_count() or 1, math.ceil(self.num_cpus * len(self.tasks)))
            ray.init(address="local", num_cpus=cpus, object_store_memory=LOCAL_OBJECT_STORE_BYTES, **kwargs)
        else:
            ray.init(address=self.address, **kwargs)
        self._owns_ray = True

    def start(self) -> RayCluster:
        """Connects to Ray (or starts it), places one actor per task, gives each its ``TF_CONFIG`` and
        starts the tasks; then streams their output. RuntimeError when Ray fails or cannot place them."""
        try:
            self._init_ray()
        except Exception as e:  # noqa: BLE001 - ConnectionError, RuntimeError, ValueError of ray.init
            what = "start a local Ray instance" if self.address is None else f"connect to Ray at {self.address!r}"
            raise RuntimeError(f"could not {what}: {type(e).__name__}: {e}") from None
        try:
            self._start_actors()
        except RuntimeError:
            raise
        except Exception as e:  # noqa: BLE001 - an actor that cannot be created or does not answer
            raise RuntimeError(f"could not start the tasks' Ray actors: {type(e).__name__}: "
                               f"{str(e).strip().splitlines()[-1] if str(e).strip() else ''}") from None
        for task in self.tasks:
            poller = threading.Thread(target=self._poll, args=(task,), daemon=True, name=f"launch-{task.name}-ray")
            poller.start()
            self._pollers.append(poller)
        return self

    def _start_actors(self) -> None:
        ray = self.ray
        actor_class = ray.remote(TaskRunner).options(num_cpus=self.num_cpus, max_concurrency=4, max_restarts=0)
        for task in self.tasks:
            self._actors[task.name] = actor_class.remote()
        host = "127.0.0.1" if self.address is None and self._owns_ray else None  # else the actor's node address
        refs = {t.name: self._actors[t.name].address.remote(host, None if self.ports is None else self.ports[i])
                for i, t in enumerate(self.tasks)}
        ready, pending = ray.wait(list(refs.values()), num_returns=len(refs), timeout=self.start_timeout)
        if pending:
            waiting = [name for name, ref in refs.items() if ref in pending]
            raise RuntimeError(f"Ray has not started the actors of {', '.join(waiting)} after {self.start_timeout:g} s "
                               f"(each needs {self.num_cpus:g} CPU; the cluster has {ray.available_resources()} "
                               f"free): add nodes or lower --ray-num-cpus (or wait longer: --ray-start-timeout).")
        self._set_addresses(ray.get([refs[t.name] for t in self.tasks]))
        where = "a local Ray instance" if self.address is None else f"the Ray cluster at {self.address}"
        self.log(f"cluster on {where}: " + " ".join(f"{t.name}={t.address}" for t in self.tasks))
        cwd = None if self.working_dir else os.getcwd()
        starts = [self._actors[t.name].start.remote(self.command, self.task_env(t), cwd, self.python)
                  for t in self.tasks]
        ray.get(starts, timeout=self.start_timeout)

    def _poll(self, task: Task) -> None:
        """Streams the task's lines; reports its exit, then drains until its pipes close."""
        actor = self._actors[task.name]
        while True:
            try:
                lines, returncode, eof = self.ray.get(actor.poll.remote(POLL_SECONDS))
            except Exception as e:  # noqa: BLE001 - RayActorError and the like: the actor or its node is gone
                if not task.exited.is_set():
                    if not self._stopping:
                        self.log(f"{task.name}: its Ray actor is gone ({type(e).__name__}: "
                                 f"{str(e).strip().splitlines()[0] if str(e).strip() else ''})")
                    self._task_exited(task, ACTOR_LOST_STATUS)
                return
            for which, line in lines:
                self.task_line(task, which, line)
            if returncode is not None and not task.exited.is_set():
                self._task_exited(task, returncode)
            if eof:
                return

    # ------------------------------------------------------------------ stop
    def _terminate(self) -> None:
        """Asks every actor to stop its task (SIGTERM, SIGKILL after the grace period), waits for the
        output to drain, then ends the actors (and the local Ray instance)."""
        ray = self.ray
        # Every task's group, also of those that ended: processes they started may still run.
        refs = [actor.terminate.remote(self.grace_period) for actor in self._actors.values()]
        if refs:
            ray.wait(refs, num_returns=len(refs), timeout=self.grace_period + 10.0)
        end = time.monotonic() + self.grace_period + 10.0
        for poller in self._pollers:
            poller.join(timeout=max(0.0, end - time.monotonic()))
        self._kill_all()
        for task in self.tasks:
            if not task.exited.is_set():  # never started, or its actor did not answer
                task.returncode = ACTOR_LOST_STATUS if task.returncode is None else task.returncode
                task.exited.set()
        if self._owns_ray:
            ray.shutdown()
            self._owns_ray = False

    def _kill_all(self) -> None:
        for actor in self._actors.values():
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
