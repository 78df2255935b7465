"""The steps a Verdant decision is made of, and their record notation.

A decision is a tuple of steps. A seat's decision is its setup choice or a part of a
turn (spec §3: applied up to and including the first step that reveals something);
a chance decision is one :class:`Reveal`. Coordinates are ``(x, y)`` in the seat's
home: the first plant at ``(0, 0)``, x to the east, y to the north.

Notation (one word per decision, the ``token`` of a record):

- a chance decision is the id it reveals: ``P07``, ``R12``, ``red-bed``,
  ``fertilizer``, ``collector`` …;
- the setup choice is the side the room lies on: ``north``, ``east``, ``south``, ``west``;
- the empty decision (a pass, or ending a turn that needs nothing more) is ``pass``;
- otherwise the steps, joined by ``/``:

  ===========================  ==================================================
  ``cards:0p+1r``              1a: replace the plant of column 0 and the room of 1
  ``tokens:0+3``               1b: replace the tokens of columns 0 and 3
  ``split``                    1c: card and token from different columns
  ``grow@1,0``                 1d: +1 verdancy to the plant at (1, 0)
  ``pick:2r`` / ``pick:2p:1``  pick column 2's room (plant) with the token of its
                               own column (of column 1, after ``split``)
  ``place@-1,0``               place the picked card at (-1, 0)
  ``store``                    put the taken token into storage
  ``use:taken@1,0+2,1``        use the taken (``stored``) token on these cards
  ``discard:stored``           discard the taken (``stored``) token
  ===========================  ==================================================

Columns are ``0``–``3``, ``p``/``r`` a plant/room; coordinates are whole numbers,
negative ones with ``-``. Inside a longer decision a setup side or a chance id is
written as a step too (the rules refuse such decisions, the notation still writes
them), and empty lists are written empty (``cards:``, ``use:taken@``), so every
decision the wire format can carry has exactly one word and reads back equal.

Example turn: ``cards:0p+3r`` (the seat is asked again once
the new cards are revealed), then ``split/pick:2r:1/place@1,0/use:taken@1,0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeAlias

from referee.errors import RuleError
from referee.games.verdant.cards import (
    OBJECTIVE_NAMES,
    PLANT_BY_ID,
    ROOM_BY_ID,
    SIDES,
    TOKEN_BY_ID,
    Kind,
    Side,
)

Coord: TypeAlias = tuple[int, int]
TokenRef: TypeAlias = Literal["taken", "stored"]


@dataclass(frozen=True, slots=True)
class Setup:
    """§2.2: the side of the plant the room lies on."""

    side: Side


@dataclass(frozen=True, slots=True)
class ReplaceCards:
    """§4.1a: replace market cards without thumbs (reveals new cards)."""

    cards: tuple[tuple[int, Kind], ...]


@dataclass(frozen=True, slots=True)
class ReplaceTokens:
    """§4.1b: replace market tokens (reveals new tokens)."""

    columns: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Split:
    """§4.1c: this turn's pick may take the card and the token from different columns."""


@dataclass(frozen=True, slots=True)
class Grow:
    """§4.1d: +1 verdancy to one of one's incomplete plants."""

    plant: Coord


@dataclass(frozen=True, slots=True)
class Pick:
    """§4.2: a card of a column, with the token of ``token_column`` (``None``: the same)."""

    column: int
    kind: Kind
    token_column: int | None = None


@dataclass(frozen=True, slots=True)
class Place:
    """§4.3: the picked card goes to ``at``."""

    at: Coord


@dataclass(frozen=True, slots=True)
class Store:
    """§4.4: the taken token goes into storage (V5)."""


@dataclass(frozen=True, slots=True)
class Use:
    """§4.4: use a token on the cards at ``at`` (rooms for items and the watering can)."""

    token: TokenRef
    at: tuple[Coord, ...]


@dataclass(frozen=True, slots=True)
class Discard:
    """§4.4: discard a token."""

    token: TokenRef


@dataclass(frozen=True, slots=True)
class Reveal:
    """A chance outcome: the id of the card, token or objective revealed."""

    id: str


Step: TypeAlias = (
    Setup
    | ReplaceCards
    | ReplaceTokens
    | Split
    | Grow
    | Pick
    | Place
    | Store
    | Use
    | Discard
    | Reveal
)
Decision: TypeAlias = tuple[Step, ...]

REVEALING: tuple[type, ...] = (ReplaceCards, ReplaceTokens)
"""The steps after which the seat is asked again (spec §3)."""


def applied_part(steps: Decision) -> Decision:
    """The steps the referee applies: up to and including the first revealing one.

    Spec §3: the seat decides the rest after seeing what it reveals, so what it sent
    after it is ignored, and never recorded or shown to others.
    """
    for index, step in enumerate(steps):
        if isinstance(step, REVEALING):
            return steps[: index + 1]
    return steps


CHANCE_IDS = (
    frozenset(PLANT_BY_ID) | frozenset(ROOM_BY_ID) | frozenset(TOKEN_BY_ID) | OBJECTIVE_NAMES
)

_KIND_LETTER: dict[str, str] = {"plant": "p", "room": "r"}
_LETTER_KIND: dict[str, Kind] = {"p": "plant", "r": "room"}


def _coord(at: Coord) -> str:
    return f"{at[0]},{at[1]}"


def format_step(step: Step) -> str:
    """One step in the notation (a :class:`Setup` or :class:`Reveal` is a decision alone)."""
    match step:
        case Setup(side):
            return side
        case Reveal(id):
            return id
        case ReplaceCards(cards):
            return "cards:" + "+".join(f"{column}{_KIND_LETTER[kind]}" for column, kind in cards)
        case ReplaceTokens(columns):
            return "tokens:" + "+".join(str(column) for column in columns)
        case Split():
            return "split"
        case Grow(plant):
            return "grow@" + _coord(plant)
        case Pick(column, kind, token_column):
            text = f"pick:{column}{_KIND_LETTER[kind]}"
            return text if token_column is None else f"{text}:{token_column}"
        case Place(at):
            return "place@" + _coord(at)
        case Store():
            return "store"
        case Use(token, at):
            return f"use:{token}@" + "+".join(_coord(spot) for spot in at)
        case Discard(token):
            return f"discard:{token}"
    raise TypeError(f"not a Verdant step: {step!r}")


def format_decision(decision: Decision) -> str:
    """A decision as one word (see the module docstring)."""
    if not decision:
        return "pass"
    return "/".join(format_step(step) for step in decision)


_INT = r"-?\d+"
_COORD = rf"({_INT}),({_INT})"
_COORDS = rf"((?:{_INT},{_INT}(?:\+{_INT},{_INT})*)?)"
_STEP_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), name)
    for pattern, name in (
        (rf"cards:((?:{_INT}[pr](?:\+{_INT}[pr])*)?)", "cards"),
        (rf"tokens:((?:{_INT}(?:\+{_INT})*)?)", "tokens"),
        (r"split", "split"),
        (rf"grow@{_COORD}", "grow"),
        (rf"pick:({_INT})([pr])(?::({_INT}))?", "pick"),
        (rf"place@{_COORD}", "place"),
        (r"store", "store"),
        (rf"use:(taken|stored)@{_COORDS}", "use"),
        (r"discard:(taken|stored)", "discard"),
    )
)


def _parse_coord(text: str) -> Coord:
    x, y = text.split(",")
    return int(x), int(y)


def _parts(text: str) -> list[str]:
    return text.split("+") if text else []


def parse_step(text: str) -> Step:
    """One step written in the notation; raises ``RuleError``."""
    if text in SIDES:
        return Setup(text)  # type: ignore[arg-type]
    if text in CHANCE_IDS:
        return Reveal(text)
    for pattern, name in _STEP_PATTERNS:
        found = pattern.fullmatch(text)
        if found is None:
            continue
        groups = found.groups()
        if name == "cards":
            return ReplaceCards(
                tuple((int(part[:-1]), _LETTER_KIND[part[-1]]) for part in _parts(groups[0]))
            )
        if name == "tokens":
            return ReplaceTokens(tuple(int(part) for part in _parts(groups[0])))
        if name == "split":
            return Split()
        if name == "grow":
            return Grow((int(groups[0]), int(groups[1])))
        if name == "pick":
            token_column = None if groups[2] is None else int(groups[2])
            return Pick(int(groups[0]), _LETTER_KIND[groups[1]], token_column)
        if name == "place":
            return Place((int(groups[0]), int(groups[1])))
        if name == "store":
            return Store()
        if name == "use":
            ref: TokenRef = "taken" if groups[0] == "taken" else "stored"
            return Use(ref, tuple(_parse_coord(part) for part in _parts(groups[1])))
        ref = "taken" if groups[0] == "taken" else "stored"
        return Discard(ref)
    raise RuleError(f"not a Verdant step: {text[:60]!r}")


def parse_decision(text: str) -> Decision:
    """Inverse of :func:`format_decision`; raises ``RuleError`` on bad notation."""
    if text == "pass":
        return ()
    if not text:
        raise RuleError("empty Verdant decision (a pass is written 'pass')")
    steps = tuple(parse_step(part) for part in text.split("/"))
    if len(applied_part(steps)) < len(steps):
        # A record holds what was applied, and a person is asked again after a reveal.
        raise RuleError(
            f"§3: {text!r} goes on after a revealing step: the rest of the turn is decided"
            " after seeing what it reveals"
        )
    return steps
