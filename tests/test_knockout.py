"""Knockouts: the seeded bracket against published draws, byes, matches and tie-breaks,
resuming from results, and properties over random results."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.knockout import Knockout, knockout, standard_order
from tournaments.pairings import ScheduleError


@dataclass(frozen=True)
class Game:
    index: int
    players: tuple[str, ...]
    places: tuple[int, ...]


def seeds(count: int) -> list[str]:
    return [f"s{number}" for number in range(1, count + 1)]


def number(name: str | None) -> int:
    assert name is not None
    return int(name[1:])


Result = Callable[[int, tuple[str, ...]], tuple[int, int]]


def better_seed_wins(index: int, players: tuple[str, ...]) -> tuple[int, int]:
    return (1, 2) if number(players[0]) < number(players[1]) else (2, 1)


def draw(index: int, players: tuple[str, ...]) -> tuple[int, int]:
    return (1, 1)


def run(tournament: Knockout, result: Result) -> list[Game]:
    """Play every game as soon as it can be played."""
    results: list[Game] = []
    while pending := tournament.pending(results):
        results += [Game(p.index, p.players, result(p.index, p.players)) for p in pending]
    return results


# --- the bracket ---------------------------------------------------------------------------


def test_standard_order_keeps_the_best_seeds_apart() -> None:
    """The bracket order in general use (e.g. the 8-draw 1-8, 4-5, 2-7, 3-6)."""
    assert standard_order(2) == [1, 2]
    assert standard_order(4) == [1, 4, 2, 3]
    assert standard_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert standard_order(16) == [1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11]
    for size in (2, 4, 8, 16, 32, 64, 128):
        order = standard_order(size)
        assert sorted(order) == list(range(1, size + 1))
        # Seeds 1 … k sit in different blocks of size/k slots: they meet only when k remain.
        k = 2
        while k <= size:
            block = size // k
            assert len({order.index(seed) // block for seed in range(1, k + 1)}) == k
            k *= 2


def test_world_cup_of_128_pairs_seed_s_with_129_minus_s() -> None:
    """FIDE World Cup 2017: 128 players, "#1 plays #128, #2 plays #127, and so on until #64 and
    #65" (thechessmind.net, 2017-09-03)."""
    tournament = knockout(seeds(128))
    assert tournament.rounds == 7
    pairs = tournament.first_round()
    assert sorted(pairs) == [(s, 129 - s) for s in range(1, 65)]
    matches = tournament.matches([])
    assert [m.players for m in matches[:2]] == [("s1", "s128"), ("s64", "s65")]


def test_world_cup_of_206_gives_the_top_50_byes() -> None:
    """FIDE World Cup 2025: 206 players; "the top-50 players will get byes, and players seeded
    from 51 to 206 will compete" in round 1, top half against the reversed lower half
    (Hindustan Times, 2025-07-21)."""
    tournament = knockout(seeds(206))
    assert tournament.size == 256
    first = [m for m in tournament.matches([]) if m.round == 1]
    byes = sorted(number(m.winner) for m in first if m.players[1] is None)
    assert byes == list(range(1, 51))
    played = sorted((number(m.players[0]), number(m.players[1])) for m in first if m.games)
    assert played == [(s, 257 - s) for s in range(51, 129)]


def test_ten_players_give_the_top_six_byes() -> None:
    """Ten entrants: a bracket of 16 with 6 byes, seeds 1–6 skip round 1 and seeds 7–10 play
    (the usual example, e.g. leaguetime.com's guide to single-elimination brackets)."""
    tournament = knockout(seeds(10))
    first = [m for m in tournament.matches([]) if m.round == 1]
    assert sorted(number(m.winner) for m in first if m.winner) == [1, 2, 3, 4, 5, 6]
    assert sorted(m.players for m in first if m.games) == [("s7", "s10"), ("s8", "s9")]
    # 4 and 5 both had byes: their round-2 match is ready at once.
    ready = {p.players for p in tournament.pending([])}
    assert ("s4", "s5") in ready and ("s5", "s4") in ready


def test_the_better_seeds_meet_as_the_bracket_intends() -> None:
    tournament = knockout(seeds(16), games=2)
    results = run(tournament, better_seed_wins)
    matches = tournament.matches(results)
    for match in matches:
        a, b = (number(p) for p in match.players)
        assert a + b == 2 ** (tournament.rounds - match.round + 1) + 1
    assert tournament.winner(results) == "s1"
    assert len(results) == 15 * 2


# --- matches ---------------------------------------------------------------------------------


def test_a_match_is_its_games_colours_alternating() -> None:
    tournament = knockout(seeds(2), games=4, tiebreaks=0)
    (match,) = tournament.matches([])
    assert [g.players for g in match.games] == [("s1", "s2"), ("s2", "s1")] * 2
    assert [g.index for g in match.games] == [0, 1, 2, 3]
    results = [Game(0, ("s1", "s2"), (2, 1)), Game(1, ("s2", "s1"), (1, 1))]
    (match,) = tournament.matches(results)
    assert match.points == (0.5, 1.5) and match.winner is None
    results += [Game(2, ("s1", "s2"), (1, 2)), Game(3, ("s2", "s1"), (1, 1))]
    (match,) = tournament.matches(results)
    assert match.points == (2.0, 2.0) and match.winner == "s1"  # level, no tie-breaks: seed


def test_a_level_match_plays_tie_break_pairs_while_level() -> None:
    tournament = knockout(seeds(2), games=2, tiebreaks=2)
    assert tournament.block == 6
    level = [Game(0, ("s1", "s2"), (1, 2)), Game(1, ("s2", "s1"), (1, 2))]  # a win each
    (match,) = tournament.matches(level)
    assert [g.index for g in match.games] == [0, 1, 2, 3] and match.winner is None
    assert [p.players for p in tournament.pending(level)] == [("s1", "s2"), ("s2", "s1")]
    # The first tie-break pair decides: s2 wins 1½-½.
    decided = [*level, Game(2, ("s1", "s2"), (1, 1)), Game(3, ("s2", "s1"), (1, 2))]
    (match,) = tournament.matches(decided)
    assert match.points == (1.5, 2.5) and match.winner == "s2"
    assert tournament.pending(decided) == []
    # Level after both pairs: the better seed goes through.
    drawn = run(tournament, draw)
    assert len(drawn) == 6 and tournament.winner(drawn) == "s1"


def test_an_odd_number_of_games_keeps_colours_alternating_into_tie_breaks() -> None:
    tournament = knockout(seeds(2), games=1, tiebreaks=1)
    results = run(tournament, draw)
    assert [g.players for g in results] == [("s1", "s2"), ("s2", "s1"), ("s1", "s2")]


def test_openings_are_shared_by_a_rounds_matches() -> None:
    tournament = knockout(seeds(4), games=2, tiebreaks=1, openings=["a", "b", "c"])
    results = run(tournament, better_seed_wins)
    by_round: dict[int, set[str | None]] = {}
    for match in tournament.matches(results):
        by_round.setdefault(match.round, set()).update(g.opening for g in match.games)
    assert by_round == {1: {"a"}, 2: {"c"}}  # each round starts 2 openings on (block of 4)


# --- resuming from results -------------------------------------------------------------------


def test_game_numbers_are_fixed_and_unneeded_ones_never_played() -> None:
    tournament = knockout(seeds(5), games=2, tiebreaks=1)
    assert (tournament.size, tournament.block, tournament.length) == (8, 4, 28)
    results = run(tournament, better_seed_wins)
    # Seeds 1-3 have byes (matches 0, 2, 3 of round 1); 4-5 is match 1; tie-breaks unneeded.
    assert sorted(g.index for g in results) == [4, 5, 16, 17, 20, 21, 24, 25]
    assert tournament.winner(results) == "s1"


def test_results_out_of_turn_are_refused() -> None:
    tournament = knockout(seeds(2), games=2, tiebreaks=1)
    with pytest.raises(ScheduleError, match="was played by"):
        tournament.matches([Game(0, ("s2", "s1"), (1, 2))])
    decided = [Game(0, ("s1", "s2"), (1, 2)), Game(1, ("s2", "s1"), (2, 1))]
    with pytest.raises(ScheduleError, match="not a game that the results so far call for"):
        tournament.matches([*decided, Game(2, ("s1", "s2"), (1, 1))])
    with pytest.raises(ScheduleError, match="twice"):
        tournament.matches([decided[0], decided[0]])
    with pytest.raises(ScheduleError, match="not in a knockout"):
        tournament.matches([Game(99, ("s1", "s2"), (1, 2))])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"players": ["a"]}, "at least 2 players"),
        ({"players": ["a", "b"], "games": 0}, "at least 1 game"),
        ({"players": ["a", "b"], "tiebreaks": -1}, "cannot be negative"),
        ({"players": ["a", "b"], "openings": []}, "empty"),
    ],
)
def test_bad_settings_are_refused(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        knockout(**arguments)  # type: ignore[arg-type]


@settings(deadline=None, max_examples=60)
@given(
    size=st.integers(min_value=2, max_value=40),
    games=st.integers(min_value=1, max_value=3),
    tiebreaks=st.integers(min_value=0, max_value=2),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_properties_over_random_results(size: int, games: int, tiebreaks: int, seed: int) -> None:
    """Whatever the results, in whatever order the games are played: one winner, everyone else
    knocked out once, every match of the bracket decided, each in at most games + 2 ·
    tiebreaks games, and the same results always giving the same matches."""
    tournament = knockout(seeds(size), games=games, tiebreaks=tiebreaks)
    rng = random.Random(seed)
    results: list[Game] = []
    while pending := tournament.pending(results):
        rng.shuffle(pending)
        for pairing in pending[: rng.randint(1, len(pending))]:  # some now, some later
            places = rng.choice([(1, 2), (2, 1), (1, 1)])
            results.append(Game(pairing.index, pairing.players, places))
        assert tournament.matches(results) == tournament.matches(list(reversed(results)))
    matches = tournament.matches(results)
    assert all(m.winner is not None for m in matches)
    losers = [p for m in matches for p in m.players if p is not None and p != m.winner]
    assert sorted([*losers, tournament.winner(results) or ""]) == sorted(seeds(size))
    assert all(len(m.games) <= games + 2 * tiebreaks for m in matches)
    for match in matches:
        if match.games:
            a, b = match.points
            assert a != b or match.winner == match.players[0]
