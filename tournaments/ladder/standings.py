"""The ladder's standings: OpenSkill ratings of every version, from the stored games in order.

Nothing here is stored: the standings are the stored games replayed through
:class:`~tournaments.openskill_ratings.OpenSkillRatings` in game-number order, so a ladder
resumed after ``kill -9`` has exactly the ratings it had. Each version is a player of its
own and starts at the prior; an entrant is ranked by its newest active version, by the
ordinal μ − 3σ (higher first; ties by μ, then name).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tournaments.ladder.registry import State, Version
from tournaments.openskill_ratings import OpenSkillRatings, Skill
from tournaments.store import GameRecord

RECENT_GAMES = 20
"""Games kept per player for its page."""


@dataclass(frozen=True, slots=True)
class Played:
    """One game as a player saw it: its number, place, the table's size, opponents."""

    number: int
    place: int
    seats: int
    opponents: tuple[str, ...]
    termination: str

    def describe(self) -> str:
        opponents = ", ".join(self.opponents)
        return f"{ordinal(self.place)} of {self.seats} vs {opponents} (game {self.number})"


@dataclass(frozen=True, slots=True)
class Row:
    """One entrant on the leaderboard."""

    rank: int
    entrant: str
    player: str
    skill: Skill
    games: int
    entrant_games: int
    versions: int
    last: Played | None


@dataclass(slots=True)
class Standings:
    ratings: OpenSkillRatings = field(default_factory=OpenSkillRatings)
    games: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    recent: defaultdict[str, deque[Played]] = field(
        default_factory=lambda: defaultdict(lambda: deque(maxlen=RECENT_GAMES))
    )
    history: defaultdict[str, list[tuple[int, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    """Per player: (game number, ordinal after it), for the rating chart."""
    count: int = 0

    @classmethod
    def of(cls, games: Iterable[GameRecord]) -> Standings:
        standings = cls()
        for game in sorted(games, key=lambda g: g.index):
            standings.add(game)
        return standings

    def add(self, game: GameRecord) -> None:
        """Rate one more game (games must come in number order)."""
        self.ratings.add(game.players, game.places)
        number = game.index + 1
        self.count += 1
        for seat, name in enumerate(game.players):
            self.games[name] += 1
            others = tuple(p for p in game.players if p != name)
            self.recent[name].append(
                Played(number, game.places[seat], len(game.players), others, game.termination)
            )
            self.history[name].append((number, self.ratings.skill(name).ordinal))

    def skill(self, player: str) -> Skill:
        return self.ratings.skill(player)

    def leaderboard(self, versions: Sequence[Version], retired: Iterable[str]) -> list[Row]:
        """Each entrant not retired with an active version, ranked by its newest one."""
        out = set(retired)
        newest: dict[str, Version] = {}
        counts: defaultdict[str, int] = defaultdict(int)
        for version in versions:
            counts[version.entrant] += 1
            if version.state is State.ACTIVE:
                newest[version.entrant] = version
        entrant_games: defaultdict[str, int] = defaultdict(int)
        for version in versions:
            entrant_games[version.entrant] += self.games.get(version.player, 0)
        rows = [
            (self.skill(v.player), entrant, v)
            for entrant, v in newest.items()
            if entrant not in out
        ]
        rows.sort(key=lambda r: (-r[0].ordinal, -r[0].mu, r[1]))
        board = []
        for rank, (skill, entrant, version) in enumerate(rows, start=1):
            recent = self.recent.get(version.player)
            board.append(
                Row(
                    rank=rank,
                    entrant=entrant,
                    player=version.player,
                    skill=skill,
                    games=self.games.get(version.player, 0),
                    entrant_games=entrant_games[entrant],
                    versions=counts[entrant],
                    last=recent[-1] if recent else None,
                )
            )
        return board


def ordinal(place: int) -> str:
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"
