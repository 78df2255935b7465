"""The bot protocol, defined once: every message as a msgspec ``Struct``.

Messages are JSON objects, one per line, tagged by their ``"type"`` field.
Referee → bot: :class:`NewGame`, :class:`TurnRequest`, :class:`GameOver`,
:class:`ErrorMessage`, :class:`Quit`. Bot → referee: :class:`Ready`,
:class:`TurnReply`, :class:`Log`. Requests carry an ``id`` that the reply echoes.
Fields a reader does not know are ignored, so either side may add fields without
breaking the other; changing the meaning of a field bumps :data:`PROTOCOL_VERSION`.

What belongs to one game (the view of the board, the actions of a turn) travels as
``msgspec.Raw``: already-encoded JSON that the game's :class:`GameCodec` writes and
reads, so this module stays game-generic and a bad action is reported with its
precise path (``$.actions[2].cell``).

``docs/protocol.md`` describes the same protocol for bot authors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeAlias, TypeVar, get_args

import msgspec

from referee.errors import BotProtocolError

PROTOCOL_VERSION = 1
"""The version the referee announces in every ``new_game``."""

DEFAULT_MAX_LINE_BYTES = 1 << 20
"""The longest line (not counting its newline) a bot may send, unless set otherwise."""

ErrorCode: TypeAlias = Literal[
    "parse_error", "invalid_message", "illegal_turn", "line_too_long", "flood", "timeout"
]
"""The stable codes of an ``error`` message (see docs/protocol.md, "Violations")."""

ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)


class _Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Base of every top-level message: tagged by ``"type"``.

    Subclasses repeat ``frozen=True, kw_only=True``: msgspec applies ``kw_only`` class by
    class, and type checkers read ``frozen`` the same way.
    """


class _Record(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the plain objects nested inside messages."""


# --- referee → bot -------------------------------------------------------------


class TimeControlInfo(_Record, frozen=True, kw_only=True):
    """The time control of a game, as announced in ``new_game``.

    ``fischer``: the clock starts at ``base_ms`` and gains ``increment_ms`` after
    every accepted turn. ``per_turn``: every turn has ``per_turn_ms`` of its own and
    nothing carries over (``base_ms`` and ``increment_ms`` are 0).
    """

    kind: Literal["fischer", "per_turn"]
    base_ms: int
    increment_ms: int
    per_turn_ms: int | None
    clock: Literal["wall", "cpu"] = "wall"
    """What is charged: ``wall``, the time from request to reply; ``cpu``, the CPU time
    the bot's whole process tree used meanwhile (under a wall-clock cap)."""


class ClockInfo(_Record, frozen=True, kw_only=True):
    """The bot's own clock as it stands when a ``turn`` request is written.

    ``remaining_ms`` is the time the bot has for this turn; ``last_turn_ms`` how
    long its previous turn took as the referee measured it (``None`` on its first
    turn of the game).
    """

    remaining_ms: int
    increment_ms: int
    per_turn_ms: int | None
    last_turn_ms: int | None


class PastTurn(_Record, frozen=True, kw_only=True):
    """A decision made since the bot's last request, as the bot may see it.

    ``seat`` is the seat that decided, or ``None`` for chance (a card drawn, a token
    revealed); ``turn`` the game's turn number it was made in (a turn may hold several
    decisions); ``notation`` and ``actions`` the decision in the game's record
    notation and wire form (a decision hidden in part shows only what the bot may see).
    """

    seat: int | None
    turn: int
    notation: str
    actions: msgspec.Raw


class NewGame(_Message, tag="new_game", frozen=True, kw_only=True):
    """Starts a game; the bot answers :class:`Ready` within ``startup_ms``."""

    id: int
    protocol: int = PROTOCOL_VERSION
    game: str
    seat: int
    seat_name: str
    players: tuple[str, ...]
    time_control: TimeControlInfo
    startup_ms: int
    settings: dict[str, Any] = {}
    position: str
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES


class TurnRequest(_Message, tag="turn", frozen=True, kw_only=True):
    """Asks the bot for its next decision; the bot answers :class:`TurnReply`.

    ``turn`` is the game's turn number (a turn may take several requests);
    ``view`` the game's view for this seat (see :class:`GameCodec`);
    ``opponents_clock_ms`` the remaining time of the other seats in seat order;
    ``since_last`` the decisions of other seats and of chance since this bot's
    previous request, as it may see them.
    """

    id: int
    turn: int
    view: msgspec.Raw
    clock: ClockInfo
    opponents_clock_ms: tuple[int, ...] = ()
    since_last: tuple[PastTurn, ...] = ()


class GameOver(_Message, tag="game_over", frozen=True, kw_only=True):
    """Ends a game (no reply). ``scores`` and ``places`` (1 is best) are in seat order."""

    id: int
    result: str
    scores: tuple[float, ...]
    places: tuple[int, ...] = ()
    termination: str
    reason: str


class ErrorMessage(_Message, tag="error", frozen=True, kw_only=True):
    """Tells the bot what it did wrong, just before the game ends for its fault."""

    code: ErrorCode
    message: str
    offending: str | None = None


class Quit(_Message, tag="quit", frozen=True, kw_only=True):
    """Tells the bot to exit: no more games follow."""


RefereeMessage: TypeAlias = NewGame | TurnRequest | GameOver | ErrorMessage | Quit


# --- bot → referee -------------------------------------------------------------


class Ready(_Message, tag="ready", frozen=True, kw_only=True):
    """The bot's answer to :class:`NewGame`: it is ready to play."""

    id: int
    name: str
    author: str | None = None
    version: str | None = None


class TurnReply(_Message, tag="turn", frozen=True, kw_only=True):
    """The bot's decision; ``actions`` is decoded by the game's :class:`GameCodec`."""

    id: int
    actions: msgspec.Raw


class Log(_Message, tag="log", frozen=True, kw_only=True):
    """A note from the bot for the referee's log, allowed at any time; never a move."""

    message: str


BotMessage: TypeAlias = Ready | TurnReply | Log


# --- encoding and decoding -------------------------------------------------------

ENCODER = msgspec.json.Encoder()
"""Encodes messages of either direction."""

REFEREE_TO_BOT = msgspec.json.Decoder(RefereeMessage)
"""Decodes one line the referee wrote (what a bot reads)."""

BOT_TO_REFEREE = msgspec.json.Decoder(BotMessage)
"""Decodes one line a bot wrote (what the referee reads); see ``BotConnection``."""


def encode_line(message: RefereeMessage | BotMessage, buffer: bytearray | None = None) -> bytes:
    """``message`` as one protocol line: its JSON and ``b"\\n"``.

    Pass a ``buffer`` to reuse across calls; its contents are overwritten.
    """
    buffer = bytearray() if buffer is None else buffer
    ENCODER.encode_into(message, buffer)
    buffer.append(0x0A)
    return bytes(buffer)


def embed(value: Any) -> msgspec.Raw:
    """``value`` encoded ahead of time for a ``msgspec.Raw`` field."""
    return msgspec.Raw(ENCODER.encode(value))


# --- violations ------------------------------------------------------------------

MAX_QUOTE_CHARS = 200
"""The most characters of a bot's own text (a bad value, the end of its stderr) that the
referee quotes in what it writes to bots (an ``error``'s ``message``, a ``game_over``'s
``reason``), so that no bot can make those messages long."""

MAX_MESSAGE_CHARS = 1000
"""The longest a violation's message may be (its JSON path aside): what :func:`quote`
does not already bound is cut here."""


def quote(text: str) -> str:
    """A bot's ``text`` as a message quotes it: ``'text'``, cut to :data:`MAX_QUOTE_CHARS`
    characters, then saying how long it was (``'xxxx…'… (1000000 characters)``)."""
    if len(text) <= MAX_QUOTE_CHARS:
        return f"'{text}'"
    return f"'{text[:MAX_QUOTE_CHARS]}…' ({len(text)} characters)"


_PATH_SUFFIX = re.compile(r" - at `\$(?P<rest>[^`]*)`$")
_QUOTED_VALUE = re.compile(r"(?<=value )'(?P<value>.*)'", re.DOTALL)
"""A value msgspec quotes in a validation error (``Invalid enum value 'x'``)."""


def _bounded(message: str) -> str:
    """``message`` with its text before a JSON path cut to :data:`MAX_MESSAGE_CHARS`."""
    path = _PATH_SUFFIX.search(message)
    text, suffix = (message, "") if path is None else (message[: path.start()], path[0])
    if len(text) <= MAX_MESSAGE_CHARS:
        return message
    cut = len(text) - MAX_MESSAGE_CHARS
    return f"{text[:MAX_MESSAGE_CHARS]}… [{cut} character{'s' * (cut > 1)} cut]{suffix}"


class ProtocolViolation(BotProtocolError):
    """The bot broke the protocol. Costs it the game.

    ``code`` is one of :data:`ERROR_CODES`; ``message`` says what is wrong (at most
    :data:`MAX_MESSAGE_CHARS` characters before its JSON path: a longer one is cut);
    ``offending`` points at the part at fault: a JSON path (``$.actions[2].cell``) or the
    start of the line. ``line`` is
    the whole offending line as it arrived (without its newline; for a line that is
    too long, as much of it as was kept), when the violation is about one line: it
    goes to the game's log, never raw into a record.
    """

    code: ErrorCode

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        offending: str | None = None,
        *,
        line: bytes | None = None,
    ) -> None:
        message = _bounded(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.offending = offending
        self.line = line

    def to_message(self) -> ErrorMessage:
        """The ``error`` message that tells the bot about this violation."""
        return ErrorMessage(code=self.code, message=self.message, offending=self.offending)


def invalid_message(error: msgspec.ValidationError, *, at: str = "$") -> ProtocolViolation:
    """msgspec's validation ``error`` as an ``invalid_message`` violation.

    msgspec's text is kept ("Expected `str`, got `int` - at `$.name`"), its path
    re-rooted at ``at`` when the decoded value sat inside a larger message
    (``at="$.actions"`` turns ``$[2].cell`` into ``$.actions[2].cell``), and a value it
    quotes (``Invalid value 'x'``) cut as :func:`quote` cuts it.
    """
    text = str(error)
    match = _PATH_SUFFIX.search(text)
    path = at if match is None else at + match["rest"]
    if match is not None:
        text = text[: match.start()]
    text = _QUOTED_VALUE.sub(lambda found: quote(found["value"]), text, count=1)
    if match is None and at == "$":
        return ProtocolViolation("invalid_message", text, at)
    return ProtocolViolation("invalid_message", f"{text} - at `{path}`", path)


# --- games -----------------------------------------------------------------------

ViewT = TypeVar("ViewT")
DecisionT = TypeVar("DecisionT")


@dataclass(frozen=True, slots=True, kw_only=True)
class GameCodec(Generic[ViewT, DecisionT]):
    """How one game's own values travel inside protocol messages.

    The runner stays game-generic: it fills ``TurnRequest.view`` with
    :meth:`view_raw`, ``PastTurn.actions`` with :meth:`actions_raw`, and reads a
    reply with ``decode_actions`` (which raises :class:`ProtocolViolation`). Bots
    read a request with ``decode_view`` and ``decode_actions``.
    """

    game: str
    encode_view: Callable[[ViewT], msgspec.Struct]
    decode_view: Callable[[msgspec.Raw], msgspec.Struct]
    encode_actions: Callable[[DecisionT], list[Any]]
    decode_actions: Callable[[msgspec.Raw], DecisionT]

    def view_raw(self, view: ViewT) -> msgspec.Raw:
        """The game's ``view`` (as ``Game.view`` returns it) for ``TurnRequest.view``."""
        return embed(self.encode_view(view))

    def actions_raw(self, decision: DecisionT) -> msgspec.Raw:
        """A decision's actions for ``PastTurn.actions`` (or a bot's ``TurnReply``)."""
        return embed(self.encode_actions(decision))
