"""Schedules: the published Berger tables, repeated games, gauntlets and openings; tables of
other sizes (every combination, the balanced design, seats turned, laziness); game seeds."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations, permutations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from referee.errors import RefereeError
from referee.games import game_seed
from tournaments.pairings import (
    ALL_TABLES,
    MAX_GAMES,
    Pairing,
    ScheduleError,
    _difference_family,
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
    schedule = round_robin(NAMES[:4], games=1)
    assert schedule[:3] == [
        Pairing(index=0, round=1, players=("bot1", "bot4")),
        Pairing(index=1, round=1, players=("bot2", "bot3")),
        Pairing(index=2, round=2, players=("bot4", "bot3")),
    ]
    assert [(p.round, p.players[0], p.players[1]) for p in schedule[3:]] == [
        (2, "bot1", "bot2"),
        (3, "bot2", "bot4"),
        (3, "bot3", "bot1"),
    ]


def test_five_players_each_sit_out_one_round() -> None:
    schedule = round_robin(NAMES[:5], games=1)
    assert max(p.round for p in schedule) == 5
    sitting_out = []
    for round_number in range(1, 6):
        playing = [n for p in schedule if p.round == round_number for n in p.players]
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
    games = games if games == 1 else games + games % 2  # rounded up to both colours

    assert [p.index for p in schedule] == list(range(len(schedule)))
    assert [p.round for p in schedule] == sorted(p.round for p in schedule)
    meetings = Counter(frozenset(p.players) for p in schedule)
    assert meetings == {frozenset(pair): cycles * games for pair in combinations(names, 2)}
    for a, b in combinations(names, 2):
        as_white = sum(1 for p in schedule if p.players == (a, b))
        assert abs(2 * as_white - cycles * games) <= 1
    for round_number in {p.round for p in schedule}:
        boards = [p for p in schedule if p.round == round_number]
        playing = Counter(n for p in boards for n in p.players)
        assert set(playing.values()) == {games}


@pytest.mark.parametrize("players", [4, 5, 6, 7, 8])
def test_single_round_robin_balances_each_players_colours(players: int) -> None:
    schedule = round_robin(NAMES[:players], games=1)
    whites = Counter(p.players[0] for p in schedule)
    blacks = Counter(p.players[1] for p in schedule)
    for name in NAMES[:players]:
        assert abs(whites[name] - blacks[name]) <= 1


def test_double_round_robin_second_cycle_reverses_colours() -> None:
    schedule = round_robin(NAMES[:6], cycles=2, games=1)
    first, second = schedule[:15], schedule[15:]
    assert [p.round for p in second] == [r + 5 for r in (p.round for p in first)]
    assert [p.players[::-1] for p in second] == [p.players for p in first]
    whites = Counter(p.players[0] for p in schedule)
    assert set(whites.values()) == {5}


def test_a_pairing_plays_one_game_with_each_colour_by_default() -> None:
    schedule = round_robin(NAMES[:2])
    assert [p.players for p in schedule] == [("bot1", "bot2"), ("bot2", "bot1")]
    assert [p.players for p in gauntlet(NAMES[:3])] == [
        ("bot1", "bot2"),
        ("bot3", "bot1"),
        ("bot2", "bot1"),
        ("bot1", "bot3"),
    ]


@pytest.mark.parametrize(("seats", "games", "played"), [(2, 3, 4), (2, 1, 1), (3, 4, 6), (3, 1, 1)])
def test_games_per_table_are_rounded_up_to_whole_rotations_of_the_seats(
    seats: int, games: int, played: int
) -> None:
    names = NAMES[:seats]
    schedule = round_robin(names, seats=seats, games=games)
    assert len(schedule) == played
    assert len(gauntlet(names, seats=seats, games=games)) == played
    seated = Counter((seat, p.players[seat]) for p in schedule for seat in range(seats))
    if played > 1:  # each player in each seat equally often
        assert set(seated.values()) == {played // seats}


def test_repeated_games_alternate_colours_within_the_round() -> None:
    schedule = round_robin(NAMES[:4], games=2)
    first_round = [p.players for p in schedule if p.round == 1]
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
        games = [p for p in schedule if set(p.players) == {a, b}]
        assert Counter((p.opening, p.players[0]) for p in games) == {
            (opening, player): 1 for opening in openings for player in (a, b)
        }


def test_openings_pair_up_across_cycles_when_a_cycle_has_one_game() -> None:
    schedule = round_robin(NAMES[:2], cycles=4, openings=["x", "y"], games=1)
    assert [(p.opening, p.players[0]) for p in schedule] == [
        ("x", "bot1"),
        ("x", "bot2"),
        ("y", "bot1"),
        ("y", "bot2"),
    ]


def test_gauntlet_meets_every_opponent_with_balanced_colours() -> None:
    schedule = gauntlet(NAMES[:5], games=2)
    assert [(p.index, p.round, p.players[0], p.players[1]) for p in schedule] == [
        (0, 1, "bot1", "bot2"),
        (1, 1, "bot3", "bot1"),
        (2, 1, "bot1", "bot4"),
        (3, 1, "bot5", "bot1"),
        (4, 2, "bot2", "bot1"),
        (5, 2, "bot1", "bot3"),
        (6, 2, "bot4", "bot1"),
        (7, 2, "bot1", "bot5"),
    ]
    assert Counter(p.players[0] for p in schedule)["bot1"] == 4


def test_gauntlet_with_openings() -> None:
    schedule = gauntlet(NAMES[:3], openings=["x", "y"])
    assert len(schedule) == 2 * 4
    against_bot2 = [(p.opening, p.players[0]) for p in schedule if "bot2" in p.players]
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
    assert game == Pairing(index=game.index, round=4, players=("bot1", "bot4"), opening="x")
    assert next(iter(schedule)) == schedule[0]


def test_a_schedule_of_more_than_max_games_is_refused() -> None:
    assert len(gauntlet(["a", "b"], games=MAX_GAMES)) == MAX_GAMES
    with pytest.raises(ScheduleError, match="more than the 1,000,000,000,000,000 a tournament"):
        gauntlet(["a", "b", "c"], games=MAX_GAMES)


# --- tables of other sizes ------------------------------------------------------------


def seat_counts(schedule: Sequence[Pairing]) -> Counter[tuple[frozenset[str], str, int]]:
    """How often each player sat each seat at each table."""
    return Counter(
        (frozenset(p.players), name, seat) for p in schedule for seat, name in enumerate(p.players)
    )


@settings(deadline=None)  # a property, not a speed test: no clock under load
@given(
    players=st.integers(min_value=1, max_value=8),
    seats=st.sampled_from([1, 3, 4, 5]),
    cycles=st.integers(min_value=1, max_value=2),
    rotations=st.integers(min_value=1, max_value=2),
)
def test_small_fields_play_every_combination_with_each_seat_equally_often(
    players: int, seats: int, cycles: int, rotations: int
) -> None:
    assume(seats <= players)
    names = NAMES[:players]
    games = rotations * seats
    schedule = round_robin(names, seats=seats, cycles=cycles, games=games)

    assert [p.index for p in schedule] == list(range(len(schedule)))
    tables = Counter(frozenset(p.players) for p in schedule)
    assert tables == {frozenset(c): cycles * games for c in combinations(names, seats)}
    # Within a cycle each player of a table sits each seat equally often.
    for cycle in range(cycles):
        part = schedule[cycle * len(schedule) // cycles : (cycle + 1) * len(schedule) // cycles]
        assert set(seat_counts(part).values()) == {rotations}
    # A round holds every table once; rounds are numbered on across cycles.
    rounds = Counter(p.round for p in schedule)
    assert list(rounds) == list(range(1, cycles * games + 1))
    assert set(rounds.values()) == {math.comb(players, seats)}


def test_a_table_of_three_plays_every_seating_in_six_games() -> None:
    schedule = round_robin(NAMES[:3], seats=3, games=6)
    assert [p.players for p in schedule] == [
        ("bot1", "bot2", "bot3"),
        ("bot2", "bot3", "bot1"),
        ("bot3", "bot1", "bot2"),
        ("bot3", "bot2", "bot1"),
        ("bot2", "bot1", "bot3"),
        ("bot1", "bot3", "bot2"),
    ]
    # A second cycle of three games takes the other direction round the table.
    assert round_robin(NAMES[:3], seats=3, cycles=2)[3:] == [
        Pairing(index=3 + n, round=4 + n, players=p.players) for n, p in enumerate(schedule[3:])
    ]


def test_solo_players_each_play_alone_round_after_round() -> None:
    schedule = round_robin(NAMES[:3], seats=1, games=2)
    assert [(p.round, p.players) for p in schedule] == [
        (1, ("bot1",)),
        (1, ("bot2",)),
        (1, ("bot3",)),
        (2, ("bot1",)),
        (2, ("bot2",)),
        (2, ("bot3",)),
    ]
    assert len(round_robin(["only"], seats=1)) == 1


def test_openings_are_each_played_in_every_seat_at_a_table() -> None:
    openings = ["x", "y"]
    schedule = round_robin(NAMES[:4], seats=3, openings=openings)
    assert len(schedule) == 4 * 3 * len(openings)
    for table in combinations(NAMES[:4], 3):
        games = [p for p in schedule if set(p.players) == set(table)]
        assert Counter(
            (p.opening, name, seat) for p in games for seat, name in enumerate(p.players)
        ) == {
            (opening, name, seat): 1 for opening in openings for name in table for seat in range(3)
        }


@pytest.mark.parametrize(("players", "seats"), [(16, 3), (13, 4), (20, 4), (12, 5), (31, 5)])
def test_large_fields_get_a_balanced_cycle(players: int, seats: int) -> None:
    names = [f"p{number}" for number in range(players)]
    assert math.comb(players, seats) > ALL_TABLES
    schedule = round_robin(names, seats=seats, cycles=2)
    assert len(schedule) < 2 * seats * math.comb(players, seats)
    tables = len(schedule) // (2 * seats)
    assert tables % players == 0  # base tables, each turned through every number

    plays = Counter(name for p in schedule for name in p.players)
    assert set(plays.values()) == {2 * seats * tables * seats // players}
    assert len(set(seat_counts(schedule).values())) == 1
    meetings = Counter(
        frozenset(pair)
        for p in schedule[: len(schedule) // 2]
        for pair in combinations(p.players, 2)
    )
    assert len(meetings) == math.comb(players, 2)  # every two players meet in each cycle
    per_table = {count // seats for count in meetings.values()}
    assert max(per_table) - min(per_table) <= 2
    rounds = Counter(p.round for p in schedule)
    assert set(rounds.values()) == {tables}


def test_the_balanced_design_meets_its_promise_for_every_field_up_to_200() -> None:
    for size in (3, 4, 5):
        for players in range(size + 1, 201):
            meets = Counter(
                (b - a) % players
                for base in _difference_family(players, size)
                for a, b in permutations(base, 2)
            )
            counts = [meets[difference] for difference in range(1, players)]
            assert min(counts) >= 1 and max(counts) - min(counts) <= 2, (players, size)


def test_a_gauntlet_of_tables_seats_the_first_player_at_every_table() -> None:
    schedule = gauntlet(NAMES[:5], seats=3)
    assert all("bot1" in p.players for p in schedule)
    others = Counter(frozenset(p.players) - {"bot1"} for p in schedule)
    assert others == {frozenset(pair): 3 for pair in combinations(NAMES[1:5], 2)}
    assert set(seat_counts(schedule).values()) == {1}
    large = gauntlet([f"p{n}" for n in range(40)], seats=4)
    assert all("p0" in p.players for p in large)
    assert len(large) < 4 * math.comb(39, 3)
    meetings = Counter(
        frozenset(pair) for p in large for pair in combinations(set(p.players) - {"p0"}, 2)
    )
    assert len(meetings) == math.comb(39, 2)


def test_a_huge_schedule_of_tables_is_computed_one_game_at_a_time() -> None:
    names = [f"p{number}" for number in range(60)]
    schedule = round_robin(names, seats=5, cycles=10**9)
    assert len(schedule) % 10**9 == 0
    last = schedule[-1]
    assert last.index == len(schedule) - 1 and last.round == 5 * 10**9
    assert len(set(last.players)) == 5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: round_robin(["a", "b", "c"], seats=4), "at tables of 4 needs at least 4 players"),
        (lambda: round_robin(["a", "b", "c"], seats=3, games=0), "must be at least 1"),
        (lambda: round_robin(["a", "b", "c"], seats=0), "at least 1 seat"),
        (lambda: gauntlet(["a", "b", "c"], seats=1), "at least 2 seats"),
        (lambda: round_robin(["a", "b", "c"], seats=3, cycles=0), "cycles must be at least 1"),
        (lambda: round_robin(["a", "b", "c"], seats=3, openings=[]), "openings is empty"),
    ],
)
def test_bad_schedules_of_tables_are_refused_in_one_line(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(ScheduleError, match=message) as caught:
        call()
    assert "\n" not in str(caught.value)


def test_attempt_seeds_are_reproducible_from_seed_game_and_attempt() -> None:
    # Attempt 1 keeps the seed a game always had; each later one hashes its number in.
    assert game_seed(7, 3) == game_seed(7, 3, 1)
    digest = hashlib.sha256(b"7:3:2").digest()
    assert game_seed(7, 3, 2) == int.from_bytes(digest[:8], "big") >> 1
    seeds = {
        game_seed(seed, index, attempt)
        for seed in (-3, 3)
        for index in range(20)
        for attempt in range(1, 6)
    }
    assert len(seeds) == 2 * 20 * 5
    assert game_seed(None, 3, 2) != game_seed(None, 3, 2)  # without a seed: secret each time
    with pytest.raises(ValueError, match="from 1"):
        game_seed(7, 3, 0)


def test_game_seeds_are_fixed_unrelated_and_fit_in_63_bits() -> None:
    seeds = [game_seed(seed, index) for seed in (-3, 0, 3) for index in range(100)]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= seed < 2**63 for seed in seeds)
    assert game_seed(0, 0) == int.from_bytes(hashlib.sha256(b"0:0").digest()[:8]) >> 1
