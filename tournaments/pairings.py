"""Tournament schedules: who plays whom, in which seat, from which opening.

A schedule is a :class:`Schedule`: an ordered, read-only sequence of
:class:`Pairing` records, decided before the first game and never reshuffled,
so a tournament that is stopped and resumed can skip the games whose ``index``
is already in the results store. It is lazy: each pairing is computed from its
index when asked for, so a schedule of a million (or a trillion) games is made
at once and takes constant memory.

Games for two seats
    Round-robins follow the Berger tables published by FIDE (Handbook C.05,
    Annex 1): with ``n`` players (one more, a bye, when ``n`` is odd) round 1 is
    ``1-n, 2-(n-1), …``, player ``n`` alternates between the first board's black
    and white seat, and everyone else turns around the table by ``n/2`` places
    each round. Players are numbered in the order given, so the first name is
    player 1.

    Game ``j`` (from 0) of a pairing in cycle ``c`` (from 0) has the table's
    colours when ``j + c`` is even and reversed ones when it is odd: a pairing's
    games alternate colours, and each cycle is the one before it with colours
    reversed (the double round-robin rule). A gauntlet has one cycle. A pairing
    is a table of two: it plays ``games`` games per cycle, rounded up to an even
    number unless it is 1 (default 2, one with each colour), as tables do below.

    With ``openings`` (start positions in the game's own notation), a pairing's
    games, counted on across cycles as ``g = 0, 1, 2, …``, go in colour-swapped
    twos: game ``g`` starts from ``openings[(g // 2) % len(openings)]``. By
    default each pairing then plays ``2 * len(openings)`` games per cycle, so
    every opening is played once with each colour.

Tables of other sizes
    A game for ``N`` seats (``N`` = 1, or 3 and more) is played at *tables* of
    ``N`` players; with ``N = 1`` (solo) each player alone is a table.

    Which tables. A cycle of a round-robin holds every set of ``N`` players once
    (the *combinations*, in lexicographic order of player numbers) when there are
    at most :data:`ALL_TABLES` of them. A larger field gets a *balanced* cycle, a
    cyclic design: the players, numbered ``0 … n-1``, are the integers modulo
    ``n``; base tables ``B_1 … B_k`` of ``N`` numbers each are chosen (greedily,
    each number added so as to even out how often each difference ``±d`` between
    two members occurs, and base tables added until every difference occurs), and
    the cycle's tables are every ``B_i + t`` (mod ``n``) for ``t = 0 … n-1``. Two
    players whose numbers differ by ``d`` meet at exactly as many tables as ``d``
    occurs as a difference within the base tables, so:

    - every player plays at exactly ``k·N`` of the ``k·n`` tables of a cycle;
    - every two players meet at least once per cycle;
    - how often two pairs meet differs by at most 2 (by at most 1 for most
      fields; the tests check every field of up to 200 players with tables of
      3 to 5; the construction cannot promise more in general, since designs in
      which all pairs meet equally often exist only for some sizes).

    A gauntlet for ``N`` seats seats the first player at every table, with
    ``N - 1`` of the others: every combination of them, or the balanced design of
    tables of ``N - 1`` over the others, by the same rule (with ``N = 3``, always
    every pair of the others: no schedule in which every two of them meet has fewer).

    Seats. A table plays ``games`` games per cycle, rounded up to a multiple of ``N``
    unless it is 1 (:func:`~referee.match.rotation_games`, as ``referee match`` rounds;
    default ``N``, or ``N * len(openings)``). Its games, counted on across cycles as
    ``g = 0, 1, 2, …``, go in groups of ``N``: group ``g // N`` takes the table's
    order (player numbers ascending) when even and that order reversed when odd,
    turned by ``g % N`` places (seat ``s`` goes to ``order[(s + g) % N]``). So
    within each cycle every player of a table sits each seat equally often, and
    who plays after whom alternates between the two directions around the table.

    Rounds and openings. Round ``r`` of a cycle holds game ``r`` of every table
    (rounds are numbered on across cycles); games are ordered by cycle, round,
    then table. With ``openings``, game ``g`` of a table starts from
    ``openings[(g // N) % len(openings)]``: the ``N`` games of a group share an
    opening, so each player at the table plays it once from each seat.

Seeds
    The seed of game ``index`` of a tournament whose seed is ``seed`` is
    :func:`~referee.games.base.game_seed` (one home for it): the first 63 bits of the SHA-256 of
    ``"<seed>:<index>"`` (``"<seed>:<index>:<attempt>"`` for a game played again), so
    games have unrelated seeds and a seed is the same on every machine and Python version.

A schedule holds at most :data:`MAX_GAMES` games.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, overload

from referee.errors import RefereeError
from referee.match import rotation_games

MAX_GAMES = 10**15
"""The most games a schedule may hold (game numbers stay exact integers everywhere)."""

ALL_TABLES = 500
"""A cycle holds every combination of players as a table when there are at most this many;
above it, the balanced design (see the module docstring)."""


class ScheduleError(RefereeError, ValueError):
    """A tournament cannot be scheduled as asked (too few players, a name twice, ...)."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One scheduled game.

    ``index`` is the game's 0-based number in the schedule (stable: the same
    arguments always give the same schedule), ``round`` its 1-based round,
    ``players`` the names of its players in seat order (with two seats: white,
    then black), and ``opening`` the start position or ``None`` for the game's
    standard start.
    """

    index: int
    round: int
    players: tuple[str, ...]
    opening: str | None = None


class Schedule(Sequence[Pairing]):
    """The games of a tournament in index order, each computed when it is asked for.

    It is a read-only sequence: ``len``, indexing (a slice gives a list),
    iteration, and ``==`` with any sequence of the same pairings.
    """

    __slots__ = ("_at", "_length")

    def __init__(self, length: int, at: Callable[[int], Pairing]) -> None:
        """``length`` games; ``at(i)`` is game ``i`` for ``0 <= i < length``."""
        if length > MAX_GAMES:
            raise ScheduleError(
                f"the schedule would hold {length:,} games, more than the {MAX_GAMES:,}"
                " a tournament may have"
            )
        self._length = length
        self._at = at

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, key: int) -> Pairing: ...

    @overload
    def __getitem__(self, key: slice) -> list[Pairing]: ...

    def __getitem__(self, key: int | slice) -> Pairing | list[Pairing]:
        if isinstance(key, slice):
            return [self._at(index) for index in range(self._length)[key]]
        index = operator.index(key)
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(f"game {key} is not in a schedule of {self._length} games")
        return self._at(index)

    def __iter__(self) -> Iterator[Pairing]:
        return map(self._at, range(self._length))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Schedule of {self._length} games>"


def berger_table(players: int) -> list[list[tuple[int, int]]]:
    """The published Berger table for ``players`` players, numbered from 1.

    Returns one list per round of ``(white, black)`` boards in the order FIDE
    prints them. With an odd number of players the table for one more is used
    and the boards of that extra number (the bye) are left out.
    """
    table = _Berger(players)
    return [
        [table.board(round_number, board) for board in range(table.boards)]
        for round_number in range(1, table.rounds + 1)
    ]


@dataclass(frozen=True, slots=True)
class _Berger:
    """The Berger table for ``players`` players, one board at a time (see :func:`berger_table`)."""

    players: int

    def __post_init__(self) -> None:
        if self.players < 2:
            raise ScheduleError(f"a round-robin needs at least 2 players, not {self.players}")

    @property
    def size(self) -> int:
        """The players in the table: one more than given (the bye) when their number is odd."""
        return self.players + self.players % 2

    @property
    def rounds(self) -> int:
        return self.size - 1

    @property
    def boards(self) -> int:
        """Boards played per round (the bye's board is not played)."""
        return self.players // 2

    def board(self, round_number: int, board: int) -> tuple[int, int]:
        """``(white, black)`` on ``board`` (from 0) of ``round_number`` (from 1)."""
        size, others, half = self.size, self.size - 1, self.size // 2

        def wrap(number: int) -> int:
            """``number`` brought back into ``1..others``."""
            return (number - 1) % others + 1

        pivot = wrap(1 + (round_number - 1) * half)
        # The first board pairs the pivot with the last number: the bye, when there is one.
        k = board + 1 if size > self.players else board
        if k == 0:
            return (pivot, size) if round_number % 2 else (size, pivot)
        return wrap(pivot + k), wrap(pivot - k)


def round_robin(
    players: Sequence[str],
    *,
    seats: int = 2,
    cycles: int = 1,
    games: int | None = None,
    openings: Sequence[str] | None = None,
) -> Schedule:
    """Every player meets every other, in each of ``cycles`` cycles.

    With two seats, by the Berger tables: ``cycles=2`` is a double round-robin,
    whose second cycle repeats the first with colours reversed. ``games`` is how
    many games each pairing plays in a round, rounded up to an even number unless it
    is 1 (default 2, one with each colour, or ``2 * len(openings)`` with openings). A
    cycle has ``n - 1`` rounds (``n`` for an odd ``n``), numbered on across cycles.
    Games are ordered by cycle, round, repetition, then board.

    With other ``seats``, at tables of that many players: ``games`` per table and
    cycle (rounded up to a multiple of ``seats`` unless it is 1; default ``seats``, or
    ``seats * len(openings)``).
    See the module docstring for the tables, seats, colours and openings.
    """
    if seats != 2:
        names = _check_players(players, minimum=max(seats, 1), seats=seats)
        return _table_schedule(names, _tables(len(names), seats), seats, cycles, games, openings)
    names = _check_players(players, minimum=2)
    per_pairing = games_per_table(games, openings, 2)
    _check_cycles(cycles)
    table = _Berger(len(names))
    openings = None if openings is None else tuple(openings)

    def at(index: int) -> Pairing:
        rest, board = divmod(index, table.boards)
        rest, game = divmod(rest, per_pairing)
        cycle, round_offset = divmod(rest, table.rounds)
        white, black = table.board(round_offset + 1, board)
        return _pairing(
            index,
            cycle * table.rounds + round_offset + 1,
            (names[white - 1], names[black - 1]),
            reverse=(game + cycle) % 2 == 1,
            opening=_opening(openings, cycle * per_pairing + game, 2),
        )

    return Schedule(cycles * table.rounds * per_pairing * table.boards, at)


def gauntlet(
    players: Sequence[str],
    *,
    seats: int = 2,
    games: int | None = None,
    openings: Sequence[str] | None = None,
) -> Schedule:
    """The first player meets the others; the others meet only at its tables.

    With two seats, each opponent plays ``games`` games against the first player
    (as for :func:`round_robin`: default 2, or ``2 * len(openings)`` with openings).
    Round ``r`` holds the ``r``-th game against every opponent; the first player takes white against
    the first opponent in round 1 and colours alternate from game to game and
    from opponent to opponent, so they balance over the whole gauntlet.

    With more ``seats``, the first player sits at every table, with ``seats - 1``
    of the others (see the module docstring); ``games`` as for :func:`round_robin`.
    """
    if seats != 2:
        if seats < 2:
            raise ScheduleError(f"a gauntlet needs tables of at least 2 seats, not {seats}")
        names = _check_players(players, minimum=seats, seats=seats)
        others = _tables(len(names) - 1, seats - 1)
        return _table_schedule(names, _WithFirst(others), seats, 1, games, openings)
    names = _check_players(players, minimum=2)
    per_pairing = games_per_table(games, openings, 2)
    challenger, opponents = names[0], names[1:]
    openings = None if openings is None else tuple(openings)

    def at(index: int) -> Pairing:
        game, number = divmod(index, len(opponents))
        return _pairing(
            index,
            game + 1,
            (challenger, opponents[number]),
            reverse=(game + number) % 2 == 1,
            opening=_opening(openings, game, 2),
        )

    return Schedule(per_pairing * len(opponents), at)


# --- tables of N players ----------------------------------------------------------


class _Tables(Protocol):
    """The tables of one cycle: ``count`` of them, each a sorted tuple of player numbers."""

    @property
    def count(self) -> int: ...

    def table(self, number: int) -> tuple[int, ...]: ...


@dataclass(frozen=True, slots=True)
class _Combinations:
    """Every set of ``size`` of the players ``0 … players-1``, in lexicographic order."""

    players: int
    size: int

    @property
    def count(self) -> int:
        return math.comb(self.players, self.size)

    def table(self, number: int) -> tuple[int, ...]:
        """The ``number``-th combination (the combinatorial number system, unranked)."""
        chosen: list[int] = []
        candidate = 0
        for slot in range(self.size):
            while True:
                # Combinations that start with the ones chosen, then ``candidate``.
                starting_here = math.comb(self.players - candidate - 1, self.size - slot - 1)
                if number < starting_here:
                    break
                number -= starting_here
                candidate += 1
            chosen.append(candidate)
            candidate += 1
        return tuple(chosen)


@dataclass(frozen=True, slots=True)
class _CyclicDesign:
    """The balanced design: every base table turned by ``0 … players-1`` (mod ``players``)."""

    players: int
    base: tuple[tuple[int, ...], ...]

    @property
    def count(self) -> int:
        return len(self.base) * self.players

    def table(self, number: int) -> tuple[int, ...]:
        block, shift = divmod(number, self.players)
        return tuple(sorted((member + shift) % self.players for member in self.base[block]))


@dataclass(frozen=True, slots=True)
class _WithFirst:
    """Player 0 at each of ``others``' tables, whose players are numbered from 1."""

    others: _Tables

    @property
    def count(self) -> int:
        return self.others.count

    def table(self, number: int) -> tuple[int, ...]:
        return (0, *(member + 1 for member in self.others.table(number)))


def _tables(players: int, size: int) -> _Tables:
    """A cycle's tables of ``size`` among ``players``: every combination, or the balanced design."""
    if size <= 2 or math.comb(players, size) <= ALL_TABLES:
        return _Combinations(players, size)
    return _CyclicDesign(players, _difference_family(players, size))


@functools.lru_cache(maxsize=16)
def _difference_family(players: int, size: int) -> tuple[tuple[int, ...], ...]:
    """Base tables of ``size`` numbers modulo ``players`` whose differences cover every
    non-zero residue, each as evenly as the greedy choice manages (module docstring).

    ``meets[d]`` counts the ordered pairs of members of base tables that differ by
    ``d``: players whose numbers differ by ``d`` meet at that many tables of the
    design. Each number added to a base table is the one (the smallest, on a tie)
    that raises the sum of ``meets[d]²`` least: a difference not yet covered costs
    1, one covered once 3, and so on.
    """
    meets = [0] * players
    base: list[tuple[int, ...]] = []
    while not base or 0 in meets[1:]:
        block = [0]
        for _ in range(size - 1):
            best_cost, best = -1, -1
            for candidate in range(1, players):
                if candidate in block:
                    continue
                # The rise of the sum of squares, one new difference at a time (then undone).
                residues = [(candidate - m) % players for m in block]
                residues += [(m - candidate) % players for m in block]
                cost = 0
                for residue in residues:
                    cost += 2 * meets[residue] + 1
                    meets[residue] += 1
                for residue in residues:
                    meets[residue] -= 1
                if best < 0 or cost < best_cost:
                    best_cost, best = cost, candidate
            for member in block:
                meets[(best - member) % players] += 1
                meets[(member - best) % players] += 1
            block.append(best)
        base.append(tuple(block))
    return tuple(base)


def _table_schedule(
    names: tuple[str, ...],
    tables: _Tables,
    seats: int,
    cycles: int,
    games: int | None,
    openings: Sequence[str] | None,
) -> Schedule:
    """``cycles`` cycles of ``tables``, each table's games with seats turned (module docstring)."""
    _check_cycles(cycles)
    per_table = games_per_table(games, openings, seats)
    openings = None if openings is None else tuple(openings)

    def at(index: int) -> Pairing:
        rest, number = divmod(index, tables.count)
        cycle, game = divmod(rest, per_table)
        counted = cycle * per_table + game  # the table's game number across cycles
        members = tuple(names[player] for player in tables.table(number))
        return Pairing(
            index=index,
            round=counted + 1,
            players=_seated(members, counted),
            opening=_opening(openings, counted, seats),
        )

    return Schedule(cycles * per_table * tables.count, at)


def _seated(table: tuple[str, ...], game: int) -> tuple[str, ...]:
    """The players of ``table`` (ascending numbers) in seat order for the table's ``game``-th
    game: groups of ``len(table)`` games, alternately forwards and backwards, each turned."""
    size = len(table)
    order = table if (game // size) % 2 == 0 else table[::-1]
    turn = game % size
    return order[turn:] + order[:turn]


def games_per_table(games: int | None, openings: Sequence[str] | None, seats: int) -> int:
    """How many games each table (with two seats, each pairing) plays per cycle: ``games``
    rounded up to a multiple of the seats unless it is 1, so that each player sits each
    seat equally often (:func:`~referee.match.rotation_games`); by default one per seat,
    times the openings."""
    if openings is not None and len(openings) == 0:
        raise ScheduleError("the list of openings is empty")
    if games is None:
        return seats * (1 if openings is None else len(openings))
    if games < 1:
        unit = "pairing" if seats == 2 else "table"
        raise ScheduleError(f"games per {unit} must be at least 1, not {games}")
    return rotation_games(games, seats)


# --- common checks ------------------------------------------------------------------


def _check_players(
    players: Sequence[str], *, minimum: int, seats: int | None = None
) -> tuple[str, ...]:
    """The player names as a tuple, refused when too few, blank or repeated."""
    names = tuple(players)
    if seats is not None and seats < 1:
        raise ScheduleError(f"a table needs at least 1 seat, not {seats}")
    if len(names) < minimum:
        tables = "" if seats is None else f" at tables of {seats}"
        raise ScheduleError(
            f"a tournament{tables} needs at least {minimum} players, not {len(names)}"
        )
    for name in names:
        if not name or not name.strip():
            raise ScheduleError("a player's name is empty")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ScheduleError(f"player name {repeated[0]!r} is given more than once")
    return names


def _check_cycles(cycles: int) -> None:
    if cycles < 1:
        raise ScheduleError(f"cycles must be at least 1, not {cycles}")


def _opening(openings: Sequence[str] | None, game: int, group: int) -> str | None:
    """The opening of a pairing's or table's ``game``-th game: each group of ``group``
    games (colour-swapped twos, turned seats) shares one."""
    return None if openings is None else openings[(game // group) % len(openings)]


def _pairing(
    index: int, round_number: int, pair: tuple[str, str], *, reverse: bool, opening: str | None
) -> Pairing:
    """The game ``pair`` (white, black) — with the colours swapped when ``reverse``."""
    return Pairing(
        index=index, round=round_number, players=pair[::-1] if reverse else pair, opening=opening
    )
