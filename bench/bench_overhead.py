"""Referee overhead against the floor: µs per turn, two instant bots written in C.

In one run, in interleaved rounds (the machine is noisy: only side-by-side figures
mean much), each round measures:

- the floor (``bench/floor.py``): trio + msgspec doing one request/reply round trip
  per turn with the same bot, and nothing else;
- the referee playing Ivy games (``run_match``, a PGN written as ``referee match``
  does) between two copies of the bot, with the sandbox off, and on where it can be had.

The bot (``bench/instant_bot.c``) is compiled with the system ``cc`` into a temporary
directory; it passes at once. Printed per setting: the median over the rounds of the
wall time per turn (referee + bots + pipes) and of this process's CPU time per turn
(the referee's own: the bots are other processes), then the ratio referee / floor.

Run: ``python bench/bench_overhead.py [--rounds 5] [--games 10] [--turn-limit 200]``.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))  # floor.py, beside this file

import floor

from referee.clock import TimeControl
from referee.match import MatchConfig, run_match
from referee.process import BotCommand
from referee.sandbox import SandboxPolicy, sandbox_problem

BOT_SOURCE = Path(__file__).resolve().parent / "instant_bot.c"


def compile_bot(directory: Path) -> Path:
    """The instant bot, compiled into ``directory``."""
    cc = shutil.which("cc")
    if cc is None:
        raise SystemExit("no C compiler (cc) on PATH")
    executable = directory / "bot" / "instant_bot"  # its own dir: the sandbox shows it all
    executable.parent.mkdir()
    subprocess.run([cc, "-O2", "-o", str(executable), str(BOT_SOURCE)], check=True)
    return executable


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """→ (wall seconds, this process's CPU seconds) of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def referee_run(bot: Path, work: Path, games: int, turn_limit: int, mode: str) -> None:
    """``games`` Ivy games of ``turn_limit`` turns between two instant bots."""
    commands = [
        BotCommand(argv=(str(bot),), name=name, cwd=str(bot.parent)) for name in ("one", "two")
    ]
    config = MatchConfig(
        control=TimeControl.parse("60+0"),
        options={"turn_limit": turn_limit},
        sandbox=SandboxPolicy(mode=mode),
    )
    pgn = work / f"bench-{mode}.pgn"
    pgn.unlink(missing_ok=True)
    endings: list[str] = []
    trio.run(
        lambda: run_match(
            commands,
            config,
            games=games,
            pgn=pgn,
            on_game=lambda _, result, __: endings.append(result.ending.reason),
        )
    )
    played = pgn.read_text(encoding="utf-8").count(f'[PlyCount "{turn_limit}"]')
    if played != games:  # every game must go the distance, not end in a forfeit
        raise SystemExit(f"sandbox {mode}: games did not reach the turn limit: {endings[:3]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--turn-limit", type=int, default=200)
    args = parser.parse_args()
    turns = args.games * args.turn_limit
    modes = ["off"] + ([] if sandbox_problem() else ["on"])
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    print(f"{args.rounds} rounds of {turns} turns each ({args.games} games of {args.turn_limit})")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bot = compile_bot(work)
        runs: dict[str, Callable[[], object]] = {
            "floor": lambda: trio.run(floor.play, str(bot), turns)
        }
        for mode in modes:
            runs[f"referee, sandbox {mode}"] = functools.partial(
                referee_run, bot, work, args.games, args.turn_limit, mode
            )
        for _ in range(args.rounds):
            for name, run in runs.items():
                wall, cpu = timed(run)
                walls.setdefault(name, []).append(1e6 * wall / turns)
                cpus.setdefault(name, []).append(1e6 * cpu / turns)
    wall_floor, cpu_floor = statistics.median(walls["floor"]), statistics.median(cpus["floor"])
    for name in runs:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(
            f"{name:>20}: {wall:6.1f} µs/turn wall, {cpu:6.1f} µs/turn CPU"
            f"   × floor: wall {wall / wall_floor:.2f}, CPU {cpu / cpu_floor:.2f}"
        )
    if "on" not in modes:
        print(f"referee, sandbox on: not measured ({sandbox_problem()})")


if __name__ == "__main__":
    main()
