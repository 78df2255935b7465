"""Ratings from game results: Elo by maximum likelihood, error bars, LOS, crosstable.

Two-seat games are rated as in Ordo and BayesElo, by the Bradley–Terry model on the
logistic Elo scale: a player rated ``d`` points above the opponent is expected to score
``1 / (1 + 10 ** (-d / 400))``, and a game's score (1, ½ or 0) counts as that many wins
out of one game, so a draw is half a win and half a loss. All games are rated at once by
maximising the likelihood (:mod:`tournaments.plackett_luce`: Newton's method, to a step
below 1e-9 Elo); colours are not modelled. Ratings average 0, or are shifted so that an
anchor player has a given rating. They depend on which games were played, never on
their order.

Games of more than two seats (``method``, :data:`Method`)
    ``"plackett-luce"`` (the default): a table's whole ranking is one observation of the
    Plackett–Luce model, in which a player of strength ``s`` (``s = elo / 173.7``) wins a
    table with probability proportional to ``exp(s)``, the second place goes likewise to
    one of the others, and so on; ties count as the orders that break them, each equally
    (:meth:`~tournaments.plackett_luce.Choices.add_ranking`). Its two-seat case is the
    model above, draws included, so two-seat games are rated the same by both methods.
    On this scale a player ``d`` Elo above another finishes ahead of it, at a table of
    any size, with probability ``1 / (1 + 10 ** (-d / 400))``.

    ``"pairwise"``: a game of ``N`` seats counts as the ``N·(N-1)/2`` two-player results
    between its seats, by places (a better place wins, equal places draw), each of
    weight ``1/(N-1)``, so that a player's results at one table weigh as much as one
    two-player game. Since the results of one table come from one ranking they are not
    independent: this is a composite likelihood, and its error bars an approximation.

    Only places enter the ratings, not points. Solo games (one seat) have no opponent
    and are not rated: a table of solo games has no Elo and ranks players by mean score.

Beside the ratings
    Each player's ``games`` (games played, any seat count), ``mean_score`` (in the
    game's own unit: Ivy 1, ½ or 0, Verdant points; over the games whose scores
    are known) and ``mean_place`` (1 is best). ``wins``, ``draws`` and ``losses``
    count the two-player results by places, unweighted (for two-seat games, the
    games themselves), and the crosstable holds them per opponent. ``mu`` and
    ``sigma`` are the OpenSkill ratings (:mod:`tournaments.openskill_ratings`),
    updated game by game in the order the games are given.

Perfect and zero scores
    The maximum-likelihood ratings are finite exactly when the players cannot
    be split into two groups with one group never placed ahead of (nor level with)
    anybody of the other — a player with all wins or all losses, or two groups
    that never met, break this. Then, and only then, every player gets one
    virtual two-seat draw against a virtual opponent rated at the pool average (the
    ratings' mean). That keeps every rating finite and a perfect score first,
    and leaves tables where the plain estimate exists untouched;
    :attr:`RatingTable.virtual_draws` says whether it was used.

Error bars
    The covariance of the ratings is the pseudo-inverse of the observed
    information (the negative Hessian of the log-likelihood, weights and virtual
    draws included) on ratings that average 0. A player's ``error`` is 1.96
    standard deviations of their rating relative to the pool average, or to the
    anchor (whose own error is then 0). The likelihood of superiority (LOS) of a
    player over the next one in the table is the normal probability that their
    rating difference is positive, from the same covariance.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from referee.errors import RefereeError
from referee.tally import Tally
from tournaments.openskill_ratings import OpenSkillRatings, OpenSkillSettings
from tournaments.plackett_luce import ELO_PER_UNIT, Choices, TieTooLarge

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""

Kind = Literal["two-seat", "tables", "solo"]
"""What a rating table rates: two-seat games scored 1, ½ or 0 (as chess is), games at tables
(of any other kind: more seats, or scores in points), or solo games only (no Elo)."""

Method = Literal["plackett-luce", "pairwise"]
"""How games of more than two seats are rated (module docstring); two-seat games are rated
the same by both."""

METHODS: tuple[Method, ...] = ("plackett-luce", "pairwise")


class RatingError(RefereeError, ValueError):
    """Results cannot be rated as asked (an unknown anchor, places that are not places)."""


# --- results -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableResult:
    """One finished game, seat by seat: who played, their places, their scores.

    ``places`` are 1 for the best, tied seats sharing one; ``scores`` are in the
    game's own unit, or ``None`` when the record does not say them.
    """

    players: tuple[str, ...]
    places: tuple[int, ...]
    scores: tuple[float, ...] | None

    @classmethod
    def two_seat(cls, white: str, black: str, white_score: float) -> TableResult:
        """A two-seat game that white scored ``white_score`` in (1, 0.5 or 0)."""
        if white_score not in (0, 0.5, 1):
            raise RatingError(f"a game score must be 1, 0.5 or 0, not {white_score!r}")
        places = (1, 1) if white_score == 0.5 else (1, 2) if white_score == 1 else (2, 1)
        return cls((white, black), places, (white_score, 1 - white_score))

    @property
    def chess_like(self) -> bool:
        """Whether this is a two-seat game scored 1, ½ or 0 by its places."""
        if len(self.players) != 2 or self.scores is None:
            return False
        first, second = self.places
        chess = (1.0, 0.0) if first < second else (0.0, 1.0) if second < first else (0.5, 0.5)
        return self.scores == chess


class Played(Protocol):
    """Anything that says a finished game's players, places and scores in seat order, as
    :class:`TableResult` does."""

    @property
    def players(self) -> Sequence[str]: ...

    @property
    def places(self) -> Sequence[int]: ...

    @property
    def scores(self) -> Sequence[float] | None: ...


Result = Played | tuple[str, str, float]
"""A game to rate: a :class:`TableResult` (or any :class:`Played`), or ``(white, black,
white_score)`` for a two-seat game scored 1, 0.5 or 0."""


@dataclass(frozen=True, slots=True)
class Encounter(Tally):
    """One player's results against one opponent, counted from the player's side
    (at tables of more than two, the two-player results by places)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def plus(self, score: float) -> Encounter:
        """This encounter with one more result that the player scored ``score`` in."""
        if score == 1:
            return Encounter(self.wins + 1, self.draws, self.losses)
        if score == 0:
            return Encounter(self.wins, self.draws, self.losses + 1)
        return Encounter(self.wins, self.draws + 1, self.losses)

    def reversed(self) -> Encounter:
        """The same games counted from the opponent's side."""
        return Encounter(self.losses, self.draws, self.wins)

    def __add__(self, other: Encounter) -> Encounter:
        """Both sets of games together."""
        return Encounter(
            self.wins + other.wins, self.draws + other.draws, self.losses + other.losses
        )


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """One row of the rating table.

    ``elo`` is the rating and ``error`` the half-width of its 95% interval (both
    ``None`` in a table of solo games), ``los_next`` the likelihood that this
    player is stronger than the next one in the table (``None`` for the last, and
    without Elo). ``games`` counts the games played; ``wins``, ``draws`` and
    ``losses`` the two-player results (the games themselves for two seats);
    ``points`` adds the scores of the ``scored`` games whose scores are known,
    ``place_total`` the places of all games. ``mu`` and ``sigma`` are the player's
    OpenSkill rating (``None`` without Elo).
    """

    rank: int
    name: str
    elo: float | None
    error: float | None
    games: int
    wins: int
    draws: int
    losses: int
    los_next: float | None
    points: float = 0.0
    scored: int = 0
    place_total: int = 0
    mu: float | None = None
    sigma: float | None = None

    @property
    def ordinal(self) -> float | None:
        """OpenSkill's ordinal ``mu - 3·sigma`` (``None`` without Elo)."""
        if self.mu is None or self.sigma is None:
            return None
        return self.mu - 3 * self.sigma

    @property
    def results(self) -> int:
        """Two-player results counted (two seats: the games)."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points from the two-player results: a win 1, a draw ½."""
        return self.wins + self.draws / 2

    @property
    def score_percent(self) -> float:
        """:attr:`score` as a percentage of :attr:`results` (0 with none)."""
        return 100 * self.score / self.results if self.results else 0.0

    @property
    def mean_score(self) -> float | None:
        """The mean score per game, in the game's unit (``None`` with no scored game)."""
        return self.points / self.scored if self.scored else None

    @property
    def mean_place(self) -> float | None:
        """The mean place per game, 1 the best (``None`` with no game)."""
        return self.place_total / self.games if self.games else None


@dataclass(frozen=True, slots=True)
class RatingTable:
    """The rated players, best first, with the crosstable of who scored what against whom.

    ``crosstable`` maps ``(player, opponent)`` to their :class:`Encounter`, in
    both directions, for every two players that met; ``anchor`` names the player
    whose rating was fixed, if any; ``virtual_draws`` says whether the
    perfect-score prior of the module docstring was needed; ``kind`` what was
    rated (:data:`Kind`: reports show mean score and mean place unless it is
    ``"two-seat"``, and no Elo for ``"solo"``); ``method`` how games of more than two
    seats were rated (:data:`Method`); ``openskill`` the settings of the OpenSkill
    ratings (``None`` without Elo).
    """

    players: tuple[PlayerRating, ...]
    crosstable: Mapping[tuple[str, str], Encounter]
    anchor: str | None = None
    virtual_draws: bool = False
    kind: Kind = "two-seat"
    method: Method = "plackett-luce"
    openskill: OpenSkillSettings | None = None

    @property
    def rated(self) -> bool:
        """Whether the players have Elo ratings (not for solo games)."""
        return self.kind != "solo"

    def player(self, name: str) -> PlayerRating:
        """The row of the player called ``name`` (``KeyError`` if there is none)."""
        for row in self.players:
            if row.name == name:
                return row
        raise KeyError(name)

    def encounter(self, player: str, opponent: str) -> Encounter:
        """``player``'s results against ``opponent`` (empty when they never met)."""
        return self.crosstable.get((player, opponent), Encounter())


@dataclass(slots=True)
class _Totals:
    """One player's games, scores and places, added up."""

    games: int = 0
    points: float = 0.0
    scored: int = 0
    place_total: int = 0


@dataclass(slots=True)
class _Tally:
    """The results added up: players (in order of appearance), the crosstable, the
    choices the fit rates (:class:`~tournaments.plackett_luce.Choices`, by ``method``),
    the OpenSkill ratings, and each player's totals."""

    method: Method
    names: list[str] = field(default_factory=list)
    crosstable: dict[tuple[str, str], Encounter] = field(default_factory=dict)
    choices: Choices = field(default_factory=Choices)
    skill: OpenSkillRatings = field(default_factory=OpenSkillRatings)
    totals: dict[str, _Totals] = field(default_factory=dict)
    games: int = 0
    pairwise: bool = False
    chess_like: bool = True

    def add_player(self, name: str) -> _Totals:
        if name not in self.totals:
            self.totals[name] = _Totals()
            self.names.append(name)
        return self.totals[name]

    def add(self, result: Result) -> None:
        if isinstance(result, tuple):
            game = TableResult.two_seat(*result)
        else:
            scores = None if result.scores is None else tuple(result.scores)
            game = TableResult(tuple(result.players), tuple(result.places), scores)
        _check(game)
        seats = len(game.players)
        self.games += 1
        self.chess_like = self.chess_like and game.chess_like
        for seat, name in enumerate(game.players):
            totals = self.add_player(name)
            totals.games += 1
            totals.place_total += game.places[seat]
            if game.scores is not None:
                totals.points += game.scores[seat]
                totals.scored += 1
        for i in range(seats):
            for j in range(i + 1, seats):
                self.pairwise = True
                first, second = game.players[i], game.players[j]
                score = _pair_score(game.places[i], game.places[j])
                encounter = self.crosstable.get((first, second), Encounter()).plus(score)
                self.crosstable[first, second] = encounter
                self.crosstable[second, first] = encounter.reversed()
        if self.method == "pairwise":
            self.choices.add_pairwise(game.players, game.places)
        else:
            try:
                self.choices.add_ranking(game.players, game.places)
            except TieTooLarge as error:
                raise RatingError(f"{error}: rate these games with the pairwise method") from None
        self.skill.add(game.players, game.places)

    def kind(self) -> Kind:
        """What these results are, when nobody said (see :data:`Kind`)."""
        if self.games and not self.pairwise:
            return "solo"
        return "two-seat" if self.chess_like else "tables"


def _pair_score(place: int, other: int) -> float:
    """The two-player result of a seat placed ``place`` against one placed ``other``."""
    return 1.0 if place < other else 0.0 if place > other else 0.5


def _check(game: TableResult) -> None:
    """Refuse a game whose seats, places and scores do not fit together."""
    seats = len(game.players)
    if seats == 0:
        raise RatingError("a game has at least one seat")
    if len(game.places) != seats or (game.scores is not None and len(game.scores) != seats):
        raise RatingError(f"a game of {seats} seats needs one place and one score per seat")
    if len(set(game.players)) != seats:
        name = next(name for name in game.players if game.players.count(name) > 1)
        raise RatingError(f"player {name!r} cannot play against themselves")
    for place in game.places:
        if not 1 <= place <= seats:
            raise RatingError(f"a place at a table of {seats} is from 1 to {seats}, not {place}")


# --- the rating table ----------------------------------------------------------


def rate(
    results: Iterable[Result],
    *,
    players: Iterable[str] = (),
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    kind: Kind | None = None,
    method: Method = "plackett-luce",
) -> RatingTable:
    """Rate every player from finished games (see the module docstring).

    ``results`` holds :class:`TableResult` (or :class:`Played`) games of any seat count, or
    ``(white, black, white_score)`` two-seat games. ``players`` lists players to
    include even without games. With ``anchor`` the ratings are shifted so that
    this player is rated ``anchor_elo``; otherwise they average 0. ``kind``
    (default: from the games, ``"two-seat"`` when there are none) says what is
    rated: with ``"solo"`` there are no ratings, and rows are ordered by mean
    score, then name. Otherwise rows are ordered by rating, then points, then name.
    ``method`` says how games of more than two seats are rated (:data:`Method`); the
    OpenSkill ratings take the games in the order given.
    """
    if method not in METHODS:
        raise RatingError(f"unknown rating method {method!r} (not one of {', '.join(METHODS)})")
    tally = _Tally(method)
    for name in players:
        tally.add_player(name)
    for result in results:
        tally.add(result)
    kind = kind or tally.kind()
    names = tally.names
    if anchor is not None and anchor not in names:
        raise RatingError(f"anchor player {anchor!r} is not among the rated players")
    if kind == "solo":
        if anchor is not None:
            raise RatingError("solo games have no ratings to anchor")
        return _unrated(tally)
    if not names:
        return RatingTable((), tally.crosstable, kind=kind, method=method)
    # The fit numbers players by name, and so does not depend on the order of the games.
    names = sorted(names)
    index = {name: number for number, name in enumerate(names)}
    virtual_draws = not _estimate_exists(names, tally.crosstable)
    model = tally.choices.model(index, virtual_draws=virtual_draws)
    strength = model.fit()
    covariance = model.covariance(strength)

    reference = index[anchor] if anchor is not None else None
    shift = anchor_elo - ELO_PER_UNIT * strength[reference] if reference is not None else 0.0
    elo = [float(ELO_PER_UNIT * value + shift) for value in strength]

    def variance(i: int, j: int | None) -> float:
        """Variance (natural units²) of ``strength[i] - strength[j]`` (``j=None``: of ``i``)."""
        if j is None:
            return float(covariance[i, i])
        return float(covariance[i, i] + covariance[j, j] - 2 * covariance[i, j])

    results_of = _encounters(tally)
    order = sorted(
        range(len(names)), key=lambda i: (-round(elo[i], 6), -results_of[names[i]].score, names[i])
    )
    rows = []
    for rank, i in enumerate(order, start=1):
        following = order[rank] if rank < len(order) else None
        rows.append(
            _row(
                rank,
                names[i],
                tally,
                results_of[names[i]],
                elo=elo[i],
                error=Z95 * ELO_PER_UNIT * math.sqrt(max(variance(i, reference), 0.0)),
                los_next=(
                    None
                    if following is None
                    else _probability_positive(
                        float(strength[i] - strength[following]), variance(i, following)
                    )
                ),
                skill=True,
            )
        )
    return RatingTable(
        tuple(rows), tally.crosstable, anchor, virtual_draws, kind, method, tally.skill.settings
    )


def _encounters(tally: _Tally) -> dict[str, Encounter]:
    """Each player's two-player results against everyone, added up."""
    totals = dict.fromkeys(tally.names, Encounter())
    for (name, _), encounter in tally.crosstable.items():
        totals[name] += encounter
    return totals


def _row(
    rank: int,
    name: str,
    tally: _Tally,
    encounter: Encounter,
    *,
    elo: float | None,
    error: float | None,
    los_next: float | None,
    skill: bool = False,
) -> PlayerRating:
    """The table row of ``name`` (with its OpenSkill rating when ``skill``)."""
    totals = tally.totals[name]
    mu = sigma = None
    if skill:
        rating = tally.skill.skill(name)
        mu, sigma = rating.mu, rating.sigma
    return PlayerRating(
        rank=rank,
        name=name,
        elo=elo,
        error=error,
        games=totals.games,
        wins=encounter.wins,
        draws=encounter.draws,
        losses=encounter.losses,
        los_next=los_next,
        points=totals.points,
        scored=totals.scored,
        place_total=totals.place_total,
        mu=mu,
        sigma=sigma,
    )


def _unrated(tally: _Tally) -> RatingTable:
    """The table of solo games: no ratings, best mean score first (players without a
    scored game last), then by name."""
    results_of = _encounters(tally)

    def best_first(name: str) -> tuple[bool, float, str]:
        totals = tally.totals[name]
        mean = totals.points / totals.scored if totals.scored else 0.0
        return (not totals.scored, -mean, name)

    rows = tuple(
        _row(rank, name, tally, results_of[name], elo=None, error=None, los_next=None)
        for rank, name in enumerate(sorted(tally.names, key=best_first), start=1)
    )
    return RatingTable(rows, tally.crosstable, kind="solo", method=tally.method)


def _probability_positive(mean: float, variance: float) -> float:
    """P(X > 0) for X normal with this mean and variance (a point mass when it is 0)."""
    if variance <= 0:
        return 1.0 if mean > 0 else 0.0 if mean < 0 else 0.5
    return 0.5 * (1 + math.erf(mean / math.sqrt(2 * variance)))


# --- when the plain estimate exists ---------------------------------------------


def _estimate_exists(names: Sequence[str], crosstable: Mapping[tuple[str, str], Encounter]) -> bool:
    """Whether the plain maximum-likelihood ratings are finite (Zermelo's condition, which
    Hunter (2004) extends to Plackett–Luce).

    They are when the graph "placed ahead of or level with, at least once" reaches
    every player from every player, i.e. it is strongly connected. (Under
    Plackett–Luce a tie counts as the orders that break it, so it joins both ways, as
    a draw does.)
    """
    if len(names) <= 1:
        return True
    forward: dict[str, list[str]] = {name: [] for name in names}
    backward: dict[str, list[str]] = {name: [] for name in names}
    for (player, opponent), encounter in crosstable.items():
        if encounter.wins or encounter.draws:
            forward[player].append(opponent)
            backward[opponent].append(player)

    def reaches_all(edges: dict[str, list[str]]) -> bool:
        """Whether every player is reachable from the first along ``edges``."""
        seen = {names[0]}
        stack = [names[0]]
        while stack:
            for successor in edges[stack.pop()]:
                if successor not in seen:
                    seen.add(successor)
                    stack.append(successor)
        return len(seen) == len(names)

    return reaches_all(forward) and reaches_all(backward)


# --- a two-player match ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EloDifference(Tally):
    """The Elo difference of a two-player match, from the first player's side.

    ``elo`` is the estimate, ``low``/``high`` the 95% interval (infinite on a
    side the results cannot bound), ``los`` the likelihood of superiority, and
    ``virtual_draw`` whether one virtual draw was added (see
    :func:`elo_difference`).
    """

    wins: int
    draws: int
    losses: int
    elo: float
    low: float
    high: float
    los: float
    virtual_draw: bool

    @property
    def margin(self) -> float:
        """Half the width of the 95% interval, the usual "±" figure."""
        return (self.high - self.low) / 2


def elo_from_score(score: float) -> float:
    """The Elo difference that expects this score fraction: ``-400·log10(1/score - 1)``.

    Infinite for a score of 0 or 1 and beyond.
    """
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return 400 * math.log10(score / (1 - score))


def elo_difference(wins: int, draws: int, losses: int) -> EloDifference:
    """The Elo difference of a match with these wins, draws and losses of the first player.

    The estimate is ``elo_from_score`` of the score fraction ``p``; the interval
    maps ``p ± 1.96·σ/√N`` through the same function, with ``σ²`` the per-game
    variance of the trinomial (win/draw/loss) results. A score of 0% or 100%
    has no finite estimate, so then (as in :func:`rate`) one virtual draw is
    added: the estimate is large but finite and the interval open on the far
    side. With no games the difference is 0 in an unbounded interval; a match
    of only draws has a zero-width one. LOS is ``Φ((W - L) / √(W + L))``.
    """
    if min(wins, draws, losses) < 0:
        raise RatingError("wins, draws and losses cannot be negative")
    decisive = wins + losses
    los = 0.5 if decisive == 0 else 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * decisive)))
    total = wins + draws + losses
    if total == 0:
        return EloDifference(0, 0, 0, 0.0, -math.inf, math.inf, 0.5, False)
    virtual = wins == total or losses == total
    counted_draws = draws + virtual
    games = total + virtual
    p = (wins + counted_draws / 2) / games
    variance = (wins * (1 - p) ** 2 + counted_draws * (0.5 - p) ** 2 + losses * p**2) / games
    half_width = Z95 * math.sqrt(variance / games)
    return EloDifference(
        wins=wins,
        draws=draws,
        losses=losses,
        elo=elo_from_score(p),
        low=elo_from_score(p - half_width),
        high=elo_from_score(p + half_width),
        los=los,
        virtual_draw=virtual,
    )
