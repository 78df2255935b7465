"""A tournament on a local Dask cluster beside the same one on local worker processes:
``python bench/bench_cluster.py`` (needs ``pip install 'ivy-referee[cluster]'``).

It plays the same short round-robin of four bundled bots (random twice, differently
seeded, and greedy twice) twice in one run, each time in a fresh output directory:
once with ``concurrency`` local worker processes (``referee tournament``'s default
pool), once on a ``distributed.LocalCluster`` of as many one-thread worker processes
(``--cluster``, tournaments/cluster.py). It prints games per second for each and
their ratio. The cluster is started before the clock starts, as a deployed one
would be; connecting to it is timed. Every game is real: bot processes (sandboxed
where bubblewrap works), clocks, the results database and the PGN file.

What the ratio shows: a game on the cluster also goes through the scheduler (a task
submitted, run, its result fetched: milliseconds), and the referee on a Dask worker
shares its process with Dask's own threads; with fast games that shows, with long
games it vanishes. Both keep bots from game to game.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout

from distributed import LocalCluster  # noqa: E402

from referee.process import BotCommand  # noqa: E402
from tournaments.cluster import cluster_pool  # noqa: E402
from tournaments.config import Entrant, TournamentConfig, load_config  # noqa: E402
from tournaments.runner import DATABASE, run_tournament  # noqa: E402
from tournaments.store import ResultStore  # noqa: E402
from tournaments.workers import PoolFactory  # noqa: E402


def players() -> list[Entrant]:
    """Four bundled bots, run from the working directory (the repository: see :func:`main`),
    which is also the cluster's workers' (they inherit it)."""
    python = sys.executable

    def bot(name: str, *argv: str) -> Entrant:
        return Entrant(name, BotCommand(argv))

    return [
        bot("random", python, "-m", "bots.random", "--seed", "1"),
        bot("random-2", python, "-m", "bots.random", "--seed", "2"),
        bot("greedy", python, "-m", "bots.greedy"),
        bot("greedy-2", python, "-m", "bots.greedy"),
    ]


@dataclass(frozen=True, slots=True)
class Timing:
    """One run of the tournament: where, how many games, how long, how they ended."""

    label: str
    games: int
    seconds: float
    terminations: Counter[str]

    @property
    def per_second(self) -> float:
        """Games finished per second of wall-clock time."""
        return self.games / self.seconds


def run_once(
    args: argparse.Namespace, label: str, output: Path, pool: PoolFactory | None
) -> Timing:
    """Play the whole tournament into ``output`` with ``pool`` (``None``: local worker
    processes) and time it."""
    config: TournamentConfig = load_config(
        None,
        players=players(),
        tc=args.tc,
        options={"turn_limit": args.turn_limit},
        games=args.games,
        concurrency=args.workers,
        output=output,
        event="Benchmark",
    )
    started = time.perf_counter()
    trio.run(lambda: run_tournament(config, pool=pool))
    seconds = time.perf_counter() - started
    with ResultStore.open(output / DATABASE) as store:
        games = store.games()
    return Timing(label, len(games), seconds, Counter(game.termination for game in games))


def report(timing: Timing) -> None:
    forfeits = timing.terminations.get("time forfeit", 0)
    print(
        f"{timing.label}: {timing.games} games in {timing.seconds:.1f} s"
        f" = {timing.per_second:.2f} games/s ({forfeits} time forfeits)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tc", default="2+0.02", help="time control (default 2+0.02)")
    parser.add_argument("--turn-limit", type=int, default=100, help="Ivy's turn limit (100)")
    parser.add_argument(
        "--games", type=int, default=4, help="games per pairing (default 4: 24 in all)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="local worker processes, and one-thread cluster workers (default 2)",
    )
    args = parser.parse_args()
    os.chdir(REPO)  # where ``python -m bots.…`` resolves, for the bots and the cluster's workers
    names = ", ".join(entrant.name for entrant in players())
    print(f"ivy round-robin of {names}; tc {args.tc}, turn limit {args.turn_limit}")
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as scratch:
        local = run_once(args, f"local, {args.workers} worker processes", Path(scratch) / "l", None)
        report(local)
        with LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
        ) as cluster:
            pool = cluster_pool(cluster.scheduler_address)
            label = f"LocalCluster, {args.workers} one-thread workers"
            remote = run_once(args, label, Path(scratch) / "c", pool)
        report(remote)
    print(f"cluster vs local: {remote.per_second / local.per_second:.2f}x")


if __name__ == "__main__":
    main()
