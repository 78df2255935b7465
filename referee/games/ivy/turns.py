"""Turn notation (spec §7): the actions of a turn and the token that writes them.

A turn is a sequence of actions, written as one token joined by ``+``: a creep is
the bare cell (``d2``), a leaf ``L`` and the cell (``Ld2``), a choke ``x`` and the
cell (``xg3``); the empty turn (a pass) is ``--``. Parsing checks the notation
only; whether the actions are legal, in that order, is the rules' business
(:meth:`referee.games.ivy.position.Position.play`), which can then say exactly which
action breaks which rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from referee.errors import RuleError
from referee.games.ivy.board import CELL_COUNT, CELL_NAMES, Cell, parse_cell

PASS_TOKEN = "--"
"""The token of a turn with no action."""


def _check_cell(action: object, cell: object) -> None:
    """Refuse an action built on something that is not a cell of the house."""
    if type(cell) is not int or not 0 <= cell < CELL_COUNT:
        raise RuleError(f"{type(action).__name__} needs a cell from 0 to 87, got {cell!r}")


@dataclass(frozen=True, slots=True)
class Creep:
    """Grow into the empty cell ``cell``."""

    cell: Cell

    def __post_init__(self) -> None:
        _check_cell(self, self.cell)

    def __str__(self) -> str:
        return CELL_NAMES[self.cell]


@dataclass(frozen=True, slots=True)
class Leaf:
    """Put out a leaf on one's own living vine at ``cell``."""

    cell: Cell

    def __post_init__(self) -> None:
        _check_cell(self, self.cell)

    def __str__(self) -> str:
        return "L" + CELL_NAMES[self.cell]


@dataclass(frozen=True, slots=True)
class Choke:
    """Turn the vine at ``cell`` into deadwood (at most once a turn, after growing)."""

    cell: Cell

    def __post_init__(self) -> None:
        _check_cell(self, self.cell)

    def __str__(self) -> str:
        return "x" + CELL_NAMES[self.cell]


Action = Creep | Leaf | Choke
"""One step of a turn."""


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything one player does in one turn, in order; ``Turn()`` is the pass."""

    actions: tuple[Action, ...] = ()

    PASS: ClassVar[Turn]
    """The turn with no action."""

    def __post_init__(self) -> None:
        if type(self.actions) is not tuple:
            object.__setattr__(self, "actions", tuple(self.actions))

    def __str__(self) -> str:
        if not self.actions:
            return PASS_TOKEN
        return "+".join([str(action) for action in self.actions])

    @classmethod
    def parse(cls, token: str) -> Turn:
        """The turn written ``token``; raises :class:`RuleError` naming the bad part."""
        if token == PASS_TOKEN:
            return cls.PASS
        if not token:
            raise RuleError(f"empty turn token (a pass is {PASS_TOKEN!r})")
        return cls(tuple(_parse_action(token, part) for part in token.split("+")))


def _parse_action(token: str, part: str) -> Action:
    """One ``+``-separated part of ``token``."""
    if not part:
        raise RuleError(f"bad turn token {token!r}: empty action between '+' signs")
    kind: type[Action] = Creep
    name = part
    if part[0] == "L":
        kind, name = Leaf, part[1:]
    elif part[0] == "x":
        kind, name = Choke, part[1:]
    try:
        return kind(parse_cell(name))
    except RuleError as error:
        raise RuleError(f"bad turn token {token!r}: {error} in {part!r}") from None


Turn.PASS = Turn()
