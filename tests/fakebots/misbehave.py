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
- ``log_spam``: sends 100 ``log`` messages before each pass;
- ``garbage_ready``: answers ``new_game`` with a line that is not JSON;
- ``tell_ids``: plays like ``pass_bot.py``, and logs the id of every message it reads
  (``{"type": "log", "message": "id 3"}``) before answering it;
- ``listen``: answers a turn with a line that is not JSON, then writes every message
  it reads to stderr (``misbehave: read {...}``) and exits by itself, with code 0,
  when told to quit or when its input ends;
- ``huge_cell``: answers a turn with a creep on a cell whose name is a megabyte long;
- ``log_flood``: sends 201 ``log`` messages of 4000 U+10FFFF characters (which a log
  file escapes at ten bytes each) before each pass;
- ``measure``: plays like ``pass_bot.py``, and writes the type and size of every message
  it reads to stderr (``misbehave: read game_over 312``);
- ``split_reply``: answers ``new_game`` with its ``ready`` and, in the same write, the first
  half of its reply to the turn request it expects next (id one more than new_game's); the
  rest of that line once the request came; then passes;
- ``send:WHEN:BYTES``: writes exactly ``BYTES`` (one ``write``), and otherwise passes.
  ``BYTES`` is ``HEX*COUNT`` pieces joined by ``+`` (``5b*1000+0a*1`` is a thousand
  ``[`` and a newline), so that megabyte lines fit on a command line. ``WHEN``:
  ``turn``: at its first turn, ``BYTES`` and then its pass, in the same write;
  ``early``: its ``ready`` and then ``BYTES``, in the same write (before any request);
  ``late``: at its first turn, its pass and then ``BYTES``, in the same write;
  ``exit``: at its first turn, ``BYTES``, then it exits with code 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

from pass_bot import Message, pass_turn, play, requests, send

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


def answer_garbage_then_listen(request: Message) -> None:
    answer_garbage(request)
    for line in sys.stdin:
        complain(f"read {line.strip()}")
        if json.loads(line).get("type") == "quit":
            break
    complain("exiting by myself")
    sys.exit(0)


def answer_with_log_spam(request: Message) -> None:
    for i in range(LOG_SPAM_COUNT):
        send({"type": "log", "message": f"thinking hard ({i})"})
    pass_turn(request)


def answer_huge_cell(request: Message) -> None:
    cell = "x" * 1_000_000
    send({"type": "turn", "id": request["id"], "actions": [{"type": "creep", "cell": cell}]})


def answer_with_log_flood(request: Message) -> None:
    text = json.dumps({"type": "log", "message": "\U0010ffff" * 4000}, ensure_ascii=False)
    sys.stdout.write((text + "\n") * 201)
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


def garbage_ready() -> None:
    for message in requests():
        if message.get("type") == "new_game":
            sys.stdout.write("ready? not json\n")
            sys.stdout.flush()


def write_raw(data: bytes) -> None:
    """Write ``data`` to stdout at once, as it is."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    out.write(data)
    out.flush()


def line(message: Message) -> bytes:
    return (json.dumps(message) + "\n").encode()


def send_bytes(when: str, spec: str) -> None:
    """The ``send:WHEN:BYTES`` mode (see the module docstring)."""
    data = b"".join(
        bytes.fromhex(piece) * int(count)
        for piece, _, count in (item.partition("*") for item in spec.split("+"))
    )
    turns = 0
    for message in requests():
        kind = message.get("type")
        ready = line({"type": "ready", "id": message.get("id"), "name": "send"})
        reply = line({"type": "turn", "id": message.get("id"), "actions": []})
        if kind == "new_game":
            write_raw(ready + data if when == "early" else ready)
        elif kind == "turn":
            turns += 1
            if turns > 1:
                write_raw(reply)
            elif when == "turn":
                write_raw(data + reply)
            elif when == "late":
                write_raw(reply + data)
            elif when == "exit":
                write_raw(data)
                sys.exit(0)
            else:
                write_raw(reply)


def tell_ids() -> None:
    for message in requests():
        if "id" in message:
            send({"type": "log", "message": f"id {message['id']}"})
        if message.get("type") == "new_game":
            send({"type": "ready", "id": message["id"], "name": "tell_ids"})
        elif message.get("type") == "turn":
            pass_turn(message)


def measure() -> None:
    for text in sys.stdin:
        message = json.loads(text)
        complain(f"read {message.get('type')} {len(text.encode())}")
        kind = message.get("type")
        if kind == "quit":
            break
        if kind == "new_game":
            send({"type": "ready", "id": message["id"], "name": "measure"})
        elif kind == "turn":
            pass_turn(message)


def split_reply() -> None:
    for message in requests():
        kind = message.get("type")
        if kind == "new_game":
            ready = line({"type": "ready", "id": message["id"], "name": "split"})
            expected = line({"type": "turn", "id": message["id"] + 1, "actions": []})
            half = len(expected) // 2
            write_raw(ready + expected[:half])
        elif kind == "turn":
            write_raw(expected[half:])
            break
    play("split")


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
    "listen": answer_garbage_then_listen,
    "huge_cell": answer_huge_cell,
    "log_flood": answer_with_log_flood,
}

WHOLE_FAULTS: dict[str, Callable[[], None]] = {
    "exit_at_start": exit_at_start,
    "no_read": no_read,
    "ignore_sigterm": ignore_sigterm,
    "flood_stderr": flood_stderr,
    "fork_child": fork_child,
    "garbage_ready": garbage_ready,
    "tell_ids": tell_ids,
    "measure": measure,
    "split_reply": split_reply,
}


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) == 2 else ""
    if mode.startswith("send:"):
        _, when, spec = mode.split(":", 2)
        send_bytes(when, spec)
    elif mode in TURN_FAULTS:
        play(mode, TURN_FAULTS[mode])
    elif mode in WHOLE_FAULTS:
        WHOLE_FAULTS[mode]()
    else:
        modes = ", ".join(sorted([*TURN_FAULTS, *WHOLE_FAULTS, "send:WHEN:BYTES"]))
        sys.exit(f"usage: misbehave.py MODE, where MODE is one of: {modes}")


if __name__ == "__main__":
    main(sys.argv)
