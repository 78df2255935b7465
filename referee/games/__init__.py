"""The games the referee knows: one :class:`GameEntry` per game, registered once.

An entry puts together what the generic layers need from a game: its rules (behind
the :class:`~referee.games.base.Game` interface), its wire codec (how its views and
decisions travel in protocol messages) and its terminal renderer. Adding a game is
one folder under ``referee/games/`` that defines ``ENTRY`` and one line in
:data:`_ENTRIES`.

Nothing in this package imports trio or the runner: rules are pure functions of
state, shared by the referee, the bots and the tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.errors import SettingsError
from referee.games.base import CHANCE, Breakdown, Game, GameSettings, Outcome, game_seed


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEntry:
    """Everything the generic layers need from one game.

    ``render(view, color)`` draws a seat's view (what ``rules.view`` returns) for
    the terminal, with ANSI colours only when ``color``; ``render_public(state,
    color)`` draws what every seat may see, for spectators and ``referee show``.
    ``person_help`` tells a person at the terminal how to type a decision (in
    ``rules.parse_decision``'s notation); ``person_moves(view)`` lists, in lines,
    the legal decisions (or first steps of one) a seat with that view may make.
    """

    rules: Game[Any, Any]
    codec: Any  # protocol.messages.GameCodec: typed loosely to keep protocol/ out of here
    render: Callable[[Any, bool], str]
    render_public: Callable[[Any, bool], str]
    person_help: str
    person_moves: Callable[[Any], list[str]] = lambda view: [
        "This game does not list its legal decisions."
    ]


DEFAULT_GAME = "ivy"
"""The game played when none is named (and of records that name none: the first game)."""

_ENTRIES: dict[str, str] = {
    "ivy": "referee.games.ivy",
    "verdant": "referee.games.verdant",
}
"""Each game's name and the module that defines its ``ENTRY``."""


def game_names() -> tuple[str, ...]:
    """The names of the registered games, sorted."""
    return tuple(sorted(_ENTRIES))


def get_entry(name: str) -> GameEntry:
    """The entry of the game registered under ``name`` (case-insensitive)."""
    try:
        module = _ENTRIES[name.lower()]
    except KeyError:
        known = ", ".join(game_names())
        raise SettingsError(f"unknown game {name!r} (known: {known})") from None
    entry = importlib.import_module(module).ENTRY
    assert isinstance(entry, GameEntry)
    return entry


def get_game(name: str) -> Game[Any, Any]:
    """The rules of the game registered under ``name`` (case-insensitive)."""
    return get_entry(name).rules


__all__ = [
    "CHANCE",
    "DEFAULT_GAME",
    "Breakdown",
    "Game",
    "GameEntry",
    "GameSettings",
    "Outcome",
    "game_names",
    "game_seed",
    "get_entry",
    "get_game",
]
