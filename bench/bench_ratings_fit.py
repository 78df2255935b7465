"""How fast a big field of tables is rated: ``python bench/bench_ratings_fit.py``.

1,000 players (strengths drawn from a normal distribution of 150 Elo, seeded) play
25,000 tables of 4 (100 each on average), ranked by the Plackett–Luce model. It times
:func:`tournaments.ratings.rate` whole (the tally, OpenSkill game by game, the fit and
its covariance) with the Plackett–Luce method, beside the pairwise method measured in
the same run, and prints each one's fit alone (the choices tallied, then Newton's
method and the covariance).
"""

from __future__ import annotations

import argparse
import time

import numpy
from bench_ratings_sim import draw_tables

from tournaments.plackett_luce import Choices
from tournaments.ratings import METHODS, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--tables", type=int, default=25_000)
    parser.add_argument("--seats", type=int, default=4)
    args = parser.parse_args()
    rng = numpy.random.default_rng(1000)
    games = draw_tables(rng, rng.normal(0, 150, args.players), args.tables, args.seats)
    names = sorted({name for game in games for name in game.players})
    index = {name: number for number, name in enumerate(names)}
    print(f"{len(names)} players, {args.tables} tables of {args.seats}")
    for method in METHODS:
        started = time.perf_counter()
        rate(games, method=method)
        whole = time.perf_counter() - started
        choices = Choices()
        for game in games:
            if method == "pairwise":
                choices.add_pairwise(game.players, game.places)
            else:
                choices.add_ranking(game.players, game.places)
        started = time.perf_counter()
        model = choices.model(index, virtual_draws=False)
        model.covariance(model.fit())
        fit = time.perf_counter() - started
        print(f"{method:<14} rate(): {whole:6.2f} s   fit and covariance alone: {fit:6.2f} s")


if __name__ == "__main__":
    main()
