"""Referee overhead: how much time the referee spends per turn, bots aside.

Two minimal bots that answer every request at once (a pass) play many games of
the full turn limit, reused across games as in any match. Printed:

- turns per second through the whole system (referee + bots + pipes), wall clock;
- the referee's own CPU time per turn (``time.process_time`` of this process,
  which runs the referee only: the bots are other processes), the figure the
  target "< 0.5 ms of referee time per turn" is about.

Each figure is taken twice in the same run, with the sandbox off (the reference) and
with it on where it can be had, and the ratio is printed: the machine is noisy, so only
the side-by-side ratio means much.

Run: ``python bench/bench_referee.py [--games 20] [--turn-limit 200]``.
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
import time
from pathlib import Path

import trio

from referee.clock import TimeControl
from referee.match import MatchConfig, run_match
from referee.process import BotCommand
from referee.sandbox import SandboxPolicy, sandbox_problem

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


def measure(bot_dir: Path, games: int, turn_limit: int, mode: str) -> tuple[float, float]:
    """Play ``games`` games with the sandbox in ``mode``; → (wall seconds, referee CPU seconds)."""
    commands = [
        BotCommand(argv=("python", "-u", "instant_bot.py"), name=name, cwd=str(bot_dir))
        for name in ("one", "two")
    ]
    config = MatchConfig(
        control=TimeControl.parse("60+0"),
        options={"turn_limit": turn_limit},
        sandbox=SandboxPolicy(mode=mode),
    )
    wall, cpu = time.perf_counter(), time.process_time()
    score = trio.run(lambda: run_match(commands, config, games=games))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if score.draws != games:
        raise SystemExit(f"sandbox {mode}: expected {games} drawn games, got {score}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--turn-limit", type=int, default=200)
    args = parser.parse_args()
    modes = ["off"] + ([] if sandbox_problem() else ["on"])

    turns = args.games * args.turn_limit
    print(f"games: {args.games}, turns: {turns} (both bots pass at once, reused across games)")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "instant_bot.py").write_text(INSTANT_BOT)
        for mode in modes:
            wall, cpu = results[mode] = measure(Path(tmp), args.games, args.turn_limit, mode)
            print(
                f"sandbox {mode:>3}: {turns / wall:,.0f} turns/s through referee + bots + pipes; "
                f"referee CPU {1000 * cpu / turns:.3f} ms per turn (target < 0.5 ms)"
            )
    if "on" in results:
        (wall_off, cpu_off), (wall_on, cpu_on) = results["off"], results["on"]
        print(f"on/off ratio: wall {wall_on / wall_off:.2f}, referee CPU {cpu_on / cpu_off:.2f}")
    else:
        print(f"sandbox on: not measured ({sandbox_problem()})")


if __name__ == "__main__":
    main()
