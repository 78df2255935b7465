"""A small synchronous SDK for bots of any registered game: the protocol loop, so a bot
is only its policy.

A bot subclasses the base class of its game, names itself and implements ``choose``:

- Ivy: :class:`Bot`, ``choose(position, clock) -> Turn``;
- Verdant: :class:`VerdantBot`, ``choose(situation, clock) -> steps``.

For example::

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
with ``ready``, hands every ``turn`` request, decoded for the bot's game, and its clock to
``choose``, writes the decision back, flushes after every line, and returns on ``quit``
or end of input. The optional hooks ``new_game`` and ``game_over`` see each game start
and end; :meth:`GameBot.log` sends a ``log`` line to the referee at any time.

Every bot is a :class:`GameBot`: the policy half (``new_game``, ``choose``,
``game_over``), written by the bot's author, and the protocol half, written once per game
here (how a ``new_game`` and a ``turn`` request read in that game, how a decision is
written). A driver that runs bots in-process hands them protocol messages with
:meth:`GameBot.start`, :meth:`GameBot.answer` and :meth:`GameBot.finish`, with no I/O.
Messages are decoded with the protocol package's own types and the game's own codec, and
bots see the referee's own rules values, so a bot can search with the same rules the
referee enforces.
"""

from __future__ import annotations

import abc
import argparse
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TextIO, TypeVar

import msgspec

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
from referee.games.ivy.codec import CODEC, decode_view
from referee.games.ivy.game import DEFAULT_TURN_LIMIT
from referee.games.verdant import rules as verdant_rules
from referee.games.verdant.codec import CODEC as VERDANT_CODEC
from referee.games.verdant.codec import VerdantWireView, view_from_wire
from referee.games.verdant.codec import decode_view as decode_verdant_view
from referee.games.verdant.rules import state_from_view
from referee.games.verdant.state import VerdantState
from referee.games.verdant.steps import Decision as VerdantDecision
from referee.games.verdant.steps import Step


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

    @classmethod
    def at_start(cls, message: NewGame) -> Clock:
        """The clock before the first turn of the game ``message`` starts."""
        control = message.time_control
        remaining_ms = control.base_ms if control.per_turn_ms is None else control.per_turn_ms
        return cls.from_ms(remaining_ms, control.increment_ms, control.per_turn_ms)

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
class GameResult:
    """How a game ended (the ``game_over`` message): ``scores`` and ``places`` (1 is best,
    ties share) are in seat order."""

    result: str
    scores: tuple[float, ...]
    termination: str
    reason: str
    places: tuple[int, ...] = ()

    @classmethod
    def of(cls, message: GameOver) -> GameResult:
        """The result a ``game_over`` message announces."""
        return cls(
            message.result, message.scores, message.termination, message.reason, message.places
        )


InfoT = TypeVar("InfoT")
SituationT = TypeVar("SituationT")
DecisionT = TypeVar("DecisionT")


class GameBot(abc.ABC, Generic[InfoT, SituationT, DecisionT]):
    """A bot for one game (``game``, as ``new_game`` names it).

    The bot's author writes the policy: ``choose`` (a decision for the situation it is
    asked about) and the optional hooks ``new_game`` and ``game_over``. Each game's base
    class (:class:`Bot`, :class:`VerdantBot`) reads the protocol for it: what a
    ``new_game`` tells (``InfoT``), what a ``turn`` request asks (``SituationT``) and how
    a decision (``DecisionT``) is written.

    ``seed`` (from ``--seed``) seeds :attr:`rng`, the bot's only source of chance, so a
    seeded bot plays the same games again.
    """

    name: ClassVar[str] = "bot"
    author: ClassVar[str | None] = None
    version: ClassVar[str | None] = None
    game: ClassVar[str]
    """The game the bot plays, as ``new_game`` names it."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self._log_sink: Callable[[str], None] | None = None

    # --- the policy ---------------------------------------------------------------

    def new_game(self, info: InfoT) -> None:
        """Called when a game starts, before the bot answers ``ready``."""

    @abc.abstractmethod
    def choose(self, situation: SituationT, clock: Clock) -> DecisionT:
        """The decision to send in ``situation`` with ``clock`` left."""

    def game_over(self, result: GameResult) -> None:
        """Called when a game ends (the bot may play another one after it)."""

    def log(self, text: str) -> None:
        """Send ``text`` to the referee's log (dropped when nothing listens)."""
        if self._log_sink is not None:
            self._log_sink(text)

    def attach_log(self, sink: Callable[[str], None] | None) -> None:
        """Route :meth:`log` to ``sink`` (the SDK loop or an in-process driver sets it)."""
        self._log_sink = sink

    # --- the protocol, once per game ------------------------------------------------

    @abc.abstractmethod
    def read_new_game(self, message: NewGame) -> InfoT:
        """What ``message`` tells a bot of this game."""

    @abc.abstractmethod
    def read_turn(self, message: TurnRequest) -> SituationT:
        """What the ``turn`` request ``message`` asks, as the bot's game sees it."""

    @abc.abstractmethod
    def write_decision(self, decision: DecisionT) -> msgspec.Raw:
        """``decision`` as a reply's ``actions``."""

    # --- a driver's entry points: messages in, messages out ---------------------------

    def start(self, message: NewGame) -> Ready:
        """Take the ``new_game`` ``message`` and answer it."""
        if message.game != self.game:
            raise WrongGame(f"{self.name} plays {self.game}, not {message.game}")
        self.new_game(self.read_new_game(message))
        return Ready(id=message.id, name=self.name, author=self.author, version=self.version)

    def answer(self, message: TurnRequest) -> TurnReply:
        """The reply to the ``turn`` request ``message``."""
        decision = self.choose(self.read_turn(message), Clock.from_info(message.clock))
        return TurnReply(id=message.id, actions=self.write_decision(decision))

    def finish(self, message: GameOver) -> None:
        """Take the ``game_over`` ``message``."""
        self.game_over(GameResult.of(message))


class WrongGame(Exception):
    """A ``new_game`` for a game the bot does not play."""


# --- Ivy ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What an Ivy bot learns when a game starts (the ``new_game`` message, decoded).

    ``player`` is the bot's colour, ``players`` the names of both seats in seat order,
    ``start`` the position the game starts from and ``clock`` the bot's clock before
    its first turn.
    """

    player: Player
    players: tuple[str, ...]
    start: Position
    turn_limit: int = DEFAULT_TURN_LIMIT
    clock: Clock | None = None


class Bot(GameBot[GameInfo, Position, Turn]):
    """An Ivy bot: picks a turn for a position. Subclasses set ``name`` and ``choose``."""

    game: ClassVar[str] = "ivy"

    @abc.abstractmethod
    def choose(self, position: Position, clock: Clock) -> Turn:
        """The turn to play in ``position`` (the bot is to move) with ``clock`` left."""

    def read_new_game(self, message: NewGame) -> GameInfo:
        """The :class:`GameInfo` of a ``new_game`` message."""
        turn_limit = message.settings.get("turn_limit", DEFAULT_TURN_LIMIT)
        return GameInfo(
            player=Player(message.seat),
            players=message.players,
            start=Position.from_string(message.position),
            turn_limit=turn_limit if isinstance(turn_limit, int) else DEFAULT_TURN_LIMIT,
            clock=Clock.at_start(message),
        )

    def read_turn(self, message: TurnRequest) -> Position:
        """The position to play (the view's §6 string)."""
        return Position.from_string(decode_view(message.view).position)

    def write_decision(self, decision: Turn) -> msgspec.Raw:
        """The turn's actions."""
        return CODEC.actions_raw(decision)


# --- Verdant ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VerdantInfo:
    """What a Verdant bot learns when a game starts: its ``seat`` (from 0, in turn order),
    the ``players``' names in seat order, the ``variant`` (``standard``, ``simplified``
    or ``advanced``) and its clock before its first decision."""

    seat: int
    players: tuple[str, ...]
    variant: str
    clock: Clock


@dataclass(frozen=True, slots=True)
class PastDecision:
    """A decision made since the bot's previous request: ``seat`` is ``None`` for chance
    (``decision`` is then one :class:`~referee.games.verdant.steps.Reveal`); ``turn`` the
    turn it belongs to; ``notation`` the record's word for it."""

    seat: int | None
    turn: int
    notation: str
    decision: VerdantDecision


@dataclass(frozen=True, slots=True)
class Situation:
    """One Verdant request, decoded: what the bot sees and what it may do.

    ``view`` is the request's view as the codec decodes it (every field of
    ``docs/verdant.md``); ``state`` is the rules' state rebuilt from it (exact: the
    decks have no order, so everything hidden is only *which* unseen card comes next,
    and :func:`~referee.games.verdant.rules.chance_outcomes` lists the equally likely
    draws), so a bot can try steps with :func:`~referee.games.verdant.rules.advance` or
    play games out to the end. ``since_last`` lists the other seats' decisions and the
    chance events since the bot's previous request.

    A turn can take several requests: a decision is applied up to and including its
    first revealing step (1a ``ReplaceCards``, 1b ``ReplaceTokens``), and then the bot is
    asked again, in the same turn, with the new cards on view; :attr:`continuing` tells
    such a request from the first one of a turn. Any other decision must end the turn
    (pick and place; tokens not stored or used are discarded).
    """

    view: VerdantWireView
    state: VerdantState
    since_last: tuple[PastDecision, ...] = ()

    @property
    def seat(self) -> int:
        """The bot's seat."""
        return self.view.seat

    @property
    def setup(self) -> bool:
        """Whether this is the bot's setup decision (§2.2: where its first room lies)."""
        return self.view.phase == "setup"

    @property
    def continuing(self) -> bool:
        """Whether the bot's turn already began (thumb actions were taken in an earlier
        request of this turn: it is asked again after a replacement)."""
        this_turn = self.view.this_turn
        return this_turn is not None and this_turn.thumb_actions > 0

    def legal_steps(self) -> tuple[Step, ...]:
        """Every step the bot may take next (:func:`~referee.games.verdant.rules.legal_steps`)."""
        return verdant_rules.legal_steps(self.state)


class VerdantBot(GameBot[VerdantInfo, Situation, Sequence[Step]]):
    """A Verdant bot: decides steps for a :class:`Situation`. Subclasses set ``name`` and
    ``choose``, which returns the steps to send, e.g. ``(Setup("north"),)`` or
    ``(Pick(2, "room"), Place((1, 0)), Use("taken", ((1, 0),)))``."""

    game: ClassVar[str] = "verdant"

    @abc.abstractmethod
    def choose(self, situation: Situation, clock: Clock) -> Sequence[Step]:
        """The steps to send in ``situation`` with ``clock`` left for this request."""

    def read_new_game(self, message: NewGame) -> VerdantInfo:
        """The :class:`VerdantInfo` of a ``new_game`` message."""
        variant = message.settings.get("variant", "standard")
        return VerdantInfo(
            seat=message.seat,
            players=message.players,
            variant=variant if isinstance(variant, str) else "standard",
            clock=Clock.at_start(message),
        )

    def read_turn(self, message: TurnRequest) -> Situation:
        """The request's view, the state rebuilt from it and the decisions since the last."""
        view = decode_verdant_view(message.view)
        since = tuple(
            PastDecision(
                seat=past.seat,
                turn=past.turn,
                notation=past.notation,
                decision=VERDANT_CODEC.decode_actions(past.actions),
            )
            for past in message.since_last
        )
        return Situation(view, state_from_view(view_from_wire(view)), since)

    def write_decision(self, decision: Sequence[Step]) -> msgspec.Raw:
        """The steps as a reply's ``actions``."""
        return VERDANT_CODEC.actions_raw(tuple(decision))


# --- the protocol loop ------------------------------------------------------------------


class _Session:
    """One conversation with the referee over a pair of text streams."""

    def __init__(self, bot: GameBot[Any, Any, Any], reader: TextIO, writer: TextIO) -> None:
        self.bot = bot
        self.reader = reader
        self.writer = writer
        self.buffer = bytearray()

    def send(self, message: Ready | TurnReply | Log) -> None:
        """Write one protocol line and flush it at once."""
        self.writer.write(encode_line(message, self.buffer).decode())
        self.writer.flush()

    def serve(self) -> bool:
        """Answer requests until ``quit`` or the end of input (``True``), or a game the bot
        does not play (``False``)."""
        self.bot.attach_log(lambda text: self.send(Log(message=text)))
        try:
            for line in self.reader:
                if line.strip() and not self.handle(line):
                    break
        except WrongGame as error:
            # No protocol message refuses a game: saying why and leaving is the clearest
            # answer (the referee reports the bot's start as failed, with this line).
            print(f"{self.bot.name}: {error}", file=sys.stderr)
            return False
        finally:
            self.bot.attach_log(None)
        return True

    def handle(self, line: str) -> bool:
        """React to one line from the referee; ``False`` once it said ``quit``."""
        try:
            message = REFEREE_TO_BOT.decode(line)
        except msgspec.DecodeError as error:
            print(f"{self.bot.name}: ignored a line I cannot read: {error}", file=sys.stderr)
            return True
        if isinstance(message, TurnRequest):
            self.send(self.bot.answer(message))
        elif isinstance(message, NewGame):
            self.send(self.bot.start(message))
        elif isinstance(message, GameOver):
            self.bot.finish(message)
        elif isinstance(message, ErrorMessage):
            complaint = f"{message.code}: {message.message}"
            print(f"{self.bot.name}: referee says {complaint}", file=sys.stderr)
        elif isinstance(message, Quit):
            return False
        return True


def run(
    bot: GameBot[Any, Any, Any], stdin: TextIO | None = None, stdout: TextIO | None = None
) -> bool:
    """Play games for ``bot`` over the protocol until ``quit`` or end of input (``True``),
    or until a ``new_game`` of a game it does not play (``False``, said on stderr).

    Reads ``stdin`` and writes ``stdout`` (the process's own, in UTF-8, by default);
    tests pass ``io.StringIO`` objects.
    """
    if stdin is None:
        sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
        stdin = sys.stdin
    if stdout is None:
        sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
        stdout = sys.stdout
    return _Session(bot, stdin, stdout).serve()


def main(
    make_bot: Callable[[int | None], GameBot[Any, Any, Any]], argv: Sequence[str] | None = None
) -> None:
    """Command-line entry of a bot module: parse ``--seed``, build the bot, :func:`run` it;
    exit with status 1 when it was asked to play a game it does not play."""
    parser = argparse.ArgumentParser(description="A bot speaking the referee's protocol.")
    parser.add_argument("--seed", type=int, default=None, help="seed of the bot's randomness")
    args = parser.parse_args(argv)
    if not run(make_bot(args.seed)):
        sys.exit(1)
