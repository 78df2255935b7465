"""Fake bots for the tests, and what the tests need to run them and find leftovers.

The scripts here run as processes (``python -u pass_bot.py``, ``python -u
misbehave.py MODE``, ``python -u attack.py MODE``); this module is imported by the
tests (``tests/`` is on ``sys.path`` under pytest's default import mode).

Importing it makes the test process a *child subreaper* (``PR_SET_CHILD_SUBREAPER``):
every process a test starts and that is left behind — a bot's child, a sandbox —
becomes a child of the test process instead of init's. So :func:`leftover_processes`
finds leftovers among the test process's own children, without looking at any other
process of the machine. ``reaper.py`` does the same for a command run as a subprocess.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

from referee.process import BotCommand

FAKEBOTS = Path(__file__).parent
"""The folder of the fake bot scripts."""

MARK = "referee-test-match"
"""Every fake bot started through :func:`fake` carries it in its environment."""

PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


_become_subreaper()


def fake(mode: str | None = None, name: str | None = None) -> BotCommand:
    """A fake bot: the well-behaved pass bot, or ``misbehave.py MODE``, marked."""
    script = "pass_bot.py" if mode is None else "misbehave.py"
    argv = [sys.executable, "-u", str(FAKEBOTS / script)]
    if mode is not None:
        argv.append(mode)
    return BotCommand(
        argv=tuple(argv), name=name or (mode or "pass"), env={"REFEREE_TEST_MARK": MARK}
    )


def leftover_processes() -> list[str]:
    """Live (non-zombie) children of this process: bots, or what they started, that
    nobody stopped. Call it when no bot of the test should be running.

    Each is given as ``"PID STATE COMMAND LINE"``, so a failing check says who. Only
    this process's own children are looked at (see the module docstring).
    """
    found = []
    for task in os.listdir("/proc/self/task"):
        try:
            pids = Path(f"/proc/self/task/{task}/children").read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if state != "Z":
                found.append(f"{pid} {state} {command.decode(errors='replace').strip()}")
    return found


def stop_stranded_sandboxes() -> list[str]:
    """SIGKILL this process's children that are the one documented exception to "nothing
    outlives a killed referee" (docs/security.md, *Stopping*): a sandbox's first process
    that bwrap made but never let go on, because the referee was killed in that instant.
    It is pid 1 of its own PID namespace, still bwrap's code (its command line is
    bwrap's) and has no child: it never ran a line of the bot. Returns what it killed, as
    :func:`leftover_processes` describes them, so that a test can say so."""
    stranded = []
    for line in leftover_processes():
        pid, _, command = line.split(" ", 2)
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        nspids = next(
            (row.split()[1:] for row in status.splitlines() if row.startswith("NSpid:")), []
        )
        idle = not children and len(nspids) > 1 and nspids[-1] == "1"
        if idle and command.split(" ", 1)[0].endswith("bwrap"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
            stranded.append(line)
    return stranded
