"""Verdant's state: small immutable tuples, cheap to copy (bots search with them).

A home is a 9×5 grid of cells around the first plant (x -4…4, y -2…2: any home that
fits 5×3 and holds (0, 0) lies inside it); cell ``i`` is ``(x + 4) + 9 * (y + 2)``.
A cell holds a plant number when ``x + y`` is even and a room number when it is odd:
plants and rooms alternate like a chessboard (§4.3), so the parity of a cell says its
card type. Decks are bit masks of card numbers (a deck has no order: a draw takes any
card of it, equally likely), the bag counts each token kind.

Everything here is public except ``plant_deck``/``room_deck`` (spec §3), which
:class:`VerdantView` replaces with their sizes.
"""

from __future__ import annotations

from typing import Final, NamedTuple

WIDTH: Final = 9
HEIGHT: Final = 5
CELLS: Final = WIDTH * HEIGHT
ORIGIN: Final = 4 + WIDTH * 2


def cell_of(x: int, y: int) -> int:
    """The grid cell of home coordinates ``(x, y)``, or -1 outside the grid."""
    if -4 <= x <= 4 and -2 <= y <= 2:
        return (x + 4) + WIDTH * (y + 2)
    return -1


def coord_of(cell: int) -> tuple[int, int]:
    """The home coordinates of a grid cell."""
    return cell % WIDTH - 4, cell // WIDTH - 2


def cells_of(mask: int) -> list[int]:
    """The grid cells of a home mask (``Home.occupied`` and the like), lowest first."""
    cells = []
    while mask:
        low = mask & -mask
        cells.append(low.bit_length() - 1)
        mask ^= low
    return cells


CELL_X: Final = tuple(cell % WIDTH - 4 for cell in range(CELLS))
CELL_Y: Final = tuple(cell // WIDTH - 2 for cell in range(CELLS))
IS_PLANT_CELL: Final = tuple((CELL_X[c] + CELL_Y[c]) % 2 == 0 for c in range(CELLS))
PLANT_CELLS_MASK: Final = sum(1 << c for c in range(CELLS) if IS_PLANT_CELL[c])
ROOM_CELLS_MASK: Final = ((1 << CELLS) - 1) & ~PLANT_CELLS_MASK
DIRECTIONS: Final = ((0, 1), (1, 0), (0, -1), (-1, 0))
"""The steps ``(dx, dy)`` north, east, south and west, in the order of ``cards.SIDES``."""
NEIGHBOURS: Final = tuple(
    tuple(
        (d, cell_of(CELL_X[c] + dx, CELL_Y[c] + dy))
        for d, (dx, dy) in enumerate(DIRECTIONS)
        if cell_of(CELL_X[c] + dx, CELL_Y[c] + dy) >= 0
    )
    for c in range(CELLS)
)
"""Each cell's orthogonal neighbours inside the grid as ``(direction, cell)``, direction
0…3 = north, east, south, west (the order light matches and the watering can use)."""
NEIGHBOUR_MASK: Final = tuple(sum(1 << n for _, n in NEIGHBOURS[c]) for c in range(CELLS))


# Turn-part token places.
NOWHERE: Final = 0
"""No such token this turn."""
HAND: Final = 1
"""The taken token, not yet stored, used or discarded."""
STORED: Final = 2
"""In the seat's storage."""
DISPLACED: Final = 3
"""The token stored before the turn, pushed out of storage by a new one (V5)."""
GONE: Final = 4
"""Used or discarded this turn."""
PLACE_NAMES: Final = ("none", "hand", "storage", "displaced", "gone")

# Phases.
SETUP: Final = 0
PLAY: Final = 1
OVER: Final = 2
PHASE_NAMES: Final = ("setup", "turn", "over")

# Variants.
STANDARD: Final = 0
SIMPLIFIED: Final = 1
ADVANCED: Final = 2
VARIANTS: Final = ("standard", "simplified", "advanced")

# Pending operations (``op * 8 + argument``), done in order before anyone decides.
DEAL_PLANT: Final = 0
"""Chance: deal the first plant of seat ``argument`` (§2.2)."""
DEAL_ROOM: Final = 1
"""Chance: deal the first room of seat ``argument``."""
DRAW_PLANT: Final = 2
"""Chance: a plant into market column ``argument``."""
DRAW_TOKEN: Final = 3
"""Chance: a token into market column ``argument``."""
DRAW_ROOM: Final = 4
"""Chance: a room into market column ``argument``."""
DRAW_OBJECTIVE: Final = 5
"""Chance: the objective of category ``argument`` (advanced)."""
SHIFT: Final = 6
"""No chance: the solo column shift (V10) before the new right column is dealt."""
OP_NAMES: Final = ("deal-plant", "deal-room", "plant", "token", "room", "objective", "shift")

TURNS_EACH: Final = 13
COLUMNS: Final = 4


class Home(NamedTuple):
    """One seat's cards (see the module docstring for the grid).

    ``cards``: card number per cell, -1 empty; ``verdancy``: an incomplete plant's
    verdancy; ``pots``: a complete plant's pot value (0 terracotta), -1 none;
    ``items``: the token kind in a room's slot, -1 none; ``occupied`` and ``complete``
    are cell bit masks; ``bounds`` is (min x, max x, min y, max y).
    """

    cards: tuple[int, ...]
    verdancy: tuple[int, ...]
    pots: tuple[int, ...]
    items: tuple[int, ...]
    occupied: int
    complete: int
    bounds: tuple[int, ...]


EMPTY_CELLS: Final = (-1,) * CELLS
EMPTY_HOME: Final = Home(EMPTY_CELLS, (0,) * CELLS, EMPTY_CELLS, EMPTY_CELLS, 0, 0, (0, 0, 0, 0))


class SeatState(NamedTuple):
    """A seat's public belongings: home, green thumbs, the stored token kind (-1 none)."""

    home: Home
    thumbs: int
    storage: int


class Market(NamedTuple):
    """The four columns: card numbers and token kinds (-1 for an empty slot), thumbs."""

    plants: tuple[int, ...]
    tokens: tuple[int, ...]
    rooms: tuple[int, ...]
    plant_thumbs: tuple[int, ...]
    room_thumbs: tuple[int, ...]


EMPTY_MARKET: Final = Market((-1,) * 4, (-1,) * 4, (-1,) * 4, (0,) * 4, (0,) * 4)


class TurnPart(NamedTuple):
    """What the seat has done so far this turn (or, in setup, the room dealt to it).

    ``kind`` is 0 plant / 1 room / -1 nothing picked; ``card`` the picked card (-1);
    ``column``/``token_column`` where it and its token came from; ``placed`` the cell
    the card went to (-1); ``taken``/``taken_at`` the token taken this turn and where
    it is; ``old``/``old_at`` the token that was in storage when the turn began.
    """

    thumb_actions: int = 0
    split: bool = False
    kind: int = -1
    card: int = -1
    column: int = -1
    token_column: int = -1
    placed: int = -1
    taken: int = -1
    taken_at: int = NOWHERE
    old: int = -1
    old_at: int = NOWHERE


NO_PART: Final = TurnPart()


class VerdantState(NamedTuple):
    """A whole game. ``turn`` counts the turns finished (all seats together); ``seat``
    is the seat in setup or in its turn; ``part`` is ``None`` while a finished turn's
    refill is being dealt. ``pending`` lists the operations due before anyone decides;
    ``limbo_*`` hold cards and tokens replaced by 1a/1b until their new ones are drawn.
    ``spent`` counts the tokens used or discarded (they left the game)."""

    players: int
    variant: int
    seats: tuple[SeatState, ...]
    market: Market
    plant_deck: int
    room_deck: int
    plant_discard: int
    room_discard: int
    bag: tuple[int, ...]
    pots: tuple[int, int, int]
    objectives: tuple[str, ...]
    phase: int
    seat: int
    turn: int
    part: TurnPart | None
    pending: tuple[int, ...]
    limbo_plants: int
    limbo_rooms: int
    limbo_tokens: tuple[int, ...]
    spent: int


class VerdantView(NamedTuple):
    """What a seat may see (spec §3): the state without the decks' contents.

    ``seat`` is the viewer; ``to_decide`` the seat deciding now (-1 chance, ``None``
    when the game is over); ``plant_deck``/``room_deck`` are sizes; the discard piles
    are card numbers in ascending order.
    """

    seat: int
    players: int
    variant: int
    phase: int
    to_decide: int | None
    turn: int
    current: int
    turns_left: tuple[int, ...]
    seats: tuple[SeatState, ...]
    market: Market
    plant_deck: int
    room_deck: int
    plant_discard: tuple[int, ...]
    room_discard: tuple[int, ...]
    bag: tuple[int, ...]
    pots: tuple[int, int, int]
    objectives: tuple[str, ...]
    part: TurnPart | None
    pending: tuple[int, ...]
    limbo_plants: tuple[int, ...]
    limbo_rooms: tuple[int, ...]
    limbo_tokens: tuple[int, ...]
    spent: int
