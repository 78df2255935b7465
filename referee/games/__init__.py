"""Game rules modules, each behind the :class:`~referee.games.base.Game` interface.

Nothing in this package imports trio or anything else from the project outside
``referee.errors``: rules are pure functions of state, shared by the referee, the
bots and the tests.
"""

from __future__ import annotations

from referee.errors import SettingsError
from referee.games.base import Game, GameSettings, Outcome


def get_game(name: str) -> Game:
    """The game module registered under ``name`` (case-insensitive)."""
    from referee.games.ivy.game import IvyGame

    games: dict[str, Game] = {"ivy": IvyGame()}
    try:
        return games[name.lower()]
    except KeyError:
        known = ", ".join(sorted(games))
        raise SettingsError(f"unknown game {name!r} (known: {known})") from None


__all__ = ["Game", "GameSettings", "Outcome", "get_game"]
