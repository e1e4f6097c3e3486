"""What ``sparseflow train`` shows: a bar that fits an 80-column terminal (a pseudo-terminal here),
whole lines only in a pipe (one per epoch), and a clean stop with a checkpoint on Ctrl-C."""

import fcntl
import json
import os
import pty
import queue
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

import pytest

from tests.models.test_input_data import _config, _csv, _rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEADLINE = 240
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("COLUMNS", None)
    return env


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "train.csv").write_text(_csv(_rows(12000, 0)))
    (tmp_path / "test.csv").write_text(_csv(_rows(300, 1)))
    return tmp_path


def _command(cfg, *more):
    return [sys.executable, "-m", "sparseflow", "train", cfg, *more]


def test_the_bar_fits_an_80_column_terminal_and_epoch_lines_start_their_own_line(workdir):
    cfg = _config(workdir, **{"epochs = 3": "epochs = 4", "batch_size = 64": "batch_size = 32"})
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(_command(cfg), cwd=workdir, env=_env(), stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = _ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    segments = re.split(r"[\r\n]", text)
    assert any("%|" in s for s in segments), text[-2000:]  # a bar was drawn
    too_wide = [s for s in segments if "|" in s and len(s) > 80]  # (other lines are text: a terminal wraps them)
    assert not too_wide, too_wide[:3]
    for n in range(1, 5):
        assert re.search(rf"(^|[\r\n])epoch {n}/4  loss ", text), text[-2000:]  # never after a bar on its line
    assert json.loads(text.strip().splitlines()[-1])["auc"] > 0.5  # the result last


def test_a_pipe_gets_whole_lines_one_per_epoch(workdir):
    cfg = _config(workdir)
    proc = subprocess.run(_command(cfg), cwd=workdir, env=_env(), capture_output=True, text=True, timeout=DEADLINE)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "%|" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert [line.split("  ")[0] for line in lines if line.startswith("epoch ")] == ["epoch 1/3", "epoch 2/3",
                                                                                     "epoch 3/3"]
    assert len(lines) == 7  # checkpoints, reading, read, three epochs, eval
    assert list(json.loads(proc.stdout))[:3] == ["auc", "accuracy", "logloss"]


def _lines(stream):
    q = queue.Queue()

    def pump():
        for line in stream:
            q.put(line)
        q.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return q


def test_ctrl_c_saves_a_checkpoint_prints_one_line_and_the_next_run_resumes(workdir):
    cfg = _config(workdir, **{"epochs = 3": "epochs = 40"})
    proc = subprocess.Popen(_command(cfg), cwd=workdir, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    err = _lines(proc.stderr)
    seen, deadline = [], time.monotonic() + DEADLINE
    while time.monotonic() < deadline:  # wait for the first epoch's line, then interrupt in the second
        line = err.get(timeout=max(0.1, deadline - time.monotonic()))
        assert line is not None, "".join(seen)
        seen.append(line)
        if line.startswith("epoch 1/40"):
            break
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=DEADLINE)
    out = proc.stdout.read()  # (one line: no pipe fills)
    while (line := err.get(timeout=60)) is not None:
        seen.append(line)
    assert proc.returncode == 130, "".join(seen)
    text = "".join(seen)
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    last = seen[-1]
    assert last.startswith("sparseflow train: interrupted at step "), seen[-5:]
    assert last.startswith("sparseflow train: interrupted at step ") and "saved " in last and "resume" in last
    result = json.loads(out.strip().splitlines()[-1])
    step = result["step"]
    assert result["interrupted"] is True and result["checkpoint"].endswith(f"model.ckpt-{step}")
    assert os.path.exists(result["checkpoint"] + ".index")
    steps_per_epoch = -(-12000 // 64)
    assert step >= steps_per_epoch  # (the work of an unfinished epoch is kept too)
    epochs = step // steps_per_epoch + 1  # finish the interrupted epoch
    again = subprocess.run(_command(cfg, "--epochs", str(epochs)), cwd=workdir, env=_env(), capture_output=True,
                           text=True, timeout=DEADLINE)
    assert again.returncode == 0, again.stderr
    assert f"resumed from {result['checkpoint']} at step {step}" in again.stderr
    assert f"epoch {epochs}/{epochs}" in again.stderr and f"epoch {epochs - 1}/{epochs}" not in again.stderr
