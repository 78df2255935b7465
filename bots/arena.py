"""The arena: bot policies play Ivy against each other in one process, on simulated clocks.

No processes and no pipes: each :class:`~bots.sdk.Bot` is called directly with the
position and a :class:`~bots.sdk.Clock`, its thinking timed with ``time.perf_counter``;
the judgement is the referee's own sans-I/O :class:`~referee.session.GameSession`, so
clocks, forfeits and records are exactly a real match's (the arena is a harness, not a
bot: it is the one module under ``bots/`` that uses the referee's session). The
command line uses no time margin, to be strict.

From the command line::

    python -m bots.arena climber greedy --games 100 --tc 1+0.05

plays 100 games with colours alternating and prints the first bot's score; add
``--openings 4`` to start each pair of games (one with each colour) from four random
turns, so that the games differ from the very first turns.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bots import BUNDLED, make_bot
from bots.random import RandomBot
from bots.sdk import Bot, Clock, GameInfo, GameResult
from protocol.messages import DEFAULT_MAX_LINE_BYTES, TurnReply
from referee.clock import TimeControl
from referee.errors import RefereeError
from referee.games import get_entry
from referee.games.base import GameSettings
from referee.games.ivy import IvyGame, Player, Position, Turn
from referee.games.ivy.game import DEFAULT_TURN_LIMIT
from referee.pgn import GameRecord
from referee.session import Ending, GameSession
from referee.tally import Tally


@dataclass(frozen=True, slots=True)
class ArenaGame:
    """One arena game: the referee's record and ending, and each side's longest turn."""

    record: GameRecord
    ending: Ending
    longest: tuple[float, float]

    @property
    def players(self) -> tuple[str, str]:
        """Green's and Purple's names."""
        return self.record.tags["Green"], self.record.tags["Purple"]


def play_game(
    green: Bot,
    purple: Bot,
    *,
    time_control: TimeControl,
    turn_limit: int = DEFAULT_TURN_LIMIT,
    start: Position | None = None,
    watch: Callable[[Position, Turn], None] | None = None,
) -> ArenaGame:
    """Play one game between two bots, judged by the referee's own :class:`GameSession`.

    Each turn is timed with ``time.perf_counter`` and charged to the bot's clock
    exactly as the referee charges a bot process (margin included); an illegal turn
    or an overrun loses the game. ``watch`` (if given) sees every position with the
    turn played in it.
    """
    codec = get_entry("ivy").codec
    session = GameSession(
        IvyGame(),
        codec,
        GameSettings(
            players=2,
            start=None if start is None else str(start),
            options={"turn_limit": turn_limit},
        ),
        players=(green.name, purple.name),
        control=time_control,
        max_line_bytes=DEFAULT_MAX_LINE_BYTES,
    )
    bots = (green, purple)
    for seat, bot in enumerate(bots):
        bot.new_game(
            GameInfo(
                player=Player(seat),
                players=session.players,
                start=session.state.position,
                turn_limit=turn_limit,
                clock=Clock(session.clock.remaining(seat), time_control.increment),
            )
        )
    longest = [0.0, 0.0]
    while (deciding := session.deciding) is not None:
        request = session.next_request(session.plies + 1)
        position = session.state.position
        started = time.perf_counter()
        turn = bots[deciding].choose(position, Clock.from_info(request.message.clock))
        spent = time.perf_counter() - started
        longest[deciding] = max(longest[deciding], spent)
        if watch is not None:
            watch(position, turn)
        reply = TurnReply(id=request.message.id, actions=codec.actions_raw(turn))
        session.submit(deciding, reply, spent)
    ending = session.ending
    assert ending is not None
    for bot in bots:
        bot.game_over(GameResult(ending.result, ending.scores, ending.termination, ending.reason))
    return ArenaGame(session.record(), ending, (longest[0], longest[1]))


@dataclass(slots=True)
class MatchResult(Tally):
    """A series of games between bots A and B, from A's side."""

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
            f" {mean:.1f} turns a game; longest turn {a} {self.longest[0]:.3f} s,"
            f" {b} {self.longest[1]:.3f} s; forfeits: {len(self.forfeits)}"
        )


def random_opening(turns: int, seed: int) -> Position:
    """The position after ``turns`` turns of seeded random play from the start."""
    player = RandomBot(seed)
    position = Position.START
    for _ in range(turns):
        if position.winner_at_feed() is not None:
            break
        position = position.play(player.choose(position, Clock(1.0)))
    return position


def play_match(
    make_a: Callable[[int], Bot],
    make_b: Callable[[int], Bot],
    *,
    games: int,
    time_control: TimeControl,
    turn_limit: int = DEFAULT_TURN_LIMIT,
    seed: int = 0,
    opening_turns: int = 0,
    report: Callable[[int, ArenaGame], None] | None = None,
) -> MatchResult:
    """Play ``games`` games between fresh bots from ``make_a`` and ``make_b``.

    A plays Green in the even-numbered games and Purple in the odd ones; game ``i``
    seeds both bots with ``seed + i`` so every game can differ. With ``opening_turns``,
    each pair of games starts from the same :func:`random_opening`, once with each
    colour. ``report`` sees each finished game.
    """
    match = MatchResult(("", ""))
    for index in range(games):
        a, b = make_a(seed + index), make_b(seed + index)
        match.names = (a.name, b.name)
        a_seat = index % 2
        green, purple = (a, b) if a_seat == 0 else (b, a)
        start = random_opening(opening_turns, seed + index // 2) if opening_turns else None
        played = play_game(
            green, purple, time_control=time_control, turn_limit=turn_limit, start=start
        )
        score = played.ending.scores[a_seat]
        if score == 1.0:
            match.wins += 1
        elif score == 0.0:
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


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bots.arena A B [--games N] [--tc BASE+INC]``: play and print A's score."""
    parser = argparse.ArgumentParser(description="Play bundled Ivy bots against each other.")
    parser.add_argument("a", choices=sorted(BUNDLED), help="the bot whose score is printed")
    parser.add_argument("b", choices=sorted(BUNDLED), help="its opponent")
    parser.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    parser.add_argument("--tc", default="1+0.05", help="time control BASE+INC in seconds")
    parser.add_argument("--turn-limit", type=int, default=DEFAULT_TURN_LIMIT)
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game")
    parser.add_argument(
        "--openings",
        type=int,
        default=0,
        metavar="TURNS",
        help="start each pair of games from TURNS random turns (default: the start position)",
    )
    parser.add_argument("--quiet", action="store_true", help="print the summary only")
    args = parser.parse_args(argv)
    try:
        time_control = TimeControl.parse(args.tc, margin=0.0)
    except RefereeError as error:
        parser.error(str(error))

    def report(index: int, played: ArenaGame) -> None:
        green, purple = played.players
        print(
            f"game {index + 1}: {green} (Green) vs {purple} (Purple)"
            f" {played.ending.result} in {len(played.record.turns)} turns:"
            f" {played.ending.reason}",
            flush=True,
        )

    match = play_match(
        lambda seed: make_bot(args.a, seed),
        lambda seed: make_bot(args.b, seed),
        games=args.games,
        time_control=time_control,
        turn_limit=args.turn_limit,
        seed=args.seed,
        opening_turns=args.openings,
        report=None if args.quiet else report,
    )
    print(match.summary())
    for line in match.forfeits:
        print(f"  {line}")


if __name__ == "__main__":
    main()
