"""Referee and match server for bot programming contests.

The package is layered (see ``docs/architecture`` in the README):

- :mod:`referee.games` — pure, synchronous rules modules (Ivy first);
- :mod:`referee.pgn` — game records;
- :mod:`referee.match` and :mod:`referee.process` — the trio layer that runs bots;
- :mod:`referee.cli` — the ``referee`` command.
"""

__version__ = "0.1.0"
