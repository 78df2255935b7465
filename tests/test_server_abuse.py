"""Bad clients of the match server, on real loopback sockets: each is refused or closed
within its bound, told why in one line (when it can still read), logged in one line,
and costs the players nothing."""

from __future__ import annotations

import contextlib
import json
import logging
import ssl
from pathlib import Path

import pytest
import trio
import trio.testing
from test_server_helpers import (
    HOST,
    connect,
    eof,
    match_config,
    open_lobby,
    played,
    remote_game,
    self_signed_certificate,
)

from referee.server.client import BotClient
from referee.server.handshake import MAX_HELLO_BYTES
from referee.server.lobby import LOG_LINES_PER_SECOND, _LogBudget

HELLO_TIMEOUT = 0.3


def refusal(lines: list[bytes]) -> dict[str, str]:
    assert len(lines) == 1, lines
    message = json.loads(lines[0])
    assert message["type"] == "refused"
    return message


def server_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "referee.server"]


@pytest.mark.parametrize(
    ("sent", "code", "logged"),
    [
        (b'{"type": "hello", "name": "alice", "token": "nope"}\n', "bad_token", "wrong token"),
        (b'{"type": "hello", "name": "mallory", "token": "x"}\n', "bad_token", "wrong token"),
        (b"GET / HTTP/1.1\r\n\r\n", "bad_hello", "must be a hello"),
        (b'{"type": "hello", "name": 7, "token": "x"}\n', "bad_hello", "$.name"),
        (b'{"type": "hello", "name": "alice", "token": "x", "protocol": 2}\n', "bad_hello", "2"),
        (b"\x1b[2J" + b"{" * 100 + b"\n", "bad_hello", "must be a hello"),
        (b"x" * (MAX_HELLO_BYTES * 50), "bad_hello", f"within {MAX_HELLO_BYTES} bytes"),
        (b'{"type": "hel', "timeout", "no hello within"),
    ],
)
async def test_a_bad_hello_gets_one_refusal_and_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, sent: bytes, code: str, logged: str
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    async with open_lobby(tmp_path, hello_timeout=HELLO_TIMEOUT) as (lobby, port, _tokens):
        with trio.fail_after(5):
            client = await connect(port)
            await client.send_raw(sent)
            answer = refusal(await eof(client))
            await client.aclose()
        assert answer["code"] == code
        assert lobby.waiting == 0 and not lobby.remotes["alice"].connected
    lines = server_lines(caplog)
    assert len(lines) == 1 and logged in lines[0], lines
    assert lines[0].isprintable()


async def test_a_flood_of_silent_connections_evicts_itself_and_bots_get_in(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    pending = 4
    # No minimum age here: every newcomer may evict the oldest (the rule's order alone).
    async with open_lobby(tmp_path, hello_timeout=5, max_pending=pending, min_pending_age=0) as (
        lobby,
        port,
        tokens,
    ):
        with trio.fail_after(10):
            silent = [await connect(port) for _ in range(pending)]
            while lobby.waiting < pending:
                await trio.sleep(0.01)
            extra = [await connect(port) for _ in range(20)]
            # Each newcomer evicted the oldest: closed at once, without a word.
            for client in silent + extra[:-pending]:
                assert await eof(client) == []
            assert lobby.waiting == pending
            # An honest bot, its hello sent at once, gets in while the flood holds the cap.
            async with trio.open_nursery() as nursery:
                nursery.start_soon(played, port, "alice", tokens["alice"])
                nursery.start_soon(played, port, "bob", tokens["bob"])
                result = await remote_game(lobby, ("alice", "bob"), match_config())
                nursery.cancel_scope.cancel()
            for client in silent + extra:
                await client.aclose()
    assert result.ending.termination == "normal"
    evicted = [line for line in server_lines(caplog) if "evicted" in line]
    assert evicted and all(
        "the oldest from 127.0.0.1, the address holding the most of the 4 connections" in line
        for line in evicted
    ), evicted


async def test_one_address_holds_at_most_its_share_of_the_handshakes(tmp_path: Path) -> None:
    async with open_lobby(
        tmp_path, hello_timeout=5, max_pending=16, max_pending_per_address=3, min_pending_age=0
    ) as (
        lobby,
        port,
        tokens,
    ):
        with trio.fail_after(10):
            silent = [await connect(port) for _ in range(3)]
            while lobby.waiting < 3:
                await trio.sleep(0.01)
            bot = await connect(port, "alice", tokens["alice"])  # evicts the oldest
            assert await eof(silent[0]) == []
            assert lobby.waiting == 2 and lobby.remotes["alice"].connected
            for client in [*silent, bot]:
                await client.aclose()


async def test_lines_about_bad_connections_are_at_most_five_a_second(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    budget = _LogBudget(LOG_LINES_PER_SECOND)
    for n in range(20):
        budget.warning("closed a connection from %s", n)
    await trio.sleep(1)
    budget.warning("closed a connection from %s", "late")
    assert server_lines(caplog) == [
        *(f"closed a connection from {n}" for n in range(LOG_LINES_PER_SECOND)),
        f"{20 - LOG_LINES_PER_SECOND} more connections were refused or closed before their"
        f" hello (not shown: over {LOG_LINES_PER_SECOND} lines a second)",
        "closed a connection from late",
    ]


async def test_a_line_that_never_ends_mid_game_costs_its_own_clock_only(tmp_path: Path) -> None:
    async with open_lobby(tmp_path) as (lobby, port, tokens):

        async def dawdler() -> None:
            client = await connect(port, "bob", tokens["bob"])
            try:
                message = await client.receive()
                await client.send({"type": "ready", "id": message["id"], "name": "b"})
                await client.receive()
                await client.send_raw(b'{"type": "turn", "id": ')  # and never the rest
                await trio.sleep_forever()
            finally:
                await client.aclose()

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(dawdler)
                nursery.start_soon(played, port, "alice", tokens["alice"])
                result = await remote_game(lobby, ("bob", "alice"), match_config("0.3+0"))
                nursery.cancel_scope.cancel()
    assert result.ending.termination == "time forfeit" and result.ending.places == (2, 1)


async def test_a_websocket_frame_too_big_closes_the_connection(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    async with (
        open_lobby(tmp_path, websocket=True, max_line_bytes=4096) as (lobby, port, _),
        trio.open_nursery() as nursery,
    ):
        with trio.fail_after(5):
            client = await connect(port, nursery=nursery, websocket=True)
            await client.send_raw(b"x" * 100_000)
            assert await eof(client) == []
            await client.aclose()
            assert lobby.waiting == 0
        nursery.cancel_scope.cancel()
    assert any(
        "its WebSocket broke before its hello (1009 MESSAGE_TOO_BIG" in line
        for line in server_lines(caplog)
    ), server_lines(caplog)


def _frame(opcode: int, payload: bytes, *, mask: bool = True) -> bytes:
    """One whole WebSocket frame (of fewer than 126 bytes), masked as a client's must be."""
    head = bytes([0x80 | opcode, (0x80 if mask else 0) | len(payload)])
    key = b"\x01\x02\x03\x04"
    body = bytes(byte ^ key[i % 4] for i, byte in enumerate(payload))
    return head + key + body if mask else head + payload


@pytest.mark.parametrize(
    ("frame", "logged"),
    [
        (_frame(1, b"hi", mask=False), "1002 PROTOCOL_ERROR: server received unexpected unmasked"),
        (_frame(1, b"\xff\xfe\n"), "1007 INVALID_FRAME_PAYLOAD_DATA: 'utf-8' codec"),
        (_frame(3, b"x"), "1002 PROTOCOL_ERROR: Invalid opcode 0x3"),
    ],
)
async def test_broken_websocket_traffic_before_hello_is_logged_with_its_reason(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, frame: bytes, logged: str
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    upgrade = (
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    async with open_lobby(tmp_path, websocket=True) as (lobby, port, _):
        with trio.fail_after(5):
            client = await trio.open_tcp_stream(HOST, port)
            await client.send_all(upgrade)
            assert (await client.receive_some(4096)).startswith(b"HTTP/1.1 101 ")
            await client.send_all(frame)
            with contextlib.suppress(trio.BrokenResourceError):
                while await client.receive_some(4096):
                    pass
            await client.aclose()
            while lobby.waiting:
                await trio.sleep(0.01)
    lines = server_lines(caplog)
    assert len(lines) == 1 and f"its WebSocket broke before its hello ({logged}" in lines[0], lines
    assert lines[0].isprintable()


async def test_a_garbage_websocket_upgrade_is_closed_in_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    async with open_lobby(tmp_path, websocket=True, hello_timeout=HELLO_TIMEOUT) as (
        lobby,
        port,
        _tokens,
    ):
        with trio.fail_after(5):
            for garbage in (b"\x16\x03\x01 not http\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x"):
                client = await BotClient.connect(HOST, port)
                await client.send_raw(garbage)
                await eof(client)
                await client.aclose()
            assert lobby.waiting == 0
    assert len(server_lines(caplog)) == 2


async def test_a_rejected_websocket_upgrade_ends_at_once_with_a_400(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    # hello_timeout is far beyond fail_after: the slot must be freed by the rejection.
    async with open_lobby(tmp_path, websocket=True, hello_timeout=60) as (lobby, port, _):
        with trio.fail_after(5):
            for request in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"garbage\r\n\r\n"):
                client = await trio.open_tcp_stream(HOST, port)
                await client.send_all(request)
                answer = b""
                while chunk := await client.receive_some(4096):
                    answer += chunk
                await client.aclose()
                assert answer.startswith(b"HTTP/1.1 400 "), answer
            while lobby.waiting:
                await trio.sleep(0.01)
    lines = server_lines(caplog)
    assert len(lines) == 2 and all("WebSocket handshake failed (" in line for line in lines)


# --- TLS -------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl command)."""
    return self_signed_certificate(tmp_path)


@pytest.mark.parametrize("websocket", [False, True])
async def test_tls_on_tcp_and_websocket(
    tmp_path: Path,
    certificate: tuple[Path, Path],
    websocket: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    cert, key = certificate
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    async with (
        open_lobby(tmp_path, websocket=websocket, ssl_context=server) as (lobby, port, tokens),
        trio.open_nursery() as nursery,
    ):
        with trio.fail_after(10):
            plain = await BotClient.connect(HOST, port)  # no TLS: closed
            await plain.send_raw(b'{"type": "hello", "name": "alice", "token": "x"}\n')
            assert await eof(plain) == []
            await plain.aclose()
            clients = {
                name: await connect(
                    port,
                    name,
                    tokens[name],
                    ssl_context=trusting,
                    websocket=websocket,
                    nursery=nursery,
                )
                for name in ("alice", "bob")
            }
            from referee.server.client import play

            for client in clients.values():
                nursery.start_soon(play, client)
            result = await remote_game(lobby, ("alice", "bob"), match_config())
            for client in clients.values():
                await client.aclose()
        nursery.cancel_scope.cancel()
    assert result.ending.termination == "normal"
    assert any("TLS handshake failed" in line for line in server_lines(caplog))


async def test_a_bot_that_writes_without_end_is_read_no_faster_than_it_is_judged(
    tmp_path: Path,
) -> None:
    limit = 4096
    async with open_lobby(tmp_path, max_line_bytes=limit) as (lobby, port, tokens):
        client = await connect(port, "alice", tokens["alice"])
        with trio.move_on_after(0.5):
            while True:  # blocks once the server stops reading
                await client.send_raw(b"x" * 65536)
        session = lobby.remotes["alice"].session
        assert session is not None
        assert session.buffered <= limit + 1 + 65536
        await client.aclose()
        # The next game judges it (a line too long: it fails the start) and goes on.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(played, port, "bob", tokens["bob"])
            config = match_config(startup=0.5, max_line_bytes=limit)
            with trio.fail_after(10):
                result = await remote_game(lobby, ("alice", "bob"), config)
            nursery.cancel_scope.cancel()
    assert result.ending.places == (2, 1)
