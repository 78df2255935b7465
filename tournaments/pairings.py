"""Tournament schedules: who plays whom, with which colour, from which opening.

A schedule is a plain ordered list of :class:`Pairing` records, decided before
the first game and never reshuffled, so a tournament that is stopped and resumed
can skip the games whose ``index`` is already in the results store.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from referee.errors import RefereeError


class ScheduleError(RefereeError, ValueError):
    """A tournament cannot be scheduled as asked (too few players, a name twice, ...)."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One scheduled game.

    ``index`` is the game's 0-based number in the schedule (stable: the same
    arguments always give the same list), ``round`` its 1-based round, ``white``
    the name of the player in seat 0 and ``black`` of seat 1, and ``opening`` the
    start position or ``None`` for the game's standard start.
    """

    index: int
    round: int
    white: str
    black: str
    opening: str | None = None


def berger_table(players: int) -> list[list[tuple[int, int]]]:
    """The published Berger table for ``players`` players, numbered from 1.

    Returns one list per round of ``(white, black)`` boards in the order FIDE
    prints them. With an odd number of players the table for one more is used
    and the boards of that extra number (the bye) are left out.
    """
    if players < 2:
        raise ScheduleError(f"a round-robin needs at least 2 players, not {players}")
    size = players + players % 2
    last = size
    others = size - 1

    def wrap(number: int) -> int:
        """``number`` brought back into ``1..others``."""
        return (number - 1) % others + 1

    table: list[list[tuple[int, int]]] = []
    for round_number in range(1, size):
        pivot = wrap(1 + (round_number - 1) * (size // 2))
        first = (pivot, last) if round_number % 2 else (last, pivot)
        rest = [(wrap(pivot + k), wrap(pivot - k)) for k in range(1, size // 2)]
        table.append(rest if size > players else [first, *rest])
    return table


def round_robin(
    players: Sequence[str],
    *,
    cycles: int = 1,
    games: int | None = None,
    openings: Sequence[str] | None = None,
) -> list[Pairing]:
    """Every player meets every other ``cycles`` times, by the Berger tables.

    ``cycles=2`` is a double round-robin: the second cycle repeats the first
    with colours reversed. ``games`` is how many games each pairing plays in a
    round (default 1, or ``2 * len(openings)`` with openings); see the module
    docstring for how their colours and openings are chosen. A cycle has
    ``n - 1`` rounds (``n`` for an odd ``n``), numbered on across cycles.
    """
    names = _check_players(players, minimum=2)
    per_pairing = _games_per_pairing(games, openings)
    if cycles < 1:
        raise ScheduleError(f"cycles must be at least 1, not {cycles}")
    table = berger_table(len(names))
    schedule: list[Pairing] = []
    for cycle in range(cycles):
        for round_offset, boards in enumerate(table, start=1):
            round_number = cycle * len(table) + round_offset
            for game in range(per_pairing):
                for white, black in boards:
                    schedule.append(
                        _pairing(
                            len(schedule),
                            round_number,
                            (names[white - 1], names[black - 1]),
                            reverse=(game + cycle) % 2 == 1,
                            opening=_opening(openings, cycle * per_pairing + game),
                        )
                    )
    return schedule


def gauntlet(
    players: Sequence[str],
    *,
    games: int | None = None,
    openings: Sequence[str] | None = None,
) -> list[Pairing]:
    """The first player meets each of the others; the others never meet.

    Each opponent plays ``games`` games against the first player (default 1, or
    ``2 * len(openings)`` with openings). Round ``r`` holds the ``r``-th game
    against every opponent; the first player takes white against the first
    opponent in round 1 and colours alternate from game to game and from
    opponent to opponent, so they balance over the whole gauntlet.
    """
    names = _check_players(players, minimum=2)
    per_pairing = _games_per_pairing(games, openings)
    challenger = names[0]
    schedule: list[Pairing] = []
    for game in range(per_pairing):
        for number, opponent in enumerate(names[1:]):
            schedule.append(
                _pairing(
                    len(schedule),
                    game + 1,
                    (challenger, opponent),
                    reverse=(game + number) % 2 == 1,
                    opening=_opening(openings, game),
                )
            )
    return schedule


def _check_players(players: Sequence[str], *, minimum: int) -> list[str]:
    """The player names as a list, refused when too few, blank or repeated."""
    names = list(players)
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
