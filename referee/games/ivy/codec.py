"""The Ivy codec: how Ivy's views and turns look inside protocol messages.

A view (``TurnRequest.view``) is the §6 position string plus the same board
spelled out for bots that would rather not parse it::

    {"position": "<§6>", "to_move": "purple", "turn": 9, "sun": {"green": 8, "purple": 0},
     "cells": [{"cell": "c1", "kind": "vine", "owner": "green", "leaf": false, "lit": false},
               {"cell": "f4", "kind": "deadwood", "marker": 1}, ...]}

Only cells that are neither empty nor glass are listed, in cell order (a1, b1, …, e12).
A turn is a list of actions, ``{"type": "creep" | "leaf" | "choke", "cell": "d2"}``, in
the order they are played; the empty list is a pass.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from protocol.messages import GameCodec, ProtocolViolation, invalid_message, quote
from referee.errors import RuleError
from referee.games.ivy import turns
from referee.games.ivy.board import CELL_NAMES, Player, parse_cell
from referee.games.ivy.position import Position
from referee.games.ivy.turns import Turn

Colour: TypeAlias = Literal["green", "purple"]
"""A player as the protocol names it."""

_COLOURS: dict[Player, Colour] = {Player.GREEN: "green", Player.PURPLE: "purple"}


class _Record(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the view's plain objects."""


# --- the view --------------------------------------------------------------------


class Sun(_Record, frozen=True, kw_only=True):
    """Each player's sun."""

    green: int
    purple: int


class VineCell(_Record, tag_field="kind", tag="vine", frozen=True, kw_only=True):
    """A vine cell; ``owner`` is ``None`` while it is withering."""

    cell: str
    owner: Colour | None
    leaf: bool
    lit: bool


class DeadwoodCell(_Record, tag_field="kind", tag="deadwood", frozen=True, kw_only=True):
    """A deadwood cell with its marker (2 or 1)."""

    cell: str
    marker: int


class IvyView(_Record, frozen=True, kw_only=True):
    """What an Ivy bot sees before its turn (the whole board: Ivy hides nothing)."""

    position: str
    to_move: Colour
    turn: int
    sun: Sun
    cells: tuple[VineCell | DeadwoodCell, ...]


def encode_view(position: Position) -> IvyView:
    """The view of ``position`` sent in a ``turn`` request."""
    # Every turn request pays for this: the masks and the cell queries are looked up
    # once, and the cells are walked without a generator.
    green = position.vines(Player.GREEN)
    purple = position.vines(Player.PURPLE)
    vines = green | purple | position.withering()
    occupied = vines | position.deadwood_cells()
    has_leaf, is_lit = position.has_leaf, position.is_lit
    cells: list[VineCell | DeadwoodCell] = []
    while occupied:
        low = occupied & -occupied
        occupied ^= low
        cell = low.bit_length() - 1
        if vines & low:
            owner: Colour | None = "green" if green & low else "purple" if purple & low else None
            cells.append(
                VineCell(cell=CELL_NAMES[cell], owner=owner, leaf=has_leaf(cell), lit=is_lit(cell))
            )
        else:
            cells.append(DeadwoodCell(cell=CELL_NAMES[cell], marker=position.deadwood(cell)))
    return IvyView(
        position=str(position),
        to_move=_COLOURS[position.to_move],
        turn=position.turn,
        sun=Sun(green=position.sun(Player.GREEN), purple=position.sun(Player.PURPLE)),
        cells=tuple(cells),
    )


_VIEW_DECODER = msgspec.json.Decoder(IvyView)


def decode_view(raw: msgspec.Raw) -> IvyView:
    """A view as a bot reads it from ``TurnRequest.view``."""
    return _VIEW_DECODER.decode(raw)


# --- the actions -----------------------------------------------------------------


class _Action(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Base of the actions, tagged by ``"type"``."""

    cell: str


class Creep(_Action, tag="creep", frozen=True):
    """Grow into an empty cell."""


class Leaf(_Action, tag="leaf", frozen=True):
    """Put a leaf on one's own living vine."""


class Choke(_Action, tag="choke", frozen=True):
    """Turn a vine into deadwood (at most one, last)."""


Action: TypeAlias = Creep | Leaf | Choke

_ACTIONS_DECODER = msgspec.json.Decoder(tuple[Action, ...])
_TO_ENGINE: dict[type[Action], type[turns.Action]] = {
    Creep: turns.Creep,
    Leaf: turns.Leaf,
    Choke: turns.Choke,
}
_FROM_ENGINE: dict[type[turns.Action], type[Action]] = {
    engine: wire for wire, engine in _TO_ENGINE.items()
}


def decode_actions(raw: msgspec.Raw) -> Turn:
    """The turn in a reply's ``actions``; raises :class:`ProtocolViolation` (``invalid_message``)
    with the path of the bad part (``$.actions[1].cell``).

    Only the shape is checked here; whether the turn is legal is the rules' business.
    """
    try:
        actions = _ACTIONS_DECODER.decode(raw)
    except msgspec.ValidationError as error:
        raise invalid_message(error, at="$.actions") from None
    decoded: list[turns.Action] = []
    for index, action in enumerate(actions):
        try:
            cell = parse_cell(action.cell)
        except RuleError:
            path = f"$.actions[{index}].cell"
            message = f"unknown cell {quote(action.cell)} - at `{path}`"  # it may be long
            raise ProtocolViolation("invalid_message", message, path) from None
        decoded.append(_TO_ENGINE[type(action)](cell))
    return Turn(tuple(decoded))


def encode_actions(turn: Turn) -> list[Action]:
    """``turn`` as the list of actions a reply (or ``since_last``) carries."""
    return [_FROM_ENGINE[type(action)](cell=CELL_NAMES[action.cell]) for action in turn.actions]


CODEC: GameCodec[Position, Turn] = GameCodec(
    game="ivy",
    encode_view=encode_view,
    decode_view=decode_view,
    encode_actions=encode_actions,
    decode_actions=decode_actions,
)
"""Ivy's wire codec, in its :data:`~referee.games.ivy.ENTRY`."""
