"""How many games a minute the tournament runner plays: ``python bench/bench_tournament.py``.

It runs the same round-robin of four bundled bots — random, greedy, climber and
the Node.js ivy_bot.js (a second, differently seeded random bot when ``node`` is
missing) — at a fast time control, once with one game at a time and once with
two, each in a fresh output directory, and prints games per minute for each and
their ratio. ``--game verdant`` plays four bundled Verdant bots (two random, two
greedy) at tables of ``--players-per-table`` (default 4) instead. Every game is
real: bot processes, clocks, the results database and the PGN file, as in
``referee tournament``. Time forfeits are counted too: at a concurrency higher
than the machine's cores bots start losing on time, and the games per minute
stop meaning anything. Game lengths vary a lot (climber uses
its clock, random loses fast), so with few games the last long one runs alone
for a while and the speed-up at concurrency 2 looks smaller than it is.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout

from referee.process import BotCommand  # noqa: E402
from tournaments.config import Entrant, TournamentConfig, load_config  # noqa: E402
from tournaments.runner import DATABASE, run_tournament  # noqa: E402
from tournaments.store import ResultStore  # noqa: E402


def players(game: str) -> list[Entrant]:
    """The four bundled bots of ``game``, started from the repository so ``-m bots.…``
    resolves."""
    python = sys.executable

    def bot(name: str, *argv: str) -> Entrant:
        return Entrant(name, BotCommand(argv, cwd=str(REPO)))

    if game == "verdant":
        return [
            bot("random", python, "-m", "bots.verdant.random", "--seed", "1"),
            bot("random-2", python, "-m", "bots.verdant.random", "--seed", "2"),
            bot("greedy", python, "-m", "bots.verdant.greedy"),
            bot("greedy-2", python, "-m", "bots.verdant.greedy"),
        ]
    fourth = (
        bot("ivy-js", node, "bots/ivy_bot.js")
        if (node := shutil.which("node"))
        else bot("random-2", python, "-m", "bots.random", "--seed", "2")
    )
    return [
        bot("random", python, "-m", "bots.random", "--seed", "1"),
        bot("greedy", python, "-m", "bots.greedy"),
        bot("climber", python, "-m", "bots.climber"),
        fourth,
    ]


@dataclass(frozen=True, slots=True)
class Timing:
    """One run of the tournament: how many games, how long, how they ended."""

    concurrency: int
    games: int
    seconds: float
    terminations: Counter[str]

    @property
    def per_minute(self) -> float:
        """Games finished per minute of wall-clock time."""
        return 60 * self.games / self.seconds


def run_once(args: argparse.Namespace, concurrency: int, output: Path) -> Timing:
    """Play the whole tournament at this concurrency into ``output`` and time it."""
    ivy = args.game == "ivy"
    config: TournamentConfig = load_config(
        None,
        players=players(args.game),
        game=args.game,
        tc=args.tc,
        options={"turn_limit": args.turn_limit} if ivy else None,
        players_per_table=None if ivy else args.players_per_table,
        games=args.games if ivy else args.games * args.players_per_table,
        concurrency=concurrency,
        output=output,
        event="Benchmark",
    )
    started = time.perf_counter()
    trio.run(run_tournament, config)
    seconds = time.perf_counter() - started
    with ResultStore.open(output / DATABASE) as store:
        games = store.games()
    return Timing(concurrency, len(games), seconds, Counter(game.termination for game in games))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=["ivy", "verdant"], default="ivy", help="the game")
    parser.add_argument("--tc", default="2+0.02", help="time control (default 2+0.02)")
    parser.add_argument("--turn-limit", type=int, default=200, help="Ivy's turn limit (200)")
    parser.add_argument(
        "--players-per-table", type=int, default=4, help="Verdant: seats per game (default 4)"
    )
    parser.add_argument(
        "--games",
        type=int,
        default=8,
        help="games per pairing (default 8: 48 in all); Verdant: rotations of each table",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=[1, 2],
        help="concurrencies to time (default 1 2)",
    )
    args = parser.parse_args()
    names = ", ".join(entrant.name for entrant in players(args.game))
    rules = (
        f"turn limit {args.turn_limit}"
        if args.game == "ivy"
        else f"tables of {args.players_per_table}"
    )
    print(f"{args.game} round-robin of {names}; tc {args.tc}, {rules}")
    timings: list[Timing] = []
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as scratch:
        for concurrency in args.concurrency:
            timing = run_once(args, concurrency, Path(scratch) / f"c{concurrency}")
            timings.append(timing)
            forfeits = timing.terminations.get("time forfeit", 0)
            print(
                f"concurrency {concurrency}: {timing.games} games in {timing.seconds:.1f} s"
                f" = {timing.per_minute:.1f} games/min ({forfeits} time forfeits)"
            )
    base = timings[0]
    for timing in timings[1:]:
        print(
            f"concurrency {timing.concurrency} vs {base.concurrency}:"
            f" {timing.per_minute / base.per_minute:.2f}x"
        )


if __name__ == "__main__":
    main()
