"""Ratings: hand-computed tables, perfect scores, anchors, LOS, the match helper, reports."""

from __future__ import annotations

import csv
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
    Encounter,
    RatingError,
    RatingTable,
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
    assert describe_elo_difference(elo_difference(7, 0, 3)).startswith("+147.2 [-58.9, +715.8]")
    assert "+∞]" in describe_elo_difference(elo_difference(4, 0, 0))


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
