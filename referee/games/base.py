"""The small interface every game module implements.

A game is a pure, synchronous rules module: no I/O, no clocks, no trio. The
driver runs any game the same way (OpenSpiel's model: a state says who acts next,
a seat, *chance*, or nobody)::

    state = game.start(settings)
    while (actor := game.to_decide(state)) is not None:
        if actor == CHANCE:
            decision = rng.choice(game.chance_outcomes(state))   # recorded like any other
        else:
            view = game.view(state, actor)       # what that seat may see
            decision = ...                       # ask the seat for it
        state = game.apply(state, actor, decision)   # or IllegalDecision naming the rule

A *decision* is what one request to one seat yields. In Ivy it is a whole turn;
in Verdant a turn can pause at a chance event and continue with a second request,
and set-up choices are decisions too, so the driver never assumes one message per
turn. Seats are numbered from 0 in turn order; :data:`CHANCE` is the chance seat.
Hidden information stays inside the state: ``view(state, seat)`` returns only what
that seat may see, and ``observe`` says how a decision looks to each other seat.
The rules never draw random numbers themselves: the driver samples every chance
event from the game's seeded generator, and the record lists each outcome, so a
record replays (and is verified) without any generator.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Protocol, TypeVar

State = TypeVar("State")
Decision = TypeVar("Decision")

CHANCE: Final = -1
"""The chance seat: ``to_decide`` returns it when the next event is a random draw."""

Breakdown = tuple[tuple[str, int], ...]
"""One seat's final score by category, in the game's order: ``(("plants", 20), …)``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSettings:
    """How one game is set up.

    ``options`` holds the game's own rule settings (Ivy: ``turn_limit``; Verdant:
    ``variant``), as :meth:`Game.check_options` returns them. ``start`` is a start
    position in the game's own notation, or ``None`` for the standard start.
    ``seed`` feeds the generator the driver samples chance events from.
    """

    players: int
    seed: int = 0
    start: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def game_seed(seed: int | None, index: int, attempt: int = 1) -> int:
    """The seed of attempt ``attempt`` (from 1) at game ``index`` (from 0) of a match or
    tournament seeded with ``seed``: the one home of that derivation.

    The first 63 bits of the SHA-256 of ``"<seed>:<index>"`` for the first attempt, and of
    ``"<seed>:<index>:<attempt>"`` for each later one (a game played again after a lost
    worker or a restart): unlike ``seed + index``, two games, or two attempts at one game,
    never share a generator by accident (Python seeds ``Random(-5)`` and ``Random(5)``
    alike), a game played again never sees the deal of an attempt before it, and the value
    fits a signed 64-bit integer. Without a ``seed``, a new secret one (63 random bits from
    the system) at every call: a seed a bot could guess would tell it every card still to
    come.
    """
    if attempt < 1:
        raise ValueError(f"attempts are counted from 1, not {attempt}")
    if seed is None:
        return secrets.randbits(63)
    text = f"{seed}:{index}" if attempt == 1 else f"{seed}:{index}:{attempt}"
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How a finished game ended, as the rules see it.

    ``scores`` gives each seat's score in seat order, in the game's own unit
    (Ivy: 1, ½ or 0; Verdant: points); ``places`` each seat's place (1 is best,
    ties share a place and the next place is skipped: 1, 1, 3). ``reason`` is a
    short human sentence for the record ("Green reached the top"). ``breakdown``
    is, for a game scored by categories, each seat's score by category (empty
    otherwise); its values add up to the seat's score.
    """

    scores: tuple[float, ...]
    places: tuple[int, ...]
    reason: str
    breakdown: tuple[Breakdown, ...] = ()


class Game(Protocol[State, Decision]):
    """A game's rules behind the interface the driver, bots and tests use."""

    name: ClassVar[str]
    """Short lowercase name used on the command line and in records (``"ivy"``)."""

    seat_names: ClassVar[tuple[str, ...] | None]
    """Fixed names of the seats when the game has them (Ivy: Green, Purple)."""

    min_players: ClassVar[int]
    max_players: ClassVar[int]

    scored_in_points: ClassVar[bool]
    """True when ``Outcome.scores`` are points (Verdant): a forfeit then scores 0 for every
    seat and records ``Places``/``Scores``; False for a duel scored 1, ½ or 0 (Ivy)."""

    alternating: ClassVar[bool]
    """True when every turn is exactly one decision, seats take turns in order and
    there is no chance (Ivy): records then number turns as chess PGN numbers moves.
    Otherwise every recorded decision names its actor (docs/records.md)."""

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` checked and completed with defaults, in canonical types.

        Values may arrive as text (``--option turn_limit=50``) or typed (TOML);
        unknown keys and bad values raise ``SettingsError`` naming the option.
        """
        ...

    def start(self, settings: GameSettings) -> State:
        """The initial state (raises ``SettingsError``/``PositionError``); draws nothing."""
        ...

    def to_decide(self, state: State) -> int | None:
        """The seat that decides next, :data:`CHANCE`, or ``None`` when the game is over."""
        ...

    def chance_outcomes(self, state: State) -> Sequence[Decision]:
        """When :data:`CHANCE` decides: its equally likely outcomes, in a fixed order."""
        ...

    def view(self, state: State, seat: int) -> Any:
        """What ``seat`` may see now (no hidden information), as the game's own value."""
        ...

    def apply(self, state: State, seat: int, decision: Decision) -> State:
        """The state after ``seat``'s (or chance's) ``decision``; raises ``IllegalDecision``."""
        ...

    def observe(
        self, state: State, actor: int, decision: Decision, observer: int
    ) -> Decision | None:
        """``actor``'s ``decision``, about to be applied to ``state``, as ``observer`` sees
        it: the decision itself when it hides nothing from that seat, a redacted one,
        or ``None`` when the seat learns nothing of it."""
        ...

    def turn_number(self, state: State) -> int:
        """The number of the turn being played, counted from 1."""
        ...

    def outcome(self, state: State) -> Outcome | None:
        """How the game ended, or ``None`` while it goes on."""
        ...

    def format_decision(self, decision: Decision) -> str:
        """The decision (chance outcomes too) in the game's record notation: one word."""
        ...

    def parse_decision(self, text: str) -> Decision:
        """Inverse of :meth:`format_decision` (raises ``RuleError`` on bad notation)."""
        ...

    def notation(self, state: State) -> str:
        """The state in the game's position notation, one line (Ivy: the §6 string)."""
        ...

    def rule_settings(self, state: State) -> Mapping[str, Any]:
        """The rule settings in force, defaults included (Ivy: ``{"turn_limit": 200}``).

        ``new_game`` announces them to every bot.
        """
        ...

    def settings_tags(self, state: State) -> Mapping[str, str]:
        """Rule settings to record with the game (Ivy: ``{"TurnLimit": "200"}``)."""
        ...
