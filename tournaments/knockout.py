"""Knockout tournaments: a seeded bracket of matches, each won or lost whole.

Players are seeded in the order given (the first is seed 1). The bracket has
``size`` slots, the smallest power of two that holds everyone, and
``log2(size)`` rounds. Round 1 pairs seed ``s`` with seed ``size + 1 - s``, the
matches in the standard order that keeps the best seeds apart as long as
possible (for 8: ``1-8, 4-5, 2-7, 3-6``; seeds 1 and 2 can meet only in the
final, the top four only from the semi-finals on). A seed whose opponent would
be above ``n`` has a bye: it goes through to round 2 without playing, so with
``n`` players the top ``size - n`` seeds have byes. The winner of match ``i`` of
a round meets the winner of match ``i ^ 1`` (its neighbour) in match ``i // 2``
of the next.

A match is ``games`` games (default 2), colours alternating from game to game,
the better seed white in the first. The player with more points wins (a win 1,
a draw ½, from the games' places). When the points are level, the match goes
on with tie-break games two at a time (so one with each colour; colours keep
alternating), up to ``tiebreaks`` pairs (default 1), each pair played only
while the points are still level; if they are level after the last one, the
better seed goes through. With ``openings``, game ``g`` (counted on through the tie-breaks)
of a match in round ``r`` starts from
``openings[((r - 1) · ⌈(games + 2 · tiebreaks) / 2⌉ + g // 2) % len(openings)]``:
every match of a round plays the same openings, each once with each colour.

Game numbers are fixed in advance, so a stopped knockout resumes from its
stored games: the matches are numbered through the rounds (round 1's first,
``0 … size/2 - 1``, then round 2's, …), each has ``games + 2 · tiebreaks``
numbers, and game ``g`` of match ``m`` is number ``m · (games + 2 · tiebreaks)
+ g``. Numbers of games that are not needed (byes, tie-breaks of a decided
match) are never played. A match's games are known, and can be played, as soon
as both its players are: :meth:`Knockout.pending` lists them, whatever the
other matches of the round are doing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tournaments.pairings import MAX_GAMES, Pairing, ScheduleError, _check_players
from tournaments.swiss import Finished


@dataclass(frozen=True, slots=True)
class Match:
    """One match of the bracket.

    ``number`` counts matches from 0 through all rounds; ``slot`` is its place in its
    round (from 0). ``players`` are the better seed first, ``None`` where a player is
    not known yet (or never will be: a bye); ``seeds`` their seeds. ``games`` holds the
    games due so far (the regular ones, then the tie-break pairs needed), ``points``
    the players' points from those finished, and ``winner`` is set once the match is
    decided (a bye's player at once).
    """

    round: int
    slot: int
    number: int
    players: tuple[str | None, str | None]
    seeds: tuple[int | None, int | None]
    games: tuple[Pairing, ...]
    points: tuple[float, float]
    winner: str | None


def standard_order(size: int) -> list[int]:
    """The seeds of a bracket of ``size`` slots (a power of two) from top to bottom:
    ``[1, 8, 4, 5, 2, 7, 3, 6]`` for 8; slots ``2i`` and ``2i + 1`` meet in round 1."""
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1  # in each first-round match the seeds add up to this
        order = [seed for top in order for seed in (top, total - top)]
    return order


def knockout(
    players: Sequence[str],
    *,
    games: int = 2,
    tiebreaks: int = 1,
    openings: Sequence[str] | None = None,
) -> Knockout:
    """A knockout of ``players`` (seeds in order) with matches of ``games`` games and up to
    ``tiebreaks`` pairs of tie-break games (module docstring)."""
    names = _check_players(players, minimum=2)
    if games < 1:
        raise ScheduleError(f"a match has at least 1 game, not {games}")
    if tiebreaks < 0:
        raise ScheduleError(f"tie-break pairs cannot be negative, not {tiebreaks}")
    if openings is not None:
        openings = tuple(openings)
        if not openings:
            raise ScheduleError("the list of openings is empty")
    result = Knockout(names, games, tiebreaks, openings)
    if result.length > MAX_GAMES:
        raise ScheduleError(f"the knockout would hold more than the {MAX_GAMES:,} games allowed")
    return result


@dataclass(frozen=True, slots=True)
class Knockout:
    """A knockout's settings; its matches come from results (module docstring). Made by
    :func:`knockout`, which checks them."""

    players: tuple[str, ...]
    games: int
    tiebreaks: int
    openings: tuple[str, ...] | None

    @property
    def size(self) -> int:
        """Slots in the bracket: the smallest power of two that holds every player."""
        return 1 << (len(self.players) - 1).bit_length()

    @property
    def rounds(self) -> int:
        return self.size.bit_length() - 1

    @property
    def block(self) -> int:
        """Game numbers per match: the regular games and every possible tie-break."""
        return self.games + 2 * self.tiebreaks

    @property
    def length(self) -> int:
        """Game numbers in the whole knockout (``size - 1`` matches)."""
        return (self.size - 1) * self.block

    def first_round(self) -> list[tuple[int, int]]:
        """Round 1's matches as seed pairs, better seed first (a seed above ``n`` is a bye)."""
        order = standard_order(self.size)
        return [(order[i], order[i + 1]) for i in range(0, self.size, 2)]

    def matches(self, results: Iterable[Finished]) -> tuple[Match, ...]:
        """Every match of the bracket, round by round, as ``results`` leave it."""
        by_index: dict[int, Finished] = {}
        for game in results:
            if not 0 <= game.index < self.length:
                raise ScheduleError(f"game {game.index} is not in a knockout of {self.length}")
            if game.index in by_index:
                raise ScheduleError(f"game {game.index} is in the results twice")
            by_index[game.index] = game
        # The seeds in each slot of the current round (None: unknown, or nobody).
        entrants: list[int | None] = [
            seed if seed <= len(self.players) else None for seed in standard_order(self.size)
        ]
        found: list[Match] = []
        number = 0
        for round_number in range(1, self.rounds + 1):
            winners: list[int | None] = []
            for slot in range(len(entrants) // 2):
                pair = (entrants[2 * slot], entrants[2 * slot + 1])
                match = self._match(round_number, slot, number, pair, by_index)
                found.append(match)
                winners.append(self.players.index(match.winner) + 1 if match.winner else None)
                number += 1
            entrants = winners
        if by_index:
            index = min(by_index)
            raise ScheduleError(f"game {index} is not a game that the results so far call for")
        return tuple(found)

    def pending(self, results: Iterable[Finished]) -> list[Pairing]:
        """The games that can be played now and are not in ``results``."""
        results = list(results)
        done = {game.index for game in results}
        return [
            game
            for match in self.matches(results)
            if match.winner is None
            for game in match.games
            if game.index not in done
        ]

    def winner(self, results: Iterable[Finished]) -> str | None:
        """The knockout's winner, once the final is decided."""
        return self.matches(results)[-1].winner

    def _match(
        self,
        round_number: int,
        slot: int,
        number: int,
        seeds: tuple[int | None, int | None],
        by_index: dict[int, Finished],
    ) -> Match:
        """Match ``number`` between ``seeds`` (a ``None`` not known yet, or a bye), as far as
        the results in ``by_index`` (taken out as they are used) have played it."""
        if seeds[1] is not None and (seeds[0] is None or seeds[1] < seeds[0]):
            seeds = (seeds[1], seeds[0])
        better, worse = (None if s is None else self.players[s - 1] for s in seeds)
        base = number * self.block
        if better is None or worse is None:
            # In round 1 an empty slot is a bye (never both: size < 2n), so the other player
            # goes through; later, a player not known yet (an earlier match still on).
            winner = better if round_number == 1 else None
            return Match(round_number, slot, number, (better, worse), seeds, (), (0.0, 0.0), winner)
        games, points, winner = self._contest(round_number, base, better, worse, by_index)
        return Match(round_number, slot, number, (better, worse), seeds, games, points, winner)

    def _contest(
        self, round_number: int, base: int, better: str, worse: str, by_index: dict[int, Finished]
    ) -> tuple[tuple[Pairing, ...], tuple[float, float], str | None]:
        """The games due in a match whose first game is number ``base``, the points from
        those finished, and the winner once decided."""
        due: list[Pairing] = []
        points = {better: 0.0, worse: 0.0}
        unfinished = False
        while True:
            decided = len(due) >= self.games and points[better] != points[worse]
            if unfinished or decided or len(due) >= self.block:
                break
            for _ in range(self.games if not due else 2):  # the regular games, or a pair
                game = len(due)
                white, black = (better, worse) if game % 2 == 0 else (worse, better)
                pairing = Pairing(
                    base + game, round_number, (white, black), self._opening(round_number, game)
                )
                due.append(pairing)
                result = by_index.pop(pairing.index, None)
                if result is None:
                    unfinished = True
                    continue
                if tuple(result.players) != pairing.players or len(result.places) != 2:
                    raise ScheduleError(
                        f"game {pairing.index} was played by {' and '.join(result.players)}, but"
                        f" the knockout pairs {white} and {black} in it"
                    )
                first, second = result.places
                score = 1.0 if first < second else 0.0 if first > second else 0.5
                points[white] += score
                points[black] += 1 - score
        winner = None
        if not unfinished:  # level after the last tie-break: the better seed goes through
            winner = worse if points[worse] > points[better] else better
        return tuple(due), (points[better], points[worse]), winner

    def _opening(self, round_number: int, game: int) -> str | None:
        if self.openings is None:
            return None
        count = (round_number - 1) * math.ceil(self.block / 2) + game // 2
        return self.openings[count % len(self.openings)]
