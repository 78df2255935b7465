"""Ivy: two ivies race up a house for the sunlight (rules: ``docs/ivy.md``).

- :mod:`~referee.games.ivy.board` — the house: cells, neighbours, glass, roots, players;
- :mod:`~referee.games.ivy.turns` — turn notation (§7);
- :mod:`~referee.games.ivy.position` — positions (§6) and the rules of a turn (§4);
- :mod:`~referee.games.ivy.game` — the :class:`~referee.games.base.Game` for the runner;
- :mod:`~referee.games.ivy.codec` — views and turns in protocol messages;
- :mod:`~referee.games.ivy.render` — the house drawn for the terminal.

:data:`ENTRY` is Ivy's entry in the game registry (:mod:`referee.games`).
"""

from __future__ import annotations

from referee.games import GameEntry
from referee.games.ivy.board import (
    CELL_NAMES,
    GLASS,
    NEIGHBOURS,
    ROOTS,
    TOP,
    Cell,
    Player,
    bit,
    cell_at,
    cell_name,
    column_of,
    iter_cells,
    parse_cell,
    row_of,
    spread,
)
from referee.games.ivy.codec import CODEC
from referee.games.ivy.game import IvyGame, IvyState
from referee.games.ivy.position import Position, TurnBuilder
from referee.games.ivy.render import moves, render
from referee.games.ivy.turns import Action, Choke, Creep, Leaf, Turn

ENTRY = GameEntry(
    rules=IvyGame(),
    codec=CODEC,
    render=render,
    render_public=lambda state, color: render(state.position, color),
    person_help=("Type a turn such as c2+Lc2 (creep c2, leaf on c2), xg3 (choke g3), -- (pass)."),
    person_moves=moves,
)

__all__ = [
    "CELL_NAMES",
    "ENTRY",
    "GLASS",
    "NEIGHBOURS",
    "ROOTS",
    "TOP",
    "Action",
    "Cell",
    "Choke",
    "Creep",
    "IvyGame",
    "IvyState",
    "Leaf",
    "Player",
    "Position",
    "Turn",
    "TurnBuilder",
    "bit",
    "cell_at",
    "cell_name",
    "column_of",
    "iter_cells",
    "parse_cell",
    "row_of",
    "spread",
]
