"""Schedules: the published Berger tables, repeated games, gauntlets and openings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import RefereeError
from tournaments.pairings import (
    MAX_GAMES,
    Pairing,
    ScheduleError,
    berger_table,
    gauntlet,
    round_robin,
)

# FIDE Handbook C.05 Annex 1, "Berger Tables for Round-Robin Tournaments".
PUBLISHED_4 = [
    [(1, 4), (2, 3)],
    [(4, 3), (1, 2)],
    [(2, 4), (3, 1)],
]
PUBLISHED_6 = [
    [(1, 6), (2, 5), (3, 4)],
    [(6, 4), (5, 3), (1, 2)],
    [(2, 6), (3, 1), (4, 5)],
    [(6, 5), (1, 4), (2, 3)],
    [(3, 6), (4, 2), (5, 1)],
]
PUBLISHED_8 = [
    [(1, 8), (2, 7), (3, 6), (4, 5)],
    [(8, 5), (6, 4), (7, 3), (1, 2)],
    [(2, 8), (3, 1), (4, 7), (5, 6)],
    [(8, 6), (7, 5), (1, 4), (2, 3)],
    [(3, 8), (4, 2), (5, 1), (6, 7)],
    [(8, 7), (1, 6), (2, 5), (3, 4)],
    [(4, 8), (5, 3), (6, 2), (7, 1)],
]
PUBLISHED_10_ROUNDS_2_AND_9 = {
    2: [(10, 6), (7, 5), (8, 4), (9, 3), (1, 2)],
    9: [(5, 10), (6, 4), (7, 3), (8, 2), (9, 1)],
}

NAMES = [f"bot{number}" for number in range(1, 11)]


@pytest.mark.parametrize(
    ("players", "published"), [(4, PUBLISHED_4), (6, PUBLISHED_6), (8, PUBLISHED_8)]
)
def test_berger_tables_match_the_published_ones(
    players: int, published: list[list[tuple[int, int]]]
) -> None:
    assert berger_table(players) == published


def test_berger_table_for_ten_players_matches_published_rounds() -> None:
    table = berger_table(10)
    for round_number, boards in PUBLISHED_10_ROUNDS_2_AND_9.items():
        assert table[round_number - 1] == boards


def test_odd_players_use_the_next_table_with_the_highest_number_as_bye() -> None:
    without_bye = [[board for board in boards if 6 not in board] for boards in PUBLISHED_6]
    assert berger_table(5) == without_bye
    assert berger_table(3) == [[(2, 3)], [(1, 2)], [(3, 1)]]


def test_round_robin_follows_the_table_with_names_numbered_in_order() -> None:
    schedule = round_robin(NAMES[:4])
    assert schedule[:3] == [
        Pairing(index=0, round=1, white="bot1", black="bot4"),
        Pairing(index=1, round=1, white="bot2", black="bot3"),
        Pairing(index=2, round=2, white="bot4", black="bot3"),
    ]
    assert [(p.round, p.white, p.black) for p in schedule[3:]] == [
        (2, "bot1", "bot2"),
        (3, "bot2", "bot4"),
        (3, "bot3", "bot1"),
    ]


def test_five_players_each_sit_out_one_round() -> None:
    schedule = round_robin(NAMES[:5])
    assert max(p.round for p in schedule) == 5
    sitting_out = []
    for round_number in range(1, 6):
        playing = [n for p in schedule if p.round == round_number for n in (p.white, p.black)]
        assert len(playing) == 4 == len(set(playing))
        sitting_out += set(NAMES[:5]) - set(playing)
    assert sorted(sitting_out) == NAMES[:5]


@settings(deadline=None)  # a property, not a speed test: no clock under load
@given(
    players=st.integers(min_value=2, max_value=10),
    cycles=st.integers(min_value=1, max_value=3),
    games=st.integers(min_value=1, max_value=3),
)
def test_round_robin_meetings_and_colours(players: int, cycles: int, games: int) -> None:
    names = NAMES[:players]
    schedule = round_robin(names, cycles=cycles, games=games)

    assert [p.index for p in schedule] == list(range(len(schedule)))
    assert [p.round for p in schedule] == sorted(p.round for p in schedule)
    meetings = Counter(frozenset((p.white, p.black)) for p in schedule)
    assert meetings == {frozenset(pair): cycles * games for pair in combinations(names, 2)}
    for a, b in combinations(names, 2):
        as_white = sum(1 for p in schedule if (p.white, p.black) == (a, b))
        assert abs(2 * as_white - cycles * games) <= 1
    for round_number in {p.round for p in schedule}:
        boards = [p for p in schedule if p.round == round_number]
        playing = Counter(n for p in boards for n in (p.white, p.black))
        assert set(playing.values()) == {games}


@pytest.mark.parametrize("players", [4, 5, 6, 7, 8])
def test_single_round_robin_balances_each_players_colours(players: int) -> None:
    schedule = round_robin(NAMES[:players])
    whites = Counter(p.white for p in schedule)
    blacks = Counter(p.black for p in schedule)
    for name in NAMES[:players]:
        assert abs(whites[name] - blacks[name]) <= 1


def test_double_round_robin_second_cycle_reverses_colours() -> None:
    schedule = round_robin(NAMES[:6], cycles=2)
    first, second = schedule[:15], schedule[15:]
    assert [p.round for p in second] == [r + 5 for r in (p.round for p in first)]
    assert [(p.black, p.white) for p in second] == [(p.white, p.black) for p in first]
    whites = Counter(p.white for p in schedule)
    assert set(whites.values()) == {5}


def test_repeated_games_alternate_colours_within_the_round() -> None:
    schedule = round_robin(NAMES[:4], games=2)
    first_round = [(p.white, p.black) for p in schedule if p.round == 1]
    assert first_round == [
        ("bot1", "bot4"),
        ("bot2", "bot3"),
        ("bot4", "bot1"),
        ("bot3", "bot2"),
    ]


def test_openings_are_each_played_twice_with_colours_swapped() -> None:
    openings = ["start-a", "start-b", "start-c"]
    schedule = round_robin(NAMES[:4], openings=openings)
    assert len(schedule) == 6 * 2 * len(openings)
    for a, b in combinations(NAMES[:4], 2):
        games = [p for p in schedule if {p.white, p.black} == {a, b}]
        assert Counter((p.opening, p.white) for p in games) == {
            (opening, player): 1 for opening in openings for player in (a, b)
        }


def test_openings_pair_up_across_cycles_when_a_cycle_has_one_game() -> None:
    schedule = round_robin(NAMES[:2], cycles=4, openings=["x", "y"], games=1)
    assert [(p.opening, p.white) for p in schedule] == [
        ("x", "bot1"),
        ("x", "bot2"),
        ("y", "bot1"),
        ("y", "bot2"),
    ]


def test_gauntlet_meets_every_opponent_with_balanced_colours() -> None:
    schedule = gauntlet(NAMES[:5], games=2)
    assert [(p.index, p.round, p.white, p.black) for p in schedule] == [
        (0, 1, "bot1", "bot2"),
        (1, 1, "bot3", "bot1"),
        (2, 1, "bot1", "bot4"),
        (3, 1, "bot5", "bot1"),
        (4, 2, "bot2", "bot1"),
        (5, 2, "bot1", "bot3"),
        (6, 2, "bot4", "bot1"),
        (7, 2, "bot1", "bot5"),
    ]
    assert Counter(p.white for p in schedule)["bot1"] == 4


def test_gauntlet_with_openings() -> None:
    schedule = gauntlet(NAMES[:3], openings=["x", "y"])
    assert len(schedule) == 2 * 4
    against_bot2 = [(p.opening, p.white) for p in schedule if "bot2" in (p.white, p.black)]
    assert against_bot2 == [("x", "bot1"), ("x", "bot2"), ("y", "bot1"), ("y", "bot2")]


def test_schedules_are_deterministic() -> None:
    assert round_robin(NAMES, cycles=2, games=3) == round_robin(NAMES, cycles=2, games=3)
    assert gauntlet(NAMES, openings=["x"]) == gauntlet(NAMES, openings=["x"])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: round_robin(["solo"]), "at least 2 players"),
        (lambda: round_robin(["a", "b", "a"]), "'a' is given more than once"),
        (lambda: round_robin(["a", " "]), "name is empty"),
        (lambda: round_robin(["a", "b"], cycles=0), "cycles must be at least 1"),
        (lambda: gauntlet(["a", "b"], games=0), "games per pairing must be at least 1"),
        (lambda: gauntlet(["a", "b"], openings=[]), "openings is empty"),
        (lambda: berger_table(1), "at least 2 players"),
    ],
)
def test_bad_schedules_are_refused(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ScheduleError, match=message) as caught:
        call()
    assert isinstance(caught.value, RefereeError)


# --- lazy schedules ------------------------------------------------------------------


@settings(deadline=None)  # a property, not a speed test: no clock under load
@given(
    players=st.integers(min_value=2, max_value=9),
    cycles=st.integers(min_value=1, max_value=3),
    games=st.integers(min_value=1, max_value=3),
    gauntlet_format=st.booleans(),
)
def test_a_schedule_is_a_sequence_whose_items_agree_with_its_iteration(
    players: int, cycles: int, games: int, gauntlet_format: bool
) -> None:
    names = NAMES[:players]
    schedule = (
        gauntlet(names, games=games)
        if gauntlet_format
        else round_robin(names, cycles=cycles, games=games)
    )
    listed = list(schedule)
    assert len(schedule) == len(listed)
    assert [schedule[i] for i in range(len(schedule))] == listed
    assert schedule[-1] == listed[-1] and schedule[1:4] == listed[1:4]
    assert schedule == listed and schedule == tuple(listed)
    with pytest.raises(IndexError):
        schedule[len(schedule)]


def test_a_huge_schedule_is_computed_one_game_at_a_time() -> None:
    schedule = round_robin(NAMES[:4], cycles=2, games=10**12, openings=["x", "y"])
    assert len(schedule) == 2 * 3 * 10**12 * 2
    last = schedule[-1]
    assert last.index == len(schedule) - 1 and last.round == 6
    # Game j of a pairing in cycle c: colours reversed when j + c is odd, openings in twos.
    game = schedule[(3 * 10**12 + 5) * 2]  # cycle 1, round 1, game 5, board 0
    assert game == Pairing(index=game.index, round=4, white="bot1", black="bot4", opening="x")
    assert next(iter(schedule)) == schedule[0]


def test_a_schedule_of_more_than_max_games_is_refused() -> None:
    assert len(gauntlet(["a", "b"], games=MAX_GAMES)) == MAX_GAMES
    with pytest.raises(ScheduleError, match="more than the 1,000,000,000,000,000 a tournament"):
        gauntlet(["a", "b", "c"], games=MAX_GAMES)
