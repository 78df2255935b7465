"""A fake bot that spends time before each pass: ``burn SECS CHILDREN`` (each of CHILDREN
processes uses SECS of CPU time, the bot waits for them) or ``sleep SECS`` (no CPU)."""

from __future__ import annotations

import os
import sys
import time

from pass_bot import Message, pass_turn, play


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def main(mode: str, seconds: float, children: int = 1) -> None:
    def on_turn(request: Message) -> None:
        if mode == "sleep":
            time.sleep(seconds)
        else:
            pids = []
            for _ in range(children):
                pid = os.fork()
                if pid == 0:
                    burn(seconds)
                    os._exit(0)
                pids.append(pid)
            for pid in pids:
                os.waitpid(pid, 0)
        pass_turn(request)

    play(mode, on_turn)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), *map(int, sys.argv[3:]))
