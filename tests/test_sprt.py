"""The SPRT and the Elo of a match: fastchess's reference numbers, an independent brute-force
maximum likelihood, the counts, the settings, and error rates by simulation."""

from __future__ import annotations

import functools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import RefereeError
from tournaments.sprt import (
    MODELS,
    NELO_PER_UNIT,
    Model,
    Pentanomial,
    Sprt,
    SprtError,
    Status,
    Trinomial,
    estimate,
)

# Reference numbers from fastchess (github.com/Disservin/fastchess, commit 74deac23aadc,
# app/tests/sprt_test.cpp and app/tests/elo_test.cpp). fastchess writes trinomial counts as
# Stats(wins, losses, draws) and pentanomial ones as Stats(LL, LD, WL, DD, WD, WW); a WL pair
# and a DD pair both score 1, so they are one count here. Its tests allow 1% (doctest's
# Approx(...).epsilon(0.01)); so do these.


def fastchess_trinomial(wins: int, losses: int, draws: int) -> Trinomial:
    return Trinomial(wins=wins, draws=draws, losses=losses)


def fastchess_pentanomial(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> Pentanomial:
    return Pentanomial((ll, ld, wl + dd, wd, ww))


FASTCHESS_LLR = [
    # (counts, elo0, elo1, model, LLR) — alpha = beta = 0.05 throughout
    (fastchess_trinomial(36433, 36027, 68692), 0, 2, "normalized", 0.92),
    (fastchess_trinomial(10871, 10650, 20431), -1.75, 0.25, "normalized", 2.30),
    (fastchess_trinomial(4250, 0, 0), 0, 10, "normalized", 120.56),
    (fastchess_trinomial(21404, 21184, 40708), 0.5, 2.5, "logistic", -1.57),
    (fastchess_trinomial(57433, 57030, 106593), 0, 2, "logistic", -2.59),
    (fastchess_pentanomial(365, 16618, 36029, 200, 16974, 390), 0, 2, "normalized", 2.25),
    (fastchess_pentanomial(127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
    (fastchess_pentanomial(0, 0, 0, 0, 0, 5550), 0, 5, "normalized", 111.82),
    (fastchess_pentanomial(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
    (fastchess_pentanomial(871, 26175, 55003, 980, 26678, 821), 0, 2, "logistic", -4.98),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "model", "expected"), FASTCHESS_LLR)
def test_llr_matches_fastchess(
    counts: Trinomial | Pentanomial, elo0: float, elo1: float, model: Model, expected: float
) -> None:
    sprt = Sprt(elo0=elo0, elo1=elo1, alpha=0.05, beta=0.05, model=model)
    assert sprt.llr(counts) == pytest.approx(expected, rel=0.01)


FASTCHESS_ELO = [
    # (counts, nElo, nElo ±, Elo, Elo ±, LOS %, score); None where fastchess's test has none
    (fastchess_trinomial(76, 89, 123), -20.76, 40.13, None, None, 15.53, 0.477),
    (fastchess_trinomial(136, 96, 111), 49.77, 36.77, 40.70, 30.43, 99.60, 0.558),
    (fastchess_trinomial(34, 356, 0), -508.44, 34.48, None, None, None, 0.087),
    (fastchess_pentanomial(34, 54, 31, 32, 64, 75), 57.94, 28.28, 55.58, 27.65, 100.0, 0.579),
    (fastchess_pentanomial(332, 433, 457, 41, 333, 334), -9.17, 10.96, -8.64, 10.33, 5.05, 0.488),
    (
        fastchess_pentanomial(7895, 8757, 5485, 200, 568, 9999),
        *(-19.01, 2.65, -21.04, 2.95, 0.0, 0.47),
    ),
]


@pytest.mark.parametrize(
    ("counts", "nelo", "nelo_margin", "elo", "margin", "los", "score"), FASTCHESS_ELO
)
def test_elo_estimate_matches_fastchess(
    counts: Trinomial | Pentanomial,
    nelo: float,
    nelo_margin: float,
    elo: float | None,
    margin: float | None,
    los: float | None,
    score: float,
) -> None:
    result = estimate(counts)
    assert result.nelo == pytest.approx(nelo, rel=0.01)
    assert result.nelo_margin == pytest.approx(nelo_margin, rel=0.01)
    if elo is not None and margin is not None:
        assert result.elo == pytest.approx(elo, rel=0.01)
        assert result.margin == pytest.approx(margin, rel=0.01)
    if los is not None:
        assert f"{100 * result.los:.2f}" == f"{los:.2f}"  # fastchess prints "15.53 %"
    assert result.score == pytest.approx(score, rel=0.01)
    assert result.low < result.elo < result.high
    assert result.nelo_low < result.nelo < result.nelo_high


def test_bounds_are_walds() -> None:
    sprt = Sprt(elo0=0, elo1=5)
    assert (sprt.lower, sprt.upper) == (math.log(0.05 / 0.95), math.log(0.95 / 0.05))
    assert f"({sprt.lower:.2f}, {sprt.upper:.2f})" == "(-2.94, 2.94)"  # fastchess's getBounds
    asymmetric = Sprt(elo0=0, elo1=5, alpha=0.1, beta=0.02)
    assert asymmetric.lower == pytest.approx(math.log(0.02 / 0.9))
    assert asymmetric.upper == pytest.approx(math.log(0.98 / 0.1))


def test_status_at_and_between_the_bounds() -> None:
    sprt = Sprt(elo0=0, elo1=5)
    assert sprt.status(sprt.upper) is Status.H1
    assert sprt.status(sprt.lower) is Status.H0
    assert sprt.status(0.0) is Status.CONTINUE
    assert sprt.status(sprt.upper - 1e-9) is Status.CONTINUE
    assert Status.H1.finished and not Status.CONTINUE.finished
    assert Status.H0.describe() == "H0 accepted"


# --- an independent maximum likelihood ------------------------------------------------
#
# A trinomial distribution (pL, pD, pW) with a given property is one point of a curve;
# searching the curve (a fine grid, then golden sections) for the best likelihood gives the
# LLR's distributions without the secular equation or the fixed point the module uses.


def brute_closest(frequencies: list[float], constraint: str, value: float) -> list[float]:
    """The distribution (pL, pD, pW) of largest likelihood with mean score ``value``
    (``constraint == "mean"``) or with (mu - 1/2) / sigma == ``value`` (``"t"``)."""

    def point(x: float) -> list[float] | None:
        if constraint == "mean":  # x = pD; mean = pW + pD / 2
            pw = value - x / 2
        else:  # x = mu; sigma = (mu - 1/2) / t and sigma^2 = pW / 2 + mu / 2 - mu^2
            sigma = (x - 0.5) / value
            pw = 2 * (sigma * sigma - x / 2 + x * x)
            x = 2 * (x - pw)  # now pD
        p = [1 - pw - x, x, pw]
        return p if min(p) > 0 else None

    def likelihood(x: float) -> float:
        p = point(x)
        if p is None:
            return -math.inf
        return sum(f * math.log(q) for f, q in zip(frequencies, p, strict=True))

    if constraint == "mean":
        low, high = 0.0, 1.0
    else:
        low, high = (0.5, 1.0) if value > 0 else (0.0, 0.5)
    steps = 4000
    best = max((low + (high - low) * k / steps for k in range(1, steps)), key=likelihood)
    a, b = best - (high - low) / steps, best + (high - low) / steps
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(100):
        c, d = b - golden * (b - a), a + golden * (b - a)
        if likelihood(c) > likelihood(d):
            b = d
        else:
            a = c
    found = point((a + b) / 2)
    assert found is not None
    return found


def brute_llr(counts: Trinomial, sprt: Sprt) -> float:
    observed = [count if count else 1e-3 for count in counts.outcomes]  # fastchess's 0.001
    total = sum(observed)
    frequencies = [count / total for count in observed]
    if sprt.model == "logistic":
        p0, p1 = (
            brute_closest(frequencies, "mean", 1 / (1 + 10 ** (-elo / 400)))
            for elo in (sprt.elo0, sprt.elo1)
        )
    else:  # t = 0 is the mean score 1/2
        p0, p1 = (
            brute_closest(frequencies, "t", elo / NELO_PER_UNIT)
            if elo
            else brute_closest(frequencies, "mean", 0.5)
            for elo in (sprt.elo0, sprt.elo1)
        )
    return total * sum(f * math.log(b / a) for f, a, b in zip(frequencies, p0, p1, strict=True))


@settings(deadline=None, max_examples=40)
@given(
    counts=st.tuples(*[st.sampled_from([0, 1, 2, 3, 7, 40, 300, 2000])] * 3),
    elo0=st.sampled_from([-40, -5, 0, 1]),
    width=st.sampled_from([2, 5, 30]),
    model=st.sampled_from(MODELS),
)
def test_llr_is_the_constrained_maximum_likelihood(
    counts: tuple[int, int, int], elo0: float, width: float, model: Model
) -> None:
    """Empty outcomes included: where the fixed point circles, the module's own search must
    still find the best distribution."""
    wins, draws, losses = counts
    sprt = Sprt(elo0=elo0, elo1=elo0 + width, model=model)
    trinomial = Trinomial(wins, draws, losses)
    total = sum(count or 1e-3 for count in counts)
    assert sprt.llr(trinomial) == pytest.approx(brute_llr(trinomial, sprt), abs=1e-6 * total)


@settings(deadline=None, max_examples=60)
@given(
    outcomes=st.lists(st.integers(min_value=0, max_value=60), min_size=5, max_size=5),
    elo0=st.integers(min_value=-60, max_value=60),
    width=st.integers(min_value=1, max_value=40),
    model=st.sampled_from(MODELS),
    pairs=st.booleans(),
)
def test_mirrored_results_mirror_the_llr(
    outcomes: list[int], elo0: int, width: int, model: Model, pairs: bool
) -> None:
    """The other player's side: outcomes reversed, H0 and H1 negated and swapped."""
    sprt = Sprt(elo0=elo0, elo1=elo0 + width, model=model)
    mirror = Sprt(elo0=-sprt.elo1, elo1=-sprt.elo0, model=sprt.model)
    counts: Trinomial | Pentanomial
    if pairs:
        counts = Pentanomial((outcomes[0], outcomes[1], outcomes[2], outcomes[3], outcomes[4]))
        mirrored: Trinomial | Pentanomial = Pentanomial(
            (outcomes[4], outcomes[3], outcomes[2], outcomes[1], outcomes[0])
        )
    else:
        counts = Trinomial(outcomes[0], outcomes[1], outcomes[2])
        mirrored = Trinomial(outcomes[2], outcomes[1], outcomes[0])
    llr = sprt.llr(counts)
    assert math.isfinite(llr)
    assert mirror.llr(mirrored) == pytest.approx(-llr, abs=1e-7 * (1 + abs(llr)))


# --- counts, estimates and reports ----------------------------------------------------


def test_counts_from_scores() -> None:
    scores = [1, 0.5, 0, 1, 1, 0.5, 0]
    assert Trinomial.from_scores(scores) == Trinomial(wins=3, draws=2, losses=2)
    # Pairs (1, ½), (0, 1), (1, ½) score 1½, 1, 1½; the last game has no partner.
    assert Pentanomial.from_scores(scores) == Pentanomial((0, 0, 1, 2, 0))
    assert Pentanomial().plus(0, 0).plus(1, 1).plus(0.5, 0.5) == Pentanomial((1, 0, 1, 0, 1))
    assert Trinomial().plus(0.5).plus(1) == Trinomial(wins=1, draws=1, losses=0)
    penta = Pentanomial((1, 2, 3, 4, 5))
    assert (penta.pairs, penta.games, penta.score) == (15, 30, (2 + 6 + 12 + 20) / 2)
    assert str(penta) == "[1, 2, 3, 4, 5]"


@pytest.mark.parametrize("bad", [0.25, 2, -1, math.nan])
def test_a_game_scores_one_half_or_nothing(bad: float) -> None:
    with pytest.raises(SprtError):
        Trinomial().plus(bad)
    with pytest.raises(SprtError):
        Pentanomial().plus(1, bad)


def test_negative_counts_are_refused() -> None:
    with pytest.raises(SprtError):
        Trinomial(wins=-1)
    with pytest.raises(SprtError):
        Pentanomial((0, 0, -1, 0, 0))


def test_estimate_without_results_or_spread() -> None:
    empty = estimate(Pentanomial())
    assert (empty.samples, empty.score, empty.elo, empty.los) == (0, 0.5, 0.0, 0.5)
    assert (empty.low, empty.high) == (-math.inf, math.inf)
    draws = estimate(Trinomial(draws=10))
    assert (draws.elo, draws.low, draws.high, draws.nelo, draws.margin) == (0, 0, 0, 0, 0)
    wins = estimate(Trinomial(wins=10))
    assert wins.elo == math.inf and wins.nelo == math.inf and wins.los == 1.0


def test_pairs_count_their_variance_not_their_games() -> None:
    """Two games of one opening correlate; the pentanomial sees it, the trinomial cannot. Pairs
    that split (one win, one loss) are less uncertain than the same games as singles."""
    split = Pentanomial((0, 0, 50, 0, 0))  # 50 pairs of a win and a loss
    singles = Trinomial(wins=50, losses=50)
    assert estimate(split).margin < estimate(singles).margin
    assert estimate(split).score == estimate(singles).score == 0.5


def test_report_line() -> None:
    sprt = Sprt(elo0=0, elo1=5)
    report = sprt.test(Pentanomial((3, 40, 100, 50, 7)))
    assert report.status is Status.CONTINUE
    assert report.progress == pytest.approx(report.llr / sprt.upper)
    line = report.line()
    assert "\n" not in line
    assert line.startswith(f"LLR {report.llr:.2f} (")
    assert "(-2.94, 2.94) [0, 5] normalized: continue;" in line
    assert f"Elo {report.estimate.elo:+.1f} ±{report.estimate.margin:.1f}" in line
    assert line.endswith("400 games, Ptnml(0-2) [3, 40, 100, 50, 7]")
    single = Sprt(elo0=0, elo1=5, model="logistic").test(Trinomial(wins=600, losses=200))
    assert single.status is Status.H1 and "H1 accepted" in single.line()
    assert single.line().endswith("800 games, W-L-D +600 -200 =0")


# --- settings ---------------------------------------------------------------------------


def test_parse_reads_key_value_words() -> None:
    assert Sprt.parse("elo0=0 elo1=5 alpha=0.05 beta=0.05") == Sprt(0, 5, 0.05, 0.05)
    assert Sprt.parse(["elo1=2.5", "elo0=-1", "model=logistic"]) == Sprt(-1, 2.5, model="logistic")
    sprt = Sprt(-1.75, 0.25, alpha=0.1, beta=0.2, model="logistic")
    assert str(sprt) == "elo0=-1.75 elo1=0.25 alpha=0.1 beta=0.2 model=logistic"
    assert Sprt.parse(str(sprt)) == sprt
    precise = Sprt(1 / 3, 2.123456789, alpha=0.0123456789)
    assert Sprt.parse(str(precise)) == precise


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("elo0=0", "needs elo1"),
        ("elo0=0 elo1=5 gamma=1", "unknown SPRT setting 'gamma'"),
        ("elo0=0 elo1=five", "elo1 must be a number"),
        ("elo0=0 elo1", "key=value"),
        ("elo0=0 elo0=1 elo1=5", "given twice"),
        ("elo0=5 elo1=5", "less than elo1"),
        ("elo0=0 elo1=5 alpha=0", "between 0 and 1"),
        ("elo0=0 elo1=5 beta=1.5", "between 0 and 1"),
        ("elo0=0 elo1=5 alpha=0.6 beta=0.5", "less than 1"),
        ("elo0=0 elo1=nan", "finite"),
        ("elo0=0 elo1=5000", "between -1000 and 1000"),
        ("elo0=0 elo1=5 model=bayesian", "unknown SPRT model"),
    ],
)
def test_parse_refuses_bad_settings(words: str, message: str) -> None:
    with pytest.raises(SprtError, match=message) as caught:
        Sprt.parse(words)
    assert isinstance(caught.value, RefereeError)


# --- error rates by simulation -------------------------------------------------------


def game_distribution(sprt: Sprt, elo: float, draws: float) -> tuple[float, float]:
    """(P(loss), P(loss or draw)) of a game with draw rate ``draws`` whose Elo in the SPRT's
    model is ``elo``."""
    if sprt.model == "logistic":
        score = 1 / (1 + 10 ** (-elo / 400))
    else:  # solve (s - 1/2) / sigma = t, sigma^2 = s - s^2 - draws / 4, by bisection
        t, low, high = elo / NELO_PER_UNIT, draws / 2, 1 - draws / 2
        for _ in range(100):
            middle = (low + high) / 2
            if (middle - 0.5) / math.sqrt(middle - middle * middle - draws / 4) < t:
                low = middle
            else:
                high = middle
        score = (low + high) / 2
    losses = 1 - score - draws / 2
    return losses, losses + draws


@pytest.mark.parametrize(
    ("sprt", "pairs", "runs"),
    [
        (Sprt(elo0=0, elo1=40, alpha=0.05, beta=0.05, model="logistic"), False, 400),
        (Sprt(elo0=0, elo1=60, alpha=0.1, beta=0.05, model="normalized"), True, 300),
    ],
)
def test_error_rates_come_out_at_alpha_and_beta(sprt: Sprt, pairs: bool, runs: int) -> None:
    """Many seeded SPRTs on games simulated at exactly elo0, then at exactly elo1 (in the
    test's model; pairs are two independent games): H1 must be accepted in about ``alpha``
    of the first runs and H0 in about ``beta`` of the others — within three standard
    deviations of the binomial. (Wald's bounds are approximate: overshoot makes the true
    rates a little lower, about 0.045 for 0.05 here; 3000 runs show it, 300 cannot.)"""
    rng = random.Random(13)
    llr = functools.lru_cache(maxsize=None)(sprt.llr)  # counts recur across runs
    for truth, elo, wrong, nominal in (
        ("H0", sprt.elo0, Status.H1, sprt.alpha),
        ("H1", sprt.elo1, Status.H0, sprt.beta),
    ):
        cumulative = game_distribution(sprt, elo, draws=0.4)

        def game(cumulative: tuple[float, float] = cumulative) -> float:
            u = rng.random()
            return 0.0 if u < cumulative[0] else 0.5 if u < cumulative[1] else 1.0

        errors = 0
        for _ in range(runs):
            counts: Trinomial | Pentanomial = Pentanomial() if pairs else Trinomial()
            status = Status.CONTINUE
            while not status.finished:
                if isinstance(counts, Pentanomial):
                    counts = counts.plus(game(), game())
                else:
                    counts = counts.plus(game())
                status = sprt.status(llr(counts))
            errors += status is wrong
        spread = 3 * math.sqrt(nominal * (1 - nominal) / runs)
        assert abs(errors / runs - nominal) <= spread, (truth, errors, runs)
