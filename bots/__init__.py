"""The bot SDK and the bundled Ivy bots.

- :mod:`bots.sdk` — the synchronous SDK: a bot is a :class:`~bots.sdk.Bot` subclass with
  a ``choose`` method; :func:`~bots.sdk.run` speaks the protocol for it.
- :mod:`bots.random` — random legal turns (the baseline);
- :mod:`bots.greedy` — one turn of lookahead with a heuristic;
- :mod:`bots.climber` — the strong one: a timed alpha-beta search over the greedy's
  candidate turns;
- ``bots/ivy_bot.js`` — a Node.js bot speaking the protocol with no SDK at all;
- :mod:`bots.arena` — plays the Python bots against each other in-process, for
  development and tests.

Each Python bot runs as ``python -m bots.<name> [--seed N]``. Bots are clients of the
referee: they use :mod:`protocol` and :mod:`referee.games`, never the match runner.
"""

from __future__ import annotations

import importlib

from bots.sdk import Bot

BUNDLED: dict[str, str] = {
    "random": "bots.random:RandomBot",
    "greedy": "bots.greedy:GreedyBot",
    "climber": "bots.climber:ClimberBot",
}
"""The bundled Python bots by name, as ``module:class``."""


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A fresh bundled bot called ``name``; raises ``KeyError`` listing the known names."""
    try:
        module_name, class_name = BUNDLED[name].split(":")
    except KeyError:
        raise KeyError(f"unknown bot {name!r} (known: {', '.join(BUNDLED)})") from None
    bot_class: type[Bot] = getattr(importlib.import_module(module_name), class_name)
    return bot_class(seed)


__all__ = ["BUNDLED", "Bot", "make_bot"]
