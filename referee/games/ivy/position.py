"""The Ivy position (spec §2, §6) and the rules of a turn (spec §4).

A :class:`Position` is the state between two turns: what every cell holds, each
player's sun and the number of the turn about to be played. It is immutable; a turn
makes a new one. :meth:`Position.play` checks and plays a whole turn,
:meth:`Position.begin` opens a :class:`TurnBuilder` that plays it one action at a
time (what bots and searches use).

This module is the inner loop of every bot and tournament, so the board is a handful
of ``int`` bitmasks over the 88 cells (see :mod:`referee.games.ivy.board`): the
cells of each ivy, the withering cells, the leaves and the deadwood, plus the cells
in the shade, kept up to date as cells fill and empty. Every owned cell is alive
(spec §2's invariant), so "P's living cells" is simply P's mask; a flood fill
(mask expansion restricted to a set of cells) finds withering branches and what a
choke cuts off.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NoReturn

from referee.errors import IllegalDecision, PositionError
from referee.games.ivy.board import (
    ALL_CELLS,
    BELOW,
    CELL_NAMES,
    COLUMN_MASKS,
    COLUMN_OF,
    GLASS,
    NEIGHBOURS,
    ROOTS,
    ROW_MASKS,
    ROW_OF,
    ROW_SPANS,
    TOP,
    Cell,
    Player,
    flood,
    iter_cells,
    mask_of,
    spread,
    spread_few,
)
from referee.games.ivy.turns import Action, Choke, Creep, Leaf, Turn

# --- rule constants ------------------------------------------------------------

ROOT_INCOME = 3
"""Sun the root gathers at every Feed."""

_ROOT_BITS: tuple[int, int] = (1 << ROOTS[0], 1 << ROOTS[1])
_ROOTS_MASK: int = _ROOT_BITS[0] | _ROOT_BITS[1]
_SOIL: int = ROW_MASKS[1]
_TOP_BIT: int = 1 << TOP
_LIGHT_1: int = ROW_MASKS[2] | ROW_MASKS[3] | ROW_MASKS[4]
_LIGHT_2: int = ROW_MASKS[5] | ROW_MASKS[6] | ROW_MASKS[7] | ROW_MASKS[8]
_LIGHT_4: int = ROW_MASKS[9] | ROW_MASKS[10] | ROW_MASKS[11]
_PLAYERS: tuple[Player, Player] = (Player.GREEN, Player.PURPLE)
_TITLES: tuple[str, str] = (Player.GREEN.title, Player.PURPLE.title)

_NB = NEIGHBOURS  # short local names for the hot paths below
_BELOW = BELOW
_COLUMN_MASK_OF: tuple[int, ...] = tuple(COLUMN_MASKS[column] for column in COLUMN_OF)
_ROW_CELLS: dict[int, tuple[Cell, ...]] = {
    row: tuple(c for c in range(len(ROW_OF)) if ROW_OF[c] == row) for row in ROW_SPANS
}
# The §6 board is written rows 12 down to 1, "/" between them. It is built in writing
# order straight away (the string of every turn request: hot): _NOTATION_AT[cell] is
# where ``cell``'s character goes, and _NOTATION_BLANK is the board with nothing on
# it, its glass and its slashes already in place, so only the occupied cells are set.
_NOTATION_ITEMS: tuple[Cell | None, ...] = tuple(
    [item for row in range(12, 0, -1) for item in (None, *_ROW_CELLS[row])][1:]
)
_NOTATION_AT: tuple[int, ...] = tuple(_NOTATION_ITEMS.index(cell) for cell in range(len(ROW_OF)))
_NOTATION_BLANK: tuple[str, ...] = tuple(
    "/" if item is None else "#" if GLASS >> item & 1 else "." for item in _NOTATION_ITEMS
)

# --- mask algorithms -------------------------------------------------------------


def _cut_off(cells: int, removed: Cell, root: int) -> int:
    """The cells of ``cells`` no longer linked to ``root`` once ``removed`` has left them.

    ``cells`` is an ivy's mask without ``removed``, which was linked to ``root``
    before. With fewer than two of the ivy's cells around ``removed`` nothing can be
    cut. Otherwise one flood starts from each of those cells, all advancing a layer
    at a time: floods that meet merge, a flood that finds the root stops there, a
    flood that runs out without the root is cut off. Once a single flood is left it
    holds the root (the root was linked to ``removed`` through one of them), so the
    work is about twice the size of the parts cut off, not the size of the ivy.
    """
    ends = _NB[removed] & cells
    first = ends & -ends
    rest = ends ^ first
    if not rest:
        return 0
    if not rest & (rest - 1):
        return _cut_between(cells, first, rest, root)
    floods: list[list[int]] = []  # [reach, frontier]; a rooted search's frontier is 0
    while ends:
        low = ends & -ends
        ends ^= low
        floods.append([low, 0 if low == root else low])
    cut = 0
    while True:
        for search in floods:
            if search[1]:
                reach = search[0]
                frontier = spread_few(search[1]) & cells & ~reach
                search[0] = reach | frontier
                search[1] = 0 if frontier & root else frontier
        live: list[list[int]] = []
        for search in floods:
            for other in live:
                if other[0] & search[0]:
                    other[0] |= search[0]
                    other[1] = 0 if other[0] & root else other[1] | search[1]
                    break
            else:
                if search[1] or search[0] & root:
                    live.append(search)
                else:
                    cut |= search[0]
        if len(live) <= 1:
            return cut
        floods = live


def _cut_between(cells: int, one: int, two: int, root: int) -> int:
    """:func:`_cut_off` for the common case of two ends, ``one`` and ``two``, on plain ints."""
    reach_one, reach_two = one, two
    frontier_one = 0 if one == root else one
    frontier_two = 0 if two == root else two
    while True:
        if frontier_one:
            frontier_one = spread_few(frontier_one) & cells & ~reach_one
            reach_one |= frontier_one
            if reach_one & reach_two:
                return 0
            if frontier_one & root:
                frontier_one = 0
        elif not reach_one & root:
            return reach_one
        if frontier_two:
            frontier_two = spread_few(frontier_two) & cells & ~reach_two
            reach_two |= frontier_two
            if reach_one & reach_two:
                return 0
            if frontier_two & root:
                frontier_two = 0
        elif not reach_two & root:
            return reach_two


def _reshade(shade: int, blockers: int, changed: int) -> int:
    """``shade`` with the columns of the cells in ``changed`` worked out anew.

    ``blockers`` are the cells that cast shade: vines and deadwood, never glass. In a
    column every cell below the highest blocker is in the shade (spec §2, lit).
    """
    while changed:
        column = _COLUMN_MASK_OF[(changed & -changed).bit_length() - 1]
        changed &= ~column
        shade &= ~column
        top = (blockers & column).bit_length() - 1
        if top > 0:
            shade |= column & ((1 << top) - 1)
    return shade


def _feed(lit_leaves: int) -> int:
    """What a Feed gives: the root's sun plus the lit leaves' by row (spec §4.1)."""
    return (
        ROOT_INCOME
        + (lit_leaves & _LIGHT_1).bit_count()
        + 2 * (lit_leaves & _LIGHT_2).bit_count()
        + 4 * (lit_leaves & _LIGHT_4).bit_count()
    )


_SHED_ORDER: dict[int, tuple[Cell, ...]] = {
    row: tuple(sorted(cells, key=lambda c: (abs(COLUMN_OF[c] - 4), COLUMN_OF[c])))
    for row, cells in _ROW_CELLS.items()
}
"""Each row's cells in the order Decay prefers them (C4): nearest column e, then nearer a."""


def _shed(branch: int) -> int:
    """The one cell (as a mask) a withering branch loses at Decay (spec §4.4, C4).

    Among the cells whose removal leaves the rest of the branch connected: the
    highest row, then the nearest to column e, then the nearer to column a.
    """
    if not branch & (branch - 1):
        return branch
    nb = _NB
    row = ROW_OF[branch.bit_length() - 1]
    while True:
        if branch & ROW_MASKS[row]:
            for cell in _SHED_ORDER[row]:
                low = 1 << cell
                if branch & low:
                    around = nb[cell] & branch
                    if not around & (around - 1):
                        return low
                    rest = branch ^ low
                    if flood(rest & -rest, rest) == rest:
                        return low
        row -= 1


def _decay_withering(withering: int) -> int:
    """The cells all withering branches lose together at Decay."""
    shed = 0
    rest = withering
    while rest:
        branch = flood(rest & -rest, rest)
        rest ^= branch
        shed |= _shed(branch)
    return shed


# --- the position ------------------------------------------------------------------


class Position:
    """The state between two turns (spec §2, §6); immutable and hashable.

    Build one with :attr:`Position.START`, :meth:`Position.from_string` or by playing
    a turn (:meth:`play`, :meth:`begin`). Besides the board it keeps the mask of the
    cells in the shade, derived from the board and updated turn by turn, so that a
    Feed costs a few mask operations.
    """

    __slots__ = (
        "_dead1",
        "_dead2",
        "_green",
        "_green_sun",
        "_leaves",
        "_purple",
        "_purple_sun",
        "_shade",
        "_turn",
        "_withering",
    )

    START: Position
    """The start position (spec §3)."""

    _green: int
    _purple: int
    _withering: int
    _leaves: int
    _dead1: int
    _dead2: int
    _shade: int
    _green_sun: int
    _purple_sun: int
    _turn: int

    def __init__(self) -> None:
        raise TypeError("build a Position with Position.START, Position.from_string or play()")

    @classmethod
    def _make(
        cls,
        green: int,
        purple: int,
        withering: int,
        leaves: int,
        dead1: int,
        dead2: int,
        shade: int,
        green_sun: int,
        purple_sun: int,
        turn: int,
    ) -> Position:
        """A position from its masks, unchecked: the rules and the parser call this."""
        position = object.__new__(cls)
        position._green = green
        position._purple = purple
        position._withering = withering
        position._leaves = leaves
        position._dead1 = dead1
        position._dead2 = dead2
        position._shade = shade
        position._green_sun = green_sun
        position._purple_sun = purple_sun
        position._turn = turn
        return position

    # -- identity ---------------------------------------------------------------

    def _key(self) -> tuple[int, ...]:
        return (
            self._green,
            self._purple,
            self._withering,
            self._leaves,
            self._dead1,
            self._dead2,
            self._green_sun,
            self._purple_sun,
            self._turn,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Position.from_string({str(self)!r})"

    # -- queries ------------------------------------------------------------------

    @property
    def turn(self) -> int:
        """The number of the turn about to be played (1 for the first turn)."""
        return self._turn

    @property
    def to_move(self) -> Player:
        """The player whose turn is next: Green on odd turns, Purple on even ones."""
        return _PLAYERS[1 - (self._turn & 1)]

    def sun(self, player: Player) -> int:
        """The sun ``player`` holds now."""
        return self._purple_sun if player else self._green_sun

    def vines(self, player: Player) -> int:
        """The mask of ``player``'s (living) vine cells, root included."""
        return self._purple if player else self._green

    def leaves(self, player: Player) -> int:
        """The mask of ``player``'s living cells that have a leaf."""
        return self._leaves & (self._purple if player else self._green)

    def withering(self) -> int:
        """The mask of withering vine cells (owned by nobody)."""
        return self._withering

    def deadwood_cells(self) -> int:
        """The mask of deadwood cells, whatever their marker."""
        return self._dead1 | self._dead2

    def owner(self, cell: Cell) -> Player | None:
        """The player whose living vine is at ``cell``, or ``None`` for anything else."""
        low = 1 << cell
        if self._green & low:
            return Player.GREEN
        if self._purple & low:
            return Player.PURPLE
        return None

    def is_vine(self, cell: Cell) -> bool:
        """Whether ``cell`` holds a vine: Green's, Purple's or a withering one."""
        return bool((self._green | self._purple | self._withering) >> cell & 1)

    def has_leaf(self, cell: Cell) -> bool:
        """Whether ``cell`` holds a vine with a leaf (of any owner, withering included)."""
        return bool(self._leaves >> cell & 1)

    def is_withering(self, cell: Cell) -> bool:
        """Whether ``cell`` holds a withering vine (owned by nobody)."""
        return bool(self._withering >> cell & 1)

    def deadwood(self, cell: Cell) -> int:
        """The deadwood marker at ``cell``: 2 or 1, or 0 when it holds no deadwood."""
        if self._dead2 >> cell & 1:
            return 2
        return self._dead1 >> cell & 1

    def is_glass(self, cell: Cell) -> bool:
        """Whether ``cell`` is glass."""
        return bool(GLASS >> cell & 1)

    def is_empty(self, cell: Cell) -> bool:
        """Whether ``cell`` holds nothing at all (not glass, vine or deadwood)."""
        occupied = GLASS | self._green | self._purple | self._withering | self.deadwood_cells()
        return not occupied >> cell & 1

    def is_lit(self, cell: Cell) -> bool:
        """Whether every cell above ``cell`` in its column is empty or glass."""
        return not self._shade >> cell & 1

    def income(self, player: Player) -> int:
        """The sun a Feed would give ``player`` now: 3 plus its lit living leaves by row."""
        return _feed(self.leaves(player) & ~self._shade)

    def winner_at_feed(self) -> Player | None:
        """The player to move when it holds a living leaf on e12 (it wins at this Feed)."""
        mover = 1 - (self._turn & 1)
        own = self._purple if mover else self._green
        return _PLAYERS[mover] if self._leaves & own & _TOP_BIT else None

    # -- turns --------------------------------------------------------------------

    def begin(self) -> TurnBuilder:
        """A turn in progress for the player to move, its Feed done (raises if won)."""
        return TurnBuilder(self)

    def play(self, turn: Turn) -> Position:
        """The position after the player to move plays ``turn`` (Feed, Grow, Choke, Decay).

        Raises :class:`IllegalDecision` naming the turn, the player, the action (its
        index in ``turn.actions``) and the rule it breaks.
        """
        builder = TurnBuilder(self)
        rules = _RULES
        done = builder._actions
        for action in turn.actions:
            try:
                rule = rules[type(action)]
            except KeyError:
                builder._refuse_unknown(action)
            rule(builder, action.cell)
            done.append(action)
        return builder.finish()

    # -- notation (spec §6) -------------------------------------------------------

    def __str__(self) -> str:
        chars = list(_NOTATION_BLANK)
        at, leaves = _NOTATION_AT, self._leaves
        for mask, plain, leafy in (
            (self._green, "g", "G"),
            (self._purple, "p", "P"),
            (self._withering, "w", "W"),
            (self._dead1, "1", "1"),
            (self._dead2, "2", "2"),
        ):
            while mask:  # iter_cells inlined: this runs for every turn request
                low = mask & -mask
                chars[at[low.bit_length() - 1]] = leafy if leaves & low else plain
                mask ^= low
        mover = "p" if self._turn % 2 == 0 else "g"
        return f"{''.join(chars)} {mover} {self._green_sun} {self._purple_sun} {self._turn}"

    @classmethod
    def from_string(cls, text: str) -> Position:
        """The position written ``text`` (spec §6), checked; raises :class:`PositionError`."""
        return _parse_position(text)


# --- a turn in progress ----------------------------------------------------------

_GROWING, _CHOKED, _FINISHED = 0, 1, 2  # the stages of a TurnBuilder


class TurnBuilder:
    """One turn being played, action by action, for the player to move (spec §4).

    Feed is done when the builder is made (``income`` says what it gave). Each
    :meth:`apply` checks one action against the rules and plays it at once, or raises
    :class:`IllegalDecision` leaving the turn as it was; :meth:`finish` runs Decay
    and returns the next position. The query methods answer for the board as it
    stands mid-turn, so a bot can pick its next action from them.
    """

    __slots__ = (
        "_actions",
        "_dead2",
        "_leaves",
        "_occupied",
        "_opponent",
        "_own",
        "_shade",
        "_stage",
        "_withering",
        "player",
        "position",
        "sun",
    )

    position: Position
    """The position the turn started from."""
    player: Player
    """The player whose turn it is."""
    sun: int
    """The sun the player holds now (after Feed and what has been spent)."""

    def __init__(self, position: Position) -> None:
        turn = position._turn
        mover = 1 - (turn & 1)
        if mover:
            own, opponent, sun = position._purple, position._green, position._purple_sun
        else:
            own, opponent, sun = position._green, position._purple, position._green_sun
        leaves = position._leaves
        if leaves & own & _TOP_BIT:
            title = _TITLES[mover]
            raise IllegalDecision(
                f"turn {turn} ({title}): the game is over: {title} holds a leaf on e12"
                " and wins at Feed"
            )
        withering = position._withering
        shade = position._shade
        self.position = position
        self.player = _PLAYERS[mover]
        self.sun = sun + _feed(leaves & own & ~shade)
        self._own = own
        self._opponent = opponent
        self._withering = withering
        self._leaves = leaves
        self._dead2 = position._dead2
        self._occupied = GLASS | own | opponent | withering | position._dead1 | position._dead2
        self._shade = shade
        self._actions: list[Action] = []
        self._stage = _GROWING

    # -- playing ------------------------------------------------------------------

    def apply(self, action: Action) -> None:
        """Check ``action`` and play it; raises :class:`IllegalDecision` naming the rule."""
        if self._stage == _FINISHED:
            self._refuse(f"{action} comes after the turn was finished")
        rule = _RULES.get(type(action))
        if rule is None:
            self._refuse_unknown(action)
        rule(self, action.cell)
        self._actions.append(action)

    def _creep(self, cell: Cell) -> None:
        """Creep into ``cell`` (spec §4.2), grafting the branches it touches."""
        if self._stage:
            self._refuse(f"creep {CELL_NAMES[cell]}: no growing after the choke")
        low = 1 << cell
        if self._occupied & low:
            name = CELL_NAMES[cell]
            self._refuse(f"creep {name}: {name} is not empty ({self._content(cell)})")
        touching = _NB[cell] & self._own
        if not touching:
            name = CELL_NAMES[cell]
            self._refuse(f"creep {name}: {name} does not touch a living {self._title()} cell")
        cost = touching.bit_count()
        sun = self.sun
        if cost > sun:
            self._refuse(f"creep {CELL_NAMES[cell]} costs {cost} sun, {self._title()} has {sun}")
        self.sun = sun - cost
        self._occupied |= low
        self._shade |= _BELOW[cell]
        withering = self._withering
        if _NB[cell] & withering:
            grafted = flood(_NB[cell] & withering, withering)
            self._withering = withering ^ grafted
            low |= grafted
        self._own |= low

    def _leaf(self, cell: Cell) -> None:
        """Put out a leaf on ``cell`` (spec §4.2)."""
        low = 1 << cell
        own = self._own
        leaves = self._leaves
        if self._stage or low & (_SOIL | leaves) or not own & low:
            self._refuse_leaf(cell)
        cost = 1 + (leaves & own & ~self._shade).bit_count()
        sun = self.sun
        if cost > sun:
            self._refuse(f"leaf on {CELL_NAMES[cell]} costs {cost} sun, {self._title()} has {sun}")
        self.sun = sun - cost
        self._leaves = leaves | low

    def _refuse_leaf(self, cell: Cell) -> NoReturn:
        """Say which placement rule a leaf on ``cell`` breaks."""
        name = CELL_NAMES[cell]
        low = 1 << cell
        if self._stage:
            self._refuse(f"leaf on {name}: no growing after the choke")
        if _ROOTS_MASK & low:
            self._refuse(f"leaf on {name}: a root never has a leaf")
        if _SOIL & low:
            self._refuse(f"leaf on {name}: no leaf in row 1 (the soil)")
        if not self._own & low:
            self._refuse(
                f"leaf on {name}: {name} is not a living {self._title()} vine"
                f" ({self._content(cell)})"
            )
        self._refuse(f"leaf on {name}: {name} already has a leaf")

    def _choke(self, cell: Cell) -> None:
        """Choke ``cell`` (spec §4.3): deadwood 2, then withering and grafting."""
        name = CELL_NAMES[cell]
        if self._stage:
            self._refuse(f"choke {name}: only one choke per turn")
        low = 1 << cell
        if _ROOTS_MASK & low:
            self._refuse(f"choke {name}: a root can never be choked")
        own, opponent, withering = self._own, self._opponent, self._withering
        if not (own | opponent | withering) & low:
            self._refuse(f"choke {name}: {name} is not a vine ({self._content(cell)})")
        if not _NB[cell] & own:
            self._refuse(f"choke {name}: {name} does not touch a living {self._title()} cell")
        self._stage = _CHOKED
        self._leaves &= ~low
        self._dead2 |= low
        if own & low:
            own ^= low
            cut = _cut_off(own, cell, _ROOT_BITS[self.player])
            if cut:
                own ^= cut
                grafted = flood(cut & spread(opponent), cut)
                opponent |= grafted
                withering |= cut ^ grafted
        elif opponent & low:
            opponent ^= low
            cut = _cut_off(opponent, cell, _ROOT_BITS[1 - self.player])
            if cut:
                opponent ^= cut
                grafted = flood(cut & spread(own), cut)
                own |= grafted
                withering |= cut ^ grafted
        else:
            withering ^= low
        self._own, self._opponent, self._withering = own, opponent, withering

    def finish(self) -> Position:
        """Run Decay and return the position after this turn (turn number + 1)."""
        if self._stage == _FINISHED:
            self._refuse("the turn is already finished")
        self._stage = _FINISHED
        position = self.position
        withering = self._withering
        leaves = self._leaves
        dead = self._dead2
        own, opponent = self._own, self._opponent
        freed = position._dead1
        if withering:
            shed = _decay_withering(withering)
            withering ^= shed
            leaves &= ~shed
            freed |= shed
        shade = self._shade
        if freed:
            shade = _reshade(shade, own | opponent | withering | dead, freed)
        if self.player:
            green, purple, green_sun, purple_sun = opponent, own, position._green_sun, self.sun
        else:
            green, purple, green_sun, purple_sun = own, opponent, self.sun, position._purple_sun
        return Position._make(
            green,
            purple,
            withering,
            leaves,
            dead,
            0,
            shade,
            green_sun,
            purple_sun,
            position._turn + 1,
        )

    # -- queries ------------------------------------------------------------------

    @property
    def actions(self) -> tuple[Action, ...]:
        """The actions played so far."""
        return tuple(self._actions)

    @property
    def income(self) -> int:
        """What this turn's Feed gave."""
        position = self.position
        return _feed(position.leaves(self.player) & ~position._shade)

    @property
    def growing(self) -> bool:
        """Whether creeps, leaves and the choke may still come (no choke played yet)."""
        return self._stage == _GROWING

    def turn(self) -> Turn:
        """The turn made of the actions played so far."""
        return Turn(tuple(self._actions))

    def owner(self, cell: Cell) -> Player | None:
        """The player whose living vine is at ``cell`` now, or ``None``."""
        if self._own >> cell & 1:
            return self.player
        if self._opponent >> cell & 1:
            return _PLAYERS[1 - self.player]
        return None

    def is_lit(self, cell: Cell) -> bool:
        """Whether every cell above ``cell`` in its column is empty or glass now."""
        return not self._shade >> cell & 1

    def creep_cost(self, cell: Cell) -> int | None:
        """What creeping into ``cell`` costs now, or ``None`` when no sun could buy it."""
        if self._stage or self._occupied >> cell & 1:
            return None
        return (_NB[cell] & self._own).bit_count() or None

    def leaf_cost(self) -> int:
        """What a leaf costs now: 1 plus the player's lit living leaves."""
        return 1 + (self._leaves & self._own & ~self._shade).bit_count()

    def creep_targets(self) -> list[Cell]:
        """The cells a creep can go to now, sun permitting, in increasing order."""
        if self._stage:
            return []
        own, sun = self._own, self.sun
        free = spread(own) & ~self._occupied
        return [c for c in iter_cells(free) if (_NB[c] & own).bit_count() <= sun]

    def leaf_targets(self) -> list[Cell]:
        """The cells a leaf can go on now, sun permitting, in increasing order."""
        if self._stage or self.leaf_cost() > self.sun:
            return []
        return list(iter_cells(self._own & ~self._leaves & ~_SOIL))

    def choke_targets(self) -> list[Cell]:
        """The cells the choke can hit now, in increasing order (none once it is played)."""
        if self._stage:
            return []
        vines = self._own | self._opponent | self._withering
        return list(iter_cells(spread(self._own) & vines & ~_ROOTS_MASK))

    # -- messages -----------------------------------------------------------------

    def _title(self) -> str:
        return _TITLES[self.player]

    def _who(self) -> str:
        return f"turn {self.position._turn} ({self._title()})"

    def _refuse(self, rule: str) -> NoReturn:
        raise IllegalDecision(f"{self._who()}: {rule}", index=len(self._actions))

    def _refuse_unknown(self, action: object) -> NoReturn:
        self._refuse(f"{action!r} is not a creep, leaf or choke")

    def _content(self, cell: Cell) -> str:
        """What ``cell`` holds now, in words, for error messages."""
        low = 1 << cell
        if GLASS & low:
            return "glass"
        if self._dead2 & low or self.position._dead1 & low:
            return "deadwood"
        if self._withering & low:
            return "withering vine"
        if self._own & low:
            return f"{self._title()} vine"
        if self._opponent & low:
            return f"{_TITLES[1 - self.player]} vine"
        return "empty"


_RULES: dict[type, Callable[[TurnBuilder, Cell], None]] = {
    Creep: TurnBuilder._creep,
    Leaf: TurnBuilder._leaf,
    Choke: TurnBuilder._choke,
}
"""The rule that checks and plays each kind of action."""


# --- reading a position (spec §6) ----------------------------------------------------

_NUMBER = re.compile(r"[0-9]+")
_CELL_CHARS = ".#gGpPwW12"


def _parse_position(text: str) -> Position:
    """Read and check a §6 position string; :class:`PositionError` names the broken rule."""
    fields = text.strip().split(" ")
    if len(fields) != 5:
        raise PositionError(
            f"a position has 5 fields separated by single spaces"
            f" (ROWS TO_MOVE GREEN_SUN PURPLE_SUN TURN), got {len(fields)}"
        )
    rows_text, mover_text, green_text, purple_text, turn_text = fields
    chars = _parse_rows(rows_text)
    masks = {
        char: mask_of([c for c, held in enumerate(chars) if held == char]) for char in _CELL_CHARS
    }
    _check_board(masks)
    if mover_text not in ("g", "p"):
        raise PositionError(f"TO_MOVE must be 'g' or 'p', got {mover_text!r}")
    green_sun = _parse_number("GREEN_SUN", green_text)
    purple_sun = _parse_number("PURPLE_SUN", purple_text)
    turn = _parse_number("TURN", turn_text)
    if turn < 1:
        raise PositionError("TURN must be at least 1, got 0")
    expected = "g" if turn % 2 else "p"
    if mover_text != expected:
        raise PositionError(
            f"TO_MOVE must be {expected!r} on turn {turn}"
            " (Green plays the odd turns, Purple the even ones)"
        )
    vines = {char: masks[char] | masks[char.upper()] for char in "gpw"}
    blockers = vines["g"] | vines["p"] | vines["w"] | masks["1"] | masks["2"]
    return Position._make(
        vines["g"],
        vines["p"],
        vines["w"],
        masks["G"] | masks["P"] | masks["W"],
        masks["1"],
        masks["2"],
        _reshade(0, blockers, ALL_CELLS),
        green_sun,
        purple_sun,
        turn,
    )


def _parse_rows(rows_text: str) -> list[str]:
    """The character of every cell, indexed by cell, checking row counts, lengths, chars."""
    rows = rows_text.split("/")
    if len(rows) != 12:
        raise PositionError(f"ROWS must list 12 rows separated by '/', got {len(rows)}")
    chars = ["."] * len(CELL_NAMES)
    for row, row_text in zip(range(12, 0, -1), rows, strict=True):
        cells = _ROW_CELLS[row]
        if len(row_text) != len(cells):
            first, last = CELL_NAMES[cells[0]], CELL_NAMES[cells[-1]]
            span = first if len(cells) == 1 else f"{first}-{last}"
            raise PositionError(
                f"row {row} has {len(row_text)} cells, expected {len(cells)} ({span})"
            )
        for cell, char in zip(cells, row_text, strict=True):
            if char not in _CELL_CHARS:
                raise PositionError(f"bad character {char!r} at {CELL_NAMES[cell]}")
            chars[cell] = char
    return chars


def _check_board(masks: dict[str, int]) -> None:
    """Check glass, roots, leaves, aliveness and withering on a read board."""
    if masks["#"] != GLASS:
        wrong = (masks["#"] ^ GLASS).bit_length() - 1
        if GLASS >> wrong & 1:
            raise PositionError(f"{CELL_NAMES[wrong]} is glass and must be written '#'")
        raise PositionError(f"{CELL_NAMES[wrong]} is not glass and cannot be written '#'")
    for player, root in zip(_PLAYERS, ROOTS, strict=True):
        if not masks[player.letter] >> root & 1:
            raise PositionError(
                f"{CELL_NAMES[root]} is {player.title}'s root and must be written {player.letter!r}"
            )
    leaves = masks["G"] | masks["P"] | masks["W"]
    if leaves & _SOIL:
        wrong = (leaves & _SOIL).bit_length() - 1
        raise PositionError(f"leaf on {CELL_NAMES[wrong]}: no leaf in row 1 (the soil)")
    living = 0
    for player, root in zip(_PLAYERS, ROOTS, strict=True):
        cells = masks[player.letter] | masks[player.letter.upper()]
        unlinked = cells & ~flood(1 << root, cells)
        if unlinked:
            name = CELL_NAMES[(unlinked & -unlinked).bit_length() - 1]
            raise PositionError(
                f"{player.title} vine at {name} is not alive: no chain of {player.title}"
                f" cells links it to the root {CELL_NAMES[root]}"
            )
        living |= cells
    withering = masks["w"] | masks["W"]
    touching = withering & spread(living)
    if touching:
        name = CELL_NAMES[(touching & -touching).bit_length() - 1]
        raise PositionError(
            f"withering vine at {name} touches a living cell (it would have been grafted)"
        )


def _parse_number(field: str, text: str) -> int:
    """A whole number ≥ 0 written in ASCII digits."""
    if not _NUMBER.fullmatch(text):
        raise PositionError(f"{field} must be a whole number >= 0, got {text!r}")
    return int(text)


Position.START = Position.from_string(
    "./.../...../.#...#./........./........./..#...#../........./"
    "........./....#..../....#..../..g...p.. g 1 2 1"
)
