"""How fast, and in how little memory, records are read: ``python bench/bench_pgn.py``.

It writes a big PGN file the way a tournament does (by default 21,600 games, about
51 MB, like the 46 MB file of issue 8): real games between the bundled ``random`` and
``greedy`` bots, judged by the referee's own session, repeated with a pool of player
names. Then it times, each in a fresh Python process whose peak memory (``VmHWM``)
it reads from the kernel, side by side:

- the floor: the plainest one-pass scan a rating tool can do in Python, every line
  checked for a ``[White``/``[Black``/``[Result`` tag, results counted per pairing;
- ``ratings``: :func:`tournaments.runner.ratings_for_pgn`, the whole ``referee
  ratings`` computation (the headers-only reader, then the rating fit);
- ``replay reading``: every game of the file read into a record by
  :func:`referee.pgn.iter_pgn_file`, as ``referee replay`` does before its rules;
- ``replay``: ``referee replay``'s whole check (rules included) of the first games.

Each is also run on a quarter of the file: memory that does not grow with the file
shows as the same peak for both. An interpreter that only imports the modules is the
baseline of the memory column. Times leave imports out and are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout

from bots.arena import play_game  # noqa: E402
from bots.greedy import GreedyBot  # noqa: E402
from bots.random import RandomBot  # noqa: E402
from bots.sdk import Bot  # noqa: E402
from referee.clock import TimeControl  # noqa: E402
from referee.pgn import GameRecord, format_game  # noqa: E402

NAMES = ("ada", "bell", "curie", "darwin", "euler", "fermi", "gauss", "hopper")
"""The players of the generated file."""

PROGRAMS: dict[str, tuple[str, str]] = {
    "baseline": ("import referee.pgn, referee.replay, tournaments.runner", ""),
    "floor": (
        "from collections import Counter",
        """
counts = Counter()
white = black = None
with open(PATH, encoding="utf-8") as file:
    for line in file:
        if line.startswith("[White "):
            white = line[8:-3]
        elif line.startswith("[Black "):
            black = line[8:-3]
        elif line.startswith("[Result "):
            counts[white, black, line[9:-3]] += 1
games = sum(counts.values())
""",
    ),
    "ratings": (
        "from tournaments.runner import ratings_for_pgn",
        "games = ratings_for_pgn(PATH).games",
    ),
    "replay reading": (
        "from referee.pgn import iter_pgn_file",
        "games = sum(1 for _ in iter_pgn_file(PATH))",
    ),
    "replay": (
        "from itertools import islice\n"
        "from referee.pgn import iter_pgn_file\n"
        "from referee.replay import check_games",
        "games = sum(check.valid for check in check_games(islice(iter_pgn_file(PATH), LIMIT)))",
    ),
}
"""What each child process runs on the file ``PATH``: its imports (not timed), then the
timed part, which leaves the number of games it saw in ``games``."""

CHILD = """
import sys, time
sys.path.insert(0, {repo!r})
PATH, LIMIT = {path!r}, {limit!r}
{setup}
started = time.perf_counter()
{program}
took = time.perf_counter() - started
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(took, globals().get("games", 0), peak)
"""
"""A child: runs a program, prints seconds, games and its peak RSS in KiB.

The peak is the kernel's ``VmHWM`` of the child's own memory: ``ru_maxrss`` would
also count the pages it shared with this (large) process between fork and exec."""


@dataclass(frozen=True, slots=True)
class Run:
    """One measurement: seconds (best of the repeats), games seen, peak RSS in MiB."""

    seconds: float
    games: int
    peak_mib: float


def base_games(count: int) -> list[GameRecord]:
    """Real, seeded games: a quarter random against random (long), the rest with greedy."""
    control = TimeControl.parse("60+1")
    records = []
    green: Bot
    purple: Bot
    for seed in range(count):
        if seed % 4 == 0:
            green, purple = RandomBot(seed=seed), RandomBot(seed=seed + 1000)
        elif seed % 2:
            green, purple = GreedyBot(seed=seed), RandomBot(seed=seed)
        else:
            green, purple = RandomBot(seed=seed), GreedyBot(seed=seed)
        records.append(play_game(green, purple, time_control=control).record)
    return records


def write_file(path: Path, games: int, bases: list[GameRecord]) -> int:
    """Write ``games`` games to ``path`` as a tournament would; return its size in bytes."""
    pairs = itertools.cycle(itertools.permutations(NAMES, 2))
    with open(path, "w", encoding="utf-8") as out:
        for number in range(games):
            base = bases[number % len(bases)]
            white, black = next(pairs)
            tags = dict(base.tags, White=white, Black=black, Green=white, Purple=black)
            tags.update(Event="Bench", Round=str(number // 28 + 1))
            record = GameRecord(tags=tags, turns=base.turns, result=base.result)
            out.write(format_game(record))
    return path.stat().st_size


def measure(program: tuple[str, str], path: Path, limit: int, repeat: int) -> Run:
    """Run ``program`` on ``path`` in fresh processes; the best time, the largest peak."""
    setup, body = program
    code = CHILD.format(repo=str(REPO), path=str(path), limit=limit, setup=setup, program=body)
    best, games, peak = float("inf"), 0, 0
    for _ in range(repeat):
        child = subprocess.run(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, check=False
        )
        if child.returncode != 0:
            raise SystemExit(f"the measured program failed ({child.returncode})")
        seconds, count, kib = child.stdout.split()
        best, games, peak = min(best, float(seconds)), int(count), max(peak, int(kib))
    return Run(best, games, peak / 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=21_600, help="games in the file")
    parser.add_argument("--replay-games", type=int, default=500, help="games 'replay' checks")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement")
    args = parser.parse_args()

    print("playing the base games ...", flush=True)
    bases = base_games(40)
    with tempfile.TemporaryDirectory(prefix="bench-pgn-") as folder:
        full, quarter = Path(folder, "full.pgn"), Path(folder, "quarter.pgn")
        size = write_file(full, args.games, bases)
        write_file(quarter, args.games // 4, bases)
        print(f"{full.name}: {args.games:,} games, {size / 1e6:.1f} MB")
        print(
            f"{'':16} {'seconds':>8} {'× floor':>8} {'games':>8} {'peak MiB':>9} {'¼ file MiB':>11}"
        )
        floor = None
        for name, program in PROGRAMS.items():
            limit = args.replay_games
            run = measure(program, full, limit, args.repeat)
            small = measure(program, quarter, limit, 1)
            floor = run.seconds if name == "floor" else floor
            whole_file = name not in ("baseline", "replay")  # 'replay' checks a few games
            ratio = f"{run.seconds / floor:8.1f}" if floor and whole_file else ""
            seconds = "" if name == "baseline" else f"{run.seconds:8.3f}"
            print(
                f"{name:16} {seconds:>8} {ratio:>8} {run.games:>8,}"
                f" {run.peak_mib:9.1f} {small.peak_mib:11.1f}",
                flush=True,
            )
    print(f"('replay' checks the first {args.replay_games} games, rules included.)")


if __name__ == "__main__":
    main()
