"""The local server does not outlive the process that started it: a parent killed with SIGKILL runs no ``finally``
and no ``atexit``, and its server would hold a core and a port for ever (a calibration stopped with ``kill`` did)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PARENT = """
import sys, time
from ariadne_lc.local import LocalModelServer
server = LocalModelServer().start()
print(server._process.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat.rpartition(b")")[2].split()[:1] == [b"Z"]  # exited, not yet reaped by its new parent


def test_the_server_exits_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env={**os.environ}, cwd=Path.cwd()
    )
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        assert not _gone(server_pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 60  # a bound for a failure, not a speed target: the check runs every second
        while not _gone(server_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _gone(server_pid), "the server outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
