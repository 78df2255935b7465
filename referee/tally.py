"""Win/draw/loss counts, the unit every score table is made of."""

from __future__ import annotations


class Tally:
    """Mixin for anything that counts ``wins``, ``draws`` and ``losses``.

    Gives the derived figures once: games played and points (a win 1, a draw ½).
    Slot-free, so slotted dataclasses can inherit it.
    """

    __slots__ = ()

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points: a win is 1, a draw ½."""
        return self.wins + self.draws / 2
