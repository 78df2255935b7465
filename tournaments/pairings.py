"""Tournament schedules: who plays whom, with which colour, from which opening.

A schedule is a :class:`Schedule`: an ordered, read-only sequence of
:class:`Pairing` records, decided before the first game and never reshuffled,
so a tournament that is stopped and resumed can skip the games whose ``index``
is already in the results store. It is lazy: each pairing is computed from its
index when asked for, so a schedule of a million (or a trillion) games is made
at once and takes constant memory.

Round-robins follow the Berger tables published by FIDE (Handbook C.05,
Annex 1): with ``n`` players (one more, a bye, when ``n`` is odd) round 1 is
``1-n, 2-(n-1), …``, player ``n`` alternates between the first board's black and
white seat, and everyone else turns around the table by ``n/2`` places each
round. Players are numbered in the order given, so the first name is player 1.

Colours of repeated games
    Game ``j`` (from 0) of a pairing in cycle ``c`` (from 0) has the table's
    colours when ``j + c`` is even and reversed ones when it is odd: a pairing's
    games alternate colours, and each cycle is the one before it with colours
    reversed (the double round-robin rule). A gauntlet has one cycle.

Openings
    With ``openings`` (start positions in the game's own notation), a pairing's
    games, counted on across cycles as ``g = 0, 1, 2, …``, go in colour-swapped
    twos: game ``g`` starts from ``openings[(g // 2) % len(openings)]``. By
    default each pairing then plays ``2 * len(openings)`` games per cycle, so
    every opening is played once with each colour.

A schedule holds at most :data:`MAX_GAMES` games.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from referee.errors import RefereeError

MAX_GAMES = 10**15
"""The most games a schedule may hold (game numbers stay exact integers everywhere)."""


class ScheduleError(RefereeError, ValueError):
    """A tournament cannot be scheduled as asked (too few players, a name twice, ...)."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One scheduled game.

    ``index`` is the game's 0-based number in the schedule (stable: the same
    arguments always give the same schedule), ``round`` its 1-based round,
    ``white`` the name of the player in seat 0 and ``black`` of seat 1, and
    ``opening`` the start position or ``None`` for the game's standard start.
    """

    index: int
    round: int
    white: str
    black: str
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
    cycles: int = 1,
    games: int | None = None,
    openings: Sequence[str] | None = None,
) -> Schedule:
    """Every player meets every other ``cycles`` times, by the Berger tables.

    ``cycles=2`` is a double round-robin: the second cycle repeats the first
    with colours reversed. ``games`` is how many games each pairing plays in a
    round (default 1, or ``2 * len(openings)`` with openings); see the module
    docstring for how their colours and openings are chosen. A cycle has
    ``n - 1`` rounds (``n`` for an odd ``n``), numbered on across cycles.
    Games are ordered by cycle, round, repetition, then board.
    """
    names = _check_players(players, minimum=2)
    per_pairing = _games_per_pairing(games, openings)
    if cycles < 1:
        raise ScheduleError(f"cycles must be at least 1, not {cycles}")
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
            opening=_opening(openings, cycle * per_pairing + game),
        )

    return Schedule(cycles * table.rounds * per_pairing * table.boards, at)


def gauntlet(
    players: Sequence[str],
    *,
    games: int | None = None,
    openings: Sequence[str] | None = None,
) -> Schedule:
    """The first player meets each of the others; the others never meet.

    Each opponent plays ``games`` games against the first player (default 1, or
    ``2 * len(openings)`` with openings). Round ``r`` holds the ``r``-th game
    against every opponent; the first player takes white against the first
    opponent in round 1 and colours alternate from game to game and from
    opponent to opponent, so they balance over the whole gauntlet.
    """
    names = _check_players(players, minimum=2)
    per_pairing = _games_per_pairing(games, openings)
    challenger, opponents = names[0], names[1:]
    openings = None if openings is None else tuple(openings)

    def at(index: int) -> Pairing:
        game, number = divmod(index, len(opponents))
        return _pairing(
            index,
            game + 1,
            (challenger, opponents[number]),
            reverse=(game + number) % 2 == 1,
            opening=_opening(openings, game),
        )

    return Schedule(per_pairing * len(opponents), at)


def _check_players(players: Sequence[str], *, minimum: int) -> tuple[str, ...]:
    """The player names as a tuple, refused when too few, blank or repeated."""
    names = tuple(players)
    if len(names) < minimum:
        raise ScheduleError(f"a tournament needs at least {minimum} players, not {len(names)}")
    for name in names:
        if not name or not name.strip():
            raise ScheduleError("a player's name is empty")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ScheduleError(f"player name {repeated[0]!r} is given more than once")
    return names


def _games_per_pairing(games: int | None, openings: Sequence[str] | None) -> int:
    """How many games each pairing plays per round (see :func:`round_robin`)."""
    if openings is not None and len(openings) == 0:
        raise ScheduleError("the list of openings is empty")
    if games is None:
        return 1 if openings is None else 2 * len(openings)
    if games < 1:
        raise ScheduleError(f"games per pairing must be at least 1, not {games}")
    return games


def _opening(openings: Sequence[str] | None, game: int) -> str | None:
    """The opening of a pairing's ``game``-th game: colour-swapped twos share one."""
    return None if openings is None else openings[(game // 2) % len(openings)]


def _pairing(
    index: int, round_number: int, pair: tuple[str, str], *, reverse: bool, opening: str | None
) -> Pairing:
    """The game ``pair`` (white, black) — with the colours swapped when ``reverse``."""
    white, black = pair[::-1] if reverse else pair
    return Pairing(index=index, round=round_number, white=white, black=black, opening=opening)
