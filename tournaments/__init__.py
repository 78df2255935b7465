"""Tournaments: schedules, ratings and the results store. Pure library code.

- :mod:`tournaments.pairings` — round-robin (Berger tables), double round-robin
  and gauntlet schedules as lists of :class:`~tournaments.pairings.Pairing`.
- :mod:`tournaments.ratings` — Elo by maximum likelihood with error bars, LOS and
  the crosstable; the Elo difference of a two-player match.
- :mod:`tournaments.store` — the SQLite results store of one tournament and its
  kill-safe PGN file.
- :mod:`tournaments.report` — the rating table as rich tables, JSON and CSV.

Nothing here runs games or knows the CLI: the runner plays the pairings and
records results; these modules only plan, store and rate.
"""

from tournaments.pairings import Pairing, ScheduleError, berger_table, gauntlet, round_robin
from tournaments.ratings import (
    EloDifference,
    Encounter,
    PlayerRating,
    RatingError,
    RatingTable,
    elo_difference,
    rate,
)
from tournaments.store import GameRecord, ResultStore, StoreError, append_pgn

__all__ = [
    "EloDifference",
    "Encounter",
    "GameRecord",
    "Pairing",
    "PlayerRating",
    "RatingError",
    "RatingTable",
    "ResultStore",
    "ScheduleError",
    "StoreError",
    "append_pgn",
    "berger_table",
    "elo_difference",
    "gauntlet",
    "rate",
    "round_robin",
]
