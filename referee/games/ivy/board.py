"""The geometry of the Ivy house (spec §1): cells, names, neighbours, glass, roots.

A cell is an ``int`` from 0 to 87, numbered row by row from the soil up and, inside
a row, from its leftmost column to its rightmost: ``a1 = 0`` … ``i1 = 8``,
``a2 = 9`` … ``i8 = 71``, ``b9 = 72`` … ``h9 = 78``, ``c10 = 79`` … ``g10 = 83``,
``d11 = 84`` … ``f11 = 86``, ``e12 = 87``. A set of cells is an ``int`` bitmask with
bit ``c`` standing for cell ``c``, so the rules work on whole sets at once.

Everything here is computed once at import and never changes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator

from referee.errors import RuleError

Cell = int
"""A cell of the house, 0 (a1) to 87 (e12)."""

COLUMNS = "abcdefghi"
"""Column letters, left to right; a column number is an index into this string."""

ROW_SPANS: dict[int, tuple[int, int]] = {
    **{row: (0, 8) for row in range(1, 9)},
    9: (1, 7),
    10: (2, 6),
    11: (3, 5),
    12: (4, 4),
}
"""For each row (1–12), its leftmost and rightmost column: the house narrows (C1)."""

_CELLS: tuple[tuple[int, int], ...] = tuple(
    (column, row) for row, (first, last) in ROW_SPANS.items() for column in range(first, last + 1)
)

CELL_COUNT = len(_CELLS)
"""Number of cells in the house (88)."""

CELL_NAMES: tuple[str, ...] = tuple(f"{COLUMNS[column]}{row}" for column, row in _CELLS)
"""The name of every cell, indexed by cell (``CELL_NAMES[0] == "a1"``)."""

_CELL_BY_NAME: dict[str, Cell] = {name: cell for cell, name in enumerate(CELL_NAMES)}
_CELL_BY_PLACE: dict[tuple[int, int], Cell] = {place: cell for cell, place in enumerate(_CELLS)}

COLUMN_OF: tuple[int, ...] = tuple(column for column, _ in _CELLS)
"""Column number (0 = a … 8 = i) of every cell, indexed by cell."""

ROW_OF: tuple[int, ...] = tuple(row for _, row in _CELLS)
"""Row (1–12) of every cell, indexed by cell."""


def parse_cell(name: str) -> Cell:
    """The cell called ``name`` (``"c1"``); raises :class:`RuleError` for any other text."""
    try:
        return _CELL_BY_NAME[name]
    except (KeyError, TypeError):
        raise RuleError(f"unknown cell {name!r}") from None


def cell_name(cell: Cell) -> str:
    """The name of ``cell`` (``0`` → ``"a1"``)."""
    return CELL_NAMES[cell]


def column_of(cell: Cell) -> int:
    """The column number of ``cell``: 0 for ``a`` … 8 for ``i``."""
    return COLUMN_OF[cell]


def row_of(cell: Cell) -> int:
    """The row of ``cell``: 1 (the soil) … 12 (the top)."""
    return ROW_OF[cell]


def cell_at(column: int, row: int) -> Cell | None:
    """The cell at ``column`` (0–8) and ``row`` (1–12), or ``None`` outside the house."""
    return _CELL_BY_PLACE.get((column, row))


def bit(cell: Cell) -> int:
    """The one-cell mask of ``cell``."""
    return 1 << cell


def iter_cells(mask: int) -> Iterator[Cell]:
    """The cells of ``mask`` in increasing order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_of(cells: Iterable[Cell]) -> int:
    """The mask holding exactly ``cells``."""
    mask = 0
    for cell in cells:
        mask |= 1 << cell
    return mask


ALL_CELLS: int = (1 << CELL_COUNT) - 1
"""The mask of every cell of the house."""

TUNNEL: tuple[Cell, Cell] = (_CELL_BY_NAME["a5"], _CELL_BY_NAME["i5"])
"""The two cells the tunnel joins as neighbours."""


def _neighbour_mask(cell: Cell) -> int:
    column, row = _CELLS[cell]
    places = ((column - 1, row), (column + 1, row), (column, row - 1), (column, row + 1))
    mask = mask_of([c for place in places if (c := _CELL_BY_PLACE.get(place)) is not None])
    if cell in TUNNEL:
        mask |= bit(TUNNEL[1] if cell == TUNNEL[0] else TUNNEL[0])
    return mask


NEIGHBOURS: tuple[int, ...] = tuple(_neighbour_mask(cell) for cell in range(CELL_COUNT))
"""For every cell, the mask of its neighbours (edges only; the tunnel a5–i5 included)."""


def _row_edges(first: bool) -> int:
    """The mask of the first (or last) cell of every row."""
    return mask_of(
        [_CELL_BY_PLACE[(span[0] if first else span[1], row)] for row, span in ROW_SPANS.items()]
    )


_NOT_FIRST_IN_ROW = ALL_CELLS & ~_row_edges(first=True)
_NOT_LAST_IN_ROW = ALL_CELLS & ~_row_edges(first=False)
_A5, _I5 = TUNNEL
_ROWS_1_TO_7 = (1 << _CELL_BY_NAME["a8"]) - 1
_ROWS_2_TO_8 = ((1 << _CELL_BY_NAME["b9"]) - 1) & ~((1 << _CELL_BY_NAME["a2"]) - 1)
_B8_TO_H8 = mask_of(range(_CELL_BY_NAME["b8"], _CELL_BY_NAME["h8"] + 1))
_C9_TO_G9 = mask_of(range(_CELL_BY_NAME["c9"], _CELL_BY_NAME["g9"] + 1))
_D10_TO_F10 = mask_of(range(_CELL_BY_NAME["d10"], _CELL_BY_NAME["f10"] + 1))
_B9_TO_H9 = _B8_TO_H8 << 8
_C10_TO_G10 = _C9_TO_G9 << 6
_D11_TO_F11 = _D10_TO_F10 << 4
_E11 = 1 << _CELL_BY_NAME["e11"]
_E12 = 1 << _CELL_BY_NAME["e12"]


def spread(mask: int) -> int:
    """Every cell that neighbours a cell of ``mask``: the union of their ``NEIGHBOURS``.

    Whole-mask shifts do it in a fixed number of steps however many cells ``mask``
    holds: along a row one bit over, between rows 1–8 nine bits, and across the
    narrowing rows of the roof 8, 6, 4 and 2 bits (see the cell numbering above).
    """
    return (
        (mask & _NOT_LAST_IN_ROW) << 1
        | (mask & _NOT_FIRST_IN_ROW) >> 1
        | (mask & _ROWS_1_TO_7) << 9
        | (mask & _ROWS_2_TO_8) >> 9
        | (mask & _B8_TO_H8) << 8
        | (mask & _B9_TO_H9) >> 8
        | (mask & _C9_TO_G9) << 6
        | (mask & _C10_TO_G10) >> 6
        | (mask & _D10_TO_F10) << 4
        | (mask & _D11_TO_F11) >> 4
        | (mask & _E11) << 2
        | (mask & _E12) >> 2
        | (mask >> _A5 & 1) << _I5
        | (mask >> _I5 & 1) << _A5
    )


def spread_few(cells: int) -> int:
    """What :func:`spread` gives, cell by cell: cheaper when ``cells`` holds only a few."""
    grown = 0
    while cells:
        low = cells & -cells
        grown |= NEIGHBOURS[low.bit_length() - 1]
        cells ^= low
    return grown


def flood(seed: int, allowed: int) -> int:
    """The cells of ``allowed`` linked to ``seed`` (a subset of it), neighbour to neighbour."""
    reach = frontier = seed
    while frontier:
        frontier = spread_few(frontier) & allowed & ~reach
        reach |= frontier
    return reach


GLASS: int = mask_of([_CELL_BY_NAME[name] for name in ("c6", "c9", "g6", "g9", "e2", "e3")])
"""The glass cells: nothing is ever on them and they never block sunlight."""

TOP: Cell = _CELL_BY_NAME["e12"]
"""The single cell of row 12; a leaf there wins at Feed."""

ROOTS: tuple[Cell, Cell] = (_CELL_BY_NAME["c1"], _CELL_BY_NAME["g1"])
"""Each player's root, indexed by :class:`Player` (Green's ``c1``, Purple's ``g1``)."""

ROW_MASKS: dict[int, int] = {
    row: mask_of([c for c in range(CELL_COUNT) if ROW_OF[c] == row]) for row in ROW_SPANS
}
"""For each row (1–12), the mask of its cells."""

COLUMN_MASKS: tuple[int, ...] = tuple(
    mask_of([c for c in range(CELL_COUNT) if COLUMN_OF[c] == column]) for column in range(9)
)
"""For each column (0–8), the mask of its cells."""

ABOVE: tuple[int, ...] = tuple(
    COLUMN_MASKS[COLUMN_OF[c]] & ~((2 << c) - 1) & ~GLASS for c in range(CELL_COUNT)
)
"""For every cell, the non-glass cells above it in its column: it is lit when they are empty."""

BELOW: tuple[int, ...] = tuple(
    COLUMN_MASKS[COLUMN_OF[c]] & ((1 << c) - 1) for c in range(CELL_COUNT)
)
"""For every cell, the cells below it in its column: what it shades when it fills."""


class Player(enum.IntEnum):
    """One of the two ivies; the value is its seat (Green moves first)."""

    GREEN = 0
    PURPLE = 1

    @property
    def other(self) -> Player:
        """The opponent."""
        return _PLAYERS[1 - self]

    @property
    def title(self) -> str:
        """The name used in messages: ``"Green"`` or ``"Purple"``."""
        return _TITLES[self]

    @property
    def letter(self) -> str:
        """The letter used in the position notation: ``"g"`` or ``"p"``."""
        return _LETTERS[self]

    @classmethod
    def from_letter(cls, letter: str) -> Player:
        """The player written ``letter`` (``"g"`` or ``"p"``); raises :class:`RuleError`."""
        try:
            return _PLAYERS[_LETTERS.index(letter)]
        except ValueError:
            raise RuleError(f"unknown player {letter!r} (expected 'g' or 'p')") from None


_PLAYERS: tuple[Player, Player] = (Player.GREEN, Player.PURPLE)
_TITLES: tuple[str, str] = ("Green", "Purple")
_LETTERS: tuple[str, str] = ("g", "p")
