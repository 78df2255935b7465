"""Verdant's scoring (spec §5, §6): each seat's points by category, places (V8).

The categories, in this order: ``plants`` (§5.1; 5 each in the simplified game),
``verdancy`` (§5.2, V6), ``pots`` (§5.3), ``rooms`` (§5.4), ``motifs`` (§5.5, V7),
``colours`` (§5.6), ``objectives`` (§6.2, V9; 0 unless advanced). A home that is not
finished yet (a forfeit) is scored as it lies; its "outer ring" is then the border of
the cards' bounding box, which for a finished 5×3 home is exactly V9's ring.
"""

from __future__ import annotations

from typing import Final

from referee.games.base import Breakdown
from referee.games.verdant.cards import (
    FURNITURE,
    PETS,
    PLANT_COLOUR,
    PLANT_NEEDS,
    PLANT_POINTS,
    ROOM_COLOUR,
    TOKEN_COLOUR,
    TOKEN_MOTIF,
)
from referee.games.verdant.state import (
    CELL_X,
    CELL_Y,
    IS_PLANT_CELL,
    NEIGHBOURS,
    SIMPLIFIED,
    Home,
    VerdantState,
    cells_of,
)

CATEGORIES: Final = ("plants", "verdancy", "pots", "rooms", "motifs", "colours", "objectives")
MOTIF_POINTS: Final = (0, 1, 3, 5, 8, 11, 15, 20, 25)
"""Points for 0…8 distinct motifs (V7)."""
SIMPLIFIED_PLANT_POINTS: Final = 5
COLOUR_SET_POINTS: Final = 3
_FIRST_PET: Final = len(FURNITURE)
_PET_COUNT: Final = len(PETS)


def complete_plants(home: Home) -> int:
    """How many plants of ``home`` are complete (V8's tie-break)."""
    return home.complete.bit_count()


def objective_points(name: str, home: Home) -> int:
    """The points ``home`` earns for the advanced objective ``name`` (V9)."""
    cards, items = home.cards, home.items
    if name == "collector":
        return 2 * len({PLANT_COLOUR[cards[c]] for c in cells_of(home.complete)})
    if name == "big-growers":
        return 2 * sum(1 for c in cells_of(home.complete) if PLANT_NEEDS[cards[c]] >= 5)
    rooms = [c for c in cells_of(home.occupied) if not IS_PLANT_CELL[c]]
    if name == "outer-ring":
        min_x, max_x, min_y, max_y = home.bounds
        return sum(
            1
            for c in rooms
            if items[c] >= 0 and (CELL_X[c] in (min_x, max_x) or CELL_Y[c] in (min_y, max_y))
        )
    if name == "matched-rows":
        rows: dict[int, set[int]] = {}
        for c in rooms:
            rows.setdefault(CELL_Y[c], set()).add(ROOM_COLOUR[cards[c]])
        return 3 * sum(1 for colours in rows.values() if len(colours) == 1)
    if name == "pet-lover":
        return 2 * sum(1 for c in rooms if items[c] >= 0 and TOKEN_MOTIF[items[c]] >= _FIRST_PET)
    if name == "furnished":
        return 2 * sum(
            1
            for c in rooms
            if items[c] >= 0
            and 0 <= TOKEN_MOTIF[items[c]] < _FIRST_PET
            and TOKEN_COLOUR[items[c]] == ROOM_COLOUR[cards[c]]
        )
    raise ValueError(f"unknown objective {name!r}")


def breakdown(state: VerdantState, seat: int) -> Breakdown:
    """``seat``'s points by category (:data:`CATEGORIES`), as its home lies now."""
    return home_breakdown(state.seats[seat].home, state.variant, state.objectives)


def home_breakdown(home: Home, variant: int, objectives: tuple[str, ...]) -> Breakdown:
    """The points of ``home`` by category in the game ``variant`` with ``objectives``."""
    cards, verdancy, items = home.cards, home.verdancy, home.items
    simplified = variant == SIMPLIFIED
    plants = verdancy_total = pots = rooms = 0
    plant_colours: set[int] = set()
    room_colours: set[int] = set()
    motifs: set[int] = set()
    for c in cells_of(home.occupied):
        card = cards[c]
        if IS_PLANT_CELL[c]:
            plant_colours.add(PLANT_COLOUR[card])
            if home.complete >> c & 1:
                plants += SIMPLIFIED_PLANT_POINTS if simplified else PLANT_POINTS[card]
                pots += max(home.pots[c], 0)
            else:
                verdancy_total += verdancy[c]
            continue
        colour = ROOM_COLOUR[card]
        room_colours.add(colour)
        matches = sum(
            1 for _, n in NEIGHBOURS[c] if cards[n] >= 0 and PLANT_COLOUR[cards[n]] == colour
        )
        item = items[c]
        if item >= 0:
            motifs.add(TOKEN_MOTIF[item])
            if TOKEN_COLOUR[item] == colour:
                matches *= 2
        rooms += matches
    colours = COLOUR_SET_POINTS * ((len(plant_colours) == 5) + (len(room_colours) == 5))
    objective_total = sum(objective_points(name, home) for name in objectives)
    return (
        ("plants", plants),
        ("verdancy", verdancy_total // 2),
        ("pots", pots),
        ("rooms", rooms),
        ("motifs", MOTIF_POINTS[len(motifs)]),
        ("colours", colours),
        ("objectives", objective_total),
    )


def places(totals: tuple[int, ...], tie_breaks: tuple[int, ...]) -> tuple[int, ...]:
    """Each seat's place: more points first, then more complete plants; otherwise shared,
    counted as in sport (1, 1, 3) (V8)."""
    keys = list(zip(totals, tie_breaks, strict=True))
    return tuple(1 + sum(1 for other in keys if other > key) for key in keys)
