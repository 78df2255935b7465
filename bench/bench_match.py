"""``referee match`` at concurrency 1 and 2: ``python bench/bench_match.py [--games N]``.

Plays the same match twice in one run, each time as the command a user types (``python -m
referee.cli match``, a process of its own, its start-up and its worker processes' included),
between two instant C bots (``bench/instant_bot.c``, compiled with ``cc``; sandbox off, so
that only the referee's own work is timed), Ivy games of ``--turn-limit`` turns, and prints
the median games and turns per second of each over ``--rounds`` interleaved rounds and the
ratio of concurrency 2 to 1. Beside it, the reference measured in the same rounds: the
trio + msgspec floor (``bench/floor.py``) as one process and as two at once, whose ratio is
how much a second process gains on this machine at the moment (other work on the machine
shows there first). The start-up cost is measured apart, as a one-game match at each
concurrency: what a short match pays before its first game (the interpreter, the preflight,
the worker process).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout

from bench_overhead import FLOOR_TURNS_PER_TURN, compile_bot, floor_processes  # noqa: E402


def match(bot: Path, work: Path, games: int, turn_limit: int, concurrency: int) -> float:
    """The wall time of one ``referee match`` of ``games`` games (a fresh PGN); checks it."""
    work = Path(tempfile.mkdtemp(dir=work))  # a fresh PGN and log folder each time
    pgn = work / "match.pgn"
    argv = [
        sys.executable, "-m", "referee.cli", "match", str(bot), str(bot),
        "--games", str(games), "--option", f"turn_limit={turn_limit}", "--tc", "60+1",
        "--sandbox", "off", "--concurrency", str(concurrency),
        "--pgn", str(pgn), "--log-dir", str(work / "logs"),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"referee match failed: {done.stderr.strip()}")
    played = pgn.read_text().count("[Round ")
    if played != games:
        raise SystemExit(f"referee match recorded {played} games, not {games}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--turn-limit", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    turns = args.games * args.turn_limit
    floor_turns = FLOOR_TURNS_PER_TURN * turns
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        bot = compile_bot(work)
        startup = {c: match(bot, work, 1, 2, c) for c in (1, 2)}
        print(
            f"start-up (a one-game match of 2 turns): {startup[1]:.2f} s at concurrency 1,"
            f" {startup[2]:.2f} s at concurrency 2"
        )
        rates: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            for concurrency in (1, 2):
                took = match(bot, work, args.games, args.turn_limit, concurrency)
                rates.setdefault(f"match c{concurrency}", []).append(turns / took)
            for processes in (1, 2):
                started = time.perf_counter()
                floor_processes(bot, floor_turns, processes)
                took = time.perf_counter() - started
                rates.setdefault(f"floor x{processes}", []).append(processes * floor_turns / took)
        median = {name: statistics.median(values) for name, values in rates.items()}
        print(f"{args.rounds} rounds; a match is {args.games} games of {args.turn_limit} turns")
        for name, rate in median.items():
            games = f" ({rate / args.turn_limit:.1f} games/s)" if name.startswith("match") else ""
            print(f"{name:>10}: {rate:9,.0f} turns/s{games}")
        print(f"match c2 / c1: {median['match c2'] / median['match c1']:.2f}x")
        print(f"floor x2 / x1: {median['floor x2'] / median['floor x1']:.2f}x (the reference)")


if __name__ == "__main__":
    main()
