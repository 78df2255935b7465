"""The bundled Verdant bots and what they share.

- :mod:`bots.verdant.random` — uniformly random legal steps (the baseline);
- :mod:`bots.verdant.greedy` — the decision with the best immediate score;
- :mod:`bots.verdant.mc` — Monte Carlo: plays each candidate decision out to the end many
  times, with the unseen cards and tokens drawn at random, and keeps the best on average;
- :mod:`bots.verdant.plans` — whole-turn plans and the numbers the bots judge a home by;
- :mod:`bots.verdant.playout` — the fast policy and the playouts of the Monte Carlo bot.

Each runs as ``python -m bots.verdant.<name> [--seed N]`` and is bundled as
``verdant-<name>`` (:data:`bots.BUNDLED`).
"""
