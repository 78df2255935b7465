"""Ivy behind the generic :class:`~referee.games.base.Game` interface, for the runner.

A decision is a whole :class:`~referee.games.ivy.turns.Turn`; seat 0 is Green and
seat 1 Purple. The state adds the turn limit (spec §5, C5) to the position: once
turn L has been played without a winner the game is drawn at once, before the
Feed of turn L+1 could declare a win.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from referee.errors import IllegalDecision, SettingsError
from referee.games.base import GameSettings, Outcome
from referee.games.ivy.board import Player
from referee.games.ivy.position import Position
from referee.games.ivy.turns import Turn

DEFAULT_TURN_LIMIT = 200
"""The turn limit L when the settings give none (100 turns each)."""

MAX_TURN_LIMIT = 1_000_000
"""The highest turn limit a game may be set to (it travels in messages as a JSON integer)."""


@dataclass(frozen=True, slots=True)
class IvyState:
    """A game in progress: the position and the turn limit it is played under."""

    position: Position
    turn_limit: int = DEFAULT_TURN_LIMIT


class IvyGame:
    """The Ivy rules for the match runner (see :class:`referee.games.base.Game`)."""

    name: ClassVar[str] = "ivy"
    seat_names: ClassVar[tuple[str, ...] | None] = ("Green", "Purple")
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    scored_in_points: ClassVar[bool] = False
    alternating: ClassVar[bool] = True

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Ivy's one option, ``turn_limit`` (spec C5), as a whole number (text accepted)."""
        unknown = sorted(set(options) - {"turn_limit"})
        if unknown:
            raise SettingsError(f"unknown Ivy option {unknown[0]!r} (known: turn_limit)")
        limit = options.get("turn_limit", DEFAULT_TURN_LIMIT)
        if isinstance(limit, str) and limit.strip().isdigit():
            limit = int(limit)
        if type(limit) is not int or not 1 <= limit <= MAX_TURN_LIMIT:
            raise SettingsError(
                f"turn_limit must be a whole number from 1 to {MAX_TURN_LIMIT}, got {limit!r}"
            )
        return {"turn_limit": limit}

    def start(self, settings: GameSettings) -> IvyState:
        """The state for ``settings``: the start (or given) position and the turn limit."""
        if settings.players != 2:
            raise SettingsError(f"Ivy is played by 2 players, not {settings.players}")
        limit = self.check_options(settings.options)["turn_limit"]
        if settings.start is None:
            position = Position.START
        else:
            position = Position.from_string(settings.start)
        return IvyState(position, limit)

    def to_decide(self, state: IvyState) -> int | None:
        """The seat of the player to move, or ``None`` once the game is over."""
        if _over(state):
            return None
        return int(state.position.to_move)

    def chance_outcomes(self, state: IvyState) -> Sequence[Turn]:
        """Ivy has no chance: never asked."""
        raise IllegalDecision("Ivy has no chance events")

    def view(self, state: IvyState, seat: int) -> Position:
        """The position: Ivy hides nothing."""
        return state.position

    def observe(self, state: IvyState, actor: int, decision: Turn, observer: int) -> Turn:
        """Every turn in full: Ivy hides nothing."""
        return decision

    def apply(self, state: IvyState, seat: int, decision: Turn) -> IvyState:
        """The state after ``seat`` plays the turn ``decision``; raises ``IllegalDecision``."""
        position = state.position
        if _over(state) and (outcome := self.outcome(state)) is not None:
            raise IllegalDecision(f"turn {position.turn}: the game is over ({outcome.reason})")
        mover = position.to_move
        if seat != mover:
            raise IllegalDecision(
                f"turn {position.turn}: it is {mover.title}'s turn (seat {int(mover)}),"
                f" not seat {seat}'s"
            )
        if not isinstance(decision, Turn):
            raise IllegalDecision(
                f"turn {position.turn} ({mover.title}): a decision is an Ivy turn,"
                f" not {type(decision).__name__}"
            )
        return IvyState(position.play(decision), state.turn_limit)

    def turn_number(self, state: IvyState) -> int:
        """The §6 ``TURN`` of the turn about to be played."""
        return state.position.turn

    def outcome(self, state: IvyState) -> Outcome | None:
        """A draw once the turn limit is played (checked first, C5), or a win at Feed.

        It is made once per position, by the session; the questions asked of every
        turn (:meth:`to_decide`, :meth:`apply`) only ask :func:`_over`.
        """
        position = state.position
        if position.turn > state.turn_limit:
            return Outcome(
                scores=(0.5, 0.5), places=(1, 1), reason=f"turn limit {state.turn_limit} reached"
            )
        winner = position.winner_at_feed()
        if winner is None:
            return None
        if winner is Player.GREEN:
            return Outcome(scores=(1.0, 0.0), places=(1, 2), reason="Green reached the top")
        return Outcome(scores=(0.0, 1.0), places=(2, 1), reason="Purple reached the top")

    def format_decision(self, decision: Turn) -> str:
        """The §7 token of a turn."""
        return str(decision)

    def parse_decision(self, text: str) -> Turn:
        """The turn written as a §7 token (raises ``RuleError`` on bad notation)."""
        return Turn.parse(text)

    def notation(self, state: IvyState) -> str:
        """The §6 position string."""
        return str(state.position)

    def rule_settings(self, state: IvyState) -> Mapping[str, int]:
        """The settings in force: the turn limit."""
        return {"turn_limit": state.turn_limit}

    def settings_tags(self, state: IvyState) -> Mapping[str, str]:
        """The PGN tags recording the rule settings: the turn limit."""
        return {"TurnLimit": str(state.turn_limit)}


def _over(state: IvyState) -> bool:
    """Whether :meth:`IvyGame.outcome` has one for ``state``, without making it (cheaper)."""
    position = state.position
    return position.turn > state.turn_limit or position.winner_at_feed() is not None
