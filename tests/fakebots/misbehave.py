"""A fake bot that breaks exactly one rule: ``python -u misbehave.py MODE``.

Apart from its fault it plays like ``pass_bot.py`` (``ready`` to every
``new_game``, then passes), so a test can aim at one failure at a time. Modes:

- ``timeout``: never answers a turn (but keeps reading, and quits when told);
- ``garbage``: answers a turn with a line that is not JSON;
- ``invalid``: answers a turn with valid JSON that is no valid message
  (``"actions": "pass"``);
- ``oversized``: answers a turn with a 2 MiB line (a turn padded by an unknown field);
- ``crash``: at its first turn writes a line to stderr and exits with code 3;
- ``exit_at_start``: writes a line to stderr and exits with code 0 at once;
- ``no_read``: never reads stdin, just sleeps for a minute;
- ``ignore_sigterm``: ignores SIGTERM (saying so on stderr), never answers a turn
  and does not exit when stdin ends or when told to quit;
- ``flood_stderr``: writes to stderr without end while playing normally;
- ``flood_stdout``: at its first turn writes bytes without a newline, without end;
- ``fork_child``: forks a child that sleeps for a minute in the same process
  group (its pid goes to stderr as ``forked child PID``), then plays ``timeout``;
- ``close_stdout``: at its first turn closes its stdout and goes on reading;
- ``illegal``: answers a turn with a creep on e12 (the top, never reachable at once);
- ``log_spam``: sends 100 ``log`` messages before each pass.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

from pass_bot import Message, pass_turn, play, send

SLEEP_SECONDS = 60
LOG_SPAM_COUNT = 100


def complain(text: str) -> None:
    """Write one line to stderr."""
    sys.stderr.write(f"misbehave: {text}\n")
    sys.stderr.flush()


def ignore(request: Message) -> None:
    """Answer nothing."""


def answer_garbage(request: Message) -> None:
    sys.stdout.write("this is not json\n")
    sys.stdout.flush()


def answer_invalid(request: Message) -> None:
    send({"type": "turn", "id": request["id"], "actions": "pass"})


def answer_oversized(request: Message) -> None:
    send({"type": "turn", "id": request["id"], "actions": [], "padding": "x" * (2 << 20)})


def answer_illegal(request: Message) -> None:
    send({"type": "turn", "id": request["id"], "actions": [{"type": "creep", "cell": "e12"}]})


def answer_with_log_spam(request: Message) -> None:
    for i in range(LOG_SPAM_COUNT):
        send({"type": "log", "message": f"thinking hard ({i})"})
    pass_turn(request)


def crash(request: Message) -> None:
    complain(f"crashing on purpose at turn {request.get('turn')}")
    sys.exit(3)


def flood_stdout(request: Message) -> None:
    block = b"x" * 65536
    while True:
        os.write(1, block)


def close_stdout(request: Message) -> None:
    sys.stdout.flush()
    with contextlib.suppress(OSError):
        os.close(1)


def exit_at_start() -> None:
    complain("exiting at start")
    sys.exit(0)


def no_read() -> None:
    time.sleep(SLEEP_SECONDS)


def ignore_sigterm() -> None:
    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        complain("ignoring SIGTERM")

    signal.signal(signal.SIGTERM, on_sigterm)
    play("ignore_sigterm", ignore)
    # Short naps: a signal landing just before a long sleep starts would wait
    # for the sleep to end before its handler runs.
    while True:
        time.sleep(0.05)


def flood_stderr() -> None:
    block = b"".join(b"misbehave: flooding stderr, line %d\n" % i for i in range(100))

    def flood() -> None:
        with contextlib.suppress(OSError):
            while True:
                os.write(2, block)

    threading.Thread(target=flood, daemon=True).start()
    play("flood_stderr")


def fork_child() -> None:
    child = os.fork()
    if child == 0:
        time.sleep(SLEEP_SECONDS)
        os._exit(0)
    complain(f"forked child {child}")
    play("fork_child", ignore)


TURN_FAULTS: dict[str, Callable[[Message], None]] = {
    "timeout": ignore,
    "garbage": answer_garbage,
    "invalid": answer_invalid,
    "oversized": answer_oversized,
    "crash": crash,
    "flood_stdout": flood_stdout,
    "close_stdout": close_stdout,
    "illegal": answer_illegal,
    "log_spam": answer_with_log_spam,
}

WHOLE_FAULTS: dict[str, Callable[[], None]] = {
    "exit_at_start": exit_at_start,
    "no_read": no_read,
    "ignore_sigterm": ignore_sigterm,
    "flood_stderr": flood_stderr,
    "fork_child": fork_child,
}


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) == 2 else ""
    if mode in TURN_FAULTS:
        play(mode, TURN_FAULTS[mode])
    elif mode in WHOLE_FAULTS:
        WHOLE_FAULTS[mode]()
    else:
        modes = ", ".join(sorted([*TURN_FAULTS, *WHOLE_FAULTS]))
        sys.exit(f"usage: misbehave.py MODE, where MODE is one of: {modes}")


if __name__ == "__main__":
    main(sys.argv)
