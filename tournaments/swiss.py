"""Swiss tournaments: a Dutch-style pairing of each round from the results before it.

A field too large for a round-robin plays a fixed number of rounds; each round
pairs players with equal scores, never twice the same two, with colours kept in
balance. Round ``r``'s pairings are a pure function of the players (in seed
order) and the results of rounds ``1 … r-1``, so a stopped tournament resumes by
computing them again from its stored games: :meth:`Swiss.schedule` gives every
round that its results allow (round 1 always; round ``r + 1`` once every game of
round ``r`` is in), and game numbers are fixed in advance, like the
round-robin's: game ``g`` (from 0) on board ``b`` (from 0) of round ``r`` is
number ``(r - 1) · boards · games + b · games + g``.

The rules (the FIDE Dutch system, C.04.3, in spirit and in part)
    Seeds. Players are numbered in the order given (the first is the top seed,
    pairing number 1). For pairing, players are ranked by score, then pairing
    number. A round's score is the points of its games (a win 1, a draw ½, from
    the games' places), or ``bye`` times ``games`` for the bye.

    Bye. With an odd field, one player gets the bye: the lowest-ranked player who
    has not had one (with every one of them had, one who had the fewest), and
    among those the lowest-ranked whose absence still lets everyone else be paired
    at the strictest level below. Nobody gets a second bye in a tournament of at
    most ``n`` rounds.

    Levels. Two players may meet only if they have not met before and are not
    both due the same colour absolutely (see Colours). If the field cannot be
    paired so, the colour condition is dropped for the round; if it still cannot,
    rematches are allowed, counted as the first criterion of each bracket (so
    each bracket repeats as few games as it can). Every choice below keeps the
    rest of the field pairable at the round's level (a perfect matching, checked
    with Edmonds' algorithm), so no bracket's choice forces a rematch later.

    Brackets. Score groups are paired from the top. A bracket is the players
    floated down from above (ranked first) and the score group's players. The
    highest-ranked unpaired player ``P`` of the bracket is paired first: a
    floated player with the group's players in rank order, then with another
    floated player; a group player, with the group's unpaired players split into
    an upper half (``P`` at its top, as many players as pairs are still to be
    made) and a lower half, with the lower half's players in order, then with the
    upper half's from the bottom up. ``P`` may also float down to the next
    bracket, last. Each pairing of the bracket is a sequence of these choices;
    pairings are ordered by how often they *depart* from pairing the upper half
    with the lower (a group player paired within its own half, a floated player
    with another, a player floated while there was a group player to pair with),
    fewest first, then by their choices in order: the Dutch system's
    transpositions come first, in its order (round 1 pairs ``1-5, 2-6, 3-7, 4-8``
    in a group of 8), then pairings like its exchanges. The bracket's pairing is
    the first one in this order that is best by these criteria, each before the
    next:

    1. the fewest rematches (only at the last level);
    2. the fewest players floated down, then the lowest total score of them;
    3. the fewest pairs of two players due the same colour, then the fewest of
       them where both are due it strongly (colour difference ±1) or absolutely;
    4. the fewest players floated down who floated down (or had the bye) in the
       previous round, then the fewest players paired with a floated player from
       above who were paired so in the previous round; then the same two counts
       for the round before that.

    The search runs twice: first, trying good partners first, for the best that
    can be had (stopping early at a pairing that a lower bound shows nothing can
    beat); then, in the order above, for the first pairing that good. Each run
    stops after :data:`SEARCH_LIMIT` steps with the best found (the first run's
    if the second finds none; should the first find none, each player in turn
    takes the first choice that keeps the rest pairable). The lowest bracket
    floats nobody.

    Colours. A player's colour in a round is that of their first game of it.
    With a colour difference ``cd`` (whites minus blacks) of -2 or less, or two
    blacks in the last two rounds played, white is due absolutely (black
    likewise); with ``cd`` = -1 strongly, ``cd`` = 0 mildly (the colour not
    played last). Colours of a pair: both as due when they differ; else the
    stronger due; else (both absolutely) the one further out of balance; else
    the colours of the last round in which the two had different colours,
    swapped; else the higher-ranked player's due; and with no colour due at all
    (round 1), the higher-ranked player gets white when their pairing number is
    odd, black when it is even (FIDE's E.1–E.5). So everyone due a colour
    absolutely gets it, and nobody's colour difference leaves -2…+2 and nobody
    plays a colour three games running (a bye between or not) unless a round
    had to drop the colour level; what such a round gives stays in the history.

    Games per pairing and openings. Each pairing plays ``games`` games
    (default 1, or 2 with ``openings``), colours alternating from the allocated
    one. With ``openings``, game ``g`` of a pairing in round ``r`` starts from
    ``openings[((r - 1) · ⌈games / 2⌉ + g // 2) % len(openings)]``: colour-swapped
    twos, every board of a round from the same openings.

    Board order: the higher score of the pair, then their total, then the
    better-ranked player.

Where this differs from the FIDE Dutch system
    The Dutch system orders its exchanges between halves by pairing numbers,
    lets topscorers break the colour rules in the last round, weighs the score
    differences of floats, and backtracks into a higher bracket when a lower one
    cannot be paired; here the completion check makes the backtracking
    unnecessary, and the rest is left out or simplified as described. Absences
    and requested byes are not modelled. The tests compare whole tournaments with
    published JaVaFo and bbpPairings pairings, and show where they part.

Standings
    Points, then Buchholz (the sum of the opponents' points; a bye adds nothing),
    then pairing number.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tournaments.matching import perfect_matching
from tournaments.pairings import MAX_GAMES, Pairing, ScheduleError, _check_players

SEARCH_LIMIT = 5000
"""Search steps per bracket and run before the best pairing found so far is taken."""

WHITE, BLACK = "W", "B"


class Finished(Protocol):
    """A finished game as the results store holds it: its number, players in seat
    order, and their places (1 the better; equal places a draw)."""

    @property
    def index(self) -> int: ...

    @property
    def players(self) -> Sequence[str]: ...

    @property
    def places(self) -> Sequence[int]: ...


@dataclass(frozen=True, slots=True)
class SwissRound:
    """One round: ``boards`` as ``(white, black)`` of each pairing's first game, best board
    first; ``bye`` the player without a game (or ``None``); ``pairings`` the games."""

    number: int
    boards: tuple[tuple[str, str], ...]
    bye: str | None
    pairings: tuple[Pairing, ...]


@dataclass(frozen=True, slots=True)
class Standing:
    """One player's place in a Swiss: ``colours`` has one letter per round (``W``, ``B``, or
    ``-`` for the bye and rounds not yet played)."""

    rank: int
    name: str
    seed: int
    points: float
    buchholz: float
    played: int
    byes: int
    colours: str


def swiss(
    players: Sequence[str],
    *,
    rounds: int,
    games: int | None = None,
    openings: Sequence[str] | None = None,
    bye: float = 1.0,
) -> Swiss:
    """A Swiss tournament of ``rounds`` rounds (at most ``n - 1``, or ``n`` for an odd ``n``).

    ``games`` per pairing (default 1, or 2 with ``openings``); ``bye`` is what the bye
    scores, as a share of a win of every game (1 a win, ½ a draw, 0 nothing).
    """
    names = _check_players(players, minimum=2)
    most = len(names) - 1 + len(names) % 2
    if not 1 <= rounds <= most:
        raise ScheduleError(
            f"a Swiss of {len(names)} players has 1 to {most} rounds (a round-robin's),"
            f" not {rounds}"
        )
    if openings is not None:
        openings = tuple(openings)
        if not openings:
            raise ScheduleError("the list of openings is empty")
    per_pairing = (1 if openings is None else 2) if games is None else games
    if per_pairing < 1:
        raise ScheduleError(f"games per pairing must be at least 1, not {per_pairing}")
    if not (isinstance(bye, int | float) and 0 <= bye <= 1):
        raise ScheduleError(f"a bye scores from 0 to 1 (a win), not {bye!r}")
    result = Swiss(names, rounds, per_pairing, float(bye), openings)
    if result.length > MAX_GAMES:
        raise ScheduleError(f"the Swiss would hold more than the {MAX_GAMES:,} games allowed")
    return result


@dataclass(frozen=True, slots=True)
class Swiss:
    """A Swiss tournament's settings; its rounds come from results (module docstring).
    Made by :func:`swiss`, which checks them."""

    players: tuple[str, ...]
    rounds: int
    games: int
    bye: float
    openings: tuple[str, ...] | None

    @property
    def boards(self) -> int:
        """Pairings per round."""
        return len(self.players) // 2

    @property
    def per_round(self) -> int:
        """Games per round."""
        return self.boards * self.games

    @property
    def length(self) -> int:
        """Games in the whole tournament (numbered ``0 … length-1``)."""
        return self.rounds * self.per_round

    def round_of(self, index: int) -> int:
        """The round (from 1) that game ``index`` belongs to."""
        if not 0 <= index < self.length:
            raise ScheduleError(f"game {index} is not in a Swiss of {self.length} games")
        return index // self.per_round + 1

    def schedule(self, results: Iterable[Finished]) -> tuple[SwissRound, ...]:
        """Every round that ``results`` let be paired: round 1, and each next round once all
        games of the one before are in. Refuses results that are not the games of
        these rounds."""
        return self._replay(results)[0]

    def pending(self, results: Iterable[Finished]) -> list[Pairing]:
        """The games to play now: those of the last round paired that are not in ``results``."""
        results = list(results)
        rounds, _ = self._replay(results)
        done = {game.index for game in results}
        return [p for p in rounds[-1].pairings if p.index not in done]

    def finished(self, results: Iterable[Finished]) -> bool:
        """Whether every game of every round is in ``results``."""
        results = list(results)
        rounds, _ = self._replay(results)
        done = {game.index for game in results}
        return len(rounds) == self.rounds and all(p.index in done for p in rounds[-1].pairings)

    def standings(self, results: Iterable[Finished]) -> tuple[Standing, ...]:
        """The players by points, Buchholz, then pairing number, after the complete rounds."""
        _, records = self._replay(results)
        complete = len(records[self.players[0]].colours)

        def buchholz(name: str) -> float:
            return sum(records[o].points * times for o, times in records[name].met.items())

        order = sorted(
            self.players, key=lambda n: (-records[n].points, -buchholz(n), records[n].seed)
        )
        return tuple(
            Standing(
                rank=rank,
                name=name,
                seed=records[name].seed,
                points=records[name].points,
                buchholz=buchholz(name),
                played=sum(1 for c in records[name].colours if c is not None),
                byes=records[name].byes,
                colours="".join(c or "-" for c in records[name].colours)
                + "-" * (self.rounds - complete),
            )
            for rank, name in enumerate(order, start=1)
        )

    # --- rounds from results ---------------------------------------------------------

    def _replay(self, results: Iterable[Finished]) -> tuple[tuple[SwissRound, ...], _Records]:
        """The rounds paired so far and the players' records after the complete ones."""
        by_index: dict[int, Finished] = {}
        for game in results:
            index = game.index
            self.round_of(index)
            if index in by_index:
                raise ScheduleError(f"game {index} is in the results twice")
            if len(game.players) != 2 or len(game.places) != 2:
                raise ScheduleError(f"game {index} of a Swiss is not a game of two")
            by_index[index] = game
        records: _Records = {name: _Record(seed) for seed, name in enumerate(self.players, start=1)}
        rounds: list[SwissRound] = []
        for number in range(1, self.rounds + 1):
            boards, bye = _pair(records, self.players)
            current = self._round(number, boards, bye)
            rounds.append(current)
            played = [by_index.pop(p.index, None) for p in current.pairings]
            for pairing, found in zip(current.pairings, played, strict=True):
                if found is not None and tuple(found.players) != pairing.players:
                    raise ScheduleError(
                        f"game {pairing.index} was played by {' and '.join(found.players)}, but"
                        f" round {number} pairs {' and '.join(pairing.players)} in it"
                    )
            finished = [found for found in played if found is not None]
            if len(finished) < len(played):
                break
            self._score(records, current, finished)
        if by_index:
            index = min(by_index)
            raise ScheduleError(
                f"game {index} belongs to round {self.round_of(index)}, which cannot be paired"
                f" before round {len(rounds)} is finished"
            )
        return tuple(rounds), records

    def _round(self, number: int, boards: list[tuple[str, str]], bye: str | None) -> SwissRound:
        first = (number - 1) * self.per_round
        pairs_per_pairing = math.ceil(self.games / 2)
        pairings = []
        for board, (white, black) in enumerate(boards):
            for game in range(self.games):
                opening = None
                if self.openings is not None:
                    count = (number - 1) * pairs_per_pairing + game // 2
                    opening = self.openings[count % len(self.openings)]
                pairings.append(
                    Pairing(
                        index=first + board * self.games + game,
                        round=number,
                        players=(white, black) if game % 2 == 0 else (black, white),
                        opening=opening,
                    )
                )
        return SwissRound(number, tuple(boards), bye, tuple(pairings))

    def _score(self, records: _Records, current: SwissRound, games: list[Finished]) -> None:
        """Add a complete round to the records: points, opponents, colours and floats."""
        points = dict.fromkeys(self.players, 0.0)
        for game in games:
            first, second = game.places
            score = 1.0 if first < second else 0.0 if first > second else 0.5
            points[game.players[0]] += score
            points[game.players[1]] += 1 - score
        before = {name: records[name].points for name in self.players}
        for white, black in current.boards:
            for name, colour, opponent in ((white, WHITE, black), (black, BLACK, white)):
                record = records[name]
                record.colours.append(colour)
                record.met[opponent] = record.met.get(opponent, 0) + 1
                record.points += points[name]
                # Paired with a lower score: a downfloat; with a higher one: an upfloat.
                gap = before[name] - before[opponent]
                record.floats.append("down" if gap > 0 else "up" if gap < 0 else None)
        if current.bye is not None:
            record = records[current.bye]
            record.colours.append(None)
            record.floats.append("down")
            record.byes += 1
            record.points += self.bye * self.games


# --- the players' records ------------------------------------------------------------


@dataclass(slots=True)
class _Record:
    """What the pairing needs to know of a player after the complete rounds."""

    seed: int
    points: float = 0.0
    met: dict[str, int] = field(default_factory=dict)
    colours: list[str | None] = field(default_factory=list)  # None: the bye
    floats: list[str | None] = field(default_factory=list)  # "down", "up" or None
    byes: int = 0

    @property
    def difference(self) -> int:
        """Whites minus blacks."""
        return self.colours.count(WHITE) - self.colours.count(BLACK)

    def due(self) -> tuple[str | None, int]:
        """The colour due and how strongly: 3 absolutely, 2 strongly, 1 mildly, 0 none."""
        played = [c for c in self.colours if c is not None]
        if not played:
            return None, 0
        difference = self.difference
        other = BLACK if played[-1] == WHITE else WHITE
        if difference < -1:
            return WHITE, 3
        if difference > 1:
            return BLACK, 3
        if len(played) >= 2 and played[-1] == played[-2]:
            return other, 3
        if difference:
            return (WHITE if difference < 0 else BLACK), 2
        return other, 1


_Records = dict[str, _Record]


# --- pairing one round ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Level:
    """Which pairs may meet: ``rematches`` allowed or not, ``colours``: whether two players
    due the same colour absolutely are kept apart."""

    rematches: bool
    colours: bool


LEVELS = (_Level(rematches=False, colours=True), _Level(False, False), _Level(True, False))


def _pair(records: _Records, players: Sequence[str]) -> tuple[list[tuple[str, str]], str | None]:
    """The boards ``(white, black)`` of the next round and its bye."""
    pairer = _Pairer(records)
    order = sorted(players, key=pairer.rank_key)
    for level in LEVELS:  # the strictest level at which the field can be paired
        pairer.level = level
        bye = pairer.choose_bye(order)
        field_ = [name for name in order if name != bye]
        if pairer.pairable(frozenset(field_)):
            break
    pairs = pairer.pair_brackets(field_)
    boards = [pairer.colours(a, b) for a, b in pairs]
    boards.sort(
        key=lambda board: (
            -max(records[board[0]].points, records[board[1]].points),
            -(records[board[0]].points + records[board[1]].points),
            min(pairer.rank_key(board[0]), pairer.rank_key(board[1])),
        )
    )
    return boards, bye


@dataclass(slots=True)
class _Pairer:
    """The pairing of one round at one level (module docstring)."""

    records: _Records
    level: _Level = LEVELS[0]
    _pairable: dict[tuple[_Level, frozenset[str]], bool] = field(default_factory=dict)
    _dues: dict[str, tuple[str | None, int]] = field(default_factory=dict)

    def due(self, name: str) -> tuple[str | None, int]:
        """:meth:`_Record.due`, kept: records do not change while a round is paired."""
        if name not in self._dues:
            self._dues[name] = self.records[name].due()
        return self._dues[name]

    def rank_key(self, name: str) -> tuple[float, int]:
        record = self.records[name]
        return (-record.points, record.seed)

    def allowed(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` may meet at the current level."""
        if not self.level.rematches and b in self.records[a].met:
            return False
        if self.level.colours:
            due_a, strength_a = self.due(a)
            due_b, strength_b = self.due(b)
            if strength_a == 3 and strength_b == 3 and due_a == due_b:
                return False
        return True

    def pairable(self, players: frozenset[str]) -> bool:
        """Whether ``players`` can all be paired with each other at the current level."""
        if len(players) % 2:
            return False
        if self.level.rematches or not players:
            return True
        key = (self.level, players)
        if key not in self._pairable:
            self._pairable[key] = self._decide(players)
        return self._pairable[key]

    def _decide(self, players: frozenset[str]) -> bool:
        size = len(players)
        absolute: dict[str, set[str]] = {WHITE: set(), BLACK: set()}
        if self.level.colours:
            for name in players:
                due, strength = self.due(name)
                if strength == 3 and due is not None:
                    absolute[due].add(name)
            # Players due the same colour absolutely cannot meet: more than half is too many.
            if max(len(group) for group in absolute.values()) > size // 2:
                return False
        # Dirac: when everyone may meet at least half of the others, a Hamiltonian cycle,
        # hence a perfect matching, exists; no search needed (the usual case).
        if all(self._degree(name, players, absolute) * 2 >= size for name in players):
            return True
        ordered = sorted(players, key=self.rank_key)
        return perfect_matching(ordered, self.allowed) is not None

    def _degree(self, name: str, players: frozenset[str], absolute: dict[str, set[str]]) -> int:
        """How many of ``players`` ``name`` may meet."""
        barred = {other for other in self.records[name].met if other in players}
        for group in absolute.values():
            if name in group:
                barred |= group
        barred.discard(name)
        return len(players) - 1 - len(barred)

    def choose_bye(self, order: Sequence[str]) -> str | None:
        """The bye of an odd field: the lowest-ranked player with the fewest byes whose
        absence leaves the others pairable (else the lowest-ranked such player)."""
        if len(order) % 2 == 0:
            return None
        fewest = min(self.records[name].byes for name in order)
        candidates = [name for name in reversed(order) if self.records[name].byes == fewest]
        everyone = frozenset(order)
        for name in candidates:
            if self.pairable(everyone - {name}):
                return name
        return candidates[0]

    # --- brackets --------------------------------------------------------------------

    def pair_brackets(self, field_: Sequence[str]) -> list[tuple[str, str]]:
        """The pairs of the whole field, bracket by bracket from the top."""
        groups: list[list[str]] = []
        for name in field_:  # ranked, so each score group is a run
            if groups and self.records[groups[-1][0]].points == self.records[name].points:
                groups[-1].append(name)
            else:
                groups.append([name])
        pairs: list[tuple[str, str]] = []
        movers: list[str] = []
        for number, group in enumerate(groups):
            below = frozenset(name for later in groups[number + 1 :] for name in later)
            found, movers = _Bracket(self, movers, group, below).pair()
            pairs += found
        return pairs

    def colours(self, a: str, b: str) -> tuple[str, str]:
        """``(white, black)`` for a pair (FIDE's E.1–E.5, module docstring)."""
        if self.rank_key(b) < self.rank_key(a):
            a, b = b, a  # a is the higher-ranked
        ra, rb = self.records[a], self.records[b]
        due_a, strength_a = self.due(a)
        due_b, strength_b = self.due(b)
        if due_a is None and due_b is None:
            return (a, b) if ra.seed % 2 else (b, a)
        if due_a != due_b:
            if due_a is not None:
                return (a, b) if due_a == WHITE else (b, a)
            return (b, a) if due_b == WHITE else (a, b)
        # Both due the same colour: who gets it?
        if strength_a != strength_b:
            winner = a if strength_a > strength_b else b
        elif strength_a == 3 and abs(ra.difference) != abs(rb.difference):
            winner = a if abs(ra.difference) > abs(rb.difference) else b
        else:
            for colour_a, colour_b in zip(reversed(ra.colours), reversed(rb.colours), strict=True):
                if colour_a is not None and colour_b is not None and colour_a != colour_b:
                    # Swap the colours of the last round in which they differed.
                    return (b, a) if colour_a == WHITE else (a, b)
            winner = a
        loser = b if winner == a else a
        return (winner, loser) if due_a == WHITE else (loser, winner)


Cost = tuple[float, ...]
"""A bracket pairing's criteria, lower better, compared in order (module docstring):
rematches, floaters, their points, colour conflicts, strong ones, downfloats and upfloats
repeated from the previous round, then from the round before."""


_Candidate = tuple[Cost, tuple[tuple[str, str], ...], tuple[str, ...]]
"""A bracket pairing: its cost, pairs and floaters."""


class _Search(Exception):
    """Ends a bracket's search early: a pairing that nothing can beat was found."""


@dataclass(slots=True)
class _Bracket:
    """One bracket: ``movers`` floated down from above, then ``group`` (a score group), with
    ``below`` the players of the lower groups (who must stay pairable)."""

    pairer: _Pairer
    movers: list[str]
    group: list[str]
    below: frozenset[str]
    steps: int = 0
    best: _Candidate | None = None
    bound: Cost = ()
    target: Cost | None = None  # set for the second pass: the cost to reach
    allowance: int = 0  # the second pass's most departures from the halves' order

    @property
    def last(self) -> bool:
        return not self.below

    def pair(self) -> tuple[list[tuple[str, str]], list[str]]:
        """The bracket's pairs and the players it floats down.

        Two passes. The first finds the best cost quickly, trying good partners first;
        the second walks the bracket's own order and stops at the first pairing that
        costs no more, so that among equally good pairings the order decides."""
        players = (*self.movers, *self.group)
        self.bound = self._bound(players)
        with contextlib.suppress(_Search):  # a pairing nothing can beat ends the search
            self._search(players, (), (), (0.0,) * 9)
        if self.best is None:
            return self._greedy(players)
        first_pass = self.best
        self.target, self.best, self.steps = first_pass[0], None, 0
        with contextlib.suppress(_Search):
            for allowance in range(len(players) + 1):
                self.allowance = allowance
                self._search(players, (), (), (0.0,) * 9)
        _, pairs, floaters = self.best or first_pass
        return list(pairs), list(floaters)

    def _options(
        self, player: str, unassigned: Sequence[str], pairs_left: int
    ) -> list[tuple[str, bool]]:
        """Whom ``player`` (the first of ``unassigned``) may be paired with, in the
        bracket's order (module docstring), each with whether it departs from pairing the
        upper half with the lower (a floated player with another, a group player with one
        of its own half). The upper half has at most ``pairs_left`` players (the pairs
        still to make), so that those who float are the lowest. In the first pass, within
        each half, partners without a rematch or a colour conflict come first, so that
        good pairings come early."""
        movers = set(self.movers)
        residents = [name for name in unassigned if name not in movers]
        if player in movers:
            tiers = [residents, [name for name in unassigned[1:] if name in movers]]
        else:
            half = max(min(len(residents) // 2, pairs_left), 1)
            tiers = [residents[half:], residents[half - 1 : 0 : -1]]
        if self.target is None:
            tiers = [
                sorted(tier, key=lambda other: self._pair_cost(player, other)[:5]) for tier in tiers
            ]
        return [(other, number > 0) for number, tier in enumerate(tiers) for other in tier]

    def _pair_cost(self, a: str, b: str) -> Cost:
        records = self.pairer.records
        due_a, strength_a = self.pairer.due(a)
        due_b, strength_b = self.pairer.due(b)
        conflict = due_a is not None and due_a == due_b
        upfloats = (0.0, 0.0)
        if a in self.movers and b not in self.movers:
            upfloats = (_floated(records[b], "up", 1), _floated(records[b], "up", 2))
        return (
            float(b in records[a].met),
            0.0,
            0.0,
            float(conflict),
            float(conflict and min(strength_a, strength_b) >= 2),
            0.0,
            upfloats[0],
            0.0,
            upfloats[1],
        )

    def _float_cost(self, name: str) -> Cost:
        record = self.pairer.records[name]
        return (
            0.0,
            1.0,
            record.points,
            0.0,
            0.0,
            _floated(record, "down", 1),
            0.0,
            _floated(record, "down", 2),
            0.0,
        )

    def _bound(self, unassigned: Sequence[str]) -> Cost:
        """What pairing ``unassigned`` (the rest of the bracket) must add to the cost at
        least, compared as costs are: the fewest floaters (none in the last bracket, else
        one for an odd number), then the lowest score among them, then the colour
        conflicts and strong ones that the players' dues force with that many floaters
        (players due the same colour beyond all the others must meet each other)."""
        records = self.pairer.records
        floaters = 0 if self.last else len(unassigned) % 2
        lowest = min(records[name].points for name in unassigned) if floaters else 0.0
        dues = [self.pairer.due(name) for name in unassigned]
        forced = []
        for strong in (False, True):
            counts = [
                sum(1 for due, strength in dues if due == colour and (strength >= 2 or not strong))
                for colour in (WHITE, BLACK)
            ]
            surplus = max(counts) - (len(unassigned) - max(counts)) - floaters
            forced.append(float(max(0, math.ceil(surplus / 2))))
        return (0.0, float(floaters), lowest, forced[0], forced[1], 0.0, 0.0, 0.0, 0.0)

    def _search(
        self,
        unassigned: tuple[str, ...],
        pairs: tuple[tuple[str, str], ...],
        floaters: tuple[str, ...],
        cost: Cost,
        departures: int = 0,
    ) -> None:
        """Depth-first through the bracket's pairings: in the first pass keeping the best
        (the first of equals), in the second stopping at the first that reaches the target
        with at most :attr:`allowance` departures (so pairings of the upper half with the
        lower come first, then those with one departure, …, as the Dutch system tries
        transpositions before exchanges).

        Every criterion only grows as choices are added, so a partial pairing already
        worse than what is sought is dropped."""
        self.steps += 1
        if self.steps > SEARCH_LIMIT or (self.target is not None and departures > self.allowance):
            return
        if unassigned:
            hope = _add(cost, self._bound(unassigned))  # no pairing from here does better
            if self.target is not None and hope > self.target:
                return
            if self.target is None and self.best is not None and hope >= self.best[0]:
                return
        else:
            if self.target is not None and cost > self.target:
                return
            if self.target is None and self.best is not None and cost >= self.best[0]:
                return
            if self.last and floaters:
                return
            if not self.last and not self.pairer.pairable(self.below | set(floaters)):
                return
            self.best = (cost, pairs, floaters)
            if self.target is not None or cost <= self.bound:
                raise _Search
            return
        player, rest = unassigned[0], unassigned[1:]
        pairs_left = len(unassigned) // 2
        if self.target is not None:  # the second pass makes as many pairs as the target
            pairs_left = (len(self.movers) + len(self.group) - round(self.target[1])) // 2
            pairs_left -= len(pairs)
        if pairs_left <= 0:
            # Every pair is made: the rest float.
            self._search(
                rest, pairs, (*floaters, player), _add(cost, self._float_cost(player)), departures
            )
            return
        options = self._options(player, unassigned, pairs_left)
        for other, departs in options:
            if self.pairer.allowed(player, other):
                self._search(
                    tuple(name for name in rest if name != other),
                    (*pairs, (player, other)),
                    floaters,
                    _add(cost, self._pair_cost(player, other)),
                    departures + departs,
                )
        if not self.last:
            # Floating while a group player is left to pair with departs from the order.
            departs = any(not later for _, later in options)
            self._search(
                rest,
                pairs,
                (*floaters, player),
                _add(cost, self._float_cost(player)),
                departures + departs,
            )

    def _greedy(self, players: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
        """Each player in turn takes its first choice that keeps everyone else pairable,
        else floats (the search's fallback; it always succeeds, since the field was
        pairable when the bracket began)."""
        unassigned = list(players)
        pairs: list[tuple[str, str]] = []
        floaters: list[str] = []
        while unassigned:
            player = unassigned.pop(0)
            for other, _ in self._options(player, [player, *unassigned], len(players)):
                rest = self.below | set(floaters) | (set(unassigned) - {other})
                if self.pairer.allowed(player, other) and self.pairer.pairable(frozenset(rest)):
                    pairs.append((player, other))
                    unassigned.remove(other)
                    break
            else:
                if self.last:
                    raise ArithmeticError(f"{player} cannot be paired in the last bracket")
                floaters.append(player)
        return pairs, floaters


def _floated(record: _Record, way: str, rounds_ago: int) -> float:
    """1 if the player floated ``way`` (``"down"``, the bye included, or ``"up"``) that many
    rounds ago, else 0."""
    return float(len(record.floats) >= rounds_ago and record.floats[-rounds_ago] == way)


def _add(cost: Cost, more: Cost) -> Cost:
    return tuple(a + b for a, b in zip(cost, more, strict=True))
