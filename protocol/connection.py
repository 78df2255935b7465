"""The referee's side of one bot's conversation, sans-I/O (in the manner of h11).

A :class:`BotConnection` does no I/O and knows no clock. The caller writes what
:meth:`BotConnection.send` returns, feeds what it reads to
:meth:`BotConnection.receive_data` (``b""`` at end of stream) and takes events
from :meth:`BotConnection.next_event`: a bot message, :data:`NEED_DATA` or
:data:`END_OF_STREAM`. Deadlines are the caller's too.

The connection frames lines (split on ``\\n``, a trailing ``\\r`` tolerated, blank
lines skipped, no line longer than ``max_line_bytes``), decodes them (arrays and
objects nested at most :data:`MAX_NESTING` deep, so no line can exhaust the stack
of the decoder), and follows the session through its phases, all listed in the two
transition tables below::

    IDLE --new_game--> AWAITING_READY --ready--> IN_GAME --turn--> AWAITING_TURN
    IN_GAME <--turn reply-- AWAITING_TURN;  game_over: any in-game phase --> IDLE
    quit: any phase --> CLOSED;  a violation: --> ERROR, for good

A reply answers only a request written before it began: a reply line of which any
byte had been fed to :meth:`~BotConnection.receive_data` when its request was sent is a
violation ("reply started before its request"); a ``log`` line may straddle a request.

Whose fault: a bot that breaks the protocol raises :class:`ProtocolViolation`
(a ``BotProtocolError``; the bot loses); the referee misusing the connection
raises :class:`LocalProtocolError` (a bug). Either leaves the connection in
``ERROR``, where nothing more is read and only the goodbye messages (``error``,
``game_over``, ``quit``) can still be sent.
"""

from __future__ import annotations

import enum
from array import array
from itertools import accumulate
from typing import Final, Literal, TypeAlias, TypeVar

import msgspec

from protocol.messages import (
    BOT_TO_REFEREE,
    DEFAULT_MAX_LINE_BYTES,
    BotMessage,
    ErrorCode,
    ErrorMessage,
    GameOver,
    Log,
    NewGame,
    ProtocolViolation,
    Quit,
    Ready,
    RefereeMessage,
    TurnReply,
    TurnRequest,
    encode_line,
    invalid_message,
)

DEFAULT_MAX_LOG_CHARS = 4000
"""Longer log messages are cut to this many characters (and say so)."""

EXCERPT_BYTES = 100
"""How much of a bad line a violation quotes as its offending part."""

MAX_NESTING = 64
"""How deep arrays and objects may nest in a line; deeper is a ``parse_error``.

msgspec decodes nested values by recursion, and a line of a few thousand ``[``
would exhaust the stack (a ``RecursionError``, at a depth that depends on the
caller's own stack). Messages nest three deep; 64 leaves room for any extra field.
"""


class Signal(enum.Enum):
    """What :meth:`BotConnection.next_event` returns when it has no message."""

    NEED_DATA = "need data"
    END_OF_STREAM = "end of stream"


NEED_DATA: Final = Signal.NEED_DATA
"""No complete line yet: call ``receive_data`` with more bytes."""

END_OF_STREAM: Final = Signal.END_OF_STREAM
"""The bot closed its output and every complete line has been delivered."""

Event: TypeAlias = Ready | TurnReply | Log | Literal[Signal.NEED_DATA, Signal.END_OF_STREAM]


class Phase(enum.Enum):
    """Where the session with one bot process stands."""

    IDLE = "idle"
    """Between games (or before the first): the next request is ``new_game``."""
    AWAITING_READY = "awaiting ready"
    """``new_game`` sent; the bot owes ``ready``."""
    IN_GAME = "in game"
    """Playing, nothing asked of the bot right now."""
    AWAITING_TURN = "awaiting turn"
    """``turn`` sent; the bot owes a turn reply."""
    CLOSED = "closed"
    """``quit`` sent; nothing more is sent, the bot may still log before it exits."""
    ERROR = "error"
    """Someone broke the protocol; the connection stays here."""


class LocalProtocolError(RuntimeError):
    """The referee used the connection wrongly (a bug on our side, not the bot's)."""


_E = TypeVar("_E", ProtocolViolation, LocalProtocolError)

_IN_GAME_PHASES = (Phase.AWAITING_READY, Phase.IN_GAME, Phase.AWAITING_TURN)
_OPEN_PHASES = (Phase.IDLE, *_IN_GAME_PHASES)
_GOODBYES = (ErrorMessage, GameOver, Quit)

_SEND: dict[tuple[Phase, type[RefereeMessage]], Phase] = {
    (Phase.IDLE, NewGame): Phase.AWAITING_READY,
    (Phase.IN_GAME, TurnRequest): Phase.AWAITING_TURN,
    **{(phase, GameOver): Phase.IDLE for phase in _IN_GAME_PHASES},
    **{(phase, ErrorMessage): phase for phase in _OPEN_PHASES},
    **{(phase, Quit): Phase.CLOSED for phase in _OPEN_PHASES},
    **{(Phase.ERROR, kind): Phase.ERROR for kind in _GOODBYES},
}
"""Referee → bot: (phase, message sent) → next phase. Anything else is a local error."""

_RECEIVE: dict[tuple[Phase, type[BotMessage]], Phase] = {
    (Phase.AWAITING_READY, Ready): Phase.IN_GAME,
    (Phase.AWAITING_TURN, TurnReply): Phase.IN_GAME,
}
"""Bot → referee: (phase, reply received) → next phase. Logs are welcome in any phase."""

_PENDING_REQUEST = {Phase.AWAITING_READY: "new_game", Phase.AWAITING_TURN: "turn"}
_EXPECTED_REPLY = {Phase.AWAITING_READY: "ready", Phase.AWAITING_TURN: "a turn reply"}
"""For messages that tell the bot what the referee was waiting for."""


class BotConnection:
    """The protocol state of one bot process, across all the games it plays.

    ``max_line_bytes`` bounds every line the bot sends (its newline not counted)
    and must equal what each ``new_game`` announces; ``max_log_chars`` bounds
    each log message delivered.
    """

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_log_chars: int = DEFAULT_MAX_LOG_CHARS,
    ) -> None:
        self.max_line_bytes = max_line_bytes
        self.max_log_chars = max_log_chars
        self._phase = Phase.IDLE
        self._next_id = 1
        self._pending_id: int | None = None
        self._cancelled_ids: set[int] = set()
        self._buffer = bytearray()
        self._scanned = 0  # bytes at the front of the buffer known to hold no newline
        self._tail = 0  # bytes at the end of the buffer after its last newline
        self._overflowed = False  # the tail passed the limit: stop buffering
        self._early = 0  # bytes at the front of the buffer received before the last request
        self._line_early = False  # the line just cut began before the last request
        self._eof = False
        self._failure: Exception | None = None
        self._send_buffer = bytearray()
        self.last_reply_line = b""
        """The raw line of the last reply :meth:`next_event` delivered (for the game's log)."""

    @property
    def phase(self) -> Phase:
        """The current phase of the session."""
        return self._phase

    @property
    def pending_id(self) -> int | None:
        """The id of the request the bot must answer now, if any."""
        return self._pending_id

    @property
    def next_id(self) -> int:
        """The id for the next message that carries one (``new_game``, ``turn``,
        ``game_over``): 1 at first, then one more than the last one sent."""
        return self._next_id

    # --- referee → bot ----------------------------------------------------------

    def send(self, message: RefereeMessage) -> bytes:
        """The bytes to write for ``message``; moves the session to its next phase.

        A request's id becomes the pending id; the bytes received so far and not yet
        taken as lines may not begin its reply. ``game_over`` or ``quit`` sent while
        a request is pending cancels it: a late reply with that id is ignored.
        """
        next_phase = _SEND.get((self._phase, type(message)))
        if next_phase is None:
            raise self._local_error(f"cannot send {_tag(message)} in phase {self._phase.value}")
        if isinstance(message, NewGame) and message.max_line_bytes != self.max_line_bytes:
            raise self._local_error(
                f"new_game announces max_line_bytes={message.max_line_bytes}, "
                f"the connection enforces {self.max_line_bytes}"
            )
        if isinstance(message, NewGame | TurnRequest):
            self._pending_id = message.id
            self._early = len(self._buffer)  # a reply may not begin in these bytes
        elif isinstance(message, GameOver | Quit) and self._pending_id is not None:
            self._cancelled_ids.add(self._pending_id)
            self._pending_id = None
        if isinstance(message, NewGame | TurnRequest | GameOver):
            self._next_id = message.id + 1
        self._phase = next_phase
        return encode_line(message, self._send_buffer)

    # --- bot → referee ----------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Add bytes read from the bot; ``b""`` means its output has ended."""
        self._check_readable()
        if self._eof:
            raise self._local_error("data received after the end of stream")
        if not data:
            self._eof = True
        elif not self._overflowed:
            newline = data.rfind(b"\n")
            self._tail = self._tail + len(data) if newline < 0 else len(data) - newline - 1
            self._buffer += data
            if self._tail > self.max_line_bytes:
                # Keep just enough of the too-long line to refuse it; drop the rest.
                del self._buffer[len(self._buffer) - self._tail + self.max_line_bytes + 1 :]
                self._overflowed = True

    def next_event(self) -> Event:
        """The next message from the bot, :data:`NEED_DATA` or :data:`END_OF_STREAM`.

        Raises :class:`ProtocolViolation` when the bot broke the protocol.
        """
        self._check_readable()
        while True:
            line = self._next_line()
            if isinstance(line, Signal):
                return line
            if not line.strip():
                continue
            message = self._decode(line)
            if isinstance(message, Log):
                return self._bounded(message)
            if self._accept_reply(message, line):
                self.last_reply_line = line
                return message

    def _next_line(self) -> bytes | Signal:
        """Cut the next complete line (without ``\\n`` and a trailing ``\\r``) from the buffer."""
        index = self._buffer.find(b"\n", self._scanned, self.max_line_bytes + 1)
        if index < 0:
            if len(self._buffer) > self.max_line_bytes:
                kept = bytes(self._buffer[: self.max_line_bytes + 1])
                raise self._violation(
                    "line_too_long",
                    f"line longer than {self.max_line_bytes} bytes",
                    _excerpt(kept),
                    kept,
                )
            self._scanned = len(self._buffer)
            return END_OF_STREAM if self._eof else NEED_DATA
        line = bytes(self._buffer[:index])
        del self._buffer[: index + 1]
        self._scanned = 0
        self._line_early = self._early > 0
        self._early = max(0, self._early - index - 1)
        return line[:-1] if line.endswith(b"\r") else line

    def _decode(self, line: bytes) -> BotMessage:
        """The message on ``line``, or the violation it commits."""
        if not line.isascii():
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                raise self._violation(
                    "parse_error", f"line is not valid UTF-8: {error.reason}", _excerpt(line), line
                ) from None
        # Counting brackets is nearly free; only a line with many looks closer.
        if line.count(b"[") + line.count(b"{") > MAX_NESTING and _nesting(line) > MAX_NESTING:
            raise self._violation(
                "parse_error",
                f"line nests arrays and objects more than {MAX_NESTING} deep",
                _excerpt(line),
                line,
            )
        try:
            return BOT_TO_REFEREE.decode(line)
        except msgspec.ValidationError as error:
            # msgspec validates while parsing, so a broken line may fail on a type first.
            complaint = _parse_error(line)
            if complaint is not None:
                raise self._violation(
                    "parse_error", f"line is not JSON: {complaint}", _excerpt(line), line
                ) from None
            violation = invalid_message(error)
            violation.line = line
            raise self._fail(violation) from None
        except msgspec.DecodeError as error:
            raise self._violation(
                "parse_error", f"line is not JSON: {error}", _excerpt(line), line
            ) from None

    def _accept_reply(self, message: Ready | TurnReply, line: bytes) -> bool:
        """Check ``message`` against the pending request; ``False`` drops a cancelled reply."""
        next_phase = _RECEIVE.get((self._phase, type(message)))
        if next_phase is not None and message.id == self._pending_id:
            if self._line_early:
                raise self._violation(
                    "invalid_message",
                    f"reply started before its request: part of this {_tag(message)} had"
                    f" arrived before {_PENDING_REQUEST[self._phase]} id {message.id} was written",
                    _excerpt(line),
                    line,
                )
            self._phase = next_phase
            self._pending_id = None
            return True
        if message.id in self._cancelled_ids:
            self._cancelled_ids.discard(message.id)
            return False
        kind = _tag(message)
        if next_phase is None:
            if self._phase in _EXPECTED_REPLY:
                pending = (
                    f"the pending request is {_PENDING_REQUEST[self._phase]} id "
                    f"{self._pending_id}, which expects {_EXPECTED_REPLY[self._phase]}"
                )
            else:
                pending = "no request is waiting for a reply"
            raise self._violation(
                "invalid_message", f"unexpected {kind}: {pending}", "$.type", line
            )
        raise self._violation(
            "invalid_message",
            f"{kind} has id {message.id}, but the pending request is "
            f"{_PENDING_REQUEST[self._phase]} id {self._pending_id}",
            "$.id",
            line,
        )

    def _bounded(self, log: Log) -> Log:
        """``log`` cut to ``max_log_chars``, saying how much was cut."""
        excess = len(log.message) - self.max_log_chars
        if excess <= 0:
            return log
        return Log(message=f"{log.message[: self.max_log_chars]}… [{excess} characters cut]")

    # --- errors -----------------------------------------------------------------

    def _check_readable(self) -> None:
        if self._failure is not None:
            raise LocalProtocolError(f"the connection is in the error state after: {self._failure}")

    def _violation(
        self, code: ErrorCode, message: str, offending: str, line: bytes
    ) -> ProtocolViolation:
        return self._fail(ProtocolViolation(code, message, offending, line=line))

    def _local_error(self, message: str) -> LocalProtocolError:
        return self._fail(LocalProtocolError(message))

    def _fail(self, error: _E) -> _E:
        """Enter the error state for good; returns ``error`` for the caller to raise."""
        self._phase = Phase.ERROR
        self._failure = error
        self._buffer.clear()
        self._early = 0
        return error


def _tag(message: RefereeMessage | BotMessage) -> str:
    """The ``"type"`` tag of a message."""
    return type(message).__struct_config__.tag  # type: ignore[return-value]


def _excerpt(data: bytes | bytearray) -> str:
    """The start of a bad line, as text that can be quoted back to the bot."""
    return bytes(data[:EXCERPT_BYTES]).decode("utf-8", "backslashreplace")


_ANY_JSON = msgspec.json.Decoder(msgspec.Raw)
"""Checks that a line is JSON without building it (nor judging its numbers' size)."""


def _parse_error(line: bytes) -> str | None:
    """msgspec's complaint about ``line`` as plain JSON, or ``None`` if it is JSON."""
    try:
        _ANY_JSON.decode(line)
    except msgspec.DecodeError as error:
        return str(error)
    return None


_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
"""An opening bracket as +1, a closing one as -1 (as signed bytes)."""


def _nesting(line: bytes) -> int:
    """How deep arrays and objects nest in ``line``, strings left out.

    Exact for JSON; for a broken line never less than what a parser reaches
    before its first error (a stray closing bracket only lowers the count), so a
    line found shallow enough can be handed to msgspec. Runs at C speed: escaped
    backslashes and quotes go first, then every other piece between quotes is
    the inside of a string.
    """
    pieces = line.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')
    steps = b"".join(pieces[::2]).translate(_STEPS, _NOT_BRACKETS)
    return max(accumulate(array("b", steps)), default=0)
