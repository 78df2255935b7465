"""A big field: start-up time and memory of a 1,000-player round-robin.

In one run, side by side, two tournaments of the C instant bot (``bench/instant_bot.c``,
sandbox off, Ivy games of ``--turn-limit`` turns, concurrency 2), each stopped once
``--games`` games are recorded:

- the reference: 2 players, ``--games`` games between them;
- the big field: ``--players`` players (default 1,000), a round-robin of n(n−1)/2
  games (499,500), its schedule computed game by game.

Printed for each: the seconds until the first game starts (opening the store, the
schedule, and the preflight, which starts every player's bot once), the seconds until
``--games`` games are recorded, and the coordinator's peak memory (this process's
maximum resident set; each tournament runs in a fresh process of its own, so the two
peaks do not mix).

Run: ``python bench/bench_scale.py [--players 1000] [--games 200] [--turn-limit 20]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_overhead, beside this file

import contextlib

from bench_overhead import compile_bot

from referee.clock import TimeControl
from referee.process import BotCommand
from referee.sandbox import SandboxPolicy
from tournaments.config import Entrant, TournamentConfig
from tournaments.pairings import Pairing
from tournaments.progress import Progress
from tournaments.ratings import RatingTable
from tournaments.runner import TournamentStopped, run_tournament
from tournaments.workers import GameDone


class _Clock(Progress):
    """Notes when the first game starts, and stops the run after ``games`` games."""

    def __init__(self, games: int, stop: trio.CancelScope) -> None:
        self.games, self.stop = games, stop
        self.began = time.perf_counter()
        self.first: float | None = None
        self.finished = 0

    def game_started(self, pairing: Pairing) -> None:
        if self.first is None:
            self.first = time.perf_counter() - self.began

    def game_finished(self, pairing: Pairing, game: GameDone, standings: RatingTable) -> None:
        self.finished += 1
        if self.finished >= self.games:
            self.stop.cancel()


def one(bot: str, players: int, games: int, turn_limit: int, output: str) -> None:
    """Run one tournament (in this process) and print its figures as JSON."""
    command = BotCommand(argv=(bot,), cwd=str(Path(bot).parent))
    entrants = tuple(Entrant(f"p{number}", command) for number in range(1, players + 1))
    config = TournamentConfig(
        players=entrants,
        output=Path(output),
        tc=TimeControl.parse("60+0"),
        options={"turn_limit": turn_limit},
        games=games if players == 2 else 1,  # a single round-robin: one game a pairing
        concurrency=2,
        sandbox=SandboxPolicy(mode="off"),
    )

    async def run() -> _Clock:
        with trio.CancelScope() as scope:
            clock = _Clock(games, scope)
            with contextlib.suppress(TournamentStopped):
                await run_tournament(config, progress=clock)
        return clock

    clock = trio.run(run)
    took = time.perf_counter() - clock.began
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "first": clock.first,
                "seconds": took,
                "games": clock.finished,
                "peak_mib": peak_kib / 1024,
                "schedule": len(config.schedule()),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--turn-limit", type=int, default=20)
    parser.add_argument("--one", nargs=2, metavar=("BOT", "PLAYERS"), help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one[0], int(args.one[1]), args.games, args.turn_limit, args.output)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bot = compile_bot(work)
        for players in (2, args.players):
            output = work / f"out-{players}"
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    str(bot),
                    str(players),
                    "--games",
                    str(args.games),
                    "--turn-limit",
                    str(args.turn_limit),
                    "--output",
                    str(output),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            figures = json.loads(done.stdout.splitlines()[-1])
            print(
                f"{players:>5} players ({figures['schedule']:,} games scheduled):"
                f" first game after {figures['first']:.2f} s,"
                f" {figures['games']} games in {figures['seconds']:.2f} s,"
                f" coordinator peak {figures['peak_mib']:.0f} MiB"
            )


if __name__ == "__main__":
    main()
