"""Property tests over random legal Ivy games.

Random games are played through :class:`TurnBuilder`; after every turn the position
must keep the spec's invariants (every owned cell linked to its root through its own
cells, no withering cell next to a living one, sun never negative, the turn number
one more, print/parse round-trip). Every turn is also replayed by :class:`Reference`,
a deliberately naive engine written straight from the spec (dicts of characters,
breadth-first searches, no bitmasks), which must reach the same position and refuse
the same actions: the fast engine's shortcuts (the kept shade mask, the cut-off
search, grafting by flood) are checked against the plain reading of the rules.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import IllegalDecision
from referee.games.ivy import (
    CELL_NAMES,
    GLASS,
    NEIGHBOURS,
    ROOTS,
    Choke,
    Creep,
    Leaf,
    Player,
    Position,
    Turn,
    iter_cells,
    row_of,
)

# --- the naive reference engine --------------------------------------------------------

Place = tuple[int, int]  # (column 0–8, row 1–12)
SPANS = {**{row: (0, 8) for row in range(1, 9)}, 9: (1, 7), 10: (2, 6), 11: (3, 5), 12: (4, 4)}
PLACES = [(col, row) for row in range(1, 13) for col in range(SPANS[row][0], SPANS[row][1] + 1)]
HOUSE = set(PLACES)
HOME = {"g": (2, 1), "p": (6, 1)}
TOP_PLACE = (4, 12)


class RefIllegal(Exception):
    """The reference refuses the action at ``index``."""

    def __init__(self, index: int | None) -> None:
        super().__init__(index)
        self.index = index


def near(place: Place) -> list[Place]:
    col, row = place
    found = [
        p for p in ((col - 1, row), (col + 1, row), (col, row - 1), (col, row + 1)) if p in HOUSE
    ]
    if place == (0, 5):
        found.append((8, 5))
    if place == (8, 5):
        found.append((0, 5))
    return found


def linked(cells: set[Place], start: Place) -> set[Place]:
    seen, todo = {start}, deque([start])
    while todo:
        for other in near(todo.popleft()):
            if other in cells and other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def branches(cells: set[Place]) -> list[set[Place]]:
    rest, found = set(cells), []
    while rest:
        branch = linked(rest, next(iter(rest)))
        found.append(branch)
        rest -= branch
    return found


class Reference:
    """A §6 position and §4 turns, played the slow and obvious way."""

    def __init__(self, text: str) -> None:
        rows, mover, green, purple, turn = text.split(" ")
        self.board: dict[Place, str] = {}
        for row, row_text in zip(range(12, 0, -1), rows.split("/"), strict=True):
            for offset, char in enumerate(row_text):
                self.board[(SPANS[row][0] + offset, row)] = char
        self.mover = mover
        self.sun = {"g": int(green), "p": int(purple)}
        self.turn = int(turn)

    def __str__(self) -> str:
        rows = "/".join(
            "".join(self.board[(col, row)] for col in range(SPANS[row][0], SPANS[row][1] + 1))
            for row in range(12, 0, -1)
        )
        return f"{rows} {self.mover} {self.sun['g']} {self.sun['p']} {self.turn}"

    def cells_of(self, letter: str) -> set[Place]:
        return {p for p, char in self.board.items() if char.lower() == letter}

    def alive(self, letter: str) -> set[Place]:
        return linked(self.cells_of(letter), HOME[letter])

    def lit(self, place: Place) -> bool:
        col, row = place
        return all(self.board[(col, r)] in ".#" for r in range(row + 1, 13) if (col, r) in HOUSE)

    def lit_leaves(self, letter: str) -> list[Place]:
        return [p for p in self.alive(letter) if self.board[p].isupper() and self.lit(p)]

    def settle(self) -> None:
        """Cells cut from their root wither; withering branches next to living cells graft."""
        for letter in "gp":
            for place in self.cells_of(letter) - self.alive(letter):
                self.board[place] = "W" if self.board[place].isupper() else "w"
        for branch in branches(self.cells_of("w")):
            owners = {
                self.board[o].lower() for p in branch for o in near(p) if self.board[o] in "gGpP"
            }
            assert len(owners) <= 1, "C3: at most one ivy can graft a branch"
            for letter in owners:
                for place in branch:
                    upper = self.board[place].isupper()
                    self.board[place] = letter.upper() if upper else letter

    def play(self, token: str) -> None:
        me = self.mover
        if self.board[TOP_PLACE] == me.upper():
            raise RefIllegal(None)
        value = {**dict.fromkeys(range(2, 5), 1), **dict.fromkeys(range(5, 9), 2)}
        value |= dict.fromkeys(range(9, 12), 4)
        self.sun[me] += 3 + sum(value[row] for _, row in self.lit_leaves(me))
        choked = False
        actions = [] if token == "--" else token.split("+")
        for index, action in enumerate(actions):
            kind = action[0] if action[0] in "Lx" else ""
            name = action[len(kind) :]
            place = ("abcdefghi".index(name[0]), int(name[1:]))
            living = self.alive(me)
            touching = sum(1 for other in near(place) if other in living)
            char = self.board[place]
            if kind == "x":
                if choked or place in HOME.values() or char not in "gGpPwW" or not touching:
                    raise RefIllegal(index)
                choked = True
                self.board[place] = "2"
                self.settle()
                continue
            if choked:
                raise RefIllegal(index)
            if kind == "":
                if char != "." or not touching or touching > self.sun[me]:
                    raise RefIllegal(index)
                self.sun[me] -= touching
                self.board[place] = me
                self.settle()
            else:
                cost = 1 + len(self.lit_leaves(me))
                if place[1] == 1 or place not in living or char.isupper() or cost > self.sun[me]:
                    raise RefIllegal(index)
                self.sun[me] -= cost
                self.board[place] = me.upper()
        for place, char in self.board.items():
            if char in "12":
                self.board[place] = "1" if char == "2" else "."
        shed = []
        for branch in branches(self.cells_of("w")):
            loose = [p for p in branch if len(branches(branch - {p})) <= 1]
            shed.append(max(loose, key=lambda p: (p[1], -abs(p[0] - 4), -p[0])))
        for place in shed:
            self.board[place] = "."
        self.mover = "p" if me == "g" else "g"
        self.turn += 1


# --- random legal turns --------------------------------------------------------------------


def random_turn(position: Position, rng: random.Random, probe: bool) -> tuple[Turn, Position]:
    """A random legal turn; with ``probe``, random actions are tried and checked on the way."""
    builder = position.begin()
    for _ in range(rng.randint(0, 6)):
        if probe:
            try_action(position, builder, rng)
        kind = rng.random()
        targets = builder.leaf_targets() if kind < 0.3 else builder.creep_targets()
        if not targets:
            continue
        cell = max(rng.sample(targets, min(2, len(targets))), key=row_of)
        builder.apply(Leaf(cell) if kind < 0.3 else Creep(cell))
    if rng.random() < 0.4 and (targets := builder.choke_targets()):
        builder.apply(Choke(rng.choice(targets)))
    if probe:
        try_action(position, builder, rng)
    return builder.turn(), builder.finish()


def try_action(position: Position, builder: object, rng: random.Random) -> None:
    """A random action is accepted by the engine exactly when the reference accepts it."""
    kind = rng.choice((Creep, Leaf, Choke))
    action = kind(rng.randrange(len(CELL_NAMES)))
    done = list(builder.actions)  # type: ignore[attr-defined]
    reference = Reference(str(position))
    try:
        reference.play(str(Turn((*done, action))))
        legal = True
    except RefIllegal as refusal:
        assert refusal.index == len(done)
        legal = False
    try:
        trial = position.begin()
        for earlier in done:
            trial.apply(earlier)
        trial.apply(action)
        assert legal, f"engine accepted {action} after {Turn(tuple(done))} in {position}"
    except IllegalDecision as error:
        assert not legal, f"engine refused what the reference allows: {error}"
        assert error.index == len(done)


def check_invariants(before: Position, after: Position) -> None:
    """What must hold after every turn of a legal game."""
    assert after.turn == before.turn + 1
    assert after.to_move is before.to_move.other
    for player in Player:
        assert after.sun(player) >= 0
        cells = after.vines(player)
        reach = 1 << ROOTS[player]
        frontier = reach
        while frontier:
            grown = 0
            for cell in iter_cells(frontier):
                grown |= NEIGHBOURS[cell]
            frontier = grown & cells & ~reach
            reach |= frontier
        assert reach == cells, f"{player.title} has a cell not linked to its root"
    living = after.vines(Player.GREEN) | after.vines(Player.PURPLE)
    for cell in iter_cells(after.withering()):
        assert not NEIGHBOURS[cell] & living, f"withering {CELL_NAMES[cell]} touches a living cell"
    text = str(after)
    again = Position.from_string(text)
    assert again == after and str(again) == text and hash(again) == hash(after)
    assert [again.is_lit(c) for c in range(88)] == [after.is_lit(c) for c in range(88)]


def play_checked(rng: random.Random, turns: int, probe_rate: float) -> Position:
    """A random game of up to ``turns`` turns, each checked against invariants and reference."""
    position = Position.START
    for _ in range(turns):
        if position.winner_at_feed() is not None:
            with pytest.raises(IllegalDecision, match="wins at Feed"):
                position.play(Turn.PASS)
            break
        turn, after = random_turn(position, rng, probe=rng.random() < probe_rate)
        assert Turn.parse(str(turn)) == turn
        assert position.play(turn) == after
        reference = Reference(str(position))
        reference.play(str(turn))
        assert str(reference) == str(after), f"after {turn} from {position}"
        check_invariants(position, after)
        position = after
    return position


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=60))
def test_random_games_keep_the_invariants_and_match_the_reference(
    rng: random.Random, turns: int
) -> None:
    play_checked(rng, turns, probe_rate=0.3)


@pytest.mark.parametrize("seed", range(6))
def test_long_games_match_the_reference(seed: int) -> None:
    final = play_checked(random.Random(seed), 200, probe_rate=0.05)
    assert final.turn > 40


def blob_position(rng: random.Random, size: int) -> Position:
    """Green's root grown into a random connected blob of ``size`` cells, some with leaves."""
    green = {ROOTS[Player.GREEN]}
    blocked = {ROOTS[Player.PURPLE], *iter_cells(GLASS)}
    for _ in range(size):
        edge = sorted({n for c in green for n in iter_cells(NEIGHBOURS[c])} - green - blocked)
        green.add(rng.choice(edge))
    chars = ["#" if c in blocked else "." for c in range(len(CELL_NAMES))]
    chars[ROOTS[Player.PURPLE]] = "p"
    for cell in green:
        chars[cell] = "G" if row_of(cell) > 1 and rng.random() < 0.3 else "g"
    rows = [
        "".join(chars[c] for c in range(len(CELL_NAMES)) if row_of(c) == row)
        for row in range(12, 0, -1)
    ]
    return Position.from_string(f"{'/'.join(rows)} g 0 0 1")


@settings(max_examples=150, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=2, max_value=45))
def test_a_choke_cuts_off_exactly_what_lost_its_link(rng: random.Random, size: int) -> None:
    """Green chokes a cell of a random blob (cycles, several cut parts, grafts by Purple)."""
    board = blob_position(rng, size)
    cell = rng.choice([c for c in iter_cells(board.vines(Player.GREEN)) if c not in ROOTS])
    turn = Turn((Choke(cell),))
    after = board.play(turn)
    reference = Reference(str(board))
    reference.play(str(turn))
    assert str(after) == str(reference)
    check_invariants(board, after)


# --- notation round-trips ---------------------------------------------------------------------

cells = st.integers(min_value=0, max_value=87)
actions = st.one_of(cells.map(Creep), cells.map(Leaf), cells.map(Choke))


@given(st.lists(actions, max_size=8))
def test_turn_tokens_round_trip(moves: Iterable[Creep | Leaf | Choke]) -> None:
    turn = Turn(tuple(moves))
    token = str(turn)
    assert Turn.parse(token) == turn
    assert " " not in token and (token == "--") == (not turn.actions)
