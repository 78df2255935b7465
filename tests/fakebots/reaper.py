"""Run a command as a child subreaper and report what it left alive: ``python reaper.py
COMMAND...``.

This process takes ``PR_SET_CHILD_SUBREAPER``, so every process the command starts and
leaves behind (orphans, double-forked daemons, sandboxes) becomes its child instead of
init's. Once the command has exited, it waits for those orphans to end (up to
``GRACE`` seconds: a sandbox killed a moment ago may still be dying), then kills and
reaps any still alive, names each on stderr as ``reaper: left alive: PID COMMAND``, and
ends with one line ``reaper: N left alive``. It exits with the command's status.

No process is looked for outside this process's own children.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE = 30.0


def children() -> list[int]:
    """This process's children, per /proc (its threads' lists)."""
    found: list[int] = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as file:
            found.extend(int(pid) for pid in file.read().split())
    return found


def living(pids: list[int]) -> list[int]:
    """Those of ``pids`` (children of this process) that are not zombies."""
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as file:
                state = file.read().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(pid)
    return found


def reap() -> None:
    """Reap every child that has exited."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def main() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("reaper: cannot become a child subreaper")
    status = subprocess.call(sys.argv[1:])
    deadline = time.monotonic() + GRACE
    while True:
        reap()
        alive = living(children())
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    for pid in alive:
        sys.stderr.write(f"reaper: left alive: {pid} {describe(pid)}\n")
        os.kill(pid, signal.SIGKILL)
    while children():
        reap()
        time.sleep(0.01)
    sys.stderr.write(f"reaper: {len(alive)} left alive\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
