"""The bot protocol between two in-memory peers: no processes, no sockets.

The referee's peer is a :class:`BotConnection`; the bot's peer is :class:`FakeBot`,
which reads the referee's lines with ``REFEREE_TO_BOT`` and writes its own with
``encode_line``, as a bot built on the protocol package would.
"""

from __future__ import annotations

from itertools import pairwise

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import (
    DEFAULT_MAX_LINE_BYTES,
    END_OF_STREAM,
    MAX_NESTING,
    NEED_DATA,
    PROTOCOL_VERSION,
    REFEREE_TO_BOT,
    BotConnection,
    ClockInfo,
    ErrorMessage,
    Event,
    GameOver,
    LocalProtocolError,
    Log,
    NewGame,
    PastTurn,
    Phase,
    ProtocolViolation,
    Quit,
    Ready,
    RefereeMessage,
    TimeControlInfo,
    TurnReply,
    TurnRequest,
    encode_line,
)
from referee.errors import BotProtocolError, SettingsError
from referee.games import get_entry
from referee.games.ivy.codec import Choke, Creep, DeadwoodCell, IvyView, Leaf, VineCell, decode_view
from referee.games.ivy.position import Position
from referee.games.ivy.turns import Turn

IVY = get_entry("ivy").codec

# The position after the eight turns of the spec's §8 example.
MID_GAME = (
    "./.../...../.#...#./........./........./..#...#../........w/.......1./"
    "....#.pP./..G.#.Pp./..g..pp.. g 8 0 9"
)


def new_game(request_id: int = 1, **changes: object) -> NewGame:
    """A ``new_game`` request for Ivy's start position."""
    fields: dict[str, object] = {
        "id": request_id,
        "game": "ivy",
        "seat": 0,
        "seat_name": "green",
        "players": ("alice", "bob"),
        "time_control": TimeControlInfo(
            kind="fischer", base_ms=10_000, increment_ms=100, per_turn_ms=None
        ),
        "startup_ms": 10_000,
        "settings": {"turn_limit": 200},
        "position": str(Position.START),
    }
    fields.update(changes)
    return NewGame(**fields)  # type: ignore[arg-type]


def turn_request(request_id: int, position: Position = Position.START) -> TurnRequest:
    """A ``turn`` request showing ``position``."""
    return TurnRequest(
        id=request_id,
        turn=position.turn,
        view=IVY.view_raw(position),
        clock=ClockInfo(remaining_ms=9_876, increment_ms=100, per_turn_ms=None, last_turn_ms=12),
        opponents_clock_ms=(10_000,),
    )


def game_over(request_id: int) -> GameOver:
    """A ``game_over`` for a Green win."""
    return GameOver(
        id=request_id,
        result="1-0",
        scores=(1.0, 0.0),
        places=(1, 2),
        termination="normal",
        reason="Green reached the top",
    )


class FakeBot:
    """The bot's side: decodes the referee's lines, encodes its own replies."""

    def __init__(self) -> None:
        self.inbox: list[RefereeMessage] = []

    def read(self, data: bytes) -> RefereeMessage:
        """Take one line from the referee; it must be exactly one message."""
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        message = REFEREE_TO_BOT.decode(data)
        self.inbox.append(message)
        return message

    @staticmethod
    def ready(request_id: int, name: str = "fake") -> bytes:
        return encode_line(Ready(id=request_id, name=name, version="1.0"))

    @staticmethod
    def reply(request_id: int, turn: Turn = Turn.PASS) -> bytes:
        return encode_line(TurnReply(id=request_id, actions=IVY.actions_raw(turn)))

    @staticmethod
    def log(message: str) -> bytes:
        return encode_line(Log(message=message))


def events(connection: BotConnection, data: bytes | None = None) -> list[Event]:
    """Feed ``data`` (if any) and collect events up to ``NEED_DATA`` or ``END_OF_STREAM``."""
    if data is not None:
        connection.receive_data(data)
    collected: list[Event] = []
    while True:
        event = connection.next_event()
        collected.append(event)
        if event is NEED_DATA or event is END_OF_STREAM:
            return collected


def in_game(request_id: int = 1) -> BotConnection:
    """A connection whose bot has answered its first ``new_game``."""
    connection = BotConnection()
    connection.send(new_game(request_id))
    assert events(connection, FakeBot.ready(request_id)) == [
        Ready(id=request_id, name="fake", version="1.0"),
        NEED_DATA,
    ]
    return connection


def violation(connection: BotConnection, data: bytes) -> ProtocolViolation:
    """The violation ``data`` commits; checks the connection is then unusable."""
    connection.receive_data(data)
    with pytest.raises(ProtocolViolation) as caught:
        while connection.next_event() is not NEED_DATA:
            pass
    assert connection.phase is Phase.ERROR
    with pytest.raises(LocalProtocolError, match="error state"):
        connection.next_event()
    with pytest.raises(LocalProtocolError, match="error state"):
        connection.receive_data(b"\n")
    return caught.value


# --- a whole session ---------------------------------------------------------------


def test_whole_session_two_games_then_quit() -> None:
    referee, bot = BotConnection(), FakeBot()
    assert referee.phase is Phase.IDLE

    hello = bot.read(referee.send(new_game(1)))
    assert isinstance(hello, NewGame)
    assert hello.protocol == PROTOCOL_VERSION
    assert hello.max_line_bytes == DEFAULT_MAX_LINE_BYTES
    assert Position.from_string(hello.position) == Position.START
    assert (referee.phase, referee.pending_id) == (Phase.AWAITING_READY, 1)
    assert events(referee, bot.ready(1, name="greedy")) == [
        Ready(id=1, name="greedy", version="1.0"),
        NEED_DATA,
    ]
    assert (referee.phase, referee.pending_id) == (Phase.IN_GAME, None)

    # Turn 1: the bot reads the view and creeps to d1; the referee plays it.
    request = bot.read(referee.send(turn_request(2)))
    assert isinstance(request, TurnRequest)
    assert request.clock.remaining_ms == 9_876
    view = IVY.decode_view(request.view)
    assert isinstance(view, IvyView)
    position = Position.from_string(view.position)
    assert referee.phase is Phase.AWAITING_TURN
    [reply, need] = events(referee, bot.reply(request.id, Turn.parse("d1")))
    assert need is NEED_DATA
    assert isinstance(reply, TurnReply)
    position = position.play(IVY.decode_actions(reply.actions))
    assert position.owner(3) is not None  # d1 is cell 3

    # Turn 3, with the opponent's turn 2 in since_last.
    past = PastTurn(seat=1, turn=2, notation="--", actions=IVY.actions_raw(Turn.PASS))
    request = bot.read(referee.send(msgspec.structs.replace(turn_request(3), since_last=(past,))))
    assert isinstance(request, TurnRequest)
    assert IVY.decode_actions(request.since_last[0].actions) == Turn.PASS
    assert events(referee, bot.reply(3))[0] == TurnReply(id=3, actions=msgspec.Raw(b"[]"))

    assert bot.read(referee.send(game_over(4))) == game_over(4)
    assert referee.phase is Phase.IDLE

    bot.read(referee.send(new_game(5, seat=1, seat_name="purple")))
    assert events(referee, bot.ready(5))[0] == Ready(id=5, name="fake", version="1.0")
    assert bot.read(referee.send(Quit())) == Quit()
    assert referee.phase is Phase.CLOSED
    assert events(referee, b"") == [END_OF_STREAM]
    assert [type(message) for message in bot.inbox] == [
        NewGame,
        TurnRequest,
        TurnRequest,
        GameOver,
        NewGame,
        Quit,
    ]


def test_referee_lines_match_the_documented_json() -> None:
    assert encode_line(Quit()) == b'{"type":"quit"}\n'
    error = ErrorMessage(code="illegal_turn", message="no", offending="$.actions[2]")
    assert msgspec.json.decode(encode_line(error)) == {
        "type": "error",
        "code": "illegal_turn",
        "message": "no",
        "offending": "$.actions[2]",
    }
    clock = msgspec.json.decode(encode_line(turn_request(7)))["clock"]
    assert clock == {
        "remaining_ms": 9_876,
        "increment_ms": 100,
        "per_turn_ms": None,
        "last_turn_ms": 12,
    }


def test_crlf_and_blank_lines_are_tolerated() -> None:
    connection = in_game()
    connection.send(turn_request(2))
    data = b"\r\n\n" + FakeBot.reply(2).replace(b"\n", b"\r\n")
    assert events(connection, data) == [TurnReply(id=2, actions=msgspec.Raw(b"[]")), NEED_DATA]


def test_unknown_fields_are_ignored_both_ways() -> None:
    connection = BotConnection()
    connection.send(new_game(1))
    line = b'{"type":"ready","id":1,"name":"x","colour":"blue","extra":{"a":[1,2]}}\n'
    assert events(connection, line)[0] == Ready(id=1, name="x")
    future = b'{"type":"quit","reason":"tournament over","protocol":2}\n'
    assert REFEREE_TO_BOT.decode(future) == Quit()


def test_lines_split_across_chunks() -> None:
    connection = in_game()
    connection.send(turn_request(2))
    data = FakeBot.log("thinking") + FakeBot.reply(2, Turn.parse("d1+Ld1"))
    cut = [data[:3], data[3:20], data[20:21], data[21:50], data[50:]]
    seen: list[Event] = []
    for chunk in cut:
        seen += events(connection, chunk)
    assert [event for event in seen if event is not NEED_DATA] == [
        Log(message="thinking"),
        TurnReply(id=2, actions=IVY.actions_raw(Turn.parse("d1+Ld1"))),
    ]


def test_end_of_stream_drops_an_unfinished_line() -> None:
    connection = in_game()
    assert events(connection, FakeBot.log("bye") + b'{"type":"lo') == [
        Log(message="bye"),
        NEED_DATA,
    ]
    connection.receive_data(b"")
    assert events(connection) == [END_OF_STREAM]
    assert connection.next_event() is END_OF_STREAM
    with pytest.raises(LocalProtocolError, match="after the end of stream"):
        connection.receive_data(b"{}\n")


# --- logs -----------------------------------------------------------------------


def test_logs_are_delivered_in_every_phase() -> None:
    connection = BotConnection()
    phases: list[Phase] = []

    def log_now() -> None:
        phases.append(connection.phase)
        assert events(connection, FakeBot.log(connection.phase.value)) == [
            Log(message=connection.phase.value),
            NEED_DATA,
        ]

    log_now()
    connection.send(new_game(1))
    log_now()
    events(connection, FakeBot.ready(1))
    log_now()
    connection.send(turn_request(2))
    log_now()
    events(connection, FakeBot.reply(2))
    connection.send(Quit())
    log_now()
    assert phases == [
        Phase.IDLE,
        Phase.AWAITING_READY,
        Phase.IN_GAME,
        Phase.AWAITING_TURN,
        Phase.CLOSED,
    ]


def test_a_log_is_never_taken_for_a_move() -> None:
    connection = in_game()
    connection.send(turn_request(2))
    assert events(connection, FakeBot.log('{"type":"turn","id":2,"actions":[]}'))[1] is NEED_DATA
    assert (connection.phase, connection.pending_id) == (Phase.AWAITING_TURN, 2)


def test_long_logs_are_cut_and_say_so() -> None:
    connection = BotConnection(max_log_chars=10)
    [log, _] = events(connection, FakeBot.log("x" * 25))
    assert log == Log(message="xxxxxxxxxx… [15 characters cut]")
    assert events(connection, FakeBot.log("y" * 10))[0] == Log(message="y" * 10)


# --- violations -------------------------------------------------------------------


def test_not_json_is_a_parse_error() -> None:
    error = violation(in_game(), b"d2+Ld2\n")
    assert error.code == "parse_error"
    assert str(error) == "line is not JSON: JSON is malformed: invalid character (byte 0)"
    assert error.offending == "d2+Ld2"
    assert isinstance(error, BotProtocolError)


def test_broken_json_is_a_parse_error_even_when_a_field_fails_first() -> None:
    error = violation(in_game(), b'{"type":"ready","id":"one"\n')
    assert (error.code, str(error)) == ("parse_error", "line is not JSON: Input data was truncated")


def test_invalid_utf8_is_a_parse_error() -> None:
    connection = BotConnection()
    connection.send(new_game(1))
    error = violation(connection, b'{"type":"ready","id":1,"name":"\xff\xfe"}\n')
    assert error.code == "parse_error"
    assert str(error) == "line is not valid UTF-8: invalid start byte"
    assert error.offending == '{"type":"ready","id":1,"name":"\\xff\\xfe"}'


@pytest.mark.parametrize(
    ("line", "message", "offending"),
    [
        (b'{"type":"ready","id":1,"name":7}', "Expected `str`, got `int` - at `$.name`", "$.name"),
        (b'{"type":"move","id":1}', "Invalid value 'move' - at `$.type`", "$.type"),
        (b'{"id":1,"name":"x"}', "Object missing required field `type`", "$"),
        (b"[1, 2]", "Expected `object`, got `array`", "$"),
    ],
)
def test_json_that_is_no_message_is_invalid(line: bytes, message: str, offending: str) -> None:
    connection = BotConnection()
    connection.send(new_game(1))
    error = violation(connection, line + b"\n")
    assert (error.code, str(error), error.offending) == ("invalid_message", message, offending)


def test_reply_with_the_wrong_id() -> None:
    connection = in_game()
    connection.send(turn_request(7))
    error = violation(connection, FakeBot.reply(6))
    assert error.code == "invalid_message"
    assert str(error) == "turn has id 6, but the pending request is turn id 7"
    assert error.offending == "$.id"


@pytest.mark.parametrize(
    ("setup", "line", "message"),
    [
        ("in game", FakeBot.reply(2), "unexpected turn: no request is waiting for a reply"),
        ("in game", FakeBot.ready(1), "unexpected ready: no request is waiting for a reply"),
        ("idle", FakeBot.ready(1), "unexpected ready: no request is waiting for a reply"),
        (
            "awaiting ready",
            FakeBot.reply(1),
            "unexpected turn: the pending request is new_game id 1, which expects ready",
        ),
        (
            "awaiting turn",
            FakeBot.ready(2),
            "unexpected ready: the pending request is turn id 2, which expects a turn reply",
        ),
    ],
)
def test_replies_nobody_asked_for(setup: str, line: bytes, message: str) -> None:
    connection = BotConnection()
    if setup != "idle":
        connection.send(new_game(1))
    if setup in ("in game", "awaiting turn"):
        events(connection, FakeBot.ready(1))
    if setup == "awaiting turn":
        connection.send(turn_request(2))
    assert connection.phase.value == setup
    error = violation(connection, line)
    assert (error.code, str(error), error.offending) == ("invalid_message", message, "$.type")


def test_oversized_line_is_refused_before_its_newline() -> None:
    connection = BotConnection(max_line_bytes=1000)
    connection.send(new_game(1, max_line_bytes=1000))
    head = b'{"type":"log","message":"' + b"a" * 90
    connection.receive_data(head)
    assert connection.next_event() is NEED_DATA
    for _ in range(200):  # 200 kB without a newline: refused, not all buffered
        connection.receive_data(b"a" * 1000)
    with pytest.raises(ProtocolViolation) as caught:
        connection.next_event()
    error = caught.value
    assert (error.code, str(error)) == ("line_too_long", "line longer than 1000 bytes")
    assert error.offending == head[:100].decode()
    assert error.to_message() == ErrorMessage(
        code="line_too_long", message="line longer than 1000 bytes", offending=error.offending
    )


def test_complete_lines_before_an_oversized_one_are_delivered_first() -> None:
    connection = BotConnection(max_line_bytes=100)
    connection.receive_data(FakeBot.log("before") + b"x" * 500)
    assert connection.next_event() == Log(message="before")
    with pytest.raises(ProtocolViolation, match="line longer than 100 bytes"):
        connection.next_event()


def test_the_limit_counts_the_bytes_before_the_newline() -> None:
    line = FakeBot.log("z" * 50)
    exact = BotConnection(max_line_bytes=len(line) - 1)
    assert events(exact, line)[0] == Log(message="z" * 50)
    one_over = BotConnection(max_line_bytes=len(line) - 2)
    assert violation(one_over, line).code == "line_too_long"


def test_the_limit_counts_a_carriage_return_but_not_the_newline() -> None:
    line = FakeBot.log("z" * 50)
    limit = len(line) - 1  # the bytes before the newline
    assert events(BotConnection(max_line_bytes=limit), line)[0] == Log(message="z" * 50)
    crlf = line[:-1] + b"\r\n"
    assert violation(BotConnection(max_line_bytes=limit), crlf).code == "line_too_long"


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 65 + b"]" * 65,
        b"[" * 1_000,
        b"[" * 200_000,
        b"{" * 100_000,
        b'{"a":' * 3_000,
        b'{"type":"log","message":"x","extra":' + b"[" * 64 + b"]" * 64 + b"}",
        b'{"type":"turn","id":2,"actions":' + b"[" * 5_000,
    ],
)
def test_nesting_deeper_than_the_limit_is_a_parse_error(line: bytes) -> None:
    connection = in_game()
    connection.send(turn_request(2))
    error = violation(connection, line + b"\n")
    assert error.code == "parse_error"
    assert str(error) == f"line nests arrays and objects more than {MAX_NESTING} deep"
    assert error.offending == line[:100].decode()


def test_nesting_up_to_the_limit_and_brackets_in_strings_are_fine() -> None:
    deepest = b"[" * (MAX_NESTING - 1) + b"]" * (MAX_NESTING - 1)  # inside the message: 64
    wide = b"[" + b"[]," * 5_000 + b"[]]"
    quoted = b'"' + b"[" * 5_000 + b'\\\\\\"[{"'  # an escaped backslash, then quote
    for extra in (deepest, wide, quoted):
        line = b'{"type":"log","message":"ok","extra":' + extra + b"}\n"
        assert events(BotConnection(), line) == [Log(message="ok"), NEED_DATA]
    brackets = "[" * 10_000
    assert events(BotConnection(), FakeBot.log(brackets))[0] == Log(
        message=brackets[:4000] + "… [6000 characters cut]"
    )


def test_huge_numbers_never_crash_the_decoder() -> None:
    digits = b"9" * 5_000
    connection = BotConnection()
    connection.send(new_game(1))
    error = violation(connection, b'{"type":"ready","id":' + digits + b',"name":"x"}\n')
    assert (error.code, error.offending) == ("invalid_message", "$.id")
    connection = BotConnection()
    connection.send(new_game(1))
    error = violation(connection, b'{"type":"ready","id":1e400,"name":"x"}\n')
    assert (error.code, error.offending) == ("invalid_message", "$.id")
    # A field of the wrong type first, then a number too big for any integer type.
    connection = BotConnection()
    connection.send(new_game(1))
    error = violation(connection, b'{"type":"ready","id":"one","big":' + digits + b"}\n")
    assert (error.code, str(error)) == ("invalid_message", "Expected `int`, got `str` - at `$.id`")
    unknown = b'{"type":"log","message":"m","big":' + digits + b',"huge":1e99999}\n'
    assert events(BotConnection(), unknown)[0] == Log(message="m")


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b'{"type":"log","message":"\\ud800"}', "parse_error"),  # a lone surrogate
        (b'{"type":"log","message":"\\udc00\\ud800"}', "parse_error"),
        (b'{"type":"log","message":"a\x00b"}', "parse_error"),  # a raw NUL
        (b"\x00", "parse_error"),
        (b'{"type":"log","message":"x"}\r{"type":"log","message":"y"}', "parse_error"),
        (b'{"type":"log","message":"\xed\xa0\x80"}', "parse_error"),  # UTF-8 surrogate
    ],
)
def test_hostile_text_is_refused(line: bytes, code: str) -> None:
    error = violation(BotConnection(), line + b"\n")
    assert error.code == code
    assert error.line == line


def test_escaped_nul_and_control_characters_are_just_text() -> None:
    line = b'{"type":"log","message":"a\\u0000b\\u001b[31m"}\r\r\n'
    assert events(BotConnection(), line)[0] == Log(message="a\x00b\x1b[31m")


def test_a_violation_keeps_its_whole_line() -> None:
    long = b'{"type":"log","message":7,"padding":"' + b"p" * 500 + b'"}'
    error = violation(BotConnection(), long + b"\n")
    assert (error.code, error.line) == ("invalid_message", long)
    assert len(error.offending or "") < 100  # a path; the line itself is in error.line
    connection = BotConnection(max_line_bytes=100)
    error = violation(connection, b"x" * 1_000)
    assert (error.code, error.line) == ("line_too_long", b"x" * 101)  # all that was kept


def test_ids_count_the_messages_that_carry_one() -> None:
    connection = BotConnection()
    assert connection.next_id == 1
    connection.send(new_game(connection.next_id))
    events(connection, FakeBot.ready(1))
    assert connection.next_id == 2
    connection.send(turn_request(connection.next_id))
    reply = FakeBot.reply(2)
    events(connection, reply)
    assert connection.last_reply_line == reply.rstrip(b"\n")
    connection.send(ErrorMessage(code="timeout", message="late"))  # no id
    connection.send(game_over(connection.next_id))
    assert connection.next_id == 4
    connection.send(Quit())
    assert connection.next_id == 4


def test_the_referee_may_still_say_goodbye_after_a_violation() -> None:
    connection = in_game()
    connection.send(turn_request(2))
    error = violation(connection, b"garbage\n")
    assert connection.send(error.to_message()).startswith(b'{"type":"error","code":"parse_error"')
    connection.send(game_over(3))
    connection.send(Quit())
    assert connection.phase is Phase.ERROR
    with pytest.raises(LocalProtocolError, match="cannot send new_game in phase error"):
        connection.send(new_game(4))


# --- the referee's own mistakes -----------------------------------------------------


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (turn_request(1), "cannot send turn in phase idle"),
        (game_over(1), "cannot send game_over in phase idle"),
        (new_game(1, max_line_bytes=10), "announces max_line_bytes=10, the connection enforces"),
    ],
)
def test_local_errors(message: RefereeMessage, error: str) -> None:
    connection = BotConnection()
    with pytest.raises(LocalProtocolError, match=error):
        connection.send(message)
    assert connection.phase is Phase.ERROR


def test_nothing_is_sent_after_quit() -> None:
    connection = BotConnection()
    connection.send(Quit())
    with pytest.raises(LocalProtocolError, match="cannot send quit in phase closed"):
        connection.send(Quit())


def test_a_late_reply_to_a_cancelled_request_is_ignored() -> None:
    connection = in_game()
    connection.send(turn_request(2))
    connection.send(ErrorMessage(code="timeout", message="no reply within 10000 ms"))
    connection.send(game_over(3))  # cancels request 2
    connection.send(new_game(4))
    late = FakeBot.reply(2) + FakeBot.ready(4)
    assert events(connection, late) == [Ready(id=4, name="fake", version="1.0"), NEED_DATA]
    # Only once: the same id again is a reply nobody asked for.
    assert violation(connection, FakeBot.reply(2)).code == "invalid_message"


@pytest.mark.parametrize("started", [1, 20, -1])
def test_a_reply_started_before_its_request_is_a_violation(started: int) -> None:
    # Any byte of it (up to all but its newline) received before the request was written.
    connection = in_game()
    reply = FakeBot.reply(2)
    assert events(connection, reply[:started]) == [NEED_DATA]
    connection.send(turn_request(2))
    error = violation(connection, reply[started:])
    assert (error.code, error.message) == (
        "invalid_message",
        "reply started before its request: part of this turn had arrived before turn id 2"
        " was written",
    )
    assert error.line == reply[:-1]
    # The same for ready, in a process that played before: judged by the same rule.
    connection = in_game()
    connection.send(game_over(2))
    assert events(connection, FakeBot.ready(3)[:started]) == [NEED_DATA]
    connection.send(new_game(3))
    assert "before new_game id 3" in violation(connection, FakeBot.ready(3)[started:]).message


def test_a_log_may_straddle_a_request_and_a_reply_follow_it() -> None:
    connection = in_game()
    log = FakeBot.log("thinking")
    assert events(connection, log[:10]) == [NEED_DATA]
    connection.send(turn_request(2))
    # The log began before the request, the reply after it: both are fine.
    assert events(connection, log[10:] + FakeBot.reply(2)) == [
        Log(message="thinking"),
        TurnReply(id=2, actions=msgspec.Raw(b"[]")),
        NEED_DATA,
    ]
    # A whole reply received before its request, not yet taken as a line, is early too.
    connection.receive_data(FakeBot.reply(3))
    connection.send(turn_request(3))
    assert "reply started before its request" in violation(connection, b"").message


# --- chunking (property) ----------------------------------------------------------


def _session_pieces(logs: list[str], crlf: list[bool]) -> list[bytes]:
    """A bot's whole output for a two-turn game, logs in between, mixed line endings: one
    piece per request (the lines up to its reply), then the logs after the last reply."""
    replies = [FakeBot.ready(1), FakeBot.reply(2), FakeBot.reply(3, Turn.parse("d1+Ld1"))]
    lines = list(replies)
    for index, text in enumerate(logs):
        lines.insert(index % (len(lines) + 1), FakeBot.log(text))
    pieces, piece = [], b""
    for index, line in enumerate(lines):
        piece += line.replace(b"\n", b"\r\n") if crlf[index % len(crlf)] else line
        if line in replies:
            pieces.append(piece)
            piece = b""
    return [*pieces, piece]


def _run(pieces: list[list[bytes]]) -> list[Event]:
    """Events of a referee fed each piece, in chunks, once it wrote the request that the
    piece answers (a reply may not begin before its request)."""
    connection = BotConnection()
    requests = [new_game(1), turn_request(2), turn_request(3)]
    seen: list[Event] = []
    for index, chunks in enumerate(pieces):
        if index < len(requests):
            connection.send(requests[index])
        for chunk in [*chunks, *([b""] if index == len(pieces) - 1 else [])]:
            connection.receive_data(chunk)
            while (event := connection.next_event()) is not NEED_DATA:
                seen.append(event)
                if event is END_OF_STREAM:
                    return seen
    raise AssertionError("no end of stream")


@given(
    logs=st.lists(st.text(max_size=30), max_size=4),
    crlf=st.lists(st.booleans(), min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=2_000), max_size=20),
)
def test_any_chunking_yields_the_same_events(
    logs: list[str], crlf: list[bool], cuts: list[int]
) -> None:
    pieces = _session_pieces(logs, crlf)
    chunked = []
    for piece in pieces:
        points = sorted({cut % (len(piece) + 1) for cut in cuts})
        chunks = [piece[start:end] for start, end in pairwise([0, *points, len(piece)])]
        chunked.append([chunk for chunk in chunks if chunk])
    expected = _run([[piece] if piece else [] for piece in pieces])
    assert _run(chunked) == expected
    assert expected[-1] is END_OF_STREAM
    assert sum(isinstance(event, Log) for event in expected) == len(logs)
    assert sum(isinstance(event, Ready | TurnReply) for event in expected) == 3


# --- the Ivy codec ---------------------------------------------------------------


def test_view_of_the_start_position() -> None:
    view = IVY.encode_view(Position.START)
    assert view == IvyView(
        position=str(Position.START),
        to_move="green",
        turn=1,
        sun=msgspec.convert({"green": 1, "purple": 2}, type(view.sun)),
        cells=(
            VineCell(cell="c1", owner="green", leaf=False, lit=True),
            VineCell(cell="g1", owner="purple", leaf=False, lit=True),
        ),
    )
    wire = msgspec.json.decode(msgspec.json.encode(view))
    assert wire["cells"][0] == {
        "kind": "vine",
        "cell": "c1",
        "owner": "green",
        "leaf": False,
        "lit": True,
    }
    assert decode_view(IVY.view_raw(Position.START)) == view


def test_view_of_a_mid_game_position() -> None:
    position = Position.from_string(MID_GAME)
    view = decode_view(IVY.view_raw(position))
    assert Position.from_string(view.position) == position
    assert (view.to_move, view.turn, view.sun.green, view.sun.purple) == ("green", 9, 8, 0)
    cells = {cell.cell: cell for cell in view.cells}
    assert sorted(cells) == sorted(["c1", "f1", "g1", "c2", "g2", "h2", "g3", "h3", "h4", "i5"])
    assert cells["c2"] == VineCell(cell="c2", owner="green", leaf=True, lit=True)
    assert cells["g2"] == VineCell(cell="g2", owner="purple", leaf=True, lit=False)
    assert cells["i5"] == VineCell(cell="i5", owner=None, leaf=False, lit=True)
    assert cells["h4"] == DeadwoodCell(cell="h4", marker=1)
    wire = msgspec.json.decode(IVY.view_raw(position))
    assert {"kind": "vine", "cell": "i5", "owner": None, "leaf": False, "lit": True} in wire[
        "cells"
    ]
    assert {"kind": "deadwood", "cell": "h4", "marker": 1} in wire["cells"]


@pytest.mark.parametrize("token", ["--", "d2", "c2+Lc2", "d3+d4+Ld4+xf4", "xg2", "a5+i5"])
def test_actions_round_trip(token: str) -> None:
    turn = Turn.parse(token)
    assert IVY.decode_actions(IVY.actions_raw(turn)) == turn
    assert IVY.decode_actions(msgspec.Raw(msgspec.json.encode(IVY.encode_actions(turn)))) == turn


def test_actions_on_the_wire() -> None:
    assert IVY.encode_actions(Turn.parse("c2+Lc2+xf3")) == [
        Creep(cell="c2"),
        Leaf(cell="c2"),
        Choke(cell="f3"),
    ]
    assert bytes(IVY.actions_raw(Turn.parse("c2+Lc2+xf3"))) == (
        b'[{"type":"creep","cell":"c2"},{"type":"leaf","cell":"c2"},{"type":"choke","cell":"f3"}]'
    )


@pytest.mark.parametrize(
    ("actions", "message", "offending"),
    [
        (
            b'[{"type":"creep","cell":"c2"},{"type":"creep","cell":"z9"}]',
            "unknown cell 'z9' - at `$.actions[1].cell`",
            "$.actions[1].cell",
        ),
        (
            b'[{"type":"leaf","cell":"c2"},{"type":"grow","cell":"c3"}]',
            "Invalid value 'grow' - at `$.actions[1].type`",
            "$.actions[1].type",
        ),
        (
            b'[{"type":"choke"}]',
            "Object missing required field `cell` - at `$.actions[0]`",
            "$.actions[0]",
        ),
        (b'"pass"', "Expected `array`, got `str` - at `$.actions`", "$.actions"),
        (
            b'[{"type":"creep","cell":3}]',
            "Expected `str`, got `int` - at `$.actions[0].cell`",
            "$.actions[0].cell",
        ),
    ],
)
def test_bad_actions_name_their_path(actions: bytes, message: str, offending: str) -> None:
    connection = in_game()
    connection.send(turn_request(2))
    [reply, _] = events(connection, b'{"type":"turn","id":2,"actions":' + actions + b"}\n")
    assert isinstance(reply, TurnReply)
    with pytest.raises(ProtocolViolation) as caught:
        IVY.decode_actions(reply.actions)
    error = caught.value
    assert (error.code, str(error), error.offending) == ("invalid_message", message, offending)


LONG = "x" * 1_000_000


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (
            b'[{"type":"creep","cell":"%s"}]' % LONG.encode(),
            f"unknown cell '{LONG[:200]}…' (1000000 characters) - at `$.actions[0].cell`",
        ),
        (
            b'[{"type":"%s","cell":"c2"}]' % LONG.encode(),
            f"Invalid value '{LONG[:200]}…' (1000000 characters) - at `$.actions[0].type`",
        ),
    ],
)
def test_a_bots_long_value_is_quoted_cut(actions: bytes, message: str) -> None:
    # The message goes back to the bot, and into every bot's game_over: it stays short.
    with pytest.raises(ProtocolViolation) as caught:
        IVY.decode_actions(msgspec.Raw(actions))
    assert caught.value.message == message
    assert caught.value.to_message().message == message


def test_a_violations_message_is_bounded_and_keeps_its_path() -> None:
    error = ProtocolViolation("invalid_message", "y" * 5000 + " - at `$.id`", "$.id")
    assert error.message == "y" * 1000 + "… [4000 characters cut] - at `$.id`"
    assert str(error) == error.message
    cut_one = ProtocolViolation("parse_error", "z" * 1001)
    assert cut_one.message == "z" * 1000 + "… [1 character cut]"
    same = "a" * 1000 + " - at `$`"
    assert ProtocolViolation("invalid_message", same).message == same


def test_codec_registry() -> None:
    assert get_entry("Ivy").codec is IVY
    assert IVY.game == "ivy"
    with pytest.raises(SettingsError, match=r"unknown game 'chess' \(known: ivy, verdant\)"):
        get_entry("chess")
