"""OpenSkill ratings beside the fit: μ, σ and the ordinal μ − 3σ, updated game by game.

The `openskill` library's Plackett–Luce model (Weng and Lin's Bayesian approximation,
2011) keeps for each player a normal belief about their skill, mean ``mu`` and standard
deviation ``sigma``, and updates it after every game from the game's places alone, each
player a team of one, ties as the library handles them (tied players share their rank
and the mean of their changes). Unlike the maximum-likelihood fit, the result depends on
the order of the games: they are taken in the order given. The model's settings are
pinned here (:data:`SETTINGS`, the library's defaults as of 6.2) rather than left to the
library, and reported with the ratings, so that a newer library with other defaults
cannot change them unnoticed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import version
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating


@dataclass(frozen=True, slots=True)
class OpenSkillSettings:
    """The settings of the OpenSkill Plackett–Luce model (the library's names): the prior
    ``mu`` and ``sigma``, the performance spread ``beta``, the floor ``kappa`` on a variance
    factor, the dynamics ``tau`` added to each ``sigma`` before a game, the score
    ``margin`` (unused: only places are rated), ``limit_sigma`` and ``balance``."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    kappa: float = 0.0001
    tau: float = 25.0 / 300.0
    margin: float = 0.0
    limit_sigma: bool = False
    balance: bool = False

    def model(self) -> PlackettLuce:
        """The library's model with these settings."""
        return PlackettLuce(**asdict(self))

    def to_json(self) -> dict[str, Any]:
        """The settings as ``ratings.json`` records them, with the model and library
        version."""
        return {
            "library": "openskill",
            "version": version("openskill"),
            "model": "PlackettLuce",
            **asdict(self),
        }


SETTINGS = OpenSkillSettings()
"""The settings every rating table uses."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One player's OpenSkill belief: mean ``mu``, standard deviation ``sigma``."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """``mu - 3·sigma``, the library's ``ordinal()``: a rating the player is very likely
        above, which rises with games as ``sigma`` falls."""
        return self.mu - 3 * self.sigma


class OpenSkillRatings:
    """OpenSkill beliefs, updated by each game added (:meth:`add`)."""

    def __init__(self, settings: OpenSkillSettings = SETTINGS) -> None:
        self.settings = settings
        self._model = settings.model()
        self._ratings: dict[str, PlackettLuceRating] = {}

    def _rating(self, name: str) -> PlackettLuceRating:
        if name not in self._ratings:
            self._ratings[name] = self._model.rating()
        return self._ratings[name]

    def add_player(self, name: str) -> None:
        """Start ``name`` at the prior, if not already rated."""
        self._rating(name)

    def add(self, players: Sequence[str], places: Sequence[int]) -> None:
        """Update the players of one game from its places (1 the best, ties sharing one); a
        game of one seat has nobody to compare and changes nothing."""
        if len(players) < 2:
            for name in players:
                self.add_player(name)
            return
        teams = [[self._rating(name)] for name in players]
        updated = self._model.rate(teams, ranks=[float(place) for place in places])
        for name, (rating,) in zip(players, updated, strict=True):
            self._ratings[name] = rating

    def skill(self, name: str) -> Skill:
        """``name``'s belief now (the prior for a player without games)."""
        rating = self._rating(name)
        return Skill(rating.mu, rating.sigma)
