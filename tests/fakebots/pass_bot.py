"""A well-behaved fake bot: says ``ready`` to every ``new_game`` and passes every turn.

Run as a script (``python -u pass_bot.py``). It speaks protocol version 1 with the
standard library only, so the tests do not depend on the code they test. The
helpers here are shared with ``misbehave.py``, which breaks one rule at a time.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

Message = dict[str, Any]


def send(message: Message) -> None:
    """Write one message as a JSON line to stdout."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def pass_turn(request: Message) -> None:
    """Answer a ``turn`` request with the empty turn."""
    send({"type": "turn", "id": request["id"], "actions": []})


def requests() -> Iterator[Message]:
    """The referee's messages, until ``quit`` or the end of stdin."""
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("type") == "quit":
            return
        yield message


def play(name: str = "pass", on_turn: Callable[[Message], None] = pass_turn) -> None:
    """Play games until told to quit: ``ready`` for each ``new_game``,
    ``on_turn`` for each ``turn``; ``game_over`` and ``error`` need no reply."""
    for message in requests():
        kind = message.get("type")
        if kind == "new_game":
            send({"type": "ready", "id": message["id"], "name": name, "version": "1.0"})
        elif kind == "turn":
            on_turn(message)


if __name__ == "__main__":
    play()
