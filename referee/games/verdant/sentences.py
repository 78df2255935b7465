"""A Verdant decision in words: ``pick:1r/place@0,1`` → "picks the room of column 1 …".

:func:`describe_decision` is the one place a decision's steps become a sentence (the
replay viewer's step titles and list of moves use it). Each step kind has one phrase;
a decision's phrases are joined into one clause whose subject is the deciding seat
(or chance), which the caller puts in front: "Seat 2 picks the plant P42 of column 1
with its column's token (trowel) and places it at -1,0". Given the table the decision
was made on (the public view before it), the phrases also name the cards and tokens
the steps refer to by column or by coordinates; without it they name the columns and
coordinates only. Coordinates are written as the notation writes them, ``x,y`` with x
to the east and y to the north of the first plant (docs/verdant.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.games.verdant.cards import (
    OBJECTIVE_NAMES,
    PLANT_BY_ID,
    ROOM_BY_ID,
    SIDES,
    TOKEN_BY_ID,
)
from referee.games.verdant.codec import VerdantWireView
from referee.games.verdant.state import DIRECTIONS
from referee.games.verdant.steps import (
    Coord,
    Decision,
    Discard,
    Grow,
    Pick,
    Place,
    ReplaceCards,
    ReplaceTokens,
    Reveal,
    Setup,
    Split,
    Step,
    Store,
    Use,
)

SETUP_SPOT: dict[str, Coord] = dict(zip(SIDES, DIRECTIONS, strict=True))
"""Where the first room goes for each side of the setup choice (docs/verdant.md)."""


def describe_decision(decision: Decision, table: VerdantWireView | None = None) -> str:
    """``decision`` as a clause without its subject ("passes", "deals P07, a plant card",
    "replaces the plant of column 0 (2 thumbs)" …). ``table`` is the public view the
    decision was made on, to name the cards and tokens its steps take or use."""
    if not decision:
        return "passes (ends the turn without a pick)"
    picked: Pick | None = None
    phrases = []
    for step in decision:
        phrases.append(_phrase(step, table, picked))
        if isinstance(step, Pick):
            picked = step
    return _join(phrases)


def _phrase(step: Step, table: VerdantWireView | None, picked: Pick | None) -> str:
    """One step in words; ``picked`` is the decision's pick before it, if any."""
    match step:
        case Reveal(id):
            return f"deals {id}, {_kind_of(id)}"
        case Setup(side):
            room = f" {table.setup_room}" if table is not None and table.setup_room else ""
            spot = _coord(SETUP_SPOT[side])
            return f"lays its first room{room} {side} of its first plant, at {spot}"
        case ReplaceCards(cards):
            named = [f"the {kind} of column {column}" for column, kind in cards]
            return f"replaces {_join(named) or 'no card'} with new ones (2 thumbs)"
        case ReplaceTokens(columns):
            plural = "s" if len(columns) > 1 else ""
            return (
                f"replaces the token{plural} of column{plural} {_join([str(c) for c in columns])}"
                " with new ones from the bag (2 thumbs)"
            )
        case Split():
            return "splits its pick: card and token from different columns (2 thumbs)"
        case Grow(plant):
            return f"grows the plant at {_coord(plant)} by 1 verdancy (2 thumbs)"
        case Pick(column, kind, token_column):
            card = _market_card(table, column, kind)
            own = token_column is None or token_column == column
            source = "its column's token" if own else f"the token of column {token_column}"
            token = _market_token(table, column if token_column is None else token_column)
            return f"picks the {kind}{card} of column {column} with {source}{token}"
        case Place(at):
            return f"places it at {_coord(at)}"
        case Store():
            return "stores the taken token"
        case Use(token, at):
            which = _token_name(token, table, picked)
            where = f" on the card{'s' if len(at) > 1 else ''} at {_coords(at)}" if at else ""
            return f"uses the {token} token{which}{where}"
        case Discard(token):
            return f"discards the {token} token{_token_name(token, table, picked)}"
    raise TypeError(f"not a Verdant step: {step!r}")


def _kind_of(id: str) -> str:
    """What a revealed id is."""
    if id in PLANT_BY_ID:
        return "a plant card"
    if id in ROOM_BY_ID:
        return "a room card"
    if id in TOKEN_BY_ID:
        return "a token"
    if id in OBJECTIVE_NAMES:
        return "an objective"
    return "an unknown id"


def _market_card(table: VerdantWireView | None, column: int, kind: str) -> str:
    """`` P42`` (with a space) when the table shows that card, else nothing."""
    if table is None or not 0 <= column < len(table.market):
        return ""
    card = table.market[column].plant if kind == "plant" else table.market[column].room
    return "" if card is None else f" {card}"


def _market_token(table: VerdantWireView | None, column: int) -> str:
    """`` (trowel)`` when the table shows the token of ``column``, ``(none)`` when it
    shows that slot empty; nothing without a table."""
    if table is None or not 0 <= column < len(table.market):
        return ""
    token = table.market[column].token
    return " (none there)" if token is None else f" ({token})"


def _token_name(token: str, table: VerdantWireView | None, picked: Pick | None) -> str:
    """`` (fertilizer)``: the token a ``taken``/``stored`` reference means, when known."""
    if table is None:
        return ""
    if token == "stored":
        homes = [home for home in table.homes if home.seat == table.current]
        stored = homes[0].storage if homes else None
        return "" if stored is None else f" ({stored})"
    if picked is None:
        return ""
    column = picked.column if picked.token_column is None else picked.token_column
    if not 0 <= column < len(table.market):
        return ""
    taken = table.market[column].token
    return "" if taken is None else f" ({taken})"


def _coord(at: Coord) -> str:
    return f"{at[0]},{at[1]}"


def _coords(spots: Sequence[Coord]) -> str:
    return _join([_coord(spot) for spot in spots])


def _join(parts: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
