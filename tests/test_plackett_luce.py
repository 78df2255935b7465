"""The Plackett–Luce fit against independent solvers, its two-seat case, OpenSkill beside it."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import choix
import numpy
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cli import main
from tournaments.openskill_ratings import SETTINGS, OpenSkillRatings
from tournaments.ratings import METHODS, RatingError, TableResult, rate

ELO_PER_UNIT = 400 / math.log(10)
Z95 = 1.959963984540054


def strengths(table) -> dict[str, float]:
    """Each player's fitted log-strength (natural units), centred."""
    values = {row.name: row.elo / ELO_PER_UNIT for row in table.players}
    mean = sum(values.values()) / len(values)
    return {name: value - mean for name, value in values.items()}


def random_rankings(rng: random.Random, players: int, seats: int, tables: int) -> list[list[int]]:
    """Tables of ``seats`` players drawn from ``players``, ranked by Plackett–Luce (Gumbel
    noise on strengths spread over ±1), best first."""
    truth = [2 * i / (players - 1) - 1 for i in range(players)]
    rankings = []
    for _ in range(tables):
        seated = rng.sample(range(players), seats)
        noisy = {p: truth[p] - math.log(-math.log(rng.random())) for p in seated}
        rankings.append(sorted(seated, key=lambda p: -noisy[p]))
    return rankings


def as_results(rankings: list[list[int]]) -> list[TableResult]:
    """Rankings (best first) as tables in a shuffled seat order."""
    results = []
    for number, ranking in enumerate(rankings):
        seats = ranking[number % len(ranking) :] + ranking[: number % len(ranking)]
        places = tuple(ranking.index(p) + 1 for p in seats)
        results.append(TableResult(tuple(f"p{p:02d}" for p in seats), places, None))
    return results


@pytest.mark.parametrize(("seats", "seed"), [(3, 1), (4, 2), (5, 3), (4, 4)])
def test_tie_free_rankings_agree_with_choix(seats: int, seed: int) -> None:
    rng = random.Random(seed)
    rankings = random_rankings(rng, players=9, seats=seats, tables=120)
    table = rate(as_results(rankings))
    assert not table.virtual_draws and table.method == "plackett-luce"
    # choix's ML estimate (I-LSR without regularisation), centred as ours are.
    theirs = choix.ilsr_rankings(
        9, [tuple(r) for r in rankings], alpha=0.0, tol=1e-13, max_iter=10_000
    )
    theirs = theirs - theirs.mean()
    ours = strengths(table)
    for player in range(9):
        assert ours[f"p{player:02d}"] == pytest.approx(theirs[player], abs=1e-6)


# --- a brute-force maximiser for rankings with ties ------------------------------------


def log_likelihood_by_orders(s: dict[str, float], games: list[TableResult]) -> float:
    """The tie model from its definition: the mean, over every strict order that breaks a
    table's ties, of the Plackett–Luce log-probability of that order."""
    total = 0.0
    for game in games:
        orders = [
            order
            for order in itertools.permutations(game.players)
            if all(
                game.places[game.players.index(a)] <= game.places[game.players.index(b)]
                for a, b in itertools.pairwise(order)
            )
        ]
        for order in orders:
            for first in range(len(order) - 1):
                rest = order[first:]
                total += (s[order[first]] - math.log(sum(math.exp(s[p]) for p in rest))) / len(
                    orders
                )
    return total


def brute_force_maximum(games: list[TableResult], names: list[str]) -> dict[str, float]:
    """Strengths summing to 0 that maximise :func:`log_likelihood_by_orders`, by a grid
    search that zooms in on its best point (the likelihood is concave)."""
    free = len(names) - 1
    centre, width = [0.0] * free, 4.0
    for _ in range(60):
        steps = [centre[k] + width * (i / 5 - 1) for k in range(free) for i in range(11)]
        grid = itertools.product(*(steps[11 * k : 11 * (k + 1)] for k in range(free)))

        def value(point: tuple[float, ...]) -> float:
            s = dict(zip(names, [*point, -sum(point)], strict=True))
            return log_likelihood_by_orders(s, games)

        centre = list(max(grid, key=value))
        width /= 3
    return dict(zip(names, [*centre, -sum(centre)], strict=True))


def game(players: str, places: tuple[int, ...]) -> TableResult:
    return TableResult(tuple(players), places, None)


TIED_CASES = [
    # three players: a tie for first, a tie for last, a three-way tie, strict rankings
    [
        *(game("abc", (1, 1, 3)), game("bca", (1, 2, 2)), game("cab", (1, 2, 3))),
        *(game("abc", (3, 1, 2)), game("abc", (1, 1, 1)), game("cba", (2, 1, 3))),
    ],
    # two-seat draws and a three-seat table together
    [
        *(game("ab", (1, 1)), game("ab", (1, 2)), game("bc", (2, 1))),
        *(game("abc", (2, 2, 1)), game("ca", (1, 1)), game("abc", (1, 3, 2))),
    ],
    # four players, with a two-way tie in the middle
    [
        *(game("abcd", (1, 2, 2, 4)), game("dcba", (1, 2, 3, 4)), game("bdac", (1, 1, 3, 3))),
        *(game("acbd", (2, 1, 4, 3)), game("dabc", (1, 2, 2, 2))),
    ],
]


@pytest.mark.parametrize("games", TIED_CASES)
def test_rankings_with_ties_agree_with_a_brute_force_maximum(games: list[TableResult]) -> None:
    table = rate(games)
    assert not table.virtual_draws
    names = sorted(strengths(table))
    best = brute_force_maximum(games, names)
    ours = strengths(table)
    for name in names:
        assert ours[name] == pytest.approx(best[name], abs=1e-6)


def test_error_bars_are_the_inverse_curvature_of_the_likelihood() -> None:
    # Three players: the variance of a's rating (relative to the mean) from a numerical
    # Hessian of the likelihood on the plane of strengths summing to 0.
    games = TIED_CASES[0]
    table = rate(games)
    s = strengths(table)
    h = 1e-4
    # Coordinates (x, y) with s = s* + x·u + y·v, u and v an orthonormal basis of the plane.
    u = numpy.array([1, -1, 0]) / math.sqrt(2)
    v = numpy.array([1, 1, -2]) / math.sqrt(6)
    names = ["a", "b", "c"]

    def f(x: float, y: float) -> float:
        point = numpy.array([s[n] for n in names]) + x * u + y * v
        return log_likelihood_by_orders(dict(zip(names, point, strict=True)), games)

    hessian = numpy.array(
        [
            [(f(h, 0) - 2 * f(0, 0) + f(-h, 0)) / h**2, 0.0],
            [0.0, (f(0, h) - 2 * f(0, 0) + f(0, -h)) / h**2],
        ]
    )
    hessian[0, 1] = hessian[1, 0] = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h**2)
    basis = numpy.stack([u, v], axis=1)
    covariance = basis @ numpy.linalg.inv(-hessian) @ basis.T
    for number, name in enumerate(names):
        expected = Z95 * ELO_PER_UNIT * math.sqrt(covariance[number, number])
        assert table.player(name).error == pytest.approx(expected, rel=1e-4)


# --- two seats: the same as Bradley–Terry (= Ordo) ---------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abcde"), st.sampled_from("abcde"), st.sampled_from([0, 0.5, 1])),
        min_size=1,
        max_size=30,
    ).map(lambda games: [(w, b, s) for w, b, s in games if w != b])
)
def test_two_seat_games_are_rated_the_same_by_both_methods_to_the_bit(games) -> None:
    plackett_luce, pairwise = (rate(games, method=method) for method in METHODS)
    assert plackett_luce.players == pairwise.players
    assert plackett_luce.virtual_draws == pairwise.virtual_draws


def test_a_table_winner_every_time_is_finite_first_with_virtual_draws() -> None:
    games = [game("abcd", (1, 2, 3, 4)), game("bacd", (2, 1, 4, 3)), game("cdab", (3, 4, 1, 2))]
    table = rate(games)
    assert table.virtual_draws and table.players[0].name == "a"
    assert all(math.isfinite(row.elo) for row in table.players)
    # The plain estimate exists once a is beaten: no virtual draws then.
    assert not rate([*games, game("ab", (2, 1)), game("ca", (1, 2))]).virtual_draws


def test_ties_of_more_seats_than_the_fit_takes_are_refused() -> None:
    players = tuple(f"p{i}" for i in range(13))
    with pytest.raises(RatingError, match=r"a tie of 13 seats .*pairwise method"):
        rate([TableResult(players, (1,) * 13, None)])
    assert rate([TableResult(players, (1,) * 13, None)], method="pairwise").kind == "tables"
    with pytest.raises(RatingError, match="unknown rating method 'elo'"):
        rate([], method="elo")  # type: ignore[arg-type]


# --- OpenSkill -------------------------------------------------------------------------


def test_openskill_ratings_follow_the_library_game_by_game() -> None:
    games = [game("abc", (1, 2, 3)), game("cab", (1, 1, 3)), game("bc", (2, 1)), game("a", (1,))]
    table = rate(games, players=["idle"])
    model = SETTINGS.model()
    ratings = {name: model.rating() for name in "abc"}
    for played in games[:3]:
        teams = [[ratings[name]] for name in played.players]
        updated = model.rate(teams, ranks=[float(place) for place in played.places])
        for name, (rating,) in zip(played.players, updated, strict=True):
            ratings[name] = rating
    for name in "abc":
        row = table.player(name)
        assert (row.mu, row.sigma) == (ratings[name].mu, ratings[name].sigma)
        assert row.ordinal == pytest.approx(ratings[name].ordinal())
    idle = table.player("idle")
    assert (idle.mu, idle.sigma) == (25.0, 25.0 / 3.0)
    assert table.openskill == SETTINGS


def test_openskill_ties_share_the_change_and_the_order_of_games_matters() -> None:
    skill = OpenSkillRatings()
    skill.add(("a", "b", "c"), (1, 1, 3))
    assert skill.skill("a") == skill.skill("b") and skill.skill("a").mu > skill.skill("c").mu
    games = [game("ab", (1, 2)), game("ab", (2, 1)), game("ab", (2, 1))]
    forward, backward = rate(games), rate(games[::-1])
    assert forward.player("a").elo == backward.player("a").elo
    assert forward.player("a").mu != backward.player("a").mu


def test_the_settings_are_pinned_in_the_json_report(tmp_path) -> None:
    path = tmp_path / "tables.pgn"
    path.write_text(
        "".join(
            f'[Event "x"]\n[Seat1 "ann"]\n[Seat2 "bea"]\n[Seat3 "cid"]\n[Result "{result}"]\n\n'
            f"1. s1:a {result}\n\n"
            for result in ("1-2-3", "2-1-3", "3-2-1", "1-1-3")
        )
    )
    runner = CliRunner()
    default = json.loads(runner.invoke(main, ["ratings", str(path), "--json"]).output)
    assert default["method"] == "plackett-luce"
    assert default["openskill"] == {
        "library": "openskill",
        "version": default["openskill"]["version"],
        "model": "PlackettLuce",
        "mu": 25.0,
        "sigma": 25 / 3,
        "beta": 25 / 6,
        "kappa": 0.0001,
        "tau": 25 / 300,
        "margin": 0.0,
        "limit_sigma": False,
        "balance": False,
    }
    assert {"mu", "sigma", "ordinal"} <= default["players"][0].keys()
    pairwise = runner.invoke(main, ["ratings", str(path), "--json", "--method", "pairwise"])
    assert pairwise.exit_code == 0 and json.loads(pairwise.output)["method"] == "pairwise"
    refused = runner.invoke(main, ["ratings", str(path), "--method", "elo"])
    assert refused.exit_code == 2 and "plackett-luce" in refused.output


def test_a_pgn_is_rated_in_the_order_of_its_game_numbers_when_each_game_has_one(tmp_path) -> None:
    from tournaments.runner import ratings_for_pgn

    results = ("1-2-3", "2-1-3", "3-2-1", "1-1-3", "2-3-1")

    def pgn(numbers: list[int | None], order: list[int]) -> Path:
        path = tmp_path / f"games-{len(list(tmp_path.iterdir()))}.pgn"
        games = []
        for position in order:
            number = numbers[position]
            tag = "" if number is None else f'[GameNumber "{number}"]\n'
            result = results[position]
            games.append(
                f'[Event "x"]\n{tag}[Seat1 "ann"]\n[Seat2 "bea"]\n[Seat3 "cid"]\n'
                f'[Result "{result}"]\n\n1. s1:a {result}\n\n'
            )
        path.write_text("".join(games))
        return path

    numbered = [1, 2, 3, 4, 5]
    in_order = ratings_for_pgn(pgn(numbered, [0, 1, 2, 3, 4])).table
    as_they_ended = ratings_for_pgn(pgn(numbered, [3, 0, 4, 2, 1])).table
    assert as_they_ended == in_order  # OpenSkill's μ and σ included
    # Without a number on every game (or with one twice), the file's order is the order.
    unnumbered = ratings_for_pgn(pgn([1, 2, None, 4, 5], [3, 0, 4, 2, 1])).table
    assert unnumbered.player("ann").mu != in_order.player("ann").mu
    assert unnumbered.player("ann").elo == in_order.player("ann").elo
