"""Ivy's board view: the house, its cells, and what each turn did (``assets/ivy.js`` draws it).

A state is sent as the character of every cell in §6 notation (``.#gGpPwW12``),
in cell order (``a1`` first, ``e12`` last), with each player's sun, the sun a
Feed would give each now, the lit living leaves and the player to move. A turn's
changes are read off the rules' own results: the turn is played again action by
action through :class:`~referee.games.ivy.position.TurnBuilder` only to learn what
each action cost, and every effect (grafts, withering, Decay) is the difference
between the position before the turn and the one the replay reached after it.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.games import Game
from referee.games.ivy.board import (
    CELL_COUNT,
    COLUMN_OF,
    COLUMNS,
    GLASS,
    ROOTS,
    ROW_OF,
    ROW_SPANS,
    TOP,
    TUNNEL,
    Player,
    cell_name,
    iter_cells,
    mask_of,
)
from referee.games.ivy.game import IvyState
from referee.games.ivy.position import Position
from referee.games.ivy.turns import Choke, Creep, Leaf, Turn
from referee.viewer.views import Json

_KINDS: dict[type, str] = {Creep: "creep", Leaf: "leaf", Choke: "choke"}
"""How the page names each kind of action."""


def _cells(mask: int) -> list[str]:
    """The names of the cells of ``mask``, in cell order."""
    return [cell_name(cell) for cell in iter_cells(mask)]


def _occupied(position: Position) -> int:
    """The cells that hold a vine (any owner) or deadwood."""
    return (
        position.vines(Player.GREEN)
        | position.vines(Player.PURPLE)
        | position.withering()
        | position.deadwood_cells()
    )


@dataclass(frozen=True, slots=True)
class IvyView:
    """Ivy's :class:`~referee.viewer.views.BoardView`."""

    script: str = "ivy.js"

    def layout(self, game: Game[Any, Any], first: Any) -> Json:
        """The house: columns, each row's span, glass, roots, the tunnel and the top."""
        return {
            "columns": COLUMNS,
            "rows": {str(row): list(span) for row, span in ROW_SPANS.items()},
            "cells": [[cell_name(c), COLUMN_OF[c], ROW_OF[c]] for c in range(CELL_COUNT)],
            "glass": _cells(GLASS),
            "roots": [cell_name(root) for root in ROOTS],
            "tunnel": [cell_name(end) for end in TUNNEL],
            "top": cell_name(TOP),
        }

    def state(self, game: Game[Any, Any], state: Any) -> Json:
        """The cells (§6 characters in cell order), sun, income, lit leaves and the mover."""
        position = _position(state)
        board = str(position).split(" ", 1)[0]
        cells = "".join(_cells_in_order(board))
        players = (Player.GREEN, Player.PURPLE)
        lit = 0
        for player in players:
            lit |= position.leaves(player)
        lit_leaves = [c for c in iter_cells(lit) if position.is_lit(c)]
        winner = position.winner_at_feed()
        return {
            "cells": cells,
            "sun": [position.sun(player) for player in players],
            "income": [position.income(player) for player in players],
            "lit": [cell_name(c) for c in lit_leaves],
            "toMove": int(position.to_move),
            "turn": position.turn,
            "winnerAtFeed": None if winner is None else int(winner),
        }

    def changes(
        self, game: Game[Any, Any], before: Any, actor: int, decision: Any, after: Any
    ) -> Json:
        """The turn's actions with their cost, then its effects on the board.

        ``grafted``: cells that became the property of an ivy they were not before
        (withering branches grafted, or a vine cut off and taken over); ``withered``:
        cells that are withering now and were not; ``shed``: vine cells emptied at
        Decay; ``cleared``: deadwood that disappeared.
        """
        start, end = _position(before), _position(after)
        assert isinstance(decision, Turn)
        builder = start.begin()
        feed = builder.sun - start.sun(start.to_move)
        actions = []
        for action in decision.actions:
            sun = builder.sun
            builder.apply(action)
            actions.append(
                {
                    "kind": _KINDS[type(action)],
                    "cell": cell_name(action.cell),
                    "cost": sun - builder.sun,
                }
            )
        green, purple = Player.GREEN, Player.PURPLE
        owned_after = end.vines(green) | end.vines(purple)
        changed_hands = (end.vines(green) & start.vines(purple)) | (
            end.vines(purple) & start.vines(green)
        )
        grafted = owned_after & (start.withering() | changed_hands)
        withered = end.withering() & ~start.withering()
        creeps = mask_of(a.cell for a in decision.actions if isinstance(a, Creep))
        chokes = mask_of(a.cell for a in decision.actions if isinstance(a, Choke))
        vines_before = start.vines(green) | start.vines(purple) | start.withering() | creeps
        emptied = ~_occupied(end) & ~GLASS
        return {
            "mover": int(start.to_move),
            "feed": feed,
            "actions": actions,
            "spent": sum(action["cost"] for action in actions),
            "grafted": _cells(grafted),
            "withered": _cells(withered),
            "shed": _cells(vines_before & emptied & ~chokes),
            "cleared": _cells(start.deadwood_cells() & emptied),
        }

    def sentence(self, game: Game[Any, Any], before: Any, actor: int, decision: Any) -> str | None:
        """None: Ivy's notation is short, and "This step" lists each action in words."""
        return None


def _position(state: Any) -> Position:
    """The position of an Ivy state."""
    assert isinstance(state, IvyState)
    return state.position


VIEW = IvyView()
"""Ivy's board view, as :func:`referee.viewer.views.view_for` finds it."""


def _cells_in_order(board: str) -> tuple[str, ...]:
    """The characters of a position's board field (rows from the top, ``/`` between
    them), in cell order."""
    return _cell_picker(tuple(len(row) for row in board.split("/")))(board)


@functools.cache
def _cell_picker(widths: tuple[int, ...]) -> Callable[[str], tuple[str, ...]]:
    """Picks each cell's character out of a board field whose rows have these ``widths``
    (every Ivy position has the same: the picker is made once)."""
    starts: dict[int, int] = {}
    offset = 0
    for index, width in enumerate(widths):
        starts[12 - index] = offset
        offset += width + 1
    offsets = [
        starts[ROW_OF[c]] + COLUMN_OF[c] - ROW_SPANS[ROW_OF[c]][0] for c in range(CELL_COUNT)
    ]
    return operator.itemgetter(*offsets)
