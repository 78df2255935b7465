"""The bot SDK and the bundled bots.

- :mod:`bots.sdk` — the synchronous SDK for every game: a bot is a subclass of its game's
  base class (:class:`~bots.sdk.Bot` for Ivy, :class:`~bots.sdk.VerdantBot` for Verdant)
  with a ``choose`` method; :func:`~bots.sdk.run` speaks the protocol for it.
- Ivy: :mod:`bots.random` — random legal turns (the baseline); :mod:`bots.greedy` — one
  turn of lookahead with a heuristic; :mod:`bots.climber` — the strong one: a timed
  alpha-beta search over the greedy's candidate turns; ``bots/ivy_bot.js`` — a Node.js
  bot speaking the protocol with no SDK at all.
- Verdant (:mod:`bots.verdant`): ``verdant-random``, ``verdant-greedy`` and the strong
  one, ``verdant-mc`` (Monte Carlo over the unseen cards).
- :mod:`bots.arena` — plays the Python bots against each other in-process, for
  development and tests.

Each Python bot runs as ``python -m bots.<name> [--seed N]`` (Verdant's as
``python -m bots.verdant.<name>``). Bots are clients of the referee: they use
:mod:`protocol` and :mod:`referee.games`, never the match runner.
"""

from __future__ import annotations

import importlib
from typing import Any

from bots.sdk import Bot, GameBot

BUNDLED: dict[str, str] = {
    "random": "bots.random:RandomBot",
    "greedy": "bots.greedy:GreedyBot",
    "climber": "bots.climber:ClimberBot",
    "verdant-random": "bots.verdant.random:RandomBot",
    "verdant-greedy": "bots.verdant.greedy:GreedyBot",
    "verdant-mc": "bots.verdant.mc:MonteCarloBot",
}
"""The bundled Python bots of every game by name, as ``module:class`` (Verdant's names
start with ``verdant-``)."""


def make_bot(name: str, seed: int | None = None) -> GameBot[Any, Any, Any]:
    """A fresh bundled bot called ``name``; raises ``KeyError`` listing the known names."""
    try:
        module_name, class_name = BUNDLED[name].split(":")
    except KeyError:
        raise KeyError(f"unknown bot {name!r} (known: {', '.join(BUNDLED)})") from None
    bot_class: type[GameBot[Any, Any, Any]] = getattr(
        importlib.import_module(module_name), class_name
    )
    return bot_class(seed)


__all__ = ["BUNDLED", "Bot", "GameBot", "make_bot"]
