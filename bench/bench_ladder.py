"""A real ladder of real bot processes of known strength, and the matchmaker's speed.

    python bench/bench_ladder.py                     # 20 entrants, 10 minutes
    python bench/bench_ladder.py --entrants 10 --minutes 3
    python bench/bench_ladder.py --choose            # only the matchmaker, 1,000 entrants

The field is ``python -m bots.greedy --skill p`` (the greedy turn with probability p, a
random one otherwise) for p spread evenly from 0 to 1: the higher p, the stronger, so the
known order is by p. The ladder runs with worker processes (``concurrency`` = CPUs) for
the given time; at the half-way mark of the time one more entrant joins (p = 0.55 … the
middle of the field). Afterwards the stored games are replayed in order and, every
``--step`` games, Kendall's τ between the leaderboard and the known order is printed,
with the late entrant's place against its true place after each 10 of its games.

``--choose`` times :func:`~tournaments.ladder.matchmaking.choose_table` alone over a
field of 1,000 entrants (random μ, σ; a history of 20,000 tables), beside sorting 1,000
floats in the same run as the reference.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tournaments.ladder.entries import write_version
from tournaments.ladder.ladder import LadderRun, run_ladder
from tournaments.ladder.matchmaking import Candidate, History, choose_table
from tournaments.ladder.settings import load_ladder
from tournaments.ladder.standings import Standings
from tournaments.store import DATABASE, ResultStore

LATE = "late"


def kendall_tau(order: list[str], truth: list[str]) -> float:
    """τ-a between two orders of the same names (1: the same order, -1: reversed)."""
    place = {name: n for n, name in enumerate(truth)}
    ranks = [place[name] for name in order]
    n = len(ranks)
    if n < 2:
        return 1.0
    score = sum(1 if ranks[i] < ranks[j] else -1 for i in range(n) for j in range(i + 1, n))
    return score / (n * (n - 1) / 2)


def bench_choose(entrants: int = 1000, calls: int = 2000) -> None:
    rng = random.Random(1)
    field = [
        Candidate(f"p{n}", rng.gauss(25, 5), rng.uniform(0.8, 8.3), rng.randint(5, 200))
        for n in range(entrants)
    ]
    history = History(2)
    for _ in range(20_000):
        history.note(tuple(rng.sample([c.name for c in field], 2)))
    busy = {c.name for c in rng.sample(field, 10)}
    start = time.perf_counter()
    for _ in range(calls):
        choose_table(field, busy, history, placement_games=5)
    each = (time.perf_counter() - start) / calls
    floats = [c.mu for c in field]
    start = time.perf_counter()
    for _ in range(calls):
        sorted(floats)
    reference = (time.perf_counter() - start) / calls
    print(f"choose_table, {entrants} entrants: {each * 1e6:.0f} µs per table")
    print(f"reference, sorting {entrants} floats: {reference * 1e6:.0f} µs")


async def bench_ladder(entrants: int, minutes: float, step: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-ladder-"))
    ladder = folder / "bench.toml"
    ladder.write_text(
        f'event = "Bench"\noutput = "out"\ntc = "5+0.1"\nconcurrency = {os.cpu_count() or 1}\n'
        'placement_games = 5\nscan_interval = 1\nsandbox = "off"\n'
    )
    config = load_ladder(ladder)
    skills = {f"p{n:02d}": round(n / (entrants - 1), 3) for n in range(entrants)}
    for name, p in skills.items():
        write_version(config.entries, name, "v1", f"python -m bots.greedy --skill {p}", None)
    late_skill = 0.55
    started = time.monotonic()
    joined: dict[str, int] = {}

    def board(run: LadderRun) -> None:
        if not joined and time.monotonic() - started >= minutes * 30:
            joined["at"] = run.standings.count
            write_version(
                config.entries, LATE, "v1", f"python -m bots.greedy --skill {late_skill}", None
            )

    with trio.move_on_after(minutes * 60):
        await run_ladder(config, board=board)
    elapsed = time.monotonic() - started
    with ResultStore.open(config.output / DATABASE, read_only=True) as store:
        games = store.games(pgn=False)
    print(f"{len(games)} games in {elapsed:.0f} s ({len(games) / elapsed * 60:.0f} games/min),")
    print(f"{entrants} entrants of skill 0 to 1, {os.cpu_count()} CPUs; folder {folder}")
    truth = sorted(skills, key=lambda name: -skills[name])
    everyone = {**skills, LATE: late_skill}
    truth_all = sorted(everyone, key=lambda name: -everyone[name])
    standings = Standings()
    print("games  Kendall τ (leaderboard vs known order)")
    late_games = 0
    for number, game in enumerate(sorted(games, key=lambda g: g.index), start=1):
        standings.add(game)
        if f"{LATE}@v1" in game.players:
            late_games += 1
            if late_games % 10 == 0:
                order = _order(standings, list(everyone))
                place = order.index(LATE) + 1
                true = truth_all.index(LATE) + 1
                print(f"       {LATE} after {late_games} games: place {place}, true place {true}")
        if number % step == 0 or number == len(games):
            order = [name for name in _order(standings, list(skills))]
            print(f"{number:5d}  {kendall_tau(order, truth):+.3f}")


def _order(standings: Standings, names: list[str]) -> list[str]:
    present = [name for name in names if standings.games.get(f"{name}@v1")]
    return sorted(present, key=lambda name: -standings.skill(f"{name}@v1").ordinal)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=20)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--step", type=int, default=100, help="print τ every N games")
    parser.add_argument("--choose", action="store_true", help="time only the matchmaker")
    args = parser.parse_args()
    bench_choose()
    if not args.choose:
        trio.run(bench_ladder, args.entrants, args.minutes, args.step)


if __name__ == "__main__":
    main()
