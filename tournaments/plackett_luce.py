"""The rating fit: strengths of maximum likelihood from weighted choices.

Both ways of rating games (:mod:`tournaments.ratings`) are likelihoods of one shape.
A *choice* is a set ``S`` of players one of whom is picked first, player ``i`` with
probability ``exp(s_i) / Σ_{j∈S} exp(s_j)``; the data are choices with weights, and the
log-likelihood of the strengths ``s`` is::

    L(s) = Σ_i a_i·s_i − Σ_S w_S · log Σ_{j∈S} exp(s_j)

where ``w_S`` adds up the weights of the choices among ``S`` and ``a_i`` those of the
choices ``i`` won. A two-seat game is one choice between its two players (Bradley–Terry,
the Elo model); a table of ``N`` seats ranked without ties is, under Plackett–Luce, the
``N - 1`` choices of its ranking from the top: the winner out of all, the second out of
the rest, and so on (:meth:`Choices.add_ranking`; ties: the docstring there). The pairwise
method reads the same table as its ``N·(N-1)/2`` two-player results, each of weight
``1/(N-1)`` (:meth:`Choices.add_pairwise`).

``L`` is concave. The fit maximises it by Newton's method on strengths summing to 0 (a
bordered system with a Lagrange multiplier), halving a step until ``L`` does not fall,
until no strength moves by more than 1e-9 Elo; the covariance is the pseudo-inverse of
the information (``-∇²L``) on that plane. Weights are added up exactly (as whole numbers
over a common denominator) and laid out in an order fixed by the players' numbers, so
the fit depends on which games were played and never on their order, and two ways of
writing the same choices give the same floats.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy

ELO_PER_UNIT = 400 / math.log(10)
"""Elo points per unit of strength (about 173.7): ``exp(s_i - s_j)`` is the odds that ``i``
finishes ahead of ``j``, and ``10 ** (d / 400)`` those of a player ``d`` Elo above."""

STEP_TOLERANCE = 1e-9 / ELO_PER_UNIT
"""Newton stops when no strength moves more than this (1e-9 Elo)."""

MAX_NEWTON_STEPS = 200
"""A bound on Newton steps; the fit needs a handful for ordinary tables."""

MAX_TIE = 12
"""The most seats one tie may join in a Plackett–Luce ranking: a tie of ``k`` seats counts
``2**k - 1`` choice sets (a table of 5 tied seats, 31)."""


class TieTooLarge(ValueError):
    """A ranking has a tie of more than :data:`MAX_TIE` seats."""


@dataclass(slots=True)
class Choices:
    """Weighted choices added up, by name: ``sets[(members, d)]`` counts choices among
    ``members`` (sorted names) of weight ``1/d``, ``won[(name, d)]`` the weight ``1/d``
    that ``name`` won (negative for a one-player "choice", which is not a choice at all:
    see :meth:`add_ranking`). Whole numbers, so the sums do not depend on the order."""

    sets: Counter[tuple[tuple[str, ...], int]]
    won: Counter[tuple[str, int]]

    def __init__(self) -> None:
        self.sets = Counter()
        self.won = Counter()

    def add_ranking(self, players: Sequence[str], places: Sequence[int]) -> None:
        """One table under Plackett–Luce: the choices of its ranking from the top.

        Ties count as their orders: a group of ``k`` seats tied ahead of the seats
        ``R`` placed below it counts each of the ``k!`` orders that break the tie as
        ``1/k!`` of a ranking, so its choices are, for each subset ``S`` of the group
        (``s`` seats), one from ``S ∪ R`` of weight ``1/C(k, s)`` — which a member of
        ``S`` wins in ``1/s`` of those orders. Two seats that draw are thus half a win
        and half a loss each, as in Elo. A set of one (the last seat, or a subset of a
        tied last group) has no choice to make; its term ``-s_i`` is added to ``a_i``.
        """
        if len(players) < 2:
            return
        if len(set(places)) == len(places):  # no tie: the common case, made quick
            ranked = [name for _, name in sorted(zip(places, players, strict=True))]
            for first in range(len(ranked) - 1):
                self.sets[tuple(sorted(ranked[first:])), 1] += 1
            self.won[ranked[-1], 1] -= 1
            for name in players:
                self.won[name, 1] += 1
            return
        for name in players:
            self.won[name, 1] += 1  # every seat is picked once in every order
        below: list[str] = list(players)
        for place in sorted(set(places)):
            group = [name for name, at in zip(players, places, strict=True) if at == place]
            below = [name for name in below if name not in group]
            if len(group) > MAX_TIE:
                raise TieTooLarge(
                    f"a tie of {len(group)} seats is more than the Plackett–Luce fit takes"
                    f" ({MAX_TIE})"
                )
            for size in range(1, len(group) + 1):
                ways = math.comb(len(group), size)
                for subset in combinations(group, size):
                    members = (*subset, *below)
                    if len(members) == 1:
                        self.won[members[0], ways] -= 1
                    else:
                        self.sets[tuple(sorted(members)), ways] += 1

    def add_pairwise(self, players: Sequence[str], places: Sequence[int]) -> None:
        """One table as its two-player results by places, each of weight ``1/(N-1)``: a
        better place wins, equal places draw (half a win each)."""
        seats = len(players)
        for i, j in combinations(range(seats), 2):
            first, second = players[i], players[j]
            self.sets[tuple(sorted((first, second))), seats - 1] += 1
            if places[i] == places[j]:
                self.won[first, 2 * (seats - 1)] += 1
                self.won[second, 2 * (seats - 1)] += 1
            else:
                self.won[first if places[i] < places[j] else second, seats - 1] += 1

    def model(self, index: Mapping[str, int], *, virtual_draws: bool) -> Model:
        """The likelihood of these choices for the players numbered by ``index``."""
        # Exact sums: whole numbers over one common denominator, divided once.
        unit = math.lcm(*(ways for _, ways in self.sets), *(ways for _, ways in self.won))
        totals: dict[int, int] = {}
        for (name, ways), count in self.won.items():
            totals[index[name]] = totals.get(index[name], 0) + count * (unit // ways)
        won = numpy.zeros(len(index))
        for number, total in totals.items():
            won[number] = total / unit
        weights: dict[tuple[int, ...], int] = {}
        for (members, ways), count in self.sets.items():
            key = tuple(index[name] for name in members)
            weights[key] = weights.get(key, 0) + count * (unit // ways)
        by_size: dict[int, list[tuple[int, ...]]] = {}
        for key in sorted(weights):
            by_size.setdefault(len(key), []).append(key)
        blocks = tuple(
            (
                numpy.array(keys, dtype=numpy.intp),
                numpy.array([weights[key] / unit for key in keys]),
            )
            for _, keys in sorted(by_size.items())
        )
        return Model(len(index), won, blocks, virtual_draws)


def _log_sum_exp(values: numpy.ndarray) -> numpy.ndarray:
    """``log Σ exp`` of each row, without overflow."""
    top = values.max(axis=1)
    return top + numpy.log(numpy.exp(values - top[:, None]).sum(axis=1))


@dataclass(frozen=True, slots=True)
class Model:
    """The log-likelihood of strengths given weighted choices (module docstring).

    ``blocks`` holds, for each set size, the sets (one row of player numbers each) and
    their weights. With ``virtual_draws`` each player also drew one two-seat game
    against a virtual opponent of strength 0, which is the pool average because the
    fit keeps strengths summing to 0.
    """

    size: int
    won: numpy.ndarray
    blocks: tuple[tuple[numpy.ndarray, numpy.ndarray], ...]
    virtual_draws: bool

    def log_likelihood(self, strength: numpy.ndarray) -> float:
        total = float(self.won @ strength)
        for members, weights in self.blocks:
            total -= float(weights @ _log_sum_exp(strength[members]))
        if self.virtual_draws:
            total -= 0.5 * float(
                (numpy.logaddexp(0, strength) + numpy.logaddexp(0, -strength)).sum()
            )
        return total

    def gradient_and_information(
        self, strength: numpy.ndarray
    ) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The gradient of the log-likelihood and the information (its negative Hessian)."""
        n = self.size
        gradient = self.won.copy()
        diagonal = numpy.zeros(n)
        products = numpy.zeros(n * n)
        for members, weights in self.blocks:
            values = strength[members]
            chance = numpy.exp(values - _log_sum_exp(values)[:, None])
            weighted = weights[:, None] * chance
            share = numpy.bincount(members.ravel(), weighted.ravel(), minlength=n)
            gradient -= share
            diagonal += share
            cells = members[:, :, None] * n + members[:, None, :]
            products += numpy.bincount(
                cells.ravel(), (weighted[:, :, None] * chance[:, None, :]).ravel(), minlength=n * n
            )
        information = numpy.diag(diagonal) - products.reshape(n, n)
        if self.virtual_draws:
            chance = 1 / (1 + numpy.exp(-strength))
            gradient += 0.5 - chance
            information[numpy.diag_indices(n)] += chance * (1 - chance)
        return gradient, information

    def fit(self) -> numpy.ndarray:
        """The strengths of maximum likelihood, summing to 0.

        The likelihood is concave, so Newton's steps, each halved until the likelihood
        does not fall, converge from all-zero strengths.
        """
        n = self.size
        strength = numpy.zeros(n)
        current = self.log_likelihood(strength)
        bordered = numpy.ones((n + 1, n + 1))
        bordered[n, n] = 0.0
        for _ in range(MAX_NEWTON_STEPS):
            gradient, information = self.gradient_and_information(strength)
            bordered[:n, :n] = information
            step = _solve(bordered, numpy.append(gradient, 0.0))[:n]
            length = 1.0
            while True:
                trial = strength + length * step
                value = self.log_likelihood(trial)
                if value >= current - 1e-12 * abs(current) or length < 1e-6:
                    break
                length /= 2
            moved = float(numpy.abs(length * step).max(initial=0.0))
            strength, current = trial, value
            if moved < STEP_TOLERANCE:
                return strength
        raise ArithmeticError("the rating fit did not converge")

    def covariance(self, strength: numpy.ndarray) -> numpy.ndarray:
        """The covariance of strengths that sum to 0: the information's pseudo-inverse.

        The information is taken on the sum-0 plane (projected with ``P = I - J/n``);
        its pseudo-inverse is ``inv(P·A·P + J/n) - J/n``.
        """
        n = self.size
        _, information = self.gradient_and_information(strength)
        row_mean = information.mean(axis=1)
        shifted = information - row_mean[:, None] - row_mean[None, :] + row_mean.mean() + 1 / n
        try:
            return numpy.linalg.inv(shifted) - 1 / n
        except numpy.linalg.LinAlgError:
            raise ArithmeticError("singular matrix in the rating fit") from None


# NumPy's LAPACK does the linear algebra: a field of 1,000 players is a 1,000 × 1,000
# system, whose elimination in Python took minutes.


def _solve(matrix: numpy.ndarray, rhs: numpy.ndarray) -> numpy.ndarray:
    """The solution ``x`` of ``matrix · x = rhs``."""
    try:
        solution: numpy.ndarray = numpy.linalg.solve(matrix, rhs)
    except numpy.linalg.LinAlgError:
        raise ArithmeticError("singular matrix in the rating fit") from None
    return solution
