"""greedy: one turn of lookahead with a heuristic; also the Ivy heuristic the climber searches with.

The bot builds a few dozen candidate turns (:func:`candidate_turns`): climbs along a
shortest path toward e12, leaves where they are lit and pay, creeps into the
opponent's path, attacks (creep next to an opponent cell whose loss cuts its vine,
then choke it), each with and without the best chokes. It plays every candidate on the
engine and keeps the one whose resulting position :func:`evaluate` likes best.

:func:`evaluate` scores a position for one player in units of sun: the sun and income
each side has against what it still needs to put a leaf on e12 (the length of its
shortest climb plus the leaf), and what the player to move can cut off the other
with one choke now. The position helpers work on the engine's cell bitmasks.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    iter_cells,
)
from referee.games.ivy.board import ABOVE, ALL_CELLS, CELL_COUNT, ROW_OF

# --- masks ---------------------------------------------------------------------


def _shift_tables() -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """For every index distance between neighbours, the cells having a neighbour that far.

    Neighbours of a whole mask are then a dozen shifts instead of a loop over its cells.
    """
    sources: dict[int, int] = {}
    for cell in range(CELL_COUNT):
        for other in iter_cells(NEIGHBOURS[cell]):
            sources[other - cell] = sources.get(other - cell, 0) | 1 << cell
    up = tuple((delta, mask) for delta, mask in sorted(sources.items()) if delta > 0)
    down = tuple((-delta, mask) for delta, mask in sorted(sources.items()) if delta < 0)
    return up, down


_UP_SHIFTS, _DOWN_SHIFTS = _shift_tables()
TOP_BIT = 1 << TOP
ROOT_BITS: tuple[int, int] = (1 << ROOTS[0], 1 << ROOTS[1])
_NOT_ROOTS = ALL_CELLS & ~(ROOT_BITS[0] | ROOT_BITS[1])
LEAF_INCOME: tuple[int, ...] = tuple(
    (0, 0, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 0)[ROW_OF[cell]] for cell in range(CELL_COUNT)
)
"""What a lit leaf on each cell adds to its owner's Feed (spec §4.1)."""


def spread(mask: int) -> int:
    """``mask`` together with every neighbour of its cells."""
    grown = mask
    for delta, sources in _UP_SHIFTS:
        grown |= (mask & sources) << delta
    for delta, sources in _DOWN_SHIFTS:
        grown |= (mask & sources) >> delta
    return grown


def flood(seed: int, allowed: int) -> int:
    """The cells of ``allowed`` linked to ``seed`` neighbour to neighbour, ``seed`` included."""
    reach = frontier = seed
    while frontier:
        frontier = spread(frontier) & allowed & ~reach
        reach |= frontier
    return reach


def cut_off(cells: int, removed: Cell, root_bit: int) -> int:
    """The cells of ``cells`` no longer linked to the root once ``removed`` is gone."""
    if (NEIGHBOURS[removed] & cells).bit_count() < 2:
        return 0
    rest = cells & ~(1 << removed)
    return rest & ~flood(root_bit, rest)


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


def climb_layers(own: int, passable: int, goal: int) -> list[int] | None:
    """Breadth-first layers of creeps from ``own`` through ``passable`` until ``goal`` is hit.

    ``[]`` when ``own`` already holds a goal cell, ``None`` when no goal can be reached.
    """
    layers: list[int] = []
    reach = frontier = own
    while not reach & goal:
        frontier = spread(frontier) & passable & ~reach
        if not frontier:
            return None
        layers.append(frontier)
        reach |= frontier
    return layers


def climb_path(own: int, passable: int, goal: int) -> list[Cell] | None:
    """A shortest chain of creeps from ``own`` to a cell of ``goal``, nearest cell first.

    Among equal paths it prefers cells touching fewer of ``own`` (cheaper creeps).
    """
    layers = climb_layers(own, passable, goal)
    if layers is None:
        return None
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


@dataclass(frozen=True, slots=True)
class Board:
    """The masks and numbers of a position that the heuristic reads, computed once."""

    position: Position
    vines: tuple[int, int]
    lit: tuple[int, int]
    withering: int
    occupied: int

    @classmethod
    def of(cls, position: Position) -> Board:
        """The board of ``position``."""
        green, purple = position.vines(Player.GREEN), position.vines(Player.PURPLE)
        withering = position.withering()
        occupied = GLASS | green | purple | withering | position.deadwood_cells()
        lit = (
            lit_leaves(position.leaves(Player.GREEN), occupied),
            lit_leaves(position.leaves(Player.PURPLE), occupied),
        )
        return cls(position, (green, purple), lit, withering, occupied)

    @property
    def empty(self) -> int:
        """The empty cells."""
        return ALL_CELLS & ~self.occupied

    def distance(self, player: Player) -> int | None:
        """How many creeps ``player`` needs to reach e12 (grafting withering branches on the way)."""
        own = self.vines[player]
        if own & TOP_BIT:
            return 0
        empty, withering = self.empty, self.withering
        reach = frontier = own
        steps = 0
        while True:
            frontier = spread(frontier) & (empty | withering) & ~reach
            if not frontier:
                return None
            if frontier & withering:
                frontier |= flood(frontier & withering, withering)
            reach |= frontier
            if reach & TOP_BIT:
                return steps + 1
            steps += 1

    def reach(self, player: Player, creeps: int) -> int:
        """``player``'s cells plus the empty cells it could creep into within ``creeps`` steps."""
        reach = frontier = self.vines[player]
        empty = self.empty
        for _ in range(creeps):
            frontier = spread(frontier) & empty & ~reach
            if not frontier:
                break
            reach |= frontier
        return reach


# --- evaluation ----------------------------------------------------------------

WIN = 100_000.0
"""The score of a won position (a lost one scores ``-WIN``)."""

_INCOME_WEIGHT = 3.0
"""Sun a point of income is worth: a few turns of it."""
_CELL_WEIGHT = 0.4
"""Sun a living cell is worth beyond what the distance says (material to branch from)."""
_MOVER_THREAT = 0.8
_WAITING_THREAT = 0.25


def choke_damage(board: Board, attacker: Player, reach: int) -> tuple[float, int]:
    """The most the attacker takes from its opponent with one choke from ``reach``.

    ``reach`` is where the attacker's living cells can be when it chokes. Returns the
    damage in sun and the cell to choke (-1 when there is nothing to choke). The damage
    counts the cells cut off (by row), their lit leaves' income, doubled when the
    attacker grafts them, and is decisive when e12 is cut.
    """
    victim = attacker.other
    cells = board.vines[victim]
    root = ROOT_BITS[victim]
    lit = board.lit[victim]
    best, best_cell = 0.0, -1
    for cell in iter_cells(cells & spread(reach) & _NOT_ROOTS):
        lost = cut_off(cells, cell, root) | 1 << cell
        damage = 0.0
        for gone in iter_cells(lost):
            damage += 0.5 + 0.25 * ROW_OF[gone]
        if lost & lit:
            damage += _INCOME_WEIGHT * income_of(lost & lit) - 3 * _INCOME_WEIGHT
        if lost & TOP_BIT:
            damage += WIN / 10
        if spread(lost & ~(1 << cell)) & reach:
            damage *= 2
        if damage > best:
            best, best_cell = damage, cell
    return best, best_cell


def _standing(board: Board, player: Player, mover: Player) -> float:
    """``player``'s race toward a leaf on e12, in sun: what it has minus what it needs."""
    position = board.position
    lit = board.lit[player]
    income = income_of(lit)
    sun = position.sun(player) + (income if player is mover else 0)
    distance = board.distance(player)
    need = (distance if distance is not None else 30) + 1 + lit.bit_count()
    cells = board.vines[player].bit_count()
    return sun - need + _INCOME_WEIGHT * income + _CELL_WEIGHT * cells


def evaluate(position: Position, player: Player) -> float:
    """How good ``position`` is for ``player``, in sun; ``±WIN`` once the game is decided."""
    mover = position.to_move
    winner = position.winner_at_feed()
    if winner is not None:
        return WIN if winner is player else -WIN
    board = Board.of(position)
    score = _standing(board, mover, mover) - _standing(board, mover.other, mover)
    waiting = mover.other
    if board.vines[waiting] & TOP_BIT and position.leaves(waiting) & TOP_BIT:
        damage, _ = choke_damage(board, mover, board.reach(mover, position.sun(mover) + 3))
        if damage < WIN / 10:
            return -WIN / 2 if mover is player else WIN / 2
    mover_reach = board.reach(mover, 1)
    score += _MOVER_THREAT * choke_damage(board, mover, mover_reach)[0]
    score -= _WAITING_THREAT * choke_damage(board, waiting, board.vines[waiting])[0]
    return score if mover is player else -score


# --- candidate turns -------------------------------------------------------------


def _play(position: Position, actions: list[Action]) -> Position | None:
    """The position after ``actions``, or ``None`` when the rules refuse them."""
    builder = position.begin()
    try:
        for action in actions:
            builder.apply(action)
    except IllegalDecision:
        return None
    return builder.finish()


def _affordable_prefix(position: Position, actions: list[Action]) -> int:
    """How many of ``actions`` can be played in order this turn."""
    builder = position.begin()
    for count, action in enumerate(actions):
        try:
            builder.apply(action)
        except IllegalDecision:
            return count
    return len(actions)


def _best_leaf_spots(position: Position, actions: list[Action], count: int) -> list[Action]:
    """Up to ``count`` leaves to add after ``actions``, on the lit cells that pay most."""
    builder = position.begin()
    for action in actions:
        builder.apply(action)
    spots = [
        cell
        for cell in builder.leaf_targets()
        if builder.is_lit(cell) and LEAF_INCOME[cell] and cell != TOP
    ]
    spots.sort(key=lambda cell: -LEAF_INCOME[cell])
    leaves: list[Action] = []
    for cell in spots[:count]:
        if builder.leaf_cost() > builder.sun:
            break
        leaf = Leaf(cell)
        builder.apply(leaf)
        leaves.append(leaf)
    return leaves


def _choke_options(position: Position, actions: list[Action], limit: int) -> list[Action]:
    """The ``limit`` chokes of opponent cells that cut most after ``actions``."""
    builder = position.begin()
    for action in actions:
        builder.apply(action)
    player = builder.player
    targets = [c for c in builder.choke_targets() if builder.owner(c) is player.other]
    if not targets:
        return []
    after = builder.finish()
    board = Board.of(after)
    opponent_cells = board.vines[player.other] | sum(1 << c for c in targets)
    root = ROOT_BITS[player.other]
    scored = sorted(
        targets,
        key=lambda c: -(cut_off(opponent_cells, c, root) | 1 << c).bit_count() - ROW_OF[c] / 16,
    )
    return [Choke(cell) for cell in scored[:limit]]


def _grow_plans(position: Position, board: Board) -> list[list[Action]]:
    """Sequences of creeps and leaves worth trying this turn (before any choke)."""
    me = position.to_move
    own, opponent = board.vines[me], board.vines[me.other]
    empty = board.empty
    plans: list[list[Action]] = [[]]
    path = climb_path(own, empty, TOP_BIT)
    if path:
        creeps: list[Action] = [Creep(cell) for cell in path]
        affordable = _affordable_prefix(position, creeps)
        for length in range(1, affordable + 1):
            plans.append(creeps[:length])
        for length in {affordable, affordable - 1, affordable - 2, affordable // 2}:
            if length > 0:
                climb = creeps[:length]
                plans.append(climb + _best_leaf_spots(position, climb, 1))
        if affordable == len(creeps):
            plans.append([*creeps, Leaf(TOP)])
    for count in (1, 2, 3):
        leaves = _best_leaf_spots(position, [], count)
        if len(leaves) == count:
            plans.append(leaves)
    rival_path = climb_path(opponent, empty, TOP_BIT)
    if rival_path:
        frontier = spread(own) & empty
        blocks = [cell for cell in rival_path if frontier >> cell & 1]
        plans.extend([Creep(cell)] for cell in blocks[-2:])
    plans.extend(_attack_paths(position, board))
    return plans


def _attack_paths(position: Position, board: Board) -> list[list[Action]]:
    """Creeps that bring the vine next to an opponent cell worth choking, then the choke."""
    me = position.to_move
    sun = position.sun(me) + income_of(board.lit[me])
    reach = board.reach(me, min(sun, 4))
    damage, cell = choke_damage(board, me, reach)
    if cell < 0 or damage < 2:
        return []
    path = climb_path(board.vines[me], board.empty, NEIGHBOURS[cell])
    if path is None:
        return []
    return [[*[Creep(c) for c in path], Choke(cell)]]


def candidate_turns(position: Position) -> list[tuple[Turn, Position]]:
    """Distinct turns worth considering in ``position``, each with the position it leads to."""
    board = Board.of(position)
    seen: dict[Position, Turn] = {}
    for plan in _grow_plans(position, board):
        options: list[list[Action]] = [plan]
        if not plan or not isinstance(plan[-1], Choke):
            options += [[*plan, choke] for choke in _choke_options(position, plan, 2)]
        for actions in options:
            after = _play(position, actions)
            if after is not None and after not in seen:
                seen[after] = Turn(tuple(actions))
    return [(turn, after) for after, turn in seen.items()]


# --- the bot ------------------------------------------------------------------------


class GreedyBot(Bot):
    """Plays the candidate turn whose resulting position evaluates best (ties broken by seed)."""

    name = "greedy"
    author = "ivy-referee"
    version = "1.0"

    def choose(self, position: Position, clock: Clock) -> Turn:
        """The best candidate turn after one turn of lookahead."""
        me = position.to_move
        best_turn, best_score = Turn.PASS, -2 * WIN
        for turn, after in candidate_turns(position):
            score = evaluate(after, me) + self.rng.random() * 0.01
            if score > best_score:
                best_turn, best_score = turn, score
        return best_turn


if __name__ == "__main__":
    main(GreedyBot)
