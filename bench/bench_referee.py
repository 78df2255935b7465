"""Referee overhead: how much time the referee spends per turn, bots aside.

Two minimal bots that answer every request at once (a pass) play many games of
the full turn limit, reused across games as in any match. Printed:

- turns per second through the whole system (referee + bots + pipes), wall clock;
- the referee's own CPU time per turn (``time.process_time`` of this process,
  which runs the referee only: the bots are other processes), the figure the
  target "< 0.5 ms of referee time per turn" is about.

Run: ``python bench/bench_referee.py [--games 20] [--turn-limit 200]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import trio

from referee.clock import TimeControl
from referee.match import MatchConfig, run_match
from referee.process import BotCommand

INSTANT_BOT = textwrap.dedent(
    """
    import re, sys
    ident = re.compile(rb'"id":(\\d+)')
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if line.startswith(b'{"type":"turn"'):
            out.write(b'{"type":"turn","id":%s,"actions":[]}\\n' % ident.search(line).group(1))
        elif line.startswith(b'{"type":"new_game"'):
            out.write(b'{"type":"ready","id":%s,"name":"instant"}\\n' % ident.search(line).group(1))
        elif line.startswith(b'{"type":"quit"'):
            break
        out.flush()
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--turn-limit", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "instant_bot.py"
        script.write_text(INSTANT_BOT)
        commands = [
            BotCommand(argv=(sys.executable, "-u", str(script)), name=name)
            for name in ("one", "two")
        ]
        config = MatchConfig(
            control=TimeControl.parse("60+0"), options={"turn_limit": args.turn_limit}
        )
        wall, cpu = time.perf_counter(), time.process_time()
        score = trio.run(lambda: run_match(commands, config, games=args.games))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu

    turns = score.games * args.turn_limit
    print(f"games: {score.games}, turns: {turns} (both bots pass at once, reused across games)")
    print(f"wall: {wall:.2f} s -> {turns / wall:,.0f} turns/s through referee + bots + pipes")
    print(f"referee CPU: {cpu:.2f} s -> {1000 * cpu / turns:.3f} ms per turn (target < 0.5 ms)")


if __name__ == "__main__":
    main()
