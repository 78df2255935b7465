"""The arena: bots play each other in one process, on simulated clocks.

No processes and no pipes: each :class:`~bots.sdk.GameBot` sits in an in-process seat
(:class:`InProcessSeat`) and is handed the protocol's messages as objects
(:meth:`~bots.sdk.GameBot.start`, :meth:`~bots.sdk.GameBot.answer`,
:meth:`~bots.sdk.GameBot.finish`), its thinking timed with ``time.perf_counter``. The
game runs through the referee's own driver and sans-I/O session
(:func:`referee.driver.drive`), so clocks, forfeits and records are exactly a real
match's (the arena is a harness, not a bot: it is the one module under ``bots/`` that
uses the referee's runner). The command line uses no time margin, to be strict.

From the command line::

    python -m bots.arena climber greedy --games 100 --tc 1+0.05

plays 100 games with colours alternating and prints the first bot's score; add
``--openings 4`` to start each pair of games (one with each colour) from four random
turns, so that the games differ from the very first turns (Ivy).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bots import BUNDLED, make_bot
from bots.random import RandomBot
from bots.sdk import Clock, GameBot
from protocol.messages import DEFAULT_MAX_LINE_BYTES, ErrorMessage, TurnReply
from referee.clock import DEFAULT_MARGIN, Allowances, TimeControl
from referee.driver import play_in_process
from referee.errors import BotFault, RefereeError, SettingsError
from referee.games import get_entry
from referee.games.base import GameSettings
from referee.games.ivy import Position
from referee.pgn import GameRecord
from referee.session import Ending, GameSession, Request
from referee.tally import Tally


class InProcessSeat:
    """A bot of the referee's own process in one seat (the driver's
    :class:`~referee.driver.Seat`): each request is a call, timed by ``timer``.

    ``longest`` is the longest it took to answer, in seconds. ``watch`` (if given)
    sees each request with the reply the bot gave, after the timing.
    """

    forgiving = False

    def __init__(
        self,
        bot: GameBot[Any, Any, Any],
        *,
        name: str | None = None,
        watch: Callable[[Request, TurnReply], None] | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.bot = bot
        self._name = name or bot.name
        self._watch = watch
        self._timer = timer
        self._ids = 0
        self.longest = 0.0

    @property
    def name(self) -> str:
        return self._name

    @property
    def next_id(self) -> int:
        return self._ids + 1

    async def start(self, session: GameSession, seat: int) -> None:
        self._ids += 1
        self.bot.start(session.new_game(seat, self._ids))

    async def decide(self, request: Request) -> tuple[TurnReply, float]:
        self._ids = request.message.id
        started = self._timer()
        reply = self.bot.answer(request.message)
        spent = self._timer() - started
        self.longest = max(self.longest, spent)
        if self._watch is not None:
            self._watch(request, reply)
        return reply, spent

    async def refused(self, seat: int, error: ErrorMessage) -> None:
        """Nothing to tell: the record says why the bot lost."""

    async def forfeited(self, seat: int, fault: BotFault, error: ErrorMessage | None) -> None:
        """Nothing to tell: the record says why the bot lost."""

    async def pending_fault(self, seat: int) -> BotFault | None:
        return None  # it is only ever asked, and answers at once

    async def finish(self, session: GameSession, seat: int) -> None:
        if session.ending is not None:
            self._ids += 1
            self.bot.finish(session.game_over(self._ids))


@dataclass(frozen=True, slots=True)
class ArenaGame:
    """One arena game: the referee's record and ending, and each seat's longest answer."""

    record: GameRecord
    ending: Ending
    players: tuple[str, ...]
    longest: tuple[float, ...]


def play_game(
    *bots: GameBot[Any, Any, Any],
    time_control: TimeControl,
    margin: float = DEFAULT_MARGIN,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    start: Position | str | None = None,
    watch: Callable[[Request, TurnReply], None] | None = None,
) -> ArenaGame:
    """Play one game between ``bots`` (in seat order) of the game they play.

    Judged by the referee's own driver and session: each answer is timed with
    ``time.perf_counter`` and charged to the bot's clock exactly as the referee
    charges a bot process (``margin`` included); an illegal decision or an overrun
    loses the game. ``options`` are the game's rule settings, ``seed`` seeds its
    chance, ``start`` is a start position in its notation. ``watch`` (if given)
    sees every request with the reply given to it.
    """
    games = {bot.game for bot in bots}
    if len(games) != 1:
        raise SettingsError(f"the bots play different games: {', '.join(sorted(games))}")
    entry = get_entry(games.pop())
    session = GameSession(
        entry.rules,
        entry.codec,
        GameSettings(
            players=len(bots),
            seed=seed,
            start=None if start is None else str(start),
            options=entry.rules.check_options(options or {}),
        ),
        players=tuple(bot.name for bot in bots),
        control=time_control,
        allowances=Allowances(margin=margin),
        max_line_bytes=DEFAULT_MAX_LINE_BYTES,
    )
    seats = [InProcessSeat(bot, watch=watch) for bot in bots]
    ending = play_in_process(session, seats)
    assert ending is not None, "in-process bots cannot stop a game"
    return ArenaGame(
        session.record(), ending, session.players, tuple(seat.longest for seat in seats)
    )


@dataclass(slots=True)
class MatchResult(Tally):
    """A series of games between bots A and B, from A's side (by place)."""

    names: tuple[str, str]
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    longest: list[float] = field(default_factory=lambda: [0.0, 0.0])

    def summary(self) -> str:
        """One line: the score, the record, how long games went and the longest turns."""
        a, b = self.names
        mean = sum(self.lengths) / max(1, len(self.lengths))
        percent = 100 * self.score / max(1, self.games)
        return (
            f"{a} vs {b}: {self.score:g}/{self.games} ({percent:.1f}%),"
            f" +{self.wins} ={self.draws} -{self.losses};"
            f" {mean:.1f} decisions a game; longest turn {a} {self.longest[0]:.3f} s,"
            f" {b} {self.longest[1]:.3f} s; forfeits: {len(self.forfeits)}"
        )


def random_opening(turns: int, seed: int) -> Position:
    """The Ivy position after ``turns`` turns of seeded random play from the start."""
    player = RandomBot(seed)
    position = Position.START
    for _ in range(turns):
        if position.winner_at_feed() is not None:
            break
        position = position.play(player.choose(position, Clock(1.0)))
    return position


def play_match(
    make_a: Callable[[int], GameBot[Any, Any, Any]],
    make_b: Callable[[int], GameBot[Any, Any, Any]],
    *,
    games: int,
    time_control: TimeControl,
    margin: float = DEFAULT_MARGIN,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    opening_turns: int = 0,
    report: Callable[[int, ArenaGame], None] | None = None,
) -> MatchResult:
    """Play ``games`` two-seat games between fresh bots from ``make_a`` and ``make_b``.

    A takes seat 0 in the even-numbered games and seat 1 in the odd ones; game ``i``
    seeds both bots, and the game's chance, with ``seed + i`` so every game can
    differ. With ``opening_turns`` (Ivy), each pair of games starts from the same
    :func:`random_opening`, once with each colour. ``report`` sees each finished game.
    """
    match = MatchResult(("", ""))
    for index in range(games):
        a, b = make_a(seed + index), make_b(seed + index)
        match.names = (a.name, b.name)
        a_seat = index % 2
        seated = (a, b) if a_seat == 0 else (b, a)
        start = random_opening(opening_turns, seed + index // 2) if opening_turns else None
        played = play_game(
            *seated,
            time_control=time_control,
            margin=margin,
            options=options,
            seed=seed + index,
            start=start,
        )
        mine, theirs = played.ending.places[a_seat], played.ending.places[1 - a_seat]
        if mine < theirs:
            match.wins += 1
        elif mine > theirs:
            match.losses += 1
        else:
            match.draws += 1
        if played.ending.termination != "normal":
            match.forfeits.append(f"game {index + 1}: {played.ending.reason}")
        match.lengths.append(len(played.record.turns))
        match.longest[0] = max(match.longest[0], played.longest[a_seat])
        match.longest[1] = max(match.longest[1], played.longest[1 - a_seat])
        if report is not None:
            report(index, played)
    return match


def _option(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key.strip(), value.strip()


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bots.arena A B [--games N] [--tc BASE+INC]``: play and print A's score."""
    parser = argparse.ArgumentParser(description="Play bundled bots against each other.")
    parser.add_argument("a", choices=sorted(BUNDLED), help="the bot whose score is printed")
    parser.add_argument("b", choices=sorted(BUNDLED), help="its opponent")
    parser.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    parser.add_argument("--tc", default="1+0.05", help="time control BASE+INC in seconds")
    parser.add_argument(
        "--option",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule setting of the game (repeatable), e.g. turn_limit=100",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game")
    parser.add_argument(
        "--openings",
        type=int,
        default=0,
        metavar="TURNS",
        help="Ivy: start each pair of games from TURNS random turns (default: the start)",
    )
    parser.add_argument("--quiet", action="store_true", help="print the summary only")
    args = parser.parse_args(argv)
    try:
        time_control = TimeControl.parse(args.tc)
    except RefereeError as error:
        parser.error(str(error))

    def report(index: int, played: ArenaGame) -> None:
        print(
            f"game {index + 1}: {' vs '.join(played.players)}"
            f" {played.ending.result} in {len(played.record.turns)} decisions:"
            f" {played.ending.reason}",
            flush=True,
        )

    try:
        match = play_match(
            lambda seed: make_bot(args.a, seed),
            lambda seed: make_bot(args.b, seed),
            games=args.games,
            time_control=time_control,
            margin=0.0,
            options=dict(args.option),
            seed=args.seed,
            opening_turns=args.openings,
            report=None if args.quiet else report,
        )
    except RefereeError as error:
        parser.error(str(error))
    print(match.summary())
    for line in match.forfeits:
        print(f"  {line}")


if __name__ == "__main__":
    main()
