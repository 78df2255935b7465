"""No byte sequence a bot can send crashes the referee (fuzzing, in memory and for real).

In memory, hypothesis throws random and adversarial bytes at a :class:`BotConnection`
in every phase: the only exception that may come out is :class:`ProtocolViolation`,
with a stable code. Then whole games are played by the runner against a real bot process
that writes exactly the bytes it is given (``misbehave.py send:WHEN:BYTES``): each ends
as that bot's loss with the right code, or as a normal game, and its record is complete.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import msgspec
import pytest
import trio
from click.testing import CliRunner
from fakebots import FAKEBOTS, fake
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    DEFAULT_MAX_LINE_BYTES,
    END_OF_STREAM,
    ERROR_CODES,
    NEED_DATA,
    BotConnection,
    Log,
    NewGame,
    Phase,
    ProtocolViolation,
    Ready,
    TimeControlInfo,
    TurnReply,
)
from referee.cli import main
from referee.clock import Allowances, TimeControl
from referee.games import get_entry
from referee.match import BotPlayer, GameResult, MatchConfig, play_game
from referee.pgn import read_pgn_file
from referee.process import BotCommand
from referee.replay import verify

IVY = get_entry("ivy").codec
MIB = DEFAULT_MAX_LINE_BYTES


Part = bytes | tuple[bytes, int]


def sending(when: str, *parts: Part, name: str = "hostile") -> BotCommand:
    """The fake bot that writes exactly ``parts`` (see ``misbehave.py``, ``send:WHEN:BYTES``).

    A part is bytes, or ``(unit, count)`` for ``unit`` repeated; runs of one byte are
    written as such, so that megabytes fit on the bot's command line.
    """
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, tuple):
            pieces.append(f"{part[0].hex()}*{part[1]}")
        else:
            pieces += (f"{b:02x}*{len(list(run))}" for b, run in itertools.groupby(part))
    return fake(f"send:{when}:{'+'.join(pieces)}", name=name)


def joined(parts: tuple[Part, ...]) -> bytes:
    """The bytes ``parts`` stand for."""
    return b"".join(part[0] * part[1] if isinstance(part, tuple) else part for part in parts)


def log_line(total: int) -> bytes:
    """A valid ``log`` line of exactly ``total`` bytes before its newline."""
    head, tail = b'{"type":"log","message":"', b'"}'
    return head + b"a" * (total - len(head) - len(tail)) + tail


# --- in memory -------------------------------------------------------------------

TOKENS = [
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b"\\",
    b":",
    b",",
    b"\n",
    b"\r",
    b"\r\n",
    b"\x00",
    b"\xff",
    b"\xed\xa0\x80",
    b"\\ud800",
    b"\\u0000",
    b"9" * 400,
    b"1e999",
    b"-0",
    b"true",
    b"null",
    b'"type"',
    b'"turn"',
    b'"ready"',
    b'"log"',
    b'"id"',
    b'"actions"',
    b'{"type":"log","message":"hi"}\n',
    b'{"type":"ready","id":1,"name":"x"}\n',
    b'{"type":"turn","id":2,"actions":[]}\n',
    b'{"type":"turn","id":2,"actions":[{"type":"creep","cell":"d1"}]}\n',
]

pieces = st.one_of(
    st.binary(max_size=64),
    st.sampled_from(TOKENS),
    st.builds(lambda token, count: token * count, st.sampled_from(TOKENS), st.integers(0, 3_000)),
)


def _connection_in(phase: str) -> BotConnection:
    connection = BotConnection(max_line_bytes=4_096)
    new_game = NewGame(
        id=1,
        game="ivy",
        seat=0,
        seat_name="green",
        players=("a", "b"),
        time_control=TimeControlInfo(kind="fischer", base_ms=1, increment_ms=0, per_turn_ms=None),
        startup_ms=1,
        position="x",
        max_line_bytes=4_096,
    )
    if phase != "idle":
        connection.send(new_game)
    return connection


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    phase=st.sampled_from(["idle", "awaiting ready"]),
    chunks=st.lists(st.lists(pieces, max_size=12).map(b"".join), max_size=6),
    end=st.booleans(),
)
def test_no_bytes_crash_the_connection(phase: str, chunks: list[bytes], end: bool) -> None:
    connection = _connection_in(phase)
    try:
        for chunk in [*chunks, *([b""] if end else [])]:
            connection.receive_data(chunk)
            while (event := connection.next_event()) not in (NEED_DATA, END_OF_STREAM):
                assert isinstance(event, Log | Ready | TurnReply)
                if isinstance(event, TurnReply):
                    try:  # what the session does with a reply's actions
                        IVY.decode_actions(event.actions)
                    except ProtocolViolation as bad:
                        assert bad.code == "invalid_message"
            if event is END_OF_STREAM:
                return
    except ProtocolViolation as violation:
        assert violation.code in ERROR_CODES
        assert connection.phase is Phase.ERROR
        assert violation.line is not None
        msgspec.json.encode(violation.to_message())  # it can be told as it is


# --- whole games -----------------------------------------------------------------


def config(tmp_path: Path) -> MatchConfig:
    return MatchConfig(
        control=TimeControl.parse("5+0"),
        allowances=Allowances(startup=5.0, margin=0.1),
        options={"turn_limit": 4},
        log_dir=tmp_path / "logs",
    )


async def play(tmp_path: Path, bad: BotCommand) -> GameResult:
    """One game of ``bad`` (Green) against the pass bot."""
    with trio.fail_after(60):  # a hang guard
        async with trio.open_nursery() as nursery:
            cfg = config(tmp_path)
            players = [
                BotPlayer(bad, "hostile", nursery, log_dir=cfg.log_dir),
                BotPlayer(fake(name="pass"), "pass", nursery, log_dir=cfg.log_dir),
            ]
            result = await play_game(players, cfg)
            for player in players:
                await player.close()
    return result


REPLY = b'{"type":"turn","id":2,"actions":[]}\n'
HUGE_ID = b'{"type":"turn","id":' + b"9" * 5_000 + b',"actions":[]}\n'

CASES = [
    # (when, bytes, expected: None for a normal game, or (termination, words of the reason))
    ("turn", b"[" * 1_000 + b"\n", ("rules infraction", "more than 64 deep")),
    ("turn", b"[" * 500_000 + b"\n", ("rules infraction", "more than 64 deep")),
    (
        "turn",
        b'{"type":"turn","id":' + b"9" * 5_000 + b',"actions":[]}\n',
        ("rules infraction", "out of range"),
    ),
    ("turn", b'{"type":"log","message":"x","n":' + b"9" * 5_000 + b"}\n", None),
    (
        "turn",
        b'{"type":"turn","id":2,"actions":[1e999999]}\n',
        ("rules infraction", "$.actions[0]"),
    ),
    ("turn", b'{"type":"log","message":"\xff\xfe"}\n', ("rules infraction", "not valid UTF-8")),
    ("turn", b'{"type":"log","message":"\\ud800"}\n', ("rules infraction", "not JSON")),
    ("turn", b'{"type":"log","message":"a\x00b"}\n', ("rules infraction", "not JSON")),
    ("turn", b'{"type":"log","message":"a\\u0000b"}\n', None),
    ("turn", log_line(MIB - 1) + b"\n", None),
    ("turn", log_line(MIB) + b"\n", None),
    ("turn", log_line(MIB + 1) + b"\n", ("rules infraction", f"longer than {MIB} bytes")),
    ("turn", log_line(MIB) + b"\r\n", ("rules infraction", f"longer than {MIB} bytes")),
    ("turn", log_line(MIB - 1) + b"\r\n", None),
    ("turn", b"\n\r\n\n" + log_line(20) + b"\r\r\n", None),
    ("turn", b"x" * (3 * MIB), ("rules infraction", f"longer than {MIB} bytes")),
    ("turn", (log_line(40) + b"\n", 5_000), None),
    ("exit", REPLY.rstrip(b"\n"), ("abandoned", "Green (hostile) forfeits")),
    ("early", REPLY, ("rules infraction", "unexpected turn: no request is waiting")),
    ("late", REPLY, ("rules infraction", "unexpected turn: no request is waiting")),
]


@pytest.mark.parametrize(
    ("when", "part", "expected"),
    CASES,
    ids=[f"{when}-{len(joined((part,)))}-{joined((part,))[:12]!r}" for when, part, _ in CASES],
)
async def test_whole_games_against_hostile_lines(tmp_path, when, part, expected):
    data = joined((part,))
    result = await play(tmp_path, sending(when, part))
    record = result.record
    assert verify(record).valid
    if expected is None:
        assert (record.tags["Termination"], record.result) == ("normal", "1/2-1/2")
        return
    termination, words = expected
    assert (record.tags["Termination"], record.result) == (termination, "0-1")
    assert words in result.ending.reason
    if termination == "rules infraction":
        offending = [line for line in result.logs if "offending line" in line]
        kept = min(len(data.split(b"\n")[0]), MIB + 1)
        assert offending and f"offending line ({kept} bytes)" in offending[0]


parts = st.one_of(
    st.binary(max_size=64),
    st.tuples(st.sampled_from(TOKENS), st.integers(1, 3_000)),  # short on the command line
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    when=st.sampled_from(["turn", "early", "late"]), data=st.lists(parts, min_size=1, max_size=8)
)
def test_any_bytes_end_as_a_normal_game_or_the_senders_loss(tmp_path_factory, when, data):
    tmp_path = tmp_path_factory.mktemp("fuzz")
    result = trio.run(play, tmp_path, sending(when, *data))
    record = result.record
    assert verify(record).valid
    assert result.ending.faulty_seats in ((), (0,))
    if result.ending.faulty_seats:
        assert record.result == "0-1" and "Green (hostile) forfeits" in result.ending.reason


def test_the_referee_command_survives_deep_nesting(tmp_path):
    pgn = tmp_path / "m.pgn"
    deep = sending("turn", b"[" * 1_000 + b"\n")
    passer = f"{deep.argv[0]} -u {FAKEBOTS / 'pass_bot.py'}"
    result = CliRunner().invoke(
        main,
        [
            "match",
            f"name=deep cmd='{' '.join(deep.argv)}'",
            f"name=steady cmd='{passer}'",
            "--games", "2", "--option", "turn_limit=4", "--pgn", str(pgn),
            "--log-dir", str(tmp_path / "logs"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    games = read_pgn_file(pgn)
    assert [game.tags["Termination"] for game in games] == ["rules infraction"] * 2
    assert [game.result for game in games] == ["0-1", "1-0"]
    assert all(verify(game).valid for game in games)
