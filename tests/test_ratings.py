"""Ratings: hand-computed tables, perfect scores, anchors, LOS, the match helper, reports."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from referee.errors import RefereeError
from tournaments.ratings import (
    METHODS,
    Encounter,
    RatingError,
    RatingTable,
    TableResult,
    elo_difference,
    elo_from_score,
    rate,
)
from tournaments.report import (
    COLUMNS,
    crosstable,
    describe_elo_difference,
    format_points,
    rating_table,
    to_csv,
    to_json,
)

ELO_PER_UNIT = 400 / math.log(10)


def games(white: str, black: str, *scores: float) -> list[tuple[str, str, float]]:
    """``(white, black, score)`` for each score."""
    return [(white, black, score) for score in scores]


def expected(elo_difference: float) -> float:
    """The logistic expected score for a rating difference."""
    return 1 / (1 + 10 ** (-elo_difference / 400))


def normal_cdf(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def assert_scores_are_expected(table: RatingTable, results: list[tuple[str, str, float]]) -> None:
    """At the maximum likelihood each player's points equal their expected points."""
    elo = {row.name: row.elo for row in table.players}
    for row in table.players:
        expectation = sum(
            expected(elo[w] - elo[b]) if w == row.name else expected(elo[b] - elo[w])
            for w, b, _ in results
            if row.name in (w, b)
        )
        assert expectation == pytest.approx(row.score, abs=1e-7)


# --- hand-computed tables ------------------------------------------------------


def test_seven_out_of_ten_splits_the_difference_around_zero() -> None:
    table = rate(games("a", "b", *[1] * 7, *[0] * 3))
    a, b = table.players
    difference = -400 * math.log10(1 / 0.7 - 1)
    assert difference == pytest.approx(147.19, abs=0.01)
    assert (a.name, b.name) == ("a", "b")
    assert a.elo == pytest.approx(difference / 2, abs=1e-6)
    assert b.elo == pytest.approx(-difference / 2, abs=1e-6)
    assert a.elo == pytest.approx(73.6, abs=0.05)
    # Information of the difference: n·p·(1-p) in natural units; each rating carries half.
    difference_sd = ELO_PER_UNIT / math.sqrt(10 * 0.7 * 0.3)
    assert a.error == pytest.approx(1.959964 * difference_sd / 2, rel=1e-6)
    assert b.error == pytest.approx(a.error)
    assert a.los_next == pytest.approx(normal_cdf(difference / difference_sd), rel=1e-6)
    assert b.los_next is None
    assert (a.wins, a.draws, a.losses, a.score, a.games) == (7, 0, 3, 7, 10)
    assert a.score_percent == pytest.approx(70)
    assert not table.virtual_draws


def test_three_player_cycle_rates_everyone_zero() -> None:
    results = [
        *games("a", "b", 1),
        *games("b", "c", 1),
        *games("c", "a", 1),
        *games("b", "a", 0),
        *games("c", "b", 0),
        *games("a", "c", 0),
    ]
    table = rate(results)
    assert [row.elo for row in table.players] == pytest.approx([0, 0, 0], abs=1e-9)
    assert [row.los_next for row in table.players] == pytest.approx([0.5, 0.5, None])
    # Each pair: 2 games at p = ½, information ½; the Laplacian's pseudo-inverse gives
    # every rating a variance of 4/9 (natural units²).
    for row in table.players:
        assert row.error == pytest.approx(1.959964 * ELO_PER_UNIT * 2 / 3, rel=1e-6)
        assert row.score == 2


def test_draws_count_as_half_a_win_and_half_a_loss() -> None:
    drawn = rate(games("a", "b", 0.5, 0.5, 1))
    split = rate(games("a", "b", 1, 0, 1))
    assert [r.elo for r in drawn.players] == pytest.approx([r.elo for r in split.players])
    assert drawn.player("a").draws == 2


def test_equal_players_have_los_one_half() -> None:
    table = rate(games("a", "b", 1, 0, 0.5, 0.5, 1, 0))
    assert table.players[0].elo == pytest.approx(0, abs=1e-9)
    assert table.players[0].los_next == pytest.approx(0.5)


def test_ratings_average_zero_and_fit_the_scores() -> None:
    results = [
        *games("a", "b", 1, 0.5, 1),
        *games("b", "c", 1, 1, 0),
        *games("c", "a", 0.5, 0),
        *games("d", "a", 0, 0),
        *games("d", "c", 1, 0.5),
        *games("b", "d", 0.5),
    ]
    table = rate(results)
    assert not table.virtual_draws
    assert sum(row.elo for row in table.players) == pytest.approx(0, abs=1e-6)
    assert_scores_are_expected(table, results)
    assert [row.elo for row in table.players] == sorted(
        (row.elo for row in table.players), reverse=True
    )


# --- perfect scores --------------------------------------------------------------


def test_a_perfect_score_is_finite_first_and_large() -> None:
    results = [
        *games("ace", "bob", 1, 1),
        *games("cat", "ace", 0, 0),
        *games("bob", "cat", 1, 0, 0.5),
    ]
    table = rate(results)
    assert table.virtual_draws
    best, *others = table.players
    assert best.name == "ace"
    assert math.isfinite(best.elo) and math.isfinite(best.error)
    assert best.elo > others[0].elo + 300
    assert others[0].elo == pytest.approx(others[1].elo)
    assert sum(row.elo for row in table.players) == pytest.approx(0, abs=1e-6)
    assert best.los_next is not None and 0.9 < best.los_next < 1


def test_a_zero_score_is_finite_and_last() -> None:
    table = rate([*games("a", "b", 1, 0), *games("a", "z", 1), *games("z", "b", 0)])
    assert table.players[-1].name == "z"
    assert math.isfinite(table.players[-1].elo)
    assert table.players[-1].elo < -200


def test_a_perfect_score_rates_above_a_nearly_perfect_one() -> None:
    nearly = rate(games("a", "b", *[1] * 9, 0.5)).player("a").elo
    perfect = rate(games("a", "b", *[1] * 10)).player("a").elo
    assert not rate(games("a", "b", *[1] * 9, 0.5)).virtual_draws
    assert nearly < perfect < 2 * nearly


def test_players_without_games_sit_at_the_average() -> None:
    table = rate(games("a", "b", 1, 0), players=["idle", "a"])
    assert table.virtual_draws
    idle = table.player("idle")
    assert (idle.games, idle.elo) == (0, pytest.approx(0, abs=1e-9))
    assert math.isfinite(idle.error)
    assert idle.score_percent == 0


def test_no_results_give_an_empty_table() -> None:
    table = rate([])
    assert table.players == ()


# --- anchor ----------------------------------------------------------------------


def test_an_anchor_shifts_every_rating_and_measures_errors_from_it() -> None:
    results = [*games("a", "b", 1, 1, 0), *games("b", "c", 1, 0.5), *games("c", "a", 0.5)]
    plain = rate(results)
    anchored = rate(results, anchor="b", anchor_elo=1500)
    shift = 1500 - plain.player("b").elo
    for row in plain.players:
        moved = anchored.player(row.name)
        assert moved.elo == pytest.approx(row.elo + shift)
        assert moved.rank == row.rank
        assert moved.los_next == pytest.approx(row.los_next)
    assert anchored.player("b").error == 0
    assert anchored.player("a").error > plain.player("a").error
    assert anchored.anchor == "b"


def test_an_unknown_anchor_is_refused() -> None:
    with pytest.raises(RatingError, match="anchor player 'zed'"):
        rate(games("a", "b", 1), anchor="zed", anchor_elo=1000)


@pytest.mark.parametrize(
    ("results", "message"),
    [
        (games("a", "b", 0.25), "must be 1, 0.5 or 0"),
        (games("a", "a", 1), "cannot play against themselves"),
    ],
)
def test_bad_results_are_refused(results: list[tuple[str, str, float]], message: str) -> None:
    with pytest.raises(RatingError, match=message) as caught:
        rate(results)
    assert isinstance(caught.value, RefereeError)


# --- crosstable ------------------------------------------------------------------


def test_crosstable_counts_from_both_sides() -> None:
    table = rate([*games("a", "b", 1, 0.5), *games("b", "a", 1), *games("a", "c", 0)])
    assert table.encounter("a", "b") == Encounter(wins=1, draws=1, losses=1)
    assert table.encounter("b", "a") == Encounter(wins=1, draws=1, losses=1)
    assert table.encounter("c", "a") == Encounter(wins=1)
    assert table.encounter("c", "a").score == 1
    assert table.encounter("b", "c") == Encounter()
    assert table.encounter("b", "c").games == 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(list(combinations("abcde", 2))), st.sampled_from([0, 0.5, 1])),
        min_size=1,
        max_size=30,
    )
)
def test_any_results_give_finite_ratings_that_fit(
    drawn: list[tuple[tuple[str, str], float]],
) -> None:
    results = [(white, black, score) for (white, black), score in drawn]
    table = rate(results)
    for row in table.players:
        assert math.isfinite(row.elo) and math.isfinite(row.error) and row.error > 0
    assert sum(row.elo for row in table.players) == pytest.approx(0, abs=1e-6)
    assert sum(row.score for row in table.players) == len(results)
    if not table.virtual_draws:
        assert_scores_are_expected(table, results)


# --- games of other seat counts ---------------------------------------------------------

# Pinned from the two-player model before games of other seat counts were rated: two-seat
# results must come out exactly as they did.
PINNED_RESULTS = [
    ("dan", "cid", 1), ("bea", "eve", 0), ("cid", "dan", 0), ("cid", "ann", 1),
    ("bea", "dan", 1), ("bea", "eve", 0.5), ("ann", "eve", 0.5), ("eve", "ann", 1),
    ("ann", "cid", 0.5), ("bea", "dan", 0), ("cid", "bea", 1), ("cid", "eve", 0),
    ("bea", "ann", 1), ("ann", "dan", 1), ("bea", "ann", 0.5), ("dan", "ann", 0),
    ("ann", "bea", 0.5), ("cid", "ann", 0), ("bea", "ann", 0), ("eve", "dan", 0.5),
    ("dan", "ann", 1), ("bea", "ann", 0.5), ("bea", "ann", 0), ("cid", "bea", 1),
    ("eve", "ann", 0), ("dan", "bea", 0.5), ("eve", "ann", 1), ("eve", "ann", 1),
    ("ann", "cid", 1), ("bea", "dan", 0.5), ("eve", "ann", 1), ("eve", "cid", 0),
    ("dan", "ann", 0.5), ("bea", "dan", 1), ("cid", "ann", 1), ("cid", "ann", 0),
    ("ann", "dan", 1), ("dan", "cid", 0.5), ("eve", "ann", 1), ("bea", "ann", 1),
    ("eve", "cid", 1), ("bea", "cid", 0.5), ("cid", "ann", 0), ("bea", "cid", 0.5),
    ("ann", "bea", 0), ("ann", "eve", 1), ("bea", "dan", 1), ("eve", "ann", 1),
    ("cid", "bea", 1), ("eve", "cid", 0.5), ("ann", "cid", 0), ("ann", "dan", 1),
    ("bea", "dan", 0.5), ("cid", "dan", 1), ("ann", "eve", 1), ("eve", "bea", 0.5),
    ("ann", "bea", 0.5), ("ann", "bea", 0.5), ("dan", "eve", 1), ("ann", "bea", 1),
]  # fmt: skip
PINNED_TABLE = [
    ("eve", 70.75850671683354, 131.89836819373699, 9, 5, 5, 0.7502159270405826),
    ("ann", 11.96694335817632, 93.72510112396884, 14, 8, 13, 0.5523752485491112),
    ("cid", 0.7120886793967154, 120.61184551721819, 8, 5, 8, 0.6227090356698327),
    ("bea", -28.524482225783352, 109.98717179746959, 6, 12, 8, 0.6119616996844506),
    ("dan", -54.91305652862323, 129.16722621760312, 5, 6, 8, None),
]


def as_tables(results: list[tuple[str, str, float]]) -> list[TableResult]:
    return [TableResult.two_seat(white, black, score) for white, black, score in results]


@pytest.mark.parametrize("convert", [list, as_tables])
def test_two_seat_results_are_rated_exactly_as_before(convert) -> None:
    table = rate(convert(PINNED_RESULTS))
    for row, (name, elo, error, wins, draws, losses, los_next) in zip(
        table.players, PINNED_TABLE, strict=True
    ):
        assert (row.name, row.wins, row.draws, row.losses) == (name, wins, draws, losses)
        assert (row.elo, row.error) == (
            pytest.approx(elo, rel=1e-9),
            pytest.approx(error, rel=1e-9),
        )
        assert row.los_next == (None if los_next is None else pytest.approx(los_next, rel=1e-9))
    assert table.kind == "two-seat"
    ann = table.player("ann")
    assert (ann.games, ann.mean_score, ann.mean_place) == (35, pytest.approx(18 / 35), 1 + 13 / 35)


def three_seat(players: str, places: tuple[int, ...], scores: tuple[float, ...]) -> TableResult:
    return TableResult(tuple(players), places, scores)


def test_a_three_seat_game_is_its_three_pairwise_results_at_half_weight() -> None:
    # a wins 4 games with b and c tied behind it, and is last twice behind b and c tied:
    # a scores 4 of 6 against each, weighted ½ as 2 of 3 games; b and c draw 3 games.
    games_ = [three_seat("abc", (1, 2, 2), (50, 30, 30))] * 4 + [
        three_seat("bca", (1, 1, 3), (40, 40, 20))
    ] * 2
    table = rate(games_, method="pairwise")
    # By hand: p(a beats b) = 2/3 at the maximum, so a - b = 400·log10(2); b = c, mean 0.
    difference = 400 * math.log10(2)
    assert table.player("a").elo == pytest.approx(2 * difference / 3, abs=1e-6)
    assert table.player("b").elo == pytest.approx(-difference / 3, abs=1e-6)
    assert table.player("c").elo == pytest.approx(-difference / 3, abs=1e-6)
    # The same evidence as these two-seat games, error bars and LOS included.
    pairwise = rate(
        [*games("a", "b", 1, 1, 0), *games("a", "c", 1, 1, 0), *games("b", "c", *[0.5] * 3)]
    )
    for row in pairwise.players:
        tabled = table.player(row.name)
        assert (tabled.elo, tabled.error) == (pytest.approx(row.elo), pytest.approx(row.error))
    # Beside Elo: games, mean score and place; W/D/L count the unweighted pairwise results.
    a, b = table.player("a"), table.player("b")
    assert (a.games, a.mean_score, a.mean_place) == (
        6,
        pytest.approx(240 / 6),
        pytest.approx(10 / 6),
    )
    assert (b.games, b.mean_score, b.mean_place) == (
        6,
        pytest.approx(200 / 6),
        pytest.approx(10 / 6),
    )
    assert (a.wins, a.draws, a.losses) == (8, 0, 4)
    assert table.encounter("b", "c") == Encounter(draws=6)
    assert table.kind == "tables"


def test_three_four_seat_games_weigh_as_one_game_between_each_two_players() -> None:
    order = three_seat("wxyz", (1, 2, 3, 4), (9, 7, 5, 3))
    table = rate([order] * 3, method="pairwise")
    pairwise = rate([(a, b, 1) for a, b in combinations("wxyz", 2)])
    assert [(r.name, r.elo, r.error) for r in table.players] == [
        (r.name, pytest.approx(r.elo), pytest.approx(r.error)) for r in pairwise.players
    ]
    assert table.virtual_draws and table.player("w").wins == 9


def ranking(scores: tuple[int, ...]) -> tuple[int, ...]:
    """Places from points: 1 for the most, ties sharing."""
    return tuple(1 + sum(other > score for other in scores) for score in scores)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.integers(min_value=2, max_value=5).flatmap(
            lambda seats: st.tuples(
                st.permutations("abcdef").map(lambda names: tuple(names[:seats])),
                st.tuples(*[st.integers(min_value=0, max_value=3)] * seats),
            )
        ),
        min_size=1,
        max_size=25,
    ),
    st.randoms(use_true_random=False),
)
def test_games_of_any_seats_give_finite_ratings_whatever_their_order(drawn, rng) -> None:
    games_ = [
        TableResult(players, ranking(points), tuple(map(float, points)))
        for players, points in drawn
    ]
    shuffled = list(games_)
    rng.shuffle(shuffled)
    for method in METHODS:
        table = rate(games_, method=method)
        for row in table.players:
            assert math.isfinite(row.elo) and math.isfinite(row.error) and row.error > 0
        assert sum(row.elo for row in table.players) == pytest.approx(0, abs=1e-6)
        assert sum(row.games for row in table.players) == sum(len(g.players) for g in games_)
        # exactly: the order of the games does not matter to the fit (OpenSkill's does)
        assert fitted(rate(shuffled, method=method)) == fitted(table)


def fitted(table: RatingTable) -> RatingTable:
    """The table without its OpenSkill ratings, which depend on the order of the games."""
    rows = tuple(dataclasses.replace(row, mu=None, sigma=None) for row in table.players)
    return dataclasses.replace(table, players=rows)


def test_solo_games_have_no_elo_and_rank_by_mean_score() -> None:
    solo = [TableResult(("a",), (1,), (40,)), TableResult(("b",), (1,), (55,))]
    table = rate([*solo, TableResult(("a",), (1,), (60,))], players=["idle"])
    assert table.kind == "solo" and not table.rated
    assert [(r.name, r.elo, r.error, r.mean_score) for r in table.players] == [
        ("b", None, None, 55),
        ("a", None, None, 50),
        ("idle", None, None, None),
    ]
    assert rate([], players=["a"], kind="solo").players[0].elo is None
    with pytest.raises(RatingError, match="no ratings to anchor"):
        rate(solo, anchor="a")


def test_scores_unknown_leave_the_mean_score_out() -> None:
    table = rate([TableResult(("a", "b", "c"), (1, 2, 3), None)])
    assert table.player("a").mean_score is None and table.player("a").mean_place == 1


@pytest.mark.parametrize(
    ("game", "message"),
    [
        (TableResult(("a", "b", "a"), (1, 2, 3), None), "'a' cannot play against themselves"),
        (TableResult(("a", "b", "c"), (1, 2), None), "one place and one score per seat"),
        (TableResult(("a", "b", "c"), (1, 2, 4), None), "from 1 to 3, not 4"),
        (TableResult((), (), None), "at least one seat"),
    ],
)
def test_games_whose_seats_do_not_fit_are_refused(game: TableResult, message: str) -> None:
    with pytest.raises(RatingError, match=message):
        rate([game])


def test_reports_of_tables_show_mean_score_and_place() -> None:
    table_games = [
        three_seat("abc", (1, 2, 3), (47, 38, 30)),
        three_seat("cab", (2, 1, 3), (20, 41, 19)),
    ]
    table = rate(table_games)
    text = rendered(rating_table(table))
    assert "Mean score" in text and "Mean place" in text and "Plackett-Luce fit" in text
    assert "μ-3σ" in text
    b = next(line for line in text.splitlines() if " b " in line)
    assert " 28.50 " in b and " 2.50 " in b and " 25.0 " in b
    row_b = table.player("b")
    assert f" {row_b.mu:.1f} " in b and f" {row_b.ordinal:.1f}" in b
    pairwise = rendered(rating_table(rate(table_games, method="pairwise")))
    assert "split into" in pairwise and "Plackett" not in pairwise
    document = json.loads(to_json(table))
    assert (document["kind"], document["method"]) == ("tables", "plackett-luce")
    assert document["openskill"]["model"] == "PlackettLuce"
    assert document["openskill"]["tau"] == pytest.approx(25 / 300)
    first = table.players[0]
    assert document["players"][0]["mu"] == round(first.mu, 3)
    assert document["players"][0]["ordinal"] == round(first.mu - 3 * first.sigma, 3)
    assert document["players"][0]["mean_score"] == 44.0
    assert document["players"][0]["mean_place"] == 1.0
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert rows[0]["mean_score"] == "44.0" and rows[0]["games"] == "2"
    assert float(rows[0]["sigma"]) == round(first.sigma, 3)
    grid = rendered(crosstable(table))
    assert "2/2" in next(line for line in grid.splitlines() if " a " in line)


def test_reports_of_solo_games_rank_by_mean_score_without_elo() -> None:
    table = rate([TableResult(("a",), (1,), (40,)), TableResult(("b",), (1,), (55,))])
    text = rendered(rating_table(table))
    assert "±" not in text and "55.00" in text and "no Elo" in text
    document = json.loads(to_json(table))
    assert (document["players"][0]["name"], document["players"][0]["elo"]) == ("b", None)
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert (rows[0]["elo"], rows[0]["error"], rows[0]["mean_score"]) == ("", "", "55.0")


# --- the two-player match helper -----------------------------------------------------


def test_match_of_seven_out_of_ten() -> None:
    match = elo_difference(7, 0, 3)
    assert match.elo == pytest.approx(-400 * math.log10(1 / 0.7 - 1))
    assert match.elo == pytest.approx(147.2, abs=0.05)
    half_width = 1.959964 * math.sqrt(0.7 * 0.3 / 10)
    assert match.low == pytest.approx(elo_from_score(0.7 - half_width), rel=1e-5)
    assert match.high == pytest.approx(elo_from_score(0.7 + half_width), rel=1e-5)
    assert match.margin == pytest.approx((match.high - match.low) / 2)
    assert match.los == pytest.approx(normal_cdf(4 / math.sqrt(10)))
    assert (match.games, match.score, match.virtual_draw) == (10, 7, False)


def test_match_draws_narrow_the_interval() -> None:
    with_draws = elo_difference(3, 4, 1)
    assert with_draws.elo == pytest.approx(elo_from_score(5 / 8))
    variance = (3 * (1 - 5 / 8) ** 2 + 4 * (0.5 - 5 / 8) ** 2 + 1 * (5 / 8) ** 2) / 8
    assert with_draws.high == pytest.approx(
        elo_from_score(5 / 8 + 1.959964 * math.sqrt(variance / 8)), rel=1e-5
    )
    assert with_draws.margin < elo_difference(5, 0, 3).margin


def test_match_with_a_perfect_score_is_finite_with_an_open_side() -> None:
    sweep = elo_difference(10, 0, 0)
    assert sweep.virtual_draw
    assert sweep.elo == pytest.approx(elo_from_score(10.5 / 11))
    assert math.isfinite(sweep.low) and sweep.low > 0
    assert sweep.high == math.inf
    wiped = elo_difference(0, 0, 10)
    assert wiped.elo == pytest.approx(-sweep.elo)
    assert wiped.low == -math.inf
    assert sweep.elo > elo_difference(9, 1, 0).elo


def test_match_edge_cases() -> None:
    assert elo_difference(5, 0, 5).elo == 0
    assert elo_difference(5, 0, 5).los == 0.5
    nothing = elo_difference(0, 0, 0)
    assert (nothing.elo, nothing.low, nothing.high) == (0, -math.inf, math.inf)
    with pytest.raises(RatingError, match="cannot be negative"):
        elo_difference(-1, 0, 2)


# --- reports ---------------------------------------------------------------------

REPORTED = [
    *games("ace", "bob", 1, 0.5),
    *games("bob", "cat", 1, 0),
    *games("cat", "ace", 0.5, 1),
]


def rendered(renderable: object) -> str:
    """What rich prints for ``renderable`` on a wide plain console."""
    console = Console(width=160, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def test_json_report_has_players_best_first_and_the_crosstable() -> None:
    table = rate(REPORTED)
    document = json.loads(to_json(table))
    assert [p["name"] for p in document["players"]] == [r.name for r in table.players]
    first = document["players"][0]
    assert set(first) >= {"name", "elo", "error", "games", "wins", "draws", "losses", "score"}
    assert first["score_percent"] == pytest.approx(table.players[0].score_percent, abs=0.05)
    assert first["elo"] == pytest.approx(table.players[0].elo, abs=0.05)
    assert document["players"][-1]["los_next"] is None
    assert document["crosstable"]["ace"]["bob"] == {
        "games": 2,
        "wins": 1,
        "draws": 1,
        "losses": 0,
        "score": 1.5,
    }
    assert document["crosstable"]["bob"]["ace"]["score"] == 0.5
    assert (document["anchor"], document["virtual_draws"]) == (None, False)


def test_csv_report_has_a_header_and_one_row_per_player() -> None:
    table = rate(REPORTED, anchor="bob", anchor_elo=1200)
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert list(rows[0]) == list(COLUMNS)
    assert [row["name"] for row in rows] == [r.name for r in table.players]
    assert float(next(row for row in rows if row["name"] == "bob")["elo"]) == 1200
    assert rows[-1]["los_next"] == ""
    assert sum(float(row["score"]) for row in rows) == len(REPORTED)


def test_rich_rating_table_and_crosstable() -> None:
    table = rate([*REPORTED, *games("ace", "dan", 1)])
    text = rendered(rating_table(table, title="Ratings"))
    assert "LOS" in text and "virtual draw" in text
    ace = next(line for line in text.splitlines() if " ace " in line)
    assert f"{table.player('ace').elo:+.0f}" in ace and " 60.0 " in ace
    grid = rendered(crosstable(table))
    ace_row = next(line for line in grid.splitlines() if " ace " in line)
    assert "1½/2" in ace_row and "·" in ace_row and "3/5" in ace_row


def test_points_and_match_lines_read_like_chess() -> None:
    assert [format_points(x) for x in (0, 0.5, 1, 7.5)] == ["0", "½", "1", "7½"]
    assert describe_elo_difference(elo_difference(7, 0, 3)) == (
        "Elo difference: 147.2 +/- 387.4, LOS: 89.7 %, DrawRatio: 0.0 %"
    )
    sweep = describe_elo_difference(elo_difference(4, 0, 0))
    assert sweep == "Elo difference: inf +/- nan, LOS: 97.7 %, DrawRatio: 0.0 %"


# --- ratings of a PGN file ---------------------------------------------------------------


def _pgn(*games_: tuple[str, str, str], movetext: str = "1. e4 e5") -> str:
    """A PGN text of ``(white, black, result)`` games, written the way other tools do."""
    return "".join(
        f'[Event "x"]\n[White "{w}"]\n[Black "{b}"]\n[Result "{r}"]\n\n{movetext} {r}\n\n'
        for w, b, r in games_
    )


def test_every_finished_game_of_any_pgn_is_rated(tmp_path) -> None:
    from tournaments.runner import ratings_for_pgn

    chess_movetext = '1. e4 (1. d4 d5) e5 $1 2. Nf3 {[White "not a game"]} Nc6 3. Bc4 Nf6 4. 0-0'
    path = tmp_path / "games.pgn"
    path.write_text(
        _pgn(("ann", "bea", "1-0"), ("bea", "cid", "1/2-1/2"), movetext=chess_movetext)
        + _pgn(("cid", "ann", "0-1"), ("ann", "cid", "*"))
    )
    rated = ratings_for_pgn(path)
    assert rated.games == 3
    assert rated.warnings == ("left out 1 unfinished game (*)",)
    expected_table = rate([("ann", "bea", 1), ("bea", "cid", 0.5), ("cid", "ann", 0)])
    assert rated.table == expected_table


def test_skipped_games_are_named_a_few_at_a_time(tmp_path) -> None:
    from tournaments.runner import PGN_WARNINGS_SHOWN, ratings_for_pgn

    path = tmp_path / "games.pgn"
    nameless = [("?", "bea", "1-0")] * (PGN_WARNINGS_SHOWN + 5)
    path.write_text(
        _pgn(("ann", "bea", "1-0"), *nameless, ("ann", "ann", "1-0"), ("a", "b", "2-0"))
    )
    rated = ratings_for_pgn(path)
    assert rated.games == 1
    assert len(rated.warnings) == PGN_WARNINGS_SHOWN + 1
    assert rated.warnings[0] == "skipped game 2: it does not name both players"
    assert rated.warnings[-1] == "skipped 7 more games"


def test_names_from_a_pgn_are_made_printable(tmp_path) -> None:
    from tournaments.runner import ratings_for_pgn

    path = tmp_path / "games.pgn"
    path.write_text(_pgn(("\x1b[31mred\x1b[0m", "[bold]b[/bold]", "1-0")))
    table = ratings_for_pgn(path).table
    assert [row.name for row in table.players] == ["red", "[bold]b[/bold]"]
    shown = rendered(rating_table(table)) + rendered(crosstable(table))
    assert "[bold]b[/bold]" in shown and "\x1b" not in shown


def test_a_pgn_without_finished_games_cannot_be_rated(tmp_path) -> None:
    from tournaments.runner import ratings_for_pgn

    path = tmp_path / "games.pgn"
    path.write_text(_pgn(("ann", "bea", "*")))
    with pytest.raises(RefereeError, match="holds no finished games to rate"):
        ratings_for_pgn(path, anchor="zed")
    with pytest.raises(RefereeError, match="cannot read"):
        ratings_for_pgn(tmp_path / "missing.pgn")


def test_a_pgn_of_games_of_any_seat_count_is_rated_by_its_tags(tmp_path) -> None:
    from tournaments.runner import ratings_for_pgn

    def game(result: str, *players: str, scores: str | None = None) -> str:
        tags = [
            f'[Seat{seat}"{name}"]'.replace('"', ' "', 1) for seat, name in enumerate(players, 1)
        ]
        if len(players) == 2:
            tags = [f'[White "{players[0]}"]', f'[Black "{players[1]}"]', *tags]
        if scores is not None:
            tags.append(f'[Scores "{scores}"]')
        return (
            "\n".join(['[Event "x"]', f'[Result "{result}"]', *tags]) + f"\n\n1. s1:a {result}\n\n"
        )

    path = tmp_path / "tables.pgn"
    path.write_text(
        game("2-1-3", "ann", "bea", "cid", scores="30-47-20")
        + game("1-1-3", "cid", "ann", "bea", scores="40-40-10")
        + game("0-1", "ann", "bea", scores="12-30")
        + game("1-2-3", "ann", "bea", "cid")
        + game("47", "ann")
        + game("1-2", "ann", "bea", "cid")
        + game("2-1-3", "ann", "?", "cid")
        + game("*", "ann", "bea", "cid")
    )
    rated = ratings_for_pgn(path)
    assert rated.games == 5
    assert rated.warnings == (
        "skipped game 6: its Result tag '1-2' is not a result",
        "skipped game 7: it does not name all its players",
        "left out 1 unfinished game (*)",
    )
    expected_table = rate(
        [
            TableResult(("ann", "bea", "cid"), (2, 1, 3), (30, 47, 20)),
            TableResult(("cid", "ann", "bea"), (1, 1, 3), (40, 40, 10)),
            TableResult(("ann", "bea"), (2, 1), (12, 30)),
            TableResult(("ann", "bea", "cid"), (1, 2, 3), None),
            TableResult(("ann",), (1,), (47,)),
        ]
    )
    assert rated.table == expected_table
    ann = rated.table.player("ann")
    assert (ann.games, ann.mean_score, ann.mean_place) == (5, (30 + 40 + 12 + 47) / 4, 7 / 5)
    assert rated.table.kind == "tables"


def test_a_pgn_of_solo_games_ranks_by_mean_score(tmp_path) -> None:
    from tournaments.runner import ratings_for_pgn

    path = tmp_path / "solo.pgn"
    path.write_text(
        "".join(
            f'[Event "x"]\n[Seat1 "{name}"]\n[Result "{score}"]\n\n1. s1:a {score}\n\n'
            for name, score in (("ann", 40), ("bea", 52), ("ann", 50))
        )
    )
    table = ratings_for_pgn(path).table
    assert table.kind == "solo"
    assert [(row.name, row.mean_score, row.elo) for row in table.players] == [
        ("bea", 52, None),
        ("ann", 45, None),
    ]


def test_a_pgn_game_whose_scores_cannot_be_used_is_skipped(tmp_path) -> None:
    from referee.untrusted import clip
    from tournaments.runner import ratings_for_pgn

    def game(scores: str) -> str:
        tags = '[Seat1 "ann"]\n[Seat2 "bea"]\n[Seat3 "cid"]\n[Result "1-2-3"]'
        return f'[Event "x"]\n{tags}\n[Scores "{scores}"]\n\n1. s1:a 1-2-3\n\n'

    huge = "9" * 309  # a float too big: infinite, which would make every mean infinite
    path = tmp_path / "scores.pgn"
    path.write_text(game("30-20-10") + game(f"{huge}-1-0") + game("30-20") + game("3e1-2-1"))
    rated = ratings_for_pgn(path)
    assert rated.games == 1
    shown = clip(f"{huge}-1-0", 40)
    assert rated.warnings == (
        f"skipped game 2: its Scores tag {shown!r} is not one finite number per seat",
        "skipped game 3: its Scores tag '30-20' is not one finite number per seat",
        "skipped game 4: its Scores tag '3e1-2-1' is not one finite number per seat",
    )
    ann = rated.table.player("ann")
    assert (ann.games, ann.mean_score) == (1, 30)
