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

Then throughput, again in interleaved rounds: a tournament of two instant bots
(``run_tournament``, sandbox off, the store, the PGN, the site and the ratings as
``referee tournament`` writes them) at concurrency 1 and 2 (one and two worker
processes), beside the floor run as one process and as two at once. Printed: the median
turns per second of each, and the ratio of two to one. The floor's ratio is no ceiling
for the tournament's: alone, its few processes wait on each other's messages, the CPUs
fall idle between them, and each wakes slowly (on the 2-core machine of README.md a lone
floor made fewer turns per second per process than two at once).

Run: ``python bench/bench_overhead.py [--rounds 5] [--games 10] [--turn-limit 200]
[--tournament-games 150]``. A tournament has a start-up (worker processes, the preflight)
that weighs more at concurrency 2, whose games take half the time: with too few games
the ratio says more about the start-up than about the games.
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
from tournaments.config import Entrant, TournamentConfig
from tournaments.runner import run_tournament

FLOOR = Path(__file__).resolve().parent / "floor.py"

FLOOR_TURNS_PER_TURN = 2
"""The floor processes play this many times a tournament's turns: it is so much faster that
with as many, its start-up (a Python process) would weigh more than its turns."""

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


def tournament_run(bot: Path, output: Path, games: int, turn_limit: int, workers: int) -> None:
    """A fresh tournament of ``games`` Ivy games of ``turn_limit`` turns between two
    instant bots, ``workers`` at once."""
    shutil.rmtree(output, ignore_errors=True)
    players = tuple(
        Entrant(name, BotCommand(argv=(str(bot),), cwd=str(bot.parent))) for name in ("one", "two")
    )
    config = TournamentConfig(
        players=players,
        output=output,
        tc=TimeControl.parse("60+0"),
        options={"turn_limit": turn_limit},
        games=games,
        concurrency=workers,
        sandbox=SandboxPolicy(mode="off"),
    )
    table = trio.run(lambda: run_tournament(config))
    if sum(row.games for row in table.players) != 2 * games:
        raise SystemExit(f"concurrency {workers}: not every game was played")
    pgn = (output / "games.pgn").read_text(encoding="utf-8")
    if pgn.count(f'[PlyCount "{turn_limit}"]') != games:
        raise SystemExit(f"concurrency {workers}: games did not reach the turn limit")


def floor_processes(bot: Path, turns: int, processes: int) -> None:
    """``processes`` floor programs at once, each playing ``turns`` turns."""
    command = [sys.executable, str(FLOOR), str(bot), "--turns", str(turns)]
    running = [subprocess.Popen(command, stdout=subprocess.DEVNULL) for _ in range(processes)]
    if any(child.wait() != 0 for child in running):
        raise SystemExit("the floor program failed")


def throughput(bot: Path, work: Path, rounds: int, games: int, turn_limit: int) -> None:
    """Turns per second of one and two floor processes, and of tournaments at concurrency
    1 and 2, in interleaved rounds; prints the medians and the ratios of two to one."""
    turns = games * turn_limit
    floor_turns = FLOOR_TURNS_PER_TURN * turns  # its start-up, not its turns, would weigh
    runs: dict[str, Callable[[], object]] = {}
    for workers in (1, 2):
        runs[f"floor x{workers}"] = functools.partial(floor_processes, bot, floor_turns, workers)
        runs[f"tournament c{workers}"] = functools.partial(
            tournament_run, bot, work / f"t{workers}", games, turn_limit, workers
        )
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            wall, _ = timed(run)
            done = {"floor x1": floor_turns, "floor x2": 2 * floor_turns}.get(name, turns)
            rates[name].append(done / wall)
    print(f"throughput: {rounds} rounds, {games} games of {turn_limit} turns a tournament")
    median = {name: statistics.median(values) for name, values in rates.items()}
    for name, rate in median.items():
        print(f"{name:>20}: {rate:9.0f} turns/s")
    print(f"{'floor x2 / x1':>20}: {median['floor x2'] / median['floor x1']:.2f}")
    print(f"{'tournament c2 / c1':>20}: {median['tournament c2'] / median['tournament c1']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--turn-limit", type=int, default=200)
    parser.add_argument("--tournament-games", type=int, default=150)
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
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        throughput(compile_bot(work), work, args.rounds, args.tournament_games, args.turn_limit)


if __name__ == "__main__":
    main()
