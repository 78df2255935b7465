"""How good the ratings of 4-seat tables are, by simulation: ``python bench/bench_ratings_sim.py``.

20 players with known strengths (Elo evenly spaced from -300 to +300, so averaging 0)
play tables of 4 drawn at random from them; each table's ranking is drawn from the
true Plackett–Luce model (each player's strength plus Gumbel noise, sorted). Every
repetition (2,000 tables; 200 repetitions by default, seeded) is rated three ways:

- ``plackett-luce``: :func:`tournaments.ratings.rate`, the maximum-likelihood fit;
- ``pairwise``: the same with ``method="pairwise"`` (the reference, measured in the
  same run: the method that the fit replaces);
- ``openskill``: the OpenSkill μ ± 1.96σ that the same ``rate`` call updates game by
  game. μ is on its own scale (25 ± 25/3 at the start), so it is aligned with the truth
  by the linear map that fits it best (centred, then scaled by least squares, in each
  repetition): a favourable alignment, which OpenSkill's own scale does not give.

Elo of both fits average 0 like the truth, so they are compared as they are. For each
it prints the root mean square error against the truth (over players and repetitions),
Kendall's τ between the estimated and the true order (mean over repetitions), the share
of 95% intervals (rating ± error) that hold the true value, and the mean time per
repetition.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy

from tournaments.ratings import RatingTable, TableResult, rate

ELO_PER_UNIT = 400 / math.log(10)
Z95 = 1.959963984540054


def true_elo(players: int, spread: float = 300.0) -> numpy.ndarray:
    """Evenly spaced Elo from ``-spread`` to ``+spread``."""
    return numpy.linspace(-spread, spread, players)


def draw_tables(
    rng: numpy.random.Generator, elo: numpy.ndarray, tables: int, seats: int
) -> list[TableResult]:
    """``tables`` games of ``seats`` random players, ranked by the Plackett–Luce model."""
    strength = elo / ELO_PER_UNIT
    games = []
    for _ in range(tables):
        seated = rng.choice(len(elo), seats, replace=False)
        noisy = strength[seated] + rng.gumbel(size=seats)
        places = numpy.empty(seats, dtype=int)
        places[numpy.argsort(-noisy)] = numpy.arange(1, seats + 1)
        games.append(TableResult(tuple(f"p{p:02d}" for p in seated), tuple(places.tolist()), None))
    return games


def kendall_tau(first: Sequence[float], second: Sequence[float]) -> float:
    """Kendall's τ-b between two lists of numbers."""
    concordant = discordant = ties_first = ties_second = 0
    for i in range(len(first)):
        for j in range(i + 1, len(first)):
            a = numpy.sign(first[i] - first[j])
            b = numpy.sign(second[i] - second[j])
            if a == 0:
                ties_first += 1
            if b == 0:
                ties_second += 1
            if a and b:
                concordant += a == b
                discordant += a != b
    pairs = len(first) * (len(first) - 1) // 2
    return (concordant - discordant) / math.sqrt((pairs - ties_first) * (pairs - ties_second))


@dataclass
class Tally:
    """One method's figures, added up over the repetitions."""

    squared: list[float] = field(default_factory=list)
    taus: list[float] = field(default_factory=list)
    covered: int = 0
    intervals: int = 0
    seconds: float = 0.0

    def add(self, estimate: numpy.ndarray, error: numpy.ndarray, truth: numpy.ndarray) -> None:
        self.squared.extend(((estimate - truth) ** 2).tolist())
        self.taus.append(kendall_tau(estimate.tolist(), truth.tolist()))
        self.covered += int((numpy.abs(estimate - truth) <= error).sum())
        self.intervals += len(truth)

    def line(self, name: str, repetitions: int) -> str:
        rmse = math.sqrt(sum(self.squared) / len(self.squared))
        tau = sum(self.taus) / len(self.taus)
        coverage = 100 * self.covered / self.intervals
        per_run = 1000 * self.seconds / repetitions
        return f"{name:<14} {rmse:>9.2f} {tau:>9.4f} {coverage:>10.2f}% {per_run:>9.1f}"


def fitted(table: RatingTable, names: list[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Elo and 95% half-widths in the order of ``names``."""
    rows = {row.name: row for row in table.players}
    return (
        numpy.array([rows[name].elo for name in names]),
        numpy.array([rows[name].error for name in names]),
    )


def openskill_on_truth(
    table: RatingTable, names: list[str], truth: numpy.ndarray
) -> tuple[numpy.ndarray, numpy.ndarray]:
    """OpenSkill's μ and 1.96σ aligned with ``truth`` by the best linear map (docstring)."""
    rows = {row.name: row for row in table.players}
    mu = numpy.array([rows[name].mu for name in names])
    sigma = numpy.array([rows[name].sigma for name in names])
    centred = mu - mu.mean()
    scale = float(centred @ truth / (centred @ centred))
    return scale * centred, scale * Z95 * sigma


def simulate(
    *, players: int, seats: int, tables: int, repetitions: int, seed: int
) -> dict[str, Tally]:
    """Every method's figures over ``repetitions`` seeded runs."""
    truth = true_elo(players)
    names = [f"p{p:02d}" for p in range(players)]
    tallies = {name: Tally() for name in ("plackett-luce", "pairwise", "openskill")}
    for repetition in range(repetitions):
        games = draw_tables(numpy.random.default_rng([seed, repetition]), truth, tables, seats)
        started = time.perf_counter()
        plackett_luce = rate(games)
        tallies["plackett-luce"].seconds += time.perf_counter() - started
        started = time.perf_counter()
        pairwise = rate(games, method="pairwise")
        tallies["pairwise"].seconds += time.perf_counter() - started
        tallies["plackett-luce"].add(*fitted(plackett_luce, names), truth)
        tallies["pairwise"].add(*fitted(pairwise, names), truth)
        tallies["openskill"].add(*openskill_on_truth(plackett_luce, names, truth), truth)
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=20)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args()
    tallies = simulate(
        players=args.players,
        seats=args.seats,
        tables=args.tables,
        repetitions=args.repetitions,
        seed=args.seed,
    )
    print(
        f"{args.players} players (Elo -300…+300), {args.tables} tables of {args.seats},"
        f" {args.repetitions} repetitions, seed {args.seed}"
    )
    print(f"{'method':<14} {'RMSE Elo':>9} {'Kendall τ':>9} {'95% cover':>11} {'ms/run':>9}")
    for name, tally in tallies.items():
        print(tally.line(name, args.repetitions))
    print("(openskill: μ aligned with the truth by the best linear map; its time is in the fit's)")


if __name__ == "__main__":
    main()
