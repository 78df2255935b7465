"""The arena: bot policies play Ivy against each other in one process, on simulated clocks.

No processes and no protocol: each :class:`~bots.sdk.Bot` is called directly with the
position and a :class:`~bots.sdk.Clock` measured with ``time.perf_counter``, under a
Fischer time control like the referee's (the increment is added after every turn). A
bot that overruns its clock or plays an illegal turn loses the game, as under the
referee; the rules and the end of the game come from the engine's ``IvyGame``.

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
from referee.errors import IllegalDecision, RefereeError
from referee.games.base import GameSettings
from referee.games.ivy import IvyGame, Player, Position, Turn
from referee.games.ivy.game import DEFAULT_TURN_LIMIT
from referee.tally import Tally


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A Fischer time control in seconds: ``base`` to start with, ``increment`` per turn."""

    base: float
    increment: float = 0.0

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Read PGN-style ``"1+0.05"`` (or ``"5"``); raises :class:`RefereeError`."""
        base, _, increment = text.partition("+")
        try:
            control = cls(float(base), float(increment or 0))
        except ValueError:
            raise RefereeError(f"bad time control {text!r} (expected BASE+INCREMENT)") from None
        if control.base <= 0 or control.increment < 0:
            raise RefereeError(f"bad time control {text!r}: base must be > 0, increment >= 0")
        return control

    def __str__(self) -> str:
        return f"{self.base:g}+{self.increment:g}"


@dataclass(slots=True)
class GameRecord:
    """One arena game: who played which colour, how it ended and what each side spent.

    ``scores`` are Green's and Purple's; ``turns`` the turns played, in order;
    ``used`` the total seconds each side thought and ``longest`` its longest turn.
    """

    players: tuple[str, str]
    scores: tuple[float, float] = (0.5, 0.5)
    reason: str = ""
    termination: str = "normal"
    turns: list[Turn] = field(default_factory=list)
    used: list[float] = field(default_factory=lambda: [0.0, 0.0])
    longest: list[float] = field(default_factory=lambda: [0.0, 0.0])


def play_game(
    green: Bot,
    purple: Bot,
    *,
    time_control: TimeControl,
    turn_limit: int = DEFAULT_TURN_LIMIT,
    start: Position | None = None,
    watch: Callable[[Position, Turn], None] | None = None,
) -> GameRecord:
    """Play one game between two bots and return its record.

    ``watch`` (if given) sees every position with the turn played in it.
    """
    game = IvyGame()
    settings = GameSettings(
        players=2,
        start=None if start is None else str(start),
        options={"turn_limit": turn_limit},
    )
    state = game.start(settings)
    bots = (green, purple)
    record = GameRecord(players=(green.name, purple.name))
    remaining = [time_control.base, time_control.base]
    for seat, bot in enumerate(bots):
        bot.new_game(
            GameInfo(
                player=Player(seat),
                players=record.players,
                start=state.position,
                turn_limit=turn_limit,
                clock=Clock(time_control.base, time_control.increment),
            )
        )
    while True:
        outcome = game.outcome(state)
        if outcome is not None:
            record.scores = (outcome.scores[0], outcome.scores[1])
            record.reason = outcome.reason
            break
        seat = int(state.position.to_move)
        bot = bots[seat]
        clock = Clock(remaining[seat], time_control.increment)
        started = time.perf_counter()
        turn = bot.choose(state.position, clock)
        spent = time.perf_counter() - started
        record.used[seat] += spent
        record.longest[seat] = max(record.longest[seat], spent)
        if spent > remaining[seat]:
            why = f"out of time ({spent:.3f} s > {clock.remaining:.3f} s)"
            _forfeit(record, seat, "time forfeit", why)
            break
        remaining[seat] += time_control.increment - spent
        if watch is not None:
            watch(state.position, turn)
        try:
            state = game.apply(state, seat, turn)
        except IllegalDecision as error:
            _forfeit(record, seat, "rules infraction", f"illegal turn {turn}: {error}")
            break
        record.turns.append(turn)
    result = {(1.0, 0.0): "1-0", (0.0, 1.0): "0-1"}.get(record.scores, "1/2-1/2")
    for bot in bots:
        bot.game_over(GameResult(result, record.scores, record.termination, record.reason))
    return record


def _forfeit(record: GameRecord, seat: int, termination: str, why: str) -> None:
    """Record that ``seat`` lost the game for a fault."""
    record.scores = (0.0, 1.0) if seat == 0 else (1.0, 0.0)
    record.termination = termination
    record.reason = f"{Player(seat).title} {why}"


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
    report: Callable[[int, GameRecord], None] | None = None,
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
        record = play_game(
            green, purple, time_control=time_control, turn_limit=turn_limit, start=start
        )
        score = record.scores[a_seat]
        if score == 1.0:
            match.wins += 1
        elif score == 0.0:
            match.losses += 1
        else:
            match.draws += 1
        if record.termination != "normal":
            match.forfeits.append(f"game {index + 1}: {record.reason}")
        match.lengths.append(len(record.turns))
        match.longest[0] = max(match.longest[0], record.longest[a_seat])
        match.longest[1] = max(match.longest[1], record.longest[1 - a_seat])
        if report is not None:
            report(index, record)
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
        time_control = TimeControl.parse(args.tc)
    except RefereeError as error:
        parser.error(str(error))

    def report(index: int, record: GameRecord) -> None:
        green, purple = record.players
        print(
            f"game {index + 1}: {green} (Green) vs {purple} (Purple)"
            f" {record.scores[0]:g}-{record.scores[1]:g} in {len(record.turns)} turns:"
            f" {record.reason}",
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
