"""A fake bot whose result is a fixed function of its game: it passes every turn, except
that it crashes at its first turn (losing the game) when the SHA-256 of the game's start
position and its seat name has a second byte divisible by 3. So a match's results depend only on
each game's opening and seating, never on the process or the worker that plays it.

With ``HOLD_DIR`` and ``HOLD_OPENING`` in its environment, while a file ``hold`` is in
that folder, it waits (until killed) at its first turn of each game whose start position's
SHA-256 starts with the hex digits ``HOLD_OPENING``, having written ``held-PID`` there to say
so: a test can then kill the referee while those games are played, remove ``hold`` and
recover the match.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

from pass_bot import Message, pass_turn, requests, send

position = ""
seat = ""
first_turn = False

for message in requests():
    kind = message.get("type")
    if kind == "new_game":
        position, seat, first_turn = message["position"], message["seat_name"], True
        send({"type": "ready", "id": message["id"], "name": "coin"})
    elif kind == "turn":
        if first_turn:
            first_turn = False
            folder, held = os.environ.get("HOLD_DIR"), os.environ.get("HOLD_OPENING", "-")
            digest = hashlib.sha256(position.encode()).hexdigest()
            if folder is not None and (Path(folder) / "hold").exists() and digest.startswith(held):
                (Path(folder) / f"held-{os.getpid()}").touch()
                time.sleep(600)
            if hashlib.sha256(f"{position}|{seat}".encode()).digest()[1] % 3 == 0:
                sys.exit(3)
        request: Message = message
        pass_turn(request)
