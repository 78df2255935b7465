"""Draw a Verdant view for the terminal.

:func:`render` gives one seat's view (what ``VerdantGame.view`` returns),
:func:`render_public` what every seat may see of a state. Both print, from the top:
a status line (variant, phase, turn, who decides, turns left); the market, one column
per market column (plant above, token, room below, ``+N`` thumbs on a card); decks,
discard piles, bag and pots; then every home as a grid, the northern row on top, with
its thumbs, storage and score so far by category. Cards read::

    P07 yellow     id and colour        R12 red         id and colour
    lm  v2/4  4p   lights (l m b),      N:m E:b S:l W:m lights on its four sides
                   verdancy/needed,     item red-bed    the item in its slot
                   points; "done pot3"  once complete

With ``color`` card ids are coloured with ANSI escape codes (their colour); without it
the text holds no escape code at all.
"""

from __future__ import annotations

import re
from typing import Final

from referee.games.base import CHANCE
from referee.games.verdant.cards import PLANTS, ROOMS, TOKENS
from referee.games.verdant.rules import can_finish, state_from_view, steps_by_kind, view_of
from referee.games.verdant.scoring import home_breakdown
from referee.games.verdant.state import (
    CELL_X,
    CELL_Y,
    IS_PLANT_CELL,
    PHASE_NAMES,
    PLACE_NAMES,
    SIMPLIFIED,
    VARIANTS,
    Home,
    VerdantState,
    VerdantView,
    cell_of,
)
from referee.games.verdant.steps import format_decision

_CELL: Final = 16
_RESET: Final = "\x1b[0m"
_ANSI: Final = {"red": "31", "yellow": "33", "green": "32", "blue": "34", "purple": "35"}
_SIDE_LETTERS: Final = "NESW"


def _paint(text: str, colour: str, color: bool) -> str:
    """``text`` padded to a cell, its first word coloured when asked."""
    padded = text.ljust(_CELL)
    if not color or not text:
        return padded
    word, _, rest = padded.partition(" ")
    return f"\x1b[{_ANSI[colour]}m{word}{_RESET} {rest}"


def _plant_lines(card: int, home: Home | None, cell: int, simplified: bool) -> list[str]:
    plant = PLANTS[card]
    lights = "".join(light[0] for light in ("low", "medium", "bright") if light in plant.lights)
    points = 5 if simplified else plant.points
    status = f"v0/{plant.needs}"
    if home is not None:
        if home.complete >> cell & 1:
            pot = home.pots[cell]
            status = "done" if pot < 0 else f"done pot{pot}"
        else:
            status = f"v{home.verdancy[cell]}/{plant.needs}"
    return [f"{plant.id} {plant.colour}", f"{lights:<3} {status} {points}p"]


def _room_lines(card: int, item: int) -> list[str]:
    room = ROOMS[card]
    sides = " ".join(f"{_SIDE_LETTERS[d]}:{light[0]}" for d, light in enumerate(room.sides))
    lines = [f"{room.id} {room.colour}", sides]
    if item >= 0:
        lines.append(f"item {TOKENS[item].id}")
    return lines


def _market(view: VerdantView, color: bool) -> list[str]:
    m = view.market
    simplified = view.variant == SIMPLIFIED
    rows: list[list[str]] = [[] for _ in range(6)]
    for c in range(len(m.plants)):
        if m.plants[c] >= 0:
            plant = PLANTS[m.plants[c]]
            first, second = _plant_lines(m.plants[c], None, 0, simplified)
            thumbs = f" +{m.plant_thumbs[c]}" if m.plant_thumbs[c] else ""
            rows[0].append(_paint(first + thumbs, plant.colour, color))
            rows[1].append(second.ljust(_CELL))
        else:
            rows[0].append("(empty)".ljust(_CELL))
            rows[1].append("".ljust(_CELL))
        token = m.tokens[c]
        rows[2].append((f"[{TOKENS[token].id}]" if token >= 0 else "[no token]").ljust(_CELL))
        if m.rooms[c] >= 0:
            room = ROOMS[m.rooms[c]]
            first, second = _room_lines(m.rooms[c], -1)
            thumbs = f" +{m.room_thumbs[c]}" if m.room_thumbs[c] else ""
            rows[3].append(_paint(first + thumbs, room.colour, color))
            rows[4].append(second.ljust(_CELL))
        else:
            rows[3].append("(empty)".ljust(_CELL))
            rows[4].append("".ljust(_CELL))
        rows[5].append(f"column {c}".ljust(_CELL))
    order = (5, 0, 1, 2, 3, 4)
    return ["Market:"] + ["  " + " ".join(rows[i]) for i in order]


def _home(view: VerdantView, seat: int, color: bool) -> list[str]:
    mine = view.seats[seat]
    home = mine.home
    breakdown = home_breakdown(home, view.variant, view.objectives)
    total = sum(points for _, points in breakdown)
    storage = TOKENS[mine.storage].id if mine.storage >= 0 else "empty"
    marks = []
    if seat == view.seat:  # a person at the terminal, or `show --seat`: nobody is "you"
        marks.append("viewer")
    if seat == view.current and view.to_decide is not None:
        marks.append("to play" if PHASE_NAMES[view.phase] == "turn" else "in setup")
    mark = f" ({', '.join(marks)})" if marks else ""
    lines = [
        f"Seat {seat + 1}{mark}: thumbs {mine.thumbs}, storage {storage},"
        f" {total} points so far: " + " ".join(f"{name}={points}" for name, points in breakdown)
    ]
    if not home.occupied:
        return [*lines, "  (no cards yet)"]
    min_x, max_x, min_y, max_y = home.bounds
    simplified = view.variant == SIMPLIFIED
    lines.append("  " + " ".join(f"x={x}".ljust(_CELL) for x in range(min_x, max_x + 1)))
    for y in range(max_y, min_y - 1, -1):
        cells: list[list[str]] = []
        colours: list[str] = []
        for x in range(min_x, max_x + 1):
            cell = cell_of(x, y)
            card = home.cards[cell]
            if card < 0:
                cells.append(["."])
                colours.append("")
            elif IS_PLANT_CELL[cell]:
                cells.append(_plant_lines(card, home, cell, simplified))
                colours.append(PLANTS[card].colour)
            else:
                cells.append(_room_lines(card, home.items[cell]))
                colours.append(ROOMS[card].colour)
        height = max(len(text) for text in cells)
        for row in range(height):
            parts = []
            for text, colour in zip(cells, colours, strict=True):
                line = text[row] if row < len(text) else ""
                if row == 0 and colour:
                    parts.append(_paint(line, colour, color))
                else:
                    parts.append(line.ljust(_CELL))
            label = f"y={y}" if row == 0 else ""
            lines.append(f"  {' '.join(parts)} {label}".rstrip())
    return lines


def _status(view: VerdantView) -> list[str]:
    phase = PHASE_NAMES[view.phase]
    phase_text = f"turn {view.turn}" if phase == "turn" else f"{phase}, turn {view.turn}"
    if view.to_decide is None:
        where = f"the game is over after turn {view.turn}"
    elif view.to_decide == CHANCE:
        where = f"{phase_text}, chance deals"
    else:
        where = f"{phase_text}, seat {view.to_decide + 1} decides"
    viewer = f"seat {view.seat + 1}'s view" if view.seat >= 0 else "public view"
    left = ", ".join(str(count) for count in view.turns_left)
    lines = [
        f"Verdant ({VARIANTS[view.variant]}), {view.players} player"
        f"{'s' if view.players > 1 else ''}, {viewer}: {where}."
        f" Turns left per seat: {left}."
    ]
    part = view.part
    if phase == "turn" and part is not None:
        done = [f"{part.thumb_actions} thumb action(s)"]
        if part.split:
            done.append("split")
        if part.kind >= 0:
            kind = "plant" if part.kind == 0 else "room"
            card = (PLANTS if part.kind == 0 else ROOMS)[part.card].id
            done.append(f"picked {kind} {card} (column {part.column})")
        if part.placed >= 0:
            done.append(f"placed at ({CELL_X[part.placed]}, {CELL_Y[part.placed]})")
        if part.taken >= 0:
            done.append(f"taken {TOKENS[part.taken].id} ({PLACE_NAMES[part.taken_at]})")
        if part.old >= 0:
            done.append(f"stored before {TOKENS[part.old].id} ({PLACE_NAMES[part.old_at]})")
        lines.append(f"This turn (seat {view.current + 1}): " + ", ".join(done) + ".")
    elif phase == "setup" and part is not None and part.card >= 0:
        lines.append(
            f"Setup: seat {view.current + 1} was dealt {ROOMS[part.card].id};"
            " it chooses the side of its plant the room lies on."
        )
    return lines


def _supplies(view: VerdantView) -> list[str]:
    bag = [f"{TOKENS[kind].id}={count}" for kind, count in enumerate(view.bag) if count]
    items = sum(view.bag[:45])
    nurture = sum(view.bag[45:])
    objectives = ", ".join(view.objectives) if view.objectives else "none"
    return [
        f"Decks: plants {view.plant_deck}, rooms {view.room_deck}."
        f" Discards: plants {' '.join(PLANTS[c].id for c in view.plant_discard) or '-'};"
        f" rooms {' '.join(ROOMS[c].id for c in view.room_discard) or '-'}.",
        f"Bag: {items + nurture} tokens ({items} items, {nurture} nurture);"
        f" used or discarded {view.spent}. Pots left: 3:{view.pots[0]} 2:{view.pots[1]}"
        f" 1:{view.pots[2]}. Objectives: {objectives}.",
        "Bag contents: " + (" ".join(bag) if bag else "empty"),
    ]


def render(view: VerdantView, color: bool) -> str:
    """``view`` drawn as text (see the module docstring); ends with a newline."""
    lines = _status(view)
    lines += _market(view, color)
    lines += _supplies(view)
    for seat in range(view.players):
        lines.append("")
        lines += _home(view, seat, color)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_public(state: VerdantState, color: bool) -> str:
    """What every seat may see of ``state``, drawn as :func:`render` draws a view."""
    return render(view_of(state, CHANCE), color)


MOVES_SHOWN: Final = 12
"""The most steps of one kind that ``moves`` spells out (1a has 255 ways to replace cards)."""


def moves(view: VerdantView) -> list[str]:
    """The steps the seat may take first, grouped by kind, for a person at the terminal
    (``moves``): a decision joins steps with ``/``, and which may follow a step depends
    on it, so only the first ones are listed; a kind with many is shown by its first
    :data:`MOVES_SHOWN` and its count."""
    state = state_from_view(view)
    lines = [
        "Legal first steps (a decision joins steps with '/', each legal after the ones before it):"
    ]
    for kind, steps in steps_by_kind(state).items():
        label = re.sub(r"(?<!^)(?=[A-Z])", " ", kind).lower()  # ReplaceCards: replace cards
        shown = " ".join(format_decision((step,)) for step in steps[:MOVES_SHOWN])
        more = f" … ({len(steps)} in all)" if len(steps) > MOVES_SHOWN else ""
        lines.append(f"  {label}: {shown}{more}")
    if can_finish(state):
        lines.append("  end the turn: pass (no pick is possible)")
    if len(lines) == 1:
        lines.append("  none: it is not your decision")
    return lines
