"""Tournaments: schedules, ratings and the results store. Pure library code.

- :mod:`tournaments.pairings` — round-robin (Berger tables), double round-robin
  and gauntlet schedules, and tables of any other size (every combination, or a
  balanced design) with seats rotated: lazy sequences of
  :class:`~tournaments.pairings.Pairing`; each game's seed.
- :mod:`tournaments.ratings` — Elo by maximum likelihood with error bars, LOS and
  the crosstable, for games of any seat count (split into two-player results by
  places), with mean score and mean place; the Elo difference of a two-player match.
- :mod:`tournaments.store` — the SQLite results store of one tournament and its
  kill-safe PGN file, checked when opened.
- :mod:`tournaments.recovery` — the store and the PGN checked against the schedule
  and the rules at every start, and repaired without losing a game.
- :mod:`tournaments.report` — the rating table as rich tables, JSON and CSV.

Nothing here but :mod:`tournaments.runner` runs games, and nothing knows the CLI:
the runner plays the pairings and records results; the other modules plan, store,
check and rate.
"""

from tournaments.pairings import (
    Pairing,
    Schedule,
    ScheduleError,
    berger_table,
    gauntlet,
    round_robin,
)
from tournaments.ratings import (
    EloDifference,
    Encounter,
    PlayerRating,
    RatingError,
    RatingTable,
    TableResult,
    elo_difference,
    rate,
)
from tournaments.store import DamagedStore, GameRecord, ResultStore, StoreError, append_pgn

__all__ = [
    "DamagedStore",
    "EloDifference",
    "Encounter",
    "GameRecord",
    "Pairing",
    "PlayerRating",
    "RatingError",
    "RatingTable",
    "ResultStore",
    "Schedule",
    "ScheduleError",
    "StoreError",
    "TableResult",
    "append_pgn",
    "berger_table",
    "elo_difference",
    "gauntlet",
    "rate",
    "round_robin",
]
