"""The sequential probability ratio test (SPRT) of engine testing, and the Elo of a match.

A match between a new version of a bot and an old one is a sequence of results;
the SPRT asks after each result whether they already say, with error rates
``alpha`` and ``beta``, that the Elo difference is ``elo0`` (hypothesis H0) or
``elo1`` (H1), and the match stops as soon as they do. This module computes it
as fastchess does (cutechess-cli's successor for engine testing): the same
bounds, models, counts and log-likelihood ratio, so the same results give the
same answer. Nothing here plays a game: callers add results to counts and ask.

Counts
    :class:`Trinomial` counts single games from the first player's side: wins,
    draws and losses, scores 1, ½ and 0. :class:`Pentanomial` counts *game
    pairs* (one opening played once with each colour): how many pairs the first
    player scored 0, ½, 1, 1½ and 2 points in. Pairs are the better unit when a
    match is played from openings, because the two games of a pair are not
    independent (an opening may favour one colour); their counts give the right
    variance where games would understate or overstate it.

Bounds
    ``lower = ln(beta / (1 - alpha))`` and ``upper = ln((1 - beta) / alpha)``
    (Wald's). H1 is accepted when the LLR reaches ``upper``, H0 when it falls to
    ``lower``; in between the test goes on.

Log-likelihood ratio (the generalised SPRT)
    The results are a sample of a distribution over the outcome scores ``a_i``
    (0, ½, 1 for games; 0, ¼, ½, ¾, 1 for pairs, in points per game). With
    ``N`` outcomes and empirical frequencies ``p̂_i``, the LLR is
    ``N · Σ p̂_i · ln(p1_i / p0_i)``, where ``p0`` and ``p1`` are the
    distributions of maximum likelihood (closest to ``p̂`` in Kullback–Leibler
    divergence) among those whose Elo is ``elo0`` and ``elo1``. An empty count
    is taken as 0.001 (as fastchess does), so that the LLR is finite from the
    first result on.

    - Logistic Elo (``model="logistic"``): the Elo of a distribution is that of
      its mean score ``s`` on the logistic curve, ``s = 1 / (1 + 10^(-elo/400))``.
      The closest distribution with mean ``s`` is ``p_i = p̂_i / (1 + θ (a_i - s))``
      with ``θ`` the root of ``Σ p̂_i (a_i - s) / (1 + θ (a_i - s)) = 0`` (Van den
      Bergh, "Comparing the approximations for the generalized log likelihood
      ratio of a multinomial distribution", proposition 1.1).
    - Normalised Elo (``model="normalized"``, the default, as in fastchess): the
      Elo of a distribution is ``t · 800 / ln 10`` with ``t = (s - ½) / σ`` its
      mean score's distance from ½ in standard deviations of one game; for pairs,
      ``σ`` is that of a pair's score times √2 (two games), so ``t`` of a pair is
      √2 times ``t`` of a game. Normalised Elo does not depend on the draw rate:
      it measures how fast a match tells the two players apart. The closest
      distribution with a given ``t`` is the fixed point of
      ``p_i = p̂_i / (1 + θ φ_i)``, ``φ_i = a_i - ½ - (t σ / 2)(1 + ((a_i - μ) / σ)²)``
      (``μ``, ``σ`` of the current ``p``; ``θ`` as above), iterated from ``p̂``
      (Van den Bergh, "Comments on normalized Elo", section 4.1).

Elo estimate (:func:`estimate`)
    The mean score ``s`` per game with its standard error ``se`` (from the
    per-game variance of the trinomial, or the per-pair variance of the
    pentanomial over the number of pairs); logistic Elo and its 95% interval are
    ``s`` and ``s ± 1.96 se`` mapped through ``elo = -400 log10(1/s - 1)``;
    normalised Elo is ``(s - ½) / σ · 800 / ln 10`` (``σ`` per game, as above)
    with the interval ``± 1.96 se / σ · 800 / ln 10``. The likelihood of
    superiority is ``Φ((s - ½) / se)``. These are fastchess's figures.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from referee.errors import RefereeError
from referee.tally import Tally
from tournaments.ratings import Z95, elo_from_score

Model = Literal["normalized", "logistic"]
"""The Elo model of an SPRT: normalised Elo (fastchess's default) or logistic Elo."""

MODELS: tuple[Model, ...] = get_args(Model)

NELO_PER_UNIT = 800 / math.log(10)
"""Normalised Elo per standard deviation of a game's score (about 347.4): near 0 and without
draws, one normalised Elo point is about one logistic Elo point."""

EMPTY_COUNT = 1e-3
"""What an outcome never seen counts as in the LLR (fastchess's regularisation)."""

MAX_ELO = 1000.0
"""The largest ``|elo0|`` and ``|elo1|`` accepted; beyond it, scores round to 0 or 1."""

TRINOMIAL_SCORES = (0.0, 0.5, 1.0)
"""The score per game of a loss, a draw and a win."""

PENTANOMIAL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The score per game of a pair scored 0, ½, 1, 1½ and 2 points."""


class SprtError(RefereeError, ValueError):
    """An SPRT cannot be set up as asked (bounds in the wrong order, a rate not in (0, 1))."""


# --- counts -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Trinomial(Tally):
    """Single games counted from the first player's side: wins, draws and losses."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def __post_init__(self) -> None:
        if min(self.wins, self.draws, self.losses) < 0:
            raise SprtError("wins, draws and losses cannot be negative")

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> Trinomial:
        """The counts of games the first player scored these points (1, ½ or 0) in."""
        counts = [0, 0, 0]
        for score in scores:
            counts[_slot(score, 2)] += 1
        return cls(wins=counts[2], draws=counts[1], losses=counts[0])

    def plus(self, score: float) -> Trinomial:
        """These counts with one more game, scored ``score`` (1, ½ or 0) by the first player."""
        slot = _slot(score, 2)
        return Trinomial(
            self.wins + (slot == 2), self.draws + (slot == 1), self.losses + (slot == 0)
        )

    @property
    def outcomes(self) -> tuple[int, ...]:
        """The counts by score, lowest first: losses, draws, wins."""
        return (self.losses, self.draws, self.wins)

    @property
    def samples(self) -> int:
        """The outcomes counted: games."""
        return self.games

    def __str__(self) -> str:
        return f"+{self.wins} -{self.losses} ={self.draws}"  # cutechess-cli's order: W, L, D


@dataclass(frozen=True, slots=True)
class Pentanomial:
    """Game pairs counted by the points the first player scored in them.

    ``counts[k]`` is the number of pairs scored ``k / 2`` points: 0, ½, 1, 1½, 2
    (fastchess's ``Ptnml(0-2)``; a pair of one win and one loss and a pair of two
    draws both score 1).
    """

    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    def __post_init__(self) -> None:
        if len(self.counts) != 5 or min(self.counts) < 0:
            raise SprtError("a pentanomial is five counts, none negative")

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> Pentanomial:
        """The pairs of games ``(0, 1), (2, 3), …`` of ``scores`` (the first player's points
        in each game, 1, ½ or 0); a last game without its partner is left out."""
        counts = [0] * 5
        pending: float | None = None
        for score in scores:
            if pending is None:
                pending = score
            else:
                counts[_slot(pending, 2) + _slot(score, 2)] += 1
                pending = None
        return cls((counts[0], counts[1], counts[2], counts[3], counts[4]))

    def plus(self, first: float, second: float) -> Pentanomial:
        """These counts with one more pair whose games the first player scored ``first`` and
        ``second`` in (each 1, ½ or 0)."""
        slot = _slot(first, 2) + _slot(second, 2)
        counts = list(self.counts)
        counts[slot] += 1
        return Pentanomial((counts[0], counts[1], counts[2], counts[3], counts[4]))

    @property
    def outcomes(self) -> tuple[int, ...]:
        """The counts by score, lowest first (the same as :attr:`counts`)."""
        return self.counts

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def samples(self) -> int:
        """The outcomes counted: pairs."""
        return self.pairs

    @property
    def games(self) -> int:
        return 2 * self.pairs

    @property
    def score(self) -> float:
        """Points of the first player: 2 a pair won twice."""
        return sum(k * count for k, count in enumerate(self.counts)) / 2

    def __str__(self) -> str:
        return "[" + ", ".join(str(count) for count in self.counts) + "]"


Counts = Trinomial | Pentanomial
"""Results to test: single games or game pairs."""


def _slot(score: float, halves: int) -> int:
    """``score`` (a multiple of ½ from 0 to ``halves / 2``) in half points, checked."""
    doubled = score * 2
    if doubled not in range(halves + 1):
        raise SprtError(f"a game's score is 1, 0.5 or 0, not {score!r}")
    return int(doubled)


def _scores(counts: Counts) -> tuple[float, ...]:
    """The score per game of each outcome of ``counts``, lowest first."""
    return PENTANOMIAL_SCORES if isinstance(counts, Pentanomial) else TRINOMIAL_SCORES


# --- the test ---------------------------------------------------------------------


class Status(enum.Enum):
    """Where an SPRT stands: going on, or one hypothesis accepted."""

    CONTINUE = "continue"
    H0 = "H0"
    H1 = "H1"

    @property
    def finished(self) -> bool:
        return self is not Status.CONTINUE

    def describe(self) -> str:
        """``continue``, ``H0 accepted`` or ``H1 accepted``."""
        return self.value if self is Status.CONTINUE else f"{self.value} accepted"


@dataclass(frozen=True, slots=True)
class Sprt:
    """An SPRT of ``elo0`` (H0) against ``elo1`` (H1) with error rates ``alpha`` (accepting H1
    when H0 holds) and ``beta`` (accepting H0 when H1 holds), in the Elo of ``model``."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "normalized"

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SprtError(f"SPRT {name} must be a number, not {value!r}")
            if not math.isfinite(value):
                raise SprtError(f"SPRT {name} must be finite, not {value}")
        if not self.elo0 < self.elo1:
            raise SprtError(f"SPRT elo0 must be less than elo1, not {self.elo0} and {self.elo1}")
        if max(abs(self.elo0), abs(self.elo1)) > MAX_ELO:
            raise SprtError(f"SPRT elo0 and elo1 must be between -{MAX_ELO:g} and {MAX_ELO:g}")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 1:
                raise SprtError(f"SPRT {name} must be between 0 and 1, not {getattr(self, name)}")
        if self.alpha + self.beta >= 1:
            raise SprtError("SPRT alpha + beta must be less than 1")
        if self.model not in MODELS:
            raise SprtError(f"unknown SPRT model {self.model!r}: choose {' or '.join(MODELS)}")

    @classmethod
    def parse(cls, words: str | Iterable[str]) -> Sprt:
        """An SPRT from ``key=value`` words, as ``elo0=0 elo1=5 alpha=0.05 beta=0.05``.

        ``elo0`` and ``elo1`` are required; ``alpha`` and ``beta`` default to 0.05 and
        ``model`` (``normalized`` or ``logistic``) to ``normalized``.
        """
        if isinstance(words, str):
            words = words.split()
        given: dict[str, str] = {}
        for word in words:
            key, sign, value = word.partition("=")
            if not sign or not key or not value:
                raise SprtError(f"an SPRT setting is key=value, not {word!r}")
            if key not in ("elo0", "elo1", "alpha", "beta", "model"):
                raise SprtError(
                    f"unknown SPRT setting {key!r}: the settings are elo0, elo1, alpha, beta"
                    " and model"
                )
            if key in given:
                raise SprtError(f"SPRT setting {key} is given twice")
            given[key] = value
        missing = [key for key in ("elo0", "elo1") if key not in given]
        if missing:
            raise SprtError(f"the SPRT needs {' and '.join(missing)}")
        numbers: dict[str, float] = {}
        for key in ("elo0", "elo1", "alpha", "beta"):
            if key in given:
                try:
                    numbers[key] = float(given[key])
                except ValueError:
                    raise SprtError(f"SPRT {key} must be a number, not {given[key]!r}") from None
        model = given.get("model", "normalized")
        if model not in MODELS:
            raise SprtError(f"unknown SPRT model {model!r}: choose {' or '.join(MODELS)}")
        return cls(
            elo0=numbers["elo0"],
            elo1=numbers["elo1"],
            alpha=numbers.get("alpha", 0.05),
            beta=numbers.get("beta", 0.05),
            model=model,
        )

    def __str__(self) -> str:
        """The settings as :meth:`parse` reads them (it reads them back exactly)."""
        numbers = " ".join(
            f"{name}={_exact(getattr(self, name))}" for name in ("elo0", "elo1", "alpha", "beta")
        )
        return f"{numbers} model={self.model}"

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted: ``ln(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted: ``ln((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, counts: Counts) -> float:
        """The log-likelihood ratio of H1 against H0 given ``counts`` (module docstring)."""
        observed = [count if count > 0 else EMPTY_COUNT for count in counts.outcomes]
        total = sum(observed)
        frequencies = [count / total for count in observed]
        scores = _scores(counts)
        if self.model == "logistic":
            p0 = _closest_with_mean(scores, frequencies, _logistic_score(self.elo0))
            p1 = _closest_with_mean(scores, frequencies, _logistic_score(self.elo1))
        else:
            # t per outcome: per game for games, √2 times that for pairs (module docstring).
            per = math.sqrt(2) if isinstance(counts, Pentanomial) else 1.0
            p0 = _closest_with_t(scores, frequencies, per * self.elo0 / NELO_PER_UNIT)
            p1 = _closest_with_t(scores, frequencies, per * self.elo1 / NELO_PER_UNIT)
        return total * sum(
            f * (math.log(b) - math.log(a)) for f, a, b in zip(frequencies, p0, p1, strict=True)
        )

    def status(self, llr: float) -> Status:
        """Which hypothesis an LLR accepts, if any."""
        if llr >= self.upper:
            return Status.H1
        if llr <= self.lower:
            return Status.H0
        return Status.CONTINUE

    def test(self, counts: Counts) -> SprtReport:
        """Everything the test says about ``counts``: LLR, status and the Elo estimate."""
        llr = self.llr(counts)
        return SprtReport(self, counts, llr, self.status(llr), estimate(counts))


@dataclass(frozen=True, slots=True)
class SprtReport:
    """An SPRT applied to some counts: the LLR, the verdict and the Elo estimate."""

    sprt: Sprt
    counts: Counts
    llr: float
    status: Status
    estimate: EloEstimate

    @property
    def progress(self) -> float:
        """How far the LLR has gone towards the bound on its side: 1 (100%) at the bound
        (fastchess's percentage): ``llr / upper`` when positive, ``llr / lower`` when negative."""
        return self.llr / self.sprt.upper if self.llr >= 0 else self.llr / self.sprt.lower

    def line(self) -> str:
        """The report in one line, e.g. ``LLR 0.39 (13.3%) (-2.94, 2.94) [0, 5] normalized:
        continue; Elo +14.8 ±19.3 [-4.5, +34.1], nElo +26.1 ±34.0, LOS 93.4%; 400 games,
        Ptnml(0-2) [3, 41, 98, 52, 6]`` (for games: ``…; 400 games, W-L-D +120 -90 =190``).
        """
        s, e = self.sprt, self.estimate
        if isinstance(self.counts, Pentanomial):
            counts = f"{self.counts.games} games, Ptnml(0-2) {self.counts}"
        else:
            counts = f"{self.counts.games} games, W-L-D {self.counts}"
        return (
            f"LLR {self.llr:.2f} ({100 * self.progress:.1f}%) ({s.lower:.2f}, {s.upper:.2f})"
            f" [{s.elo0:g}, {s.elo1:g}] {s.model}: {self.status.describe()};"
            f" Elo {_signed(e.elo)} ±{_figure(e.margin)} [{_signed(e.low)}, {_signed(e.high)}],"
            f" nElo {_signed(e.nelo)} ±{_figure(e.nelo_margin)}, LOS {100 * e.los:.1f}%; {counts}"
        )


@dataclass(frozen=True, slots=True)
class SprtRun:
    """An SPRT fed a match's games one by one, from the first player's side.

    With ``pairs``, games ``(0, 1), (2, 3), …`` are counted as pairs (a pentanomial:
    one opening, both colours); ``half`` holds the first game of an unfinished pair.
    Otherwise each game counts alone (a trinomial).
    """

    sprt: Sprt
    counts: Counts
    half: float | None = None

    @classmethod
    def start(cls, sprt: Sprt, *, pairs: bool) -> SprtRun:
        return cls(sprt, Pentanomial() if pairs else Trinomial())

    def plus(self, score: float) -> SprtRun:
        """This run with one more game, which the first player scored ``score`` in."""
        if isinstance(self.counts, Trinomial):
            return SprtRun(self.sprt, self.counts.plus(score))
        if self.half is None:
            _slot(score, 2)  # checked now, counted with its partner
            return SprtRun(self.sprt, self.counts, score)
        return SprtRun(self.sprt, self.counts.plus(self.half, score))

    @property
    def counted(self) -> bool:
        """Whether the last game completed a sample (every game, or a pair's second)."""
        return self.half is None

    def report(self) -> SprtReport:
        """The test on the samples complete so far."""
        return self.sprt.test(self.counts)


def _exact(value: float) -> str:
    """``value`` short (``5``, ``0.05``) when that reads back the same, else in full."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def _signed(value: float) -> str:
    """``+8.1``, ``-0.4``, ``+∞``, ``-∞``."""
    if math.isinf(value):
        return "+∞" if value > 0 else "-∞"
    return f"{value:+.1f}"


def _figure(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.1f}"


def _logistic_score(elo: float) -> float:
    """The expected score per game of a player ``elo`` logistic Elo points stronger."""
    return 1 / (1 + 10 ** (-elo / 400))


def _root(frequencies: Sequence[float], phi: Sequence[float]) -> float | None:
    """The ``θ`` with ``Σ f_i φ_i / (1 + θ φ_i) = 0`` and every ``1 + θ φ_i > 0``.

    The sum falls strictly from +∞ to -∞ as ``θ`` crosses the interval where all
    denominators are positive, ``(-1 / max φ, -1 / min φ)``, so the root is unique;
    Newton steps, kept inside a shrinking bracket by bisection, find it. ``None``
    when ``φ`` does not change sign (there is then no root).
    """
    top, bottom = max(phi), min(phi)
    if not bottom < 0 < top:
        return None
    low, high = -1 / top, -1 / bottom  # the open interval's ends (the sum is ±∞ there)
    theta = 0.0
    for _ in range(200):
        value = slope = 0.0
        for f, x in zip(frequencies, phi, strict=True):
            term = x / (1 + theta * x)
            value += f * term
            slope -= f * term * term
        if value > 0:
            low = theta
        elif value < 0:
            high = theta
        else:
            return theta
        step = theta - value / slope
        # Outside the bracket, bisect instead.
        new = step if low < step < high else (low + high) / 2
        if abs(new - theta) <= 1e-15 * max(1.0, abs(theta)):
            return new
        theta = new
    return theta


def _closest_with_mean(
    scores: Sequence[float], frequencies: Sequence[float], mean: float
) -> list[float]:
    """The distribution over ``scores`` with this mean closest to ``frequencies``."""
    phi = [a - mean for a in scores]
    theta = _root(frequencies, phi)
    if theta is None:  # cannot happen: 0 < mean < 1 lies strictly between the scores
        raise ArithmeticError(f"no distribution has mean score {mean}")
    return [f / (1 + theta * x) for f, x in zip(frequencies, phi, strict=True)]


def _closest_with_t(scores: Sequence[float], frequencies: Sequence[float], t: float) -> list[float]:
    """The distribution over ``scores`` with ``(μ - ½) / σ = t`` closest to ``frequencies``.

    First fastchess's way: the fixed point of the module docstring, iterated from
    the uniform distribution. When that does not settle (it can circle when an
    outcome was never seen), the best fixed point found by :func:`_fixed_points`.
    """
    if t == 0:
        return _closest_with_mean(scores, frequencies, 0.5)
    p = [1 / len(scores)] * len(scores)
    for _ in range(100):
        mu, sigma = _moments(scores, p)
        new = _closest_at(scores, frequencies, t, mu, sigma)
        if new is None:
            break
        moved = max(abs(a - b) for a, b in zip(new, p, strict=True))
        p = new
        if moved < 1e-12:
            return p
    candidates = _fixed_points(scores, frequencies, t)
    if not candidates:
        raise ArithmeticError(f"no distribution close to the results has t = {t}")
    return max(
        candidates,
        key=lambda q: sum(f * math.log(x) for f, x in zip(frequencies, q, strict=True)),
    )


def _moments(scores: Sequence[float], p: Sequence[float]) -> tuple[float, float]:
    """The mean and standard deviation of the distribution ``p`` over ``scores``."""
    mu = sum(a * q for a, q in zip(scores, p, strict=True))
    variance = sum(q * (a - mu) ** 2 for a, q in zip(scores, p, strict=True))
    return mu, math.sqrt(max(variance, 0.0))


def _closest_at(
    scores: Sequence[float], frequencies: Sequence[float], t: float, mu: float, sigma: float
) -> list[float] | None:
    """One step of the fixed point: ``p̂_i / (1 + θ φ_i)`` with ``φ`` taken at ``μ``, ``σ``
    (``None`` when no ``θ`` exists)."""
    if sigma <= 0:
        return None
    phi = [a - 0.5 - t * sigma / 2 * (1 + ((a - mu) / sigma) ** 2) for a in scores]
    theta = _root(frequencies, phi)
    if theta is None:
        return None
    return [f / (1 + theta * x) for f, x in zip(frequencies, phi, strict=True)]


def _fixed_points(
    scores: Sequence[float], frequencies: Sequence[float], t: float
) -> list[list[float]]:
    """The attracting fixed points, found along ``σ`` rather than by iteration.

    A fixed point has ``μ = ½ + tσ``, so one step taken at that ``μ`` and ``σ``
    must give a distribution whose own spread is ``σ`` again. ``σ`` runs over
    ``(0, ½ / √(1 + t²))`` (scores lie in [0, 1], so ``σ² ≤ μ(1 - μ)``); where
    the spread that comes out falls from above ``σ`` to below it, bisection
    finds the fixed point.
    """
    top = 0.5 / math.sqrt(1 + t * t)

    def gap(sigma: float) -> tuple[float, list[float]] | None:
        p = _closest_at(scores, frequencies, t, 0.5 + t * sigma, sigma)
        return None if p is None else (_moments(scores, p)[1] - sigma, p)

    found: list[list[float]] = []
    steps = 64
    previous: tuple[float, float] | None = None  # (σ, gap) of the last valid grid point
    for k in range(1, steps + 1):
        sigma = top * (k / steps if k < steps else 1 - 1e-9)
        here = gap(sigma)
        if here is None:
            previous = None
            continue
        if previous is not None and previous[1] > 0 >= here[0]:
            low, high = previous[0], sigma
            best = here[1]
            for _ in range(60):
                middle = (low + high) / 2
                probe = gap(middle)
                if probe is None:
                    break
                best = probe[1]
                if probe[0] > 0:
                    low = middle
                else:
                    high = middle
            found.append(best)
        previous = (sigma, here[0])
    return found


# --- the Elo estimate -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """The Elo difference that results show, from the first player's side.

    ``score`` is the mean score per game; ``elo`` the logistic Elo with its 95%
    interval ``low``–``high`` (infinite on a side that the results cannot bound),
    ``nelo`` the normalised Elo with its interval ``nelo_low``–``nelo_high``, and
    ``los`` the likelihood of superiority. ``samples`` counts what the variance
    was taken over: games (trinomial) or pairs (pentanomial).
    """

    samples: int
    score: float
    elo: float
    low: float
    high: float
    nelo: float
    nelo_low: float
    nelo_high: float
    los: float

    @property
    def margin(self) -> float:
        """Half the width of the logistic interval, the usual "±" (fastchess's); 0 for an
        interval without width, even at infinity (all results alike)."""
        return 0.0 if self.high == self.low else (self.high - self.low) / 2

    @property
    def nelo_margin(self) -> float:
        """Half the width of the normalised interval (0 without width, as :attr:`margin`)."""
        return 0.0 if self.nelo_high == self.nelo_low else (self.nelo_high - self.nelo_low) / 2


def estimate(counts: Counts) -> EloEstimate:
    """The Elo difference of ``counts`` with its intervals and LOS (module docstring).

    Without results the score is ½ and every interval unbounded. When all results
    are the same (no spread), the intervals have no width and normalised Elo is
    ±∞ unless the score is ½ (all draws, or all pairs split), where it is 0.
    """
    scores = _scores(counts)
    samples = sum(counts.outcomes)
    if samples == 0:
        unbounded = (-math.inf, math.inf)
        return EloEstimate(0, 0.5, 0.0, *unbounded, 0.0, *unbounded, 0.5)
    frequencies = [count / samples for count in counts.outcomes]
    mean = sum(a * f for a, f in zip(scores, frequencies, strict=True))
    variance = sum(f * (a - mean) ** 2 for a, f in zip(scores, frequencies, strict=True))
    error = math.sqrt(variance / samples)  # the standard error of the mean score
    low, high = mean - Z95 * error, mean + Z95 * error
    # σ of one game: a pair's score is the mean of two games.
    per_game = math.sqrt(2 * variance if isinstance(counts, Pentanomial) else variance)
    if per_game > 0:
        nelo = (mean - 0.5) / per_game * NELO_PER_UNIT
        half = Z95 * error / per_game * NELO_PER_UNIT
        nelo_low, nelo_high = nelo - half, nelo + half
        los = 0.5 * (1 + math.erf((mean - 0.5) / (error * math.sqrt(2))))
    else:
        nelo = 0.0 if mean == 0.5 else math.copysign(math.inf, mean - 0.5)
        nelo_low = nelo_high = nelo
        los = 0.5 if mean == 0.5 else float(mean > 0.5)
    return EloEstimate(
        samples=samples,
        score=mean,
        elo=elo_from_score(mean),
        low=elo_from_score(low),
        high=elo_from_score(high),
        nelo=nelo,
        nelo_low=nelo_low,
        nelo_high=nelo_high,
        los=los,
    )
