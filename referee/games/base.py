"""The small interface every game module implements.

A game is a pure, synchronous rules module: no I/O, no clocks, no trio. The
runner drives any game the same way::

    state = game.start(settings)
    while (outcome := game.outcome(state)) is None:
        seat = game.to_decide(state)
        view = game.view(state, seat)          # what that seat may see
        decision = ...                          # ask the bot for it
        state = game.apply(state, seat, decision)   # or IllegalDecision

A *decision* is what one request to one bot yields. In Ivy it is a whole turn;
in a game with chance events mid-turn (Verdant) a turn is several decisions, and
setup choices are decisions too, so the runner never assumes one message per
turn. Seats are numbered from 0 in turn order. Hidden information stays inside
the state: ``view(state, seat)`` returns only what that seat may see, and a
seeded random generator (``GameSettings.seed``) is the only source of chance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

State = TypeVar("State")
Decision = TypeVar("Decision")


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSettings:
    """How one game is set up.

    ``options`` holds the game's own rule settings (Ivy: ``turn_limit``); a game
    refuses options it does not know with :class:`~referee.errors.SettingsError`.
    ``start`` is a start position in the game's own notation, or ``None`` for the
    standard start.
    """

    players: int
    seed: int = 0
    start: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How a finished game ended, as the rules see it.

    ``scores`` gives each seat's game score (for two players: 1, ½ or 0), in
    seat order; ``places`` each seat's place (1 is best, ties share a place).
    ``reason`` is a short human sentence for the record ("Green reached the top").
    """

    scores: tuple[float, ...]
    places: tuple[int, ...]
    reason: str


class Game(Protocol[State, Decision]):
    """A game's rules behind the interface the runner, bots and tests use."""

    name: ClassVar[str]
    """Short lowercase name used on the command line and in records (``"ivy"``)."""

    seat_names: ClassVar[tuple[str, ...] | None]
    """Fixed names of the seats when the game has them (Ivy: Green, Purple)."""

    min_players: ClassVar[int]
    max_players: ClassVar[int]

    def start(self, settings: GameSettings) -> State:
        """The initial state for these settings (raises ``SettingsError``/``PositionError``)."""
        ...

    def to_decide(self, state: State) -> int | None:
        """The seat that must make the next decision, or ``None`` when the game is over."""
        ...

    def view(self, state: State, seat: int) -> Any:
        """What ``seat`` may see now (no hidden information), as the game's own value.

        ``protocol/`` turns it into a message; for a game of full information
        (Ivy) it is simply the position.
        """
        ...

    def apply(self, state: State, seat: int, decision: Decision) -> State:
        """The state after ``seat``'s ``decision``; raises ``IllegalDecision`` naming the rule."""
        ...

    def turn_number(self, state: State) -> int:
        """The number of the turn being played (Ivy: the §6 ``TURN``), counted from 1."""
        ...

    def outcome(self, state: State) -> Outcome | None:
        """How the game ended, or ``None`` while it goes on."""
        ...

    def format_decision(self, decision: Decision) -> str:
        """The decision in the game's record notation (Ivy: a §7 turn token)."""
        ...

    def parse_decision(self, text: str) -> Decision:
        """Inverse of :meth:`format_decision` (raises ``RuleError`` on bad notation)."""
        ...

    def notation(self, state: State) -> str:
        """The state in the game's position notation (Ivy: the §6 string)."""
        ...

    def rule_settings(self, state: State) -> Mapping[str, Any]:
        """The rule settings in force, defaults included (Ivy: ``{"turn_limit": 200}``).

        ``new_game`` announces them to every bot.
        """
        ...

    def settings_tags(self, state: State) -> Mapping[str, str]:
        """Rule settings to record with the game (Ivy: ``{"TurnLimit": "200"}``)."""
        ...
