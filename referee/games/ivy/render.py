"""Draw an Ivy position for the terminal.

:func:`render` gives the house as a grid, rows 12 (the top) down to 1 (the soil),
with column letters above and below and row numbers on both sides; the roof
narrows with ``/`` and ``\\``, the walls are ``|`` and the tunnel row (5) has
``=`` where the tunnel joins a5 and i5. Every cell is two characters, a glyph and
a mark::

    .   empty          #   glass
    g   Green vine     p   Purple vine     g^ p^  the roots
    G   Green leaf     P   Purple leaf     G* P*  a lit leaf (it gathers sun)
    w   withering      W   withering leaf
    x2  deadwood       x1  deadwood about to clear

Under the grid come a status line (turn, who moves, both players' sun, the sun
each would gather at a Feed now, the winner at this Feed when there is one),
the §6 notation, and a legend. With ``color`` the glyphs are also coloured with
ANSI escape codes; without it the text holds no escape code at all.
"""

from __future__ import annotations

from referee.games.ivy.board import COLUMNS, ROOTS, TOP, Cell, Player, cell_at, cell_name
from referee.games.ivy.position import Position
from referee.games.ivy.turns import PASS_TOKEN, Choke, Creep, Leaf

_RESET = "\x1b[0m"
_STYLES: dict[str, str] = {
    ".": "2",  # dim
    "#": "36",  # cyan
    "g": "32",  # green
    "G": "1;92",  # bold bright green
    "p": "35",  # magenta
    "P": "1;95",  # bold bright magenta
    "w": "90",  # grey
    "W": "1;90",
    "x": "33",  # brown/yellow
}
_MARK_STYLE = "1;93"  # the lit mark and the root mark: bold bright yellow

_LEGEND = (
    "Legend: . empty  # glass  g/p Green/Purple vine  G/P leaf  G*/P* lit leaf  g^/p^ root",
    "        w/W withering vine/leaf  x2/x1 deadwood (marker)  = tunnel a5-i5",
)

_TUNNEL_ROW = 5


def render(position: Position, color: bool) -> str:
    """The position drawn as text (see the module docstring); ends with a newline."""
    header = "   " + "".join(f" {letter} " for letter in COLUMNS)
    lines = [header]
    for row in range(12, 0, -1):
        lines.append(_row_line(position, row, color))
    lines.append(header)
    lines.append(_status(position))
    lines.append(f"Position: {position}")
    lines.extend(_LEGEND)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _row_line(position: Position, row: int, color: bool) -> str:
    """One row of the house: row number, walls or roof, the cells, row number."""
    columns = [column for column in range(len(COLUMNS)) if cell_at(column, row) is not None]
    first, last = columns[0], columns[-1]
    if row == _TUNNEL_ROW:
        left, right = "=", "="
    elif first == 0:
        left, right = "|", "|"
    else:
        left, right = "/", "\\"
    parts = [f"{row:>2} "]
    for column in range(len(COLUMNS)):
        cell = cell_at(column, row)
        edge = left if column == first else " "
        if cell is None:
            parts.append("   " if column != last + 1 else f"{right}  ")
            continue
        glyph, mark = _cell_text(position, cell)
        parts.append(edge + _paint(glyph, mark, color))
    parts.append(right if last == len(COLUMNS) - 1 else " ")
    parts.append(f" {row}")
    return "".join(parts)


def _cell_text(position: Position, cell: Cell) -> tuple[str, str]:
    """The glyph and the mark (``" "`` for none) of one cell."""
    if position.is_glass(cell):
        return "#", " "
    if marker := position.deadwood(cell):
        return "x", str(marker)
    if position.is_withering(cell):
        return ("W" if position.has_leaf(cell) else "w"), " "
    owner = position.owner(cell)
    if owner is None:
        return ".", " "
    if cell in ROOTS:
        return owner.letter, "^"
    if position.has_leaf(cell):
        return owner.letter.upper(), "*" if position.is_lit(cell) else " "
    return owner.letter, " "


def _paint(glyph: str, mark: str, color: bool) -> str:
    """The two characters of a cell, in colour when asked."""
    if not color:
        return glyph + mark
    text = f"\x1b[{_STYLES[glyph]}m{glyph}{_RESET}"
    if mark in "*^":
        return text + f"\x1b[{_MARK_STYLE}m{mark}{_RESET}"
    if glyph == "x":
        return text + f"\x1b[{_STYLES['x']}m{mark}{_RESET}"
    return text + mark


def _status(position: Position) -> str:
    """Turn, player to move, sun and income of both players, a winner at this Feed."""
    green, purple = Player.GREEN, Player.PURPLE
    status = (
        f"Turn {position.turn}, {position.to_move.title} to move. "
        f"Sun: Green {position.sun(green)} (+{position.income(green)}), "
        f"Purple {position.sun(purple)} (+{position.income(purple)})."
    )
    winner = position.winner_at_feed()
    if winner is not None:
        status += f" {winner.title} wins at this Feed (living leaf on {cell_name(TOP)})."
    return status


def moves(position: Position) -> list[str]:
    """The actions the player to move may begin a turn with, by kind, for a person at the
    terminal (``moves``): a whole turn joins several, so it is the first ones, not every
    turn, that can be listed."""
    builder = position.begin()
    kinds = (
        ("creep", [str(Creep(cell)) for cell in builder.creep_targets()]),
        ("leaf", [str(Leaf(cell)) for cell in builder.leaf_targets()]),
        ("choke", [str(Choke(cell)) for cell in builder.choke_targets()]),
    )
    lines = [
        "Legal actions to begin the turn with (join actions with '+', e.g. c2+Lc2; each"
        " costs sun, and what may follow depends on what came before):"
    ]
    lines += [f"  {kind}: {' '.join(listed)}" for kind, listed in kinds if listed]
    lines.append(f"  pass: {PASS_TOKEN}")
    return lines
