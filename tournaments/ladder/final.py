"""The final phase: freeze submissions, then a round-robin among the top K, rated by the fit.

:func:`run_final` takes the ladder's lock (so no ladder run is going on), freezes
submissions in the registry (once: the time is kept, and from then on the ladder plays
no more games and reads no more entries), and takes the top ``top`` entrants of the
leaderboard, each by its newest active version. Those play a round-robin tournament
(:func:`~tournaments.runner.run_tournament`) in ``<ladder>/final/`` with the ladder's
match settings, at least ``tables`` tables in all: each table of one cycle of the
round-robin plays ``games`` games, the smallest multiple of the seats that reaches
``tables``. The final ranking is that tournament's rating table: the maximum-likelihood
Plackett–Luce fit (Bradley–Terry for two seats) with its 95% intervals, in
``final/ratings.json``, ``final/ratings.csv`` and ``final/index.html``. Run again, it
resumes the same final (the frozen ladder gives the same top K).
"""

from __future__ import annotations

import dataclasses
import math

from tournaments.config import TournamentConfig
from tournaments.ladder.ladder import LadderError, LadderRun
from tournaments.ladder.settings import LadderConfig
from tournaments.ladder.site import write_site
from tournaments.progress import Progress
from tournaments.ratings import RatingTable
from tournaments.runner import locked_output, run_tournament
from tournaments.workers import Warn

FINAL = "final"
"""The final's folder inside the ladder's."""

DEFAULT_GAMES = 10
"""Without ``tables``: this many games per table of one round-robin cycle (rounded up to a
multiple of the seats)."""


def games_per_table(tables: int, cycle: int, seats: int) -> int:
    """Games per table of a round-robin cycle of ``cycle`` tables for at least ``tables``
    tables in all, a multiple of the seats (each player sits each seat equally often)."""
    return seats * max(1, math.ceil(tables / (cycle * seats)))


def final_config(
    config: LadderConfig, *, top: int, tables: int | None, warn: Warn
) -> TournamentConfig:
    """Freeze the ladder and make its final's tournament (see the module docstring)."""
    if top < config.seats or top < 2:
        raise LadderError(
            f"--top must be at least {max(2, config.seats)} (a table's seats), not {top}"
        )
    if tables is not None and tables < 1:
        raise LadderError(f"--tables must be at least 1, not {tables}")
    with locked_output(config.output):
        run = LadderRun.open(config, warn)
        try:
            frozen = run.registry.freeze()
            run.registry.log(f"submissions frozen for the final (top {top})")
            board = run.standings.leaderboard(run.versions(), run.registry.retired())[:top]
            if len(board) < max(2, config.seats):
                raise LadderError(
                    f"the final needs at least {max(2, config.seats)} ranked entrants;"
                    f" the ladder has {len(board)}"
                )
            by_player = {v.player: v for v in run.versions()}
            commands = {row.player: run.command(by_player[row.player]) for row in board}
            write_site(run)  # frozen, on the site at once
        finally:
            run.close()
    warn(f"submissions frozen at {frozen}; the final: {', '.join(commands)}")
    output = config.output / FINAL
    cycle = len(list(config.tournament(commands, output, 1).schedule()))
    wanted = DEFAULT_GAMES * cycle if tables is None else tables
    tournament = config.tournament(commands, output, games_per_table(wanted, cycle, config.seats))
    # No finalist's bot sees the ladder's store, site or logs.
    return dataclasses.replace(tournament, sandbox=tournament.sandbox.hiding(config.output))


async def run_final(
    config: LadderConfig,
    *,
    top: int,
    tables: int | None,
    progress: Progress | None = None,
    warn: Warn | None = None,
) -> tuple[TournamentConfig, RatingTable]:
    """Freeze, then play (or resume) the final; → its tournament and rating table."""
    say = warn or (lambda line: None)
    tournament = final_config(config, top=top, tables=tables, warn=say)
    table = await run_tournament(tournament, progress=progress, warn=say)
    publish(config, say)  # the ladder's index now links to the final
    return tournament, table


def publish(config: LadderConfig, warn: Warn) -> None:
    """Rewrite the ladder's site (under its lock)."""
    with locked_output(config.output):
        run = LadderRun.open(config, warn)
        try:
            write_site(run)
        finally:
            run.close()
