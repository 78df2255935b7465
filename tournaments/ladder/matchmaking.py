"""Choosing the ladder's next table: the game that teaches the ratings the most.

Pure and fast (no I/O; one pass over the free players, :func:`choose_table` takes well
under a millisecond for 1,000 entrants: ``bench/bench_ladder.py --choose`` measures it):

1. **The anchor.** A free player still in its placement games (fewer than
   ``placement_games`` games) comes first, the fewest games first, then the one seen
   first (its place in the list). Past placement, the player whose rating is least
   certain (the largest OpenSkill σ) is the anchor; ties go to the fewest games.
2. **The opponents.** The ``seats − 1`` free players nearest the anchor in μ, where each
   earlier meeting with the anchor adds :data:`REPEAT_COST` μ divided by the meetings a
   uniform draw would have given it with each player: close ratings first, and no table
   repeated more often than needed.
3. **The seats.** Of the table's rotations (the anchor's order by μ), the one whose
   players have sat least often in the seats it gives them, so that each player sits
   each seat about equally often.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

REPEAT_COST = 2.0
"""μ added to an opponent per meeting with the anchor beyond a uniform share (the
OpenSkill scale: a prior σ is 8.33, the performance spread β 4.17)."""


@dataclass(slots=True)
class Candidate:
    """A player that may be matched: its name, OpenSkill μ and σ, and games played."""

    name: str
    mu: float
    sigma: float
    games: int


@dataclass(slots=True)
class History:
    """What the matchmaker remembers of the tables played: meetings by player and
    opponent (both ways), and seats sat."""

    seats: int
    met: dict[str, Counter[str]] = field(default_factory=dict)
    seated: dict[str, list[int]] = field(default_factory=dict)

    def note(self, table: Sequence[str]) -> None:
        """Count one table played, its players in seat order."""
        for seat, name in enumerate(table):
            self.seated.setdefault(name, [0] * self.seats)[seat] += 1
            met = self.met.setdefault(name, Counter())
            for other in table:
                if other != name:
                    met[other] += 1

    def meetings(self, a: str, b: str) -> int:
        """How many tables ``a`` and ``b`` have shared."""
        return self.met.get(a, Counter())[b]


def choose_table(
    candidates: Sequence[Candidate],
    busy: Collection[str],
    history: History,
    placement_games: int,
) -> tuple[str, ...] | None:
    """The next table's players in seat order, or ``None`` when fewer than a table's
    seats are free (not in ``busy``)."""
    seats = history.seats
    free = [c for c in candidates if c.name not in busy] if busy else list(candidates)
    if len(free) < seats:
        return None
    at = 0
    anchor = free[0]
    for n, c in enumerate(free):  # one pass: the fewest games in placement, else the largest σ
        if anchor.games < placement_games or c.games < placement_games:
            better = c.games < anchor.games
        else:
            better = c.sigma > anchor.sigma or (c.sigma == anchor.sigma and c.games < anchor.games)
        if better:
            at, anchor = n, c
    mu = anchor.mu
    # A uniform draw would give each other player this many meetings with the anchor.
    uniform = 1.0 + anchor.games * (seats - 1) / max(1, len(candidates) - 1)
    weight = REPEAT_COST / uniform
    cost = [abs(c.mu - mu) for c in free]
    met = history.met.get(anchor.name)
    if met:  # the anchor's few opponents so far: found by name, not by a pass over all
        where = {c.name: n for n, c in enumerate(free)}
        for name, times in met.items():
            seat = where.get(name)
            if seat is not None:
                cost[seat] += weight * times
    cost[at] = math.inf
    opponents = [
        free[n] for n in heapq.nsmallest(seats - 1, range(len(free)), key=cost.__getitem__)
    ]
    table = sorted([anchor, *opponents], key=lambda c: -c.mu)
    return _seated([c.name for c in table], history)


def _seated(table: list[str], history: History) -> tuple[str, ...]:
    """The rotation of ``table`` whose players have sat least in the seats it gives them."""
    empty = [0] * history.seats
    best, best_cost = table, None
    for turn in range(len(table)):
        order = table[turn:] + table[:turn]
        cost = sum(history.seated.get(name, empty)[seat] for seat, name in enumerate(order))
        if best_cost is None or cost < best_cost:
            best, best_cost = order, cost
    return tuple(best)
