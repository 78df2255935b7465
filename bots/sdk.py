"""A small synchronous SDK for Ivy bots: the protocol loop, so a bot is only its policy.

A bot subclasses :class:`Bot`, names itself and implements :meth:`Bot.choose`::

    from bots.sdk import Bot, Clock, main
    from referee.games.ivy import Position, Turn

    class Passer(Bot):
        name = "passer"

        def choose(self, position: Position, clock: Clock) -> Turn:
            return Turn.PASS

    if __name__ == "__main__":
        main(Passer)

:func:`main` reads ``--seed`` from the command line and calls :func:`run`, which speaks
the JSON-lines protocol (``docs/protocol.md``) on stdin/stdout: it answers ``new_game``
with ``ready``, hands every ``turn`` request's position and clock to ``choose``, writes
the turn back, flushes after every line, and returns on ``quit`` or end of input. The
optional hooks :meth:`Bot.new_game` and :meth:`Bot.game_over` see each game start and
end; :meth:`Bot.log` sends a ``log`` line to the referee at any time.

Messages are decoded with the protocol package's own types, and positions are the
engine's :class:`~referee.games.ivy.Position`, so a bot can search with the same rules
the referee enforces. The arena (:mod:`bots.arena`) drives the same :class:`Bot`
objects in-process, without any protocol.
"""

from __future__ import annotations

import abc
import argparse
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, TextIO

import msgspec

from protocol.ivy import CODEC, decode_view
from protocol.messages import (
    REFEREE_TO_BOT,
    ClockInfo,
    ErrorMessage,
    GameOver,
    Log,
    NewGame,
    Quit,
    Ready,
    TurnReply,
    TurnRequest,
    encode_line,
)
from referee.games.ivy import Player, Position, Turn
from referee.games.ivy.game import DEFAULT_TURN_LIMIT


@dataclass(frozen=True, slots=True)
class Clock:
    """A bot's clock when it is asked for a turn, in seconds.

    ``remaining`` is the time it has for this turn; ``increment`` what it gains after
    each turn (Fischer); ``per_turn`` the fixed time of every turn under a per-turn
    time control (``None`` under Fischer).
    """

    remaining: float
    increment: float = 0.0
    per_turn: float | None = None

    @classmethod
    def from_info(cls, info: ClockInfo) -> Clock:
        """The clock a ``turn`` request carries."""
        return cls.from_ms(info.remaining_ms, info.increment_ms, info.per_turn_ms)

    @classmethod
    def from_ms(cls, remaining_ms: int, increment_ms: int, per_turn_ms: int | None) -> Clock:
        """The clock from the protocol's milliseconds."""
        per_turn = None if per_turn_ms is None else per_turn_ms / 1000
        return cls(remaining_ms / 1000, increment_ms / 1000, per_turn)

    def budget(
        self,
        *,
        turns_to_go: float = 30.0,
        increment_share: float = 0.8,
        cap: float = 5.0,
    ) -> float:
        """A time to spend on this turn: a share of what is left plus most of the increment.

        Under Fischer: ``remaining / turns_to_go + increment * increment_share``, never
        more than half of ``remaining`` nor ``cap``. Under a per-turn control: half of
        the turn's time, capped. Searches stop when it is spent and still answer in time.
        """
        if self.per_turn is not None:
            return max(0.0, min(self.per_turn * 0.5, self.remaining * 0.5, cap))
        spend = self.remaining / turns_to_go + self.increment * increment_share
        return max(0.0, min(spend, self.remaining * 0.5, cap))


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What a bot learns when a game starts (the ``new_game`` message, decoded).

    ``player`` is the bot's colour, ``players`` the names of both seats in seat order,
    ``start`` the position the game starts from and ``clock`` the bot's clock before
    its first turn.
    """

    player: Player
    players: tuple[str, ...]
    start: Position
    turn_limit: int = DEFAULT_TURN_LIMIT
    clock: Clock | None = None


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended (the ``game_over`` message): ``scores`` are in seat order."""

    result: str
    scores: tuple[float, ...]
    termination: str
    reason: str


class Bot(abc.ABC):
    """A bot's policy: pick a turn for a position. Subclasses set ``name`` and ``choose``.

    ``seed`` (from ``--seed``) seeds :attr:`rng`, the bot's only source of chance, so a
    seeded bot plays the same games again.
    """

    name: ClassVar[str] = "bot"
    author: ClassVar[str | None] = None
    version: ClassVar[str | None] = None

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self._log_sink: Callable[[str], None] | None = None

    def new_game(self, info: GameInfo) -> None:  # noqa: B027 - an optional hook
        """Called when a game starts, before the bot answers ``ready``."""

    @abc.abstractmethod
    def choose(self, position: Position, clock: Clock) -> Turn:
        """The turn to play in ``position`` (the bot is to move) with ``clock`` left."""

    def game_over(self, result: GameResult) -> None:  # noqa: B027 - an optional hook
        """Called when a game ends (the bot may play another one after it)."""

    def log(self, text: str) -> None:
        """Send ``text`` to the referee's log (dropped when nothing listens)."""
        if self._log_sink is not None:
            self._log_sink(text)

    def attach_log(self, sink: Callable[[str], None] | None) -> None:
        """Route :meth:`log` to ``sink`` (the SDK loop or the arena sets it)."""
        self._log_sink = sink


class _Session:
    """One conversation with the referee over a pair of text streams."""

    def __init__(self, bot: Bot, reader: TextIO, writer: TextIO) -> None:
        self.bot = bot
        self.reader = reader
        self.writer = writer
        self.buffer = bytearray()

    def send(self, message: Ready | TurnReply | Log) -> None:
        """Write one protocol line and flush it at once."""
        self.writer.write(encode_line(message, self.buffer).decode())
        self.writer.flush()

    def serve(self) -> None:
        """Answer requests until ``quit`` or the end of input."""
        self.bot.attach_log(lambda text: self.send(Log(message=text)))
        try:
            for line in self.reader:
                if line.strip() and not self.handle(line):
                    return
        finally:
            self.bot.attach_log(None)

    def handle(self, line: str) -> bool:
        """React to one line from the referee; ``False`` once it said ``quit``."""
        try:
            message = REFEREE_TO_BOT.decode(line)
        except msgspec.DecodeError as error:
            print(f"{self.bot.name}: ignored a line I cannot read: {error}", file=sys.stderr)
            return True
        if isinstance(message, TurnRequest):
            view = decode_view(message.view)
            turn = self.bot.choose(
                Position.from_string(view.position), Clock.from_info(message.clock)
            )
            self.send(TurnReply(id=message.id, actions=CODEC.actions_raw(turn)))
        elif isinstance(message, NewGame):
            self.bot.new_game(_game_info(message))
            bot = self.bot
            self.send(Ready(id=message.id, name=bot.name, author=bot.author, version=bot.version))
        elif isinstance(message, GameOver):
            self.bot.game_over(
                GameResult(message.result, message.scores, message.termination, message.reason)
            )
        elif isinstance(message, ErrorMessage):
            complaint = f"{message.code}: {message.message}"
            print(f"{self.bot.name}: referee says {complaint}", file=sys.stderr)
        elif isinstance(message, Quit):
            return False
        return True


def _game_info(message: NewGame) -> GameInfo:
    """The :class:`GameInfo` of a ``new_game`` message."""
    control = message.time_control
    remaining_ms = control.base_ms if control.per_turn_ms is None else control.per_turn_ms
    clock = Clock.from_ms(remaining_ms, control.increment_ms, control.per_turn_ms)
    turn_limit = message.settings.get("turn_limit", DEFAULT_TURN_LIMIT)
    return GameInfo(
        player=Player(message.seat),
        players=message.players,
        start=Position.from_string(message.position),
        turn_limit=turn_limit if isinstance(turn_limit, int) else DEFAULT_TURN_LIMIT,
        clock=clock,
    )


def run(bot: Bot, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
    """Play games for ``bot`` over the protocol until ``quit`` or end of input.

    Reads ``stdin`` and writes ``stdout`` (the process's own, in UTF-8, by default);
    tests pass ``io.StringIO`` objects.
    """
    if stdin is None:
        sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
        stdin = sys.stdin
    if stdout is None:
        sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
        stdout = sys.stdout
    _Session(bot, stdin, stdout).serve()


def main(make_bot: Callable[[int | None], Bot], argv: Sequence[str] | None = None) -> None:
    """Command-line entry of a bot module: parse ``--seed``, build the bot, :func:`run` it."""
    parser = argparse.ArgumentParser(description="An Ivy bot speaking the referee's protocol.")
    parser.add_argument("--seed", type=int, default=None, help="seed of the bot's randomness")
    args = parser.parse_args(argv)
    run(make_bot(args.seed))
