"""greedy: one turn of lookahead with a heuristic; also the Ivy heuristic the climber searches with.

The bot builds a few dozen candidate turns (:func:`candidate_turns`): climbs along a
shortest path toward e12, leaves where they are lit and pay, creeps into the
opponent's path, attacks (creep next to an opponent cell whose loss cuts its vine,
then choke it), defences of its own cells that such a choke would cut (a second link
around them, or filling the holes an attacker would creep into), each with and
without the best chokes. It plays every candidate on the engine and keeps the one
whose resulting position :func:`evaluate` likes best.

:func:`evaluate` scores a position for one player in units of sun. Each side's
*standing* is what it has (sun, income, cells) against what it still needs to put a
leaf on e12 (its shortest climb plus the leaf). On top of that come the *threats*:
what the player to move can cut off its opponent with one choke this turn, creeping
with all its sun to get there (a cut-off part that touches the attacker is grafted by
it, a double swing), and, weighted less, what the other player threatens in return.
A leaf on e12 that the player to move cannot cut off wins.

Everything works on the engine's cell bitmasks (:mod:`referee.games.ivy.board`).
"""

from __future__ import annotations

import argparse
import functools
from dataclasses import dataclass
from functools import lru_cache

from bots.random import RandomBot
from bots.sdk import Bot, Clock, main
from referee.errors import IllegalDecision
from referee.games.ivy import (
    GLASS,
    NEIGHBOURS,
    ROOTS,
    TOP,
    Action,
    Cell,
    Choke,
    Creep,
    Leaf,
    Player,
    Position,
    Turn,
    TurnBuilder,
    board,
    iter_cells,
)
from referee.games.ivy.board import ABOVE, ALL_CELLS, CELL_COUNT, ROW_MASKS, ROW_OF, flood

# --- masks ---------------------------------------------------------------------


TOP_BIT = 1 << TOP
ROOT_BITS: tuple[int, int] = (1 << ROOTS[0], 1 << ROOTS[1])
_NOT_ROOTS = ALL_CELLS & ~(ROOT_BITS[0] | ROOT_BITS[1])
LEAF_INCOME: tuple[int, ...] = tuple(
    (0, 0, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 0)[ROW_OF[cell]] for cell in range(CELL_COUNT)
)
"""What a lit leaf on each cell adds to its owner's Feed (spec §4.1)."""

_SLOW_STEP = 3
"""What a cell held by the opponent or deadwood costs a climb: a choke and a wait."""
_FAR = 40
"""The distance of a player walled off from e12 altogether."""
_MAX_REACH = 14
"""The most creeps an attack is assumed to make (a vine can't go much further in a turn)."""


def spread(mask: int) -> int:
    """``mask`` together with every neighbour of its cells."""
    return mask | board.spread(mask)


def top_row(mask: int) -> int:
    """The highest row holding a cell of ``mask`` (0 for the empty mask)."""
    return ROW_OF[mask.bit_length() - 1] if mask else 0


def lit_leaves(leaves: int, occupied: int) -> int:
    """The cells of ``leaves`` with nothing but glass above them."""
    lit = 0
    for cell in iter_cells(leaves):
        if not ABOVE[cell] & occupied:
            lit |= 1 << cell
    return lit


def income_of(lit: int) -> int:
    """What a Feed gives with the lit leaves ``lit``: 3 for the root plus each leaf's row."""
    return 3 + sum(LEAF_INCOME[cell] for cell in iter_cells(lit))


@dataclass(frozen=True, slots=True)
class Cuts:
    """What one choke can cut off a vine: ``lost[cell]`` is the part the vine loses
    beyond ``cell`` itself, for every cell whose loss cuts something (``cells``)."""

    lost: dict[Cell, int]
    cells: int


@lru_cache(maxsize=1 << 15)
def cut_sets(cells: int, root: Cell) -> Cuts:
    """The :class:`Cuts` of the vine ``cells`` growing from ``root``.

    One depth-first search (articulation points, with the mask of each subtree), cached:
    a search revisits the same vines again and again.
    """
    order = {root: 0}
    low = {root: 0}
    subtree = {root: 1 << root}
    lost: dict[Cell, int] = {}
    stack = [(root, -1, iter_cells(NEIGHBOURS[root] & cells))]
    while stack:
        cell, parent, neighbours = stack[-1]
        for other in neighbours:
            if other == parent:
                continue
            if other in order:
                low[cell] = min(low[cell], order[other])
            else:
                order[other] = low[other] = len(order)
                subtree[other] = 1 << other
                stack.append((other, cell, iter_cells(NEIGHBOURS[other] & cells)))
                break
        else:
            stack.pop()
            if parent >= 0:
                low[parent] = min(low[parent], low[cell])
                subtree[parent] |= subtree[cell]
                if parent != root and low[cell] >= order[parent]:
                    lost[parent] = lost.get(parent, 0) | subtree[cell]
    return Cuts(lost, sum(1 << cell for cell in lost))


@lru_cache(maxsize=1 << 14)
def climb_distance(own: int, empty: int, withering: int, slow: int) -> int:
    """About how much sun of creeps the vine ``own`` needs to reach e12.

    An empty cell costs 1, a withering branch nothing (it is grafted), a ``slow`` cell
    (the opponent's or deadwood) :data:`_SLOW_STEP`; :data:`_FAR` when walled off.
    """
    if own & TOP_BIT:
        return 0
    pending = [own] + [0] * (_FAR + _SLOW_STEP)
    seen = 0
    for steps in range(_FAR):
        layer = pending[steps] & ~seen
        if not layer:
            continue
        around = spread(layer)
        if around & withering:
            layer |= flood(around & withering, withering)
            around = spread(layer)
        seen |= layer
        if seen & TOP_BIT:
            return steps
        around &= ~seen
        pending[steps + 1] |= around & empty
        pending[steps + _SLOW_STEP] |= around & slow
    return _FAR


@lru_cache(maxsize=1 << 14)
def reach_rings(own: int, passable: int, creeps: int) -> tuple[int, ...]:
    """Rings of cells a vine can choke after 0, 1, … ``creeps`` creeps, then all it reaches.

    Ring ``k`` holds the cells next to where the vine ``own`` can be after ``k`` creeps
    through ``passable`` cells and not before; the last item is every cell it can reach.
    """
    reach = own
    touched = around = spread(reach)
    rings = [touched]
    for _ in range(min(creeps, _MAX_REACH)):
        frontier = around & passable & ~reach
        if not frontier:
            break
        reach |= frontier
        around = spread(frontier)
        rings.append(around & ~touched)
        touched |= around
    rings.append(reach)
    return tuple(rings)


def climb_path(own: int, passable: int, goal: int) -> list[Cell] | None:
    """A shortest chain of creeps from ``own`` to a cell of ``goal``, nearest cell first.

    ``[]`` when ``own`` already holds a goal cell, ``None`` when no goal can be reached.
    Among equal paths it prefers cells touching fewer of ``own`` (cheaper creeps).
    """
    layers: list[int] = []
    reach = frontier = own
    while not reach & goal:
        frontier = spread(frontier) & passable & ~reach
        if not frontier:
            return None
        layers.append(frontier)
        reach |= frontier
    if not layers:
        return []
    target = layers[-1] & goal
    cell = (target & -target).bit_length() - 1
    path = [cell]
    for layer in reversed(layers[:-1]):
        options = NEIGHBOURS[cell] & layer
        cell = min(iter_cells(options), key=lambda c: (NEIGHBOURS[c] & own).bit_count())
        path.append(cell)
    path.reverse()
    return path


# --- the board as the heuristic sees it -----------------------------------------


_INCOME_WEIGHT = 3.0
"""Sun a point of income is worth: a few turns of it."""
_CELL_WEIGHT = 0.3
"""Sun a living cell is worth beyond what the distance says (material to branch from);
also what each cell a choke cuts off, or grafts, is worth."""
_MOVER_THREAT = 0.8
"""How much of its best choke the player to move is credited with."""
_WAITING_THREAT = 0.3
"""How much of its best choke the other player is credited with (the mover may parry)."""


@dataclass(frozen=True, slots=True)
class Threat:
    """One choke an attacker can make: the cell, what it cuts off and what it grafts.

    ``cost`` is how many creeps bring the attacker next to ``cell``; ``gain`` the swing
    in sun (what the victim loses plus what the attacker gains, less the creeps).
    """

    cell: Cell
    lost: int
    grafted: int
    cost: int
    gain: float


@dataclass(frozen=True, slots=True)
class Board:
    """The masks and numbers of a position that the heuristic reads, computed once."""

    position: Position
    vines: tuple[int, int]
    lit: tuple[int, int]
    withering: int
    occupied: int
    fading: int
    """Deadwood with marker 1: gone at the end of this turn."""

    @classmethod
    def of(cls, position: Position) -> Board:
        """The board of ``position``."""
        green, purple = position.vines(Player.GREEN), position.vines(Player.PURPLE)
        withering = position.withering()
        deadwood = position.deadwood_cells()
        occupied = GLASS | green | purple | withering | deadwood
        lit = (
            lit_leaves(position.leaves(Player.GREEN), occupied),
            lit_leaves(position.leaves(Player.PURPLE), occupied),
        )
        fading = sum(1 << cell for cell in iter_cells(deadwood) if position.deadwood(cell) == 1)
        return cls(position, (green, purple), lit, withering, occupied, fading)

    @property
    def empty(self) -> int:
        """The empty cells."""
        return ALL_CELLS & ~self.occupied

    def budget(self, player: Player) -> int:
        """The sun ``player`` can spend on its next turn (its Feed included)."""
        return self.position.sun(player) + income_of(self.lit[player])

    def distance(self, player: Player) -> int:
        """About how much sun of creeps ``player`` needs to reach e12 (:func:`climb_distance`)."""
        own = self.vines[player]
        slow = self.occupied & ~GLASS & ~own & ~self.withering & _NOT_ROOTS
        return climb_distance(own, self.empty, self.withering, slow)

    def threats(self, attacker: Player, creeps: int) -> list[Threat]:
        """The chokes ``attacker`` can make after up to ``creeps`` creeps, best first.

        For the player not to move, that is on its next turn, once the fading deadwood
        has gone. Only chokes that cut something, kill a lit leaf or lower the victim's
        top are listed: any other choke takes one bare cell.
        """
        victim = attacker.other
        cells = self.vines[victim]
        passable = self.empty | self.withering
        if attacker is not self.position.to_move:
            passable |= self.fading
        *rings, reach = reach_rings(self.vines[attacker], passable, creeps)
        touching = spread(reach)
        victim_lit, victim_top = self.lit[victim], top_row(cells)
        cuts = cut_sets(cells, ROOTS[victim])
        targets = cells & _NOT_ROOTS & touching
        targets &= cuts.cells | victim_lit | ROW_MASKS[victim_top]
        if not targets:
            return []
        attacker_top = top_row(self.vines[attacker])
        found: list[Threat] = []
        for cost, ring in enumerate(rings):
            for cell in iter_cells(targets & ring):
                low = 1 << cell
                lost = cuts.lost.get(cell, 0) | low
                rest = lost ^ low
                grafted = flood(rest & touching, rest) if rest & touching else 0
                gain = _CELL_WEIGHT * (lost.bit_count() + grafted.bit_count()) - cost
                gain += victim_top - top_row(cells & ~lost)
                if grafted:
                    gain += max(0, top_row(grafted) - attacker_top)
                if lost & victim_lit:
                    gain += _INCOME_WEIGHT * (income_of(lost & victim_lit) - 3)
                    if grafted & victim_lit:
                        gain += _INCOME_WEIGHT * (income_of(grafted & victim_lit) - 3)
                if lost & victim_lit & TOP_BIT:
                    gain += WIN / 10
                found.append(Threat(cell, lost, grafted, cost, gain))
        found.sort(key=lambda threat: -threat.gain)
        return found


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the heuristic knows of a position: its board and both sides' chokes.

    ``attacks`` are the chokes the player to move can make this turn, ``counters`` those
    the other player could make on its next turn if nothing changed, both best first.
    """

    board: Board
    attacks: list[Threat]
    counters: list[Threat]


@lru_cache(maxsize=1 << 13)
def analyse(position: Position) -> Analysis:
    """The :class:`Analysis` of ``position``, cached: evaluation and move generation share it."""
    board = Board.of(position)
    mover = position.to_move
    return Analysis(
        board,
        board.threats(mover, board.budget(mover)),
        board.threats(mover.other, board.budget(mover.other)),
    )


# --- evaluation ----------------------------------------------------------------

WIN = 100_000.0
"""The score of a won position (a lost one scores ``-WIN``)."""


def _standing(board: Board, player: Player, mover: Player) -> float:
    """``player``'s race toward a leaf on e12, in sun: what it has minus what it needs."""
    lit = board.lit[player]
    income = income_of(lit)
    sun = board.position.sun(player) + (income if player is mover else 0)
    need = board.distance(player) + 1 + lit.bit_count()
    cells = board.vines[player].bit_count()
    return sun - need + _INCOME_WEIGHT * income + _CELL_WEIGHT * cells


def evaluate(position: Position, player: Player) -> float:
    """How good ``position`` is for ``player``, in sun; ``±WIN`` once the game is decided."""
    mover = position.to_move
    if position.winner_at_feed() is not None:
        return WIN if mover is player else -WIN
    analysis = analyse(position)
    board, attacks, counters = analysis.board, analysis.attacks, analysis.counters
    waiting = mover.other
    if position.leaves(waiting) & TOP_BIT and not any(t.lost & TOP_BIT for t in attacks):
        return -WIN / 2 if mover is player else WIN / 2
    score = _standing(board, mover, mover) - _standing(board, waiting, mover)
    if attacks:
        score += _MOVER_THREAT * max(0.0, attacks[0].gain)
    if counters:
        score -= _WAITING_THREAT * max(0.0, counters[0].gain)
    return score if mover is player else -score


# --- candidate turns -------------------------------------------------------------


def _begin(position: Position, actions: list[Action]) -> TurnBuilder | None:
    """A turn in progress after ``actions``, or ``None`` when the rules refuse them."""
    builder = position.begin()
    try:
        for action in actions:
            builder.apply(action)
    except IllegalDecision:
        return None
    return builder


def _affordable(position: Position, actions: list[Action]) -> int:
    """How many of ``actions`` can be played in order this turn."""
    builder = position.begin()
    for count, action in enumerate(actions):
        try:
            builder.apply(action)
        except IllegalDecision:
            return count
    return len(actions)


def _best_leaves(position: Position, actions: list[Action], count: int) -> list[Action]:
    """Up to ``count`` leaves to add after ``actions``, on the lit cells that pay most."""
    builder = _begin(position, actions)
    if builder is None:
        return []
    spots = [cell for cell in builder.leaf_targets() if builder.is_lit(cell) and LEAF_INCOME[cell]]
    spots.sort(key=lambda cell: -LEAF_INCOME[cell])
    leaves: list[Action] = []
    for cell in spots[:count]:
        if builder.leaf_cost() > builder.sun:
            break
        leaf = Leaf(cell)
        builder.apply(leaf)
        leaves.append(leaf)
    return leaves


def _creeps(cells: list[Cell]) -> list[Action]:
    """Creeps into ``cells``, in order."""
    return [Creep(cell) for cell in cells]


def _climbs(position: Position, board: Board) -> list[list[Action]]:
    """Creeps along a shortest path toward e12: short, half and full climbs, some with a leaf."""
    me = position.to_move
    path = climb_path(board.vines[me], board.empty, TOP_BIT)
    if path is None:
        return []
    if not path:  # e12 is ours already: the leaf is what is missing
        return [[Leaf(TOP)]]
    creeps = _creeps(path)
    affordable = _affordable(position, creeps)
    lengths = {1, 2, 3, affordable // 2, affordable - 1, affordable}
    plans = [creeps[:length] for length in sorted(lengths) if 0 < length <= affordable]
    for length in {affordable, affordable - 1, affordable - 2, affordable // 2}:
        if length > 0:
            plans.append(creeps[:length] + _best_leaves(position, creeps[:length], 1))
    if affordable == len(creeps):
        plans.append([*creeps, Leaf(TOP)])
    return plans


def _attacks(position: Position, board: Board, threats: list[Threat]) -> list[list[Action]]:
    """For the best chokes within reach: creep next to the cell, then choke it."""
    own = board.vines[position.to_move]
    plans: list[list[Action]] = []
    for threat in threats[:3]:
        path = climb_path(own, board.empty, NEIGHBOURS[threat.cell])
        if path is not None:
            plans.append([*_creeps(path), Choke(threat.cell)])
    return plans


def _defences(position: Position, board: Board, threats: list[Threat]) -> list[list[Action]]:
    """Answers to the opponent's best chokes against us.

    A second link between the part a choke would cut off and the rest of the vine; the
    empty cells next to the threatened cell filled so no attacker can creep beside it;
    or a choke of the attacker's cell beside it.
    """
    me = position.to_move
    own, rival = board.vines[me], board.vines[me.other]
    empty = board.empty
    plans: list[list[Action]] = []
    for threat in threats[:2]:
        rest = threat.lost & ~(1 << threat.cell)
        if rest:
            link = climb_path(own & ~threat.lost, empty, spread(rest) & empty)
            if link:
                plans.append(_creeps(link))
        holes = NEIGHBOURS[threat.cell] & empty
        if holes and holes.bit_count() <= 2:
            plans.append(_creeps(list(iter_cells(holes))))
        for guard in iter_cells(NEIGHBOURS[threat.cell] & rival & _NOT_ROOTS):
            plans.append([Choke(guard)])
    return plans


def _blocks(position: Position, board: Board) -> list[list[Action]]:
    """Single creeps into the opponent's shortest path toward e12, next to our vine."""
    me = position.to_move
    empty = board.empty
    rival_path = climb_path(board.vines[me.other], empty, TOP_BIT)
    if not rival_path:
        return []
    frontier = spread(board.vines[me]) & empty
    blocks: list[list[Action]] = [[Creep(cell)] for cell in rival_path if frontier >> cell & 1]
    return blocks[-2:]


def _choke_options(builder: TurnBuilder, limit: int) -> list[Action]:
    """The ``limit`` chokes of opponent cells that would cut most, from a turn in progress."""
    rival = builder.player.other
    targets = [c for c in builder.choke_targets() if builder.owner(c) is rival]
    if len(targets) <= limit:
        return [Choke(cell) for cell in targets]
    cells = builder.position.vines(rival)
    lost = cut_sets(cells, ROOTS[rival]).lost

    def cut(cell: Cell) -> float:
        return (lost.get(cell, 0) | 1 << cell).bit_count() + ROW_OF[cell] / 16

    return [Choke(cell) for cell in sorted(targets, key=cut, reverse=True)[:limit]]


def candidate_turns(position: Position) -> list[tuple[Turn, Position]]:
    """Distinct turns worth considering in ``position``, each with the position it leads to."""
    analysis = analyse(position)
    board = analysis.board
    plans: list[list[Action]] = [[]]
    plans += _climbs(position, board)
    plans += [_best_leaves(position, [], count) for count in (1, 2, 3)]
    plans += _blocks(position, board)
    plans += _attacks(position, board, analysis.attacks)
    plans += _defences(position, board, analysis.counters)
    seen: dict[Position, Turn] = {}
    for plan in dict.fromkeys(tuple(plan) for plan in plans):
        builder = _begin(position, list(plan))
        if builder is None:
            continue
        chokes = [] if plan and isinstance(plan[-1], Choke) else _choke_options(builder, 2)
        seen.setdefault(builder.finish(), Turn(plan))
        for choke in chokes:
            builder = _begin(position, [*plan, choke])
            if builder is not None:
                seen.setdefault(builder.finish(), Turn((*plan, choke)))
    return [(turn, after) for after, turn in seen.items()]


# --- the bot ------------------------------------------------------------------------

NOISE = 0.2
"""Up to this much sun of seeded noise is added to each score, so that near-ties vary."""


class GreedyBot(Bot):
    """Plays the candidate turn whose resulting position evaluates best (ties broken by seed).

    With ``skill`` below 1 (``--skill P``) it plays that turn with probability ``P`` and
    a random bot's turn otherwise: a bot of known strength, the higher ``P`` the
    stronger (``bench/bench_ladder.py`` ranks a field of them)."""

    name = "greedy"
    author = "ivy-referee"
    version = "1.0"

    def __init__(self, seed: int | None = None, skill: float = 1.0) -> None:
        super().__init__(seed)
        self.skill = skill
        self._random = RandomBot(seed)
        self._random.rng = self.rng  # one seeded stream: a game replays from the seed

    def choose(self, position: Position, clock: Clock) -> Turn:
        """The best candidate turn after one turn of lookahead (or, with probability
        ``1 - skill``, a random one)."""
        if self.skill < 1.0 and self.rng.random() >= self.skill:
            return self._random.choose(position, clock)
        me = position.to_move
        best_turn, best_score = Turn.PASS, -2 * WIN
        for turn, after in candidate_turns(position):
            score = evaluate(after, me) + self.rng.random() * NOISE
            if score > best_score:
                best_turn, best_score = turn, score
        return best_turn


def skill(text: str) -> float:
    """``--skill``'s value: a probability."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"skill must be from 0 to 1, not {text}")
    return value


if __name__ == "__main__":
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--skill", type=skill, default=1.0)
    known, rest = options.parse_known_args()
    main(functools.partial(GreedyBot, skill=known.skill), rest)
