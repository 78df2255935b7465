"""Verdant's components (spec §1): colours, lights, the 60 plants and 60 rooms of V1,
the 90 tokens of the bag, the advanced objectives (V9).

Cards and tokens are numbered for speed: a plant is ``0…59`` (``P01…P60``), a room
``0…59`` (``R01…R60``), a token kind ``0…47`` (the 45 items colour by colour, motifs in
:data:`MOTIFS` order, then ``fertilizer``, ``trowel``, ``watering-can``). The tables
here turn those numbers into the values of the spec; everything else works on the
numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from referee.errors import RuleError

COLOURS: Final = ("red", "yellow", "green", "blue", "purple")
LIGHTS: Final = ("low", "medium", "bright")
SIDES: Final = ("north", "east", "south", "west")
"""A room's sides in the order of V1's ``d`` (and the setup choice of §2.2)."""

FURNITURE: Final = ("bed", "chair", "lamp", "shelf", "table")
PETS: Final = ("bird", "cat", "dog", "fish")
MOTIFS: Final = FURNITURE + PETS
NURTURE: Final = ("fertilizer", "trowel", "watering-can")

Kind: TypeAlias = Literal["plant", "room"]
Side: TypeAlias = Literal["north", "east", "south", "west"]

_LIGHTSETS: Final = (
    frozenset({"low"}),
    frozenset({"medium"}),
    frozenset({"bright"}),
    frozenset({"low", "medium"}),
    frozenset({"medium", "bright"}),
    frozenset({"low", "bright"}),
)
_OFF: Final = ((0, 1, 2, 1), (0, 2, 1, 2), (0, 1, 1, 2), (0, 2, 2, 1))


@dataclass(frozen=True, slots=True)
class Plant:
    """A plant card (V1): its colour, the lights it likes, the verdancy it needs, its points."""

    index: int
    id: str
    colour: str
    lights: frozenset[str]
    needs: int
    points: int

    @property
    def colour_index(self) -> int:
        return COLOURS.index(self.colour)


@dataclass(frozen=True, slots=True)
class Room:
    """A room card (V1): its colour and the light on each side (north, east, south, west)."""

    index: int
    id: str
    colour: str
    sides: tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class Token:
    """A kind of token in the bag: an item (colour and motif) or a nurture token."""

    index: int
    id: str
    colour: str | None
    motif: str | None
    nurture: str | None

    @property
    def is_item(self) -> bool:
        return self.motif is not None

    @property
    def is_pet(self) -> bool:
        return self.motif in PETS

    @property
    def is_furniture(self) -> bool:
        return self.motif in FURNITURE


def _plant(c: int, k: int) -> Plant:
    lights = _LIGHTSETS[k % 6]
    v = k // 6
    if len(lights) == 1:
        needs, points = 3 + 2 * v, 4 + 3 * v
    else:
        needs, points = 4 + 2 * v, 4 + 2 * v
    index = 12 * c + k
    return Plant(index, f"P{index + 1:02d}", COLOURS[c], lights, needs, points)


def _room(c: int, k: int) -> Room:
    sides = tuple(LIGHTS[(k + c + _OFF[k // 3][d]) % 3] for d in range(4))
    index = 12 * c + k
    return Room(index, f"R{index + 1:02d}", COLOURS[c], sides)  # type: ignore[arg-type]


PLANTS: Final = tuple(_plant(c, k) for c in range(5) for k in range(12))
ROOMS: Final = tuple(_room(c, k) for c in range(5) for k in range(12))
TOKENS: Final = tuple(
    Token(9 * c + m, f"{colour}-{motif}", colour, motif, None)
    for c, colour in enumerate(COLOURS)
    for m, motif in enumerate(MOTIFS)
) + tuple(Token(45 + n, name, None, None, name) for n, name in enumerate(NURTURE))
TOKEN_COUNTS: Final = (1,) * 45 + (15, 15, 15)
"""How many tokens of each kind the bag holds at the start (90 in all)."""

FERTILIZER: Final = 45
TROWEL: Final = 46
WATERING_CAN: Final = 47
FIRST_NURTURE: Final = 45

OBJECTIVES: Final = (
    ("collector", "big-growers"),
    ("outer-ring", "matched-rows"),
    ("pet-lover", "furnished"),
)
"""The advanced objectives (V9), by category: plants, rooms, items."""

PLANT_BY_ID: Final = {plant.id: plant for plant in PLANTS}
ROOM_BY_ID: Final = {room.id: room for room in ROOMS}
TOKEN_BY_ID: Final = {token.id: token for token in TOKENS}
OBJECTIVE_NAMES: Final = frozenset(name for pair in OBJECTIVES for name in pair)

# Hot-path tables: plain tuples of ints indexed by card number.
PLANT_COLOUR: Final = tuple(plant.index // 12 for plant in PLANTS)
PLANT_NEEDS: Final = tuple(plant.needs for plant in PLANTS)
PLANT_POINTS: Final = tuple(plant.points for plant in PLANTS)
PLANT_LIGHTS: Final = tuple(
    sum(1 << LIGHTS.index(light) for light in plant.lights) for plant in PLANTS
)
"""Each plant's lights as a 3-bit mask (bit 0 low, 1 medium, 2 bright)."""
ROOM_COLOUR: Final = tuple(room.index // 12 for room in ROOMS)
ROOM_SIDE_LIGHT: Final = tuple(
    tuple(1 << LIGHTS.index(light) for light in room.sides) for room in ROOMS
)
"""Each room's light per side (north, east, south, west) as a one-bit mask."""
TOKEN_COLOUR: Final = tuple(-1 if t.colour is None else COLOURS.index(t.colour) for t in TOKENS)
TOKEN_MOTIF: Final = tuple(-1 if t.motif is None else MOTIFS.index(t.motif) for t in TOKENS)


def plant_by_id(card_id: str) -> Plant:
    """The plant ``P01…P60``; raises ``RuleError``."""
    try:
        return PLANT_BY_ID[card_id]
    except KeyError:
        raise RuleError(f"no plant card {card_id!r} (P01…P60)") from None


def room_by_id(card_id: str) -> Room:
    """The room ``R01…R60``; raises ``RuleError``."""
    try:
        return ROOM_BY_ID[card_id]
    except KeyError:
        raise RuleError(f"no room card {card_id!r} (R01…R60)") from None


def token_by_id(token_id: str) -> Token:
    """The token kind ``red-bed`` … ``watering-can``; raises ``RuleError``."""
    try:
        return TOKEN_BY_ID[token_id]
    except KeyError:
        raise RuleError(f"no token {token_id!r}") from None
