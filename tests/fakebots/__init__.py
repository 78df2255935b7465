"""Fake bots for the tests, and what the tests need to run them and find leftovers.

The scripts here run as processes (``python -u pass_bot.py``, ``python -u
misbehave.py MODE``); this module is imported by the tests (``tests/`` is on
``sys.path`` under pytest's default import mode).
"""

from __future__ import annotations

import sys
from pathlib import Path

from referee.process import BotCommand

FAKEBOTS = Path(__file__).parent
"""The folder of the fake bot scripts."""

MARK = "referee-test-match"
"""Every fake bot started through :func:`fake` carries it in its environment."""


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
    """Live (non-zombie) processes carrying :data:`MARK`: bots nobody stopped.

    Each is given as ``"PID STATE COMMAND LINE"``, so a failing check says who.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if MARK.encode() in environ and state != "Z":
            found.append(f"{entry.name} {state} {command.strip()}")
    return found
