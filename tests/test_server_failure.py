"""Each connection is its own failure domain: whatever a client makes its TLS, WebSocket or
socket library raise ends that connection alone, never the server, the tournament or
another game. Real clients, real sockets on loopback, a real ``serve_tournament``."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import socket
import ssl
import struct
from pathlib import Path

import pytest
import trio
import wsproto
import wsproto.events as ws
from test_server_helpers import HOST, connect, match_config, open_lobby, remote_game

from referee.server.client import play

LIMIT = 4096  # max_line_bytes of the lobby tests


class RawClient:
    """A client that can break every rule: raw bytes, or WebSocket events driven by
    wsproto (which it may also bypass with raw frames), over TCP or TLS."""

    def __init__(self, stream: trio.abc.Stream, raw: trio.SocketStream) -> None:
        self.stream = stream
        self.raw = raw
        self.ws: wsproto.WSConnection | None = None

    @classmethod
    async def open(
        cls, port: int, *, tls: ssl.SSLContext | None = None, websocket: bool = False
    ) -> RawClient:
        raw = await trio.open_tcp_stream(HOST, port)
        stream: trio.abc.Stream = raw
        if tls is not None:
            secure = trio.SSLStream(raw, tls, server_hostname=HOST)
            await secure.do_handshake()
            stream = secure
        client = cls(stream, raw)
        if websocket:
            client.ws = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
            await client.event(ws.Request(host=HOST, target="/"))
            while not any(isinstance(e, ws.AcceptConnection) for e in await client.events()):
                pass
        return client

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def event(self, *events: ws.Event) -> None:
        """Send WebSocket events in one write."""
        assert self.ws is not None
        await self.send(b"".join(self.ws.send(event) for event in events))

    async def events(self) -> list[ws.Event]:
        assert self.ws is not None
        data = await self.stream.receive_some(65536)
        self.ws.receive_data(data or None)
        return list(self.ws.events())

    async def line(self, text: str) -> None:
        """One line as the transport carries it (one WebSocket message, or bytes)."""
        if self.ws is not None:
            await self.event(ws.TextMessage(data=text))
        else:
            await self.send(text.encode() + b"\n")

    async def hello(self, name: str, token: str) -> None:
        await self.line(json.dumps({"type": "hello", "name": name, "token": token}))

    def reset(self) -> None:
        """Close with a TCP reset (SO_LINGER 0), nothing said."""
        self.raw.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.raw.socket.close()

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)


def server_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "referee.server"]


async def _oversized_then_ping(port: int, name: str, token: str, *, before_game: bool) -> None:
    """The reported attack: after its hello the bot reads nothing more, then sends a
    message just over the size limit followed at once by a Ping."""
    client = await RawClient.open(port, websocket=True)
    try:
        await client.hello(name, token)
        if not before_game:
            while not any(  # its first request of the game: the game is on
                isinstance(e, ws.TextMessage) and '"new_game"' in e.data
                for e in await client.events()
            ):
                pass
        await client.event(ws.TextMessage(data="x" * (LIMIT + 2)), ws.Ping(b"ping"))
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while await client.stream.receive_some(65536):
                pass
    finally:
        await client.aclose()


@pytest.mark.parametrize("before_game", [True, False])
async def test_an_oversized_message_then_a_ping_ends_that_connection_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, before_game: bool
) -> None:
    """Regression: trio-websocket closed with 1009, then answered the Ping; wsproto raised
    LocalProtocolError out of the connection's handler and the whole server exited."""
    caplog.set_level(logging.INFO, "referee.server")
    async with open_lobby(
        tmp_path, ("alice", "bob", "carol"), websocket=True, max_line_bytes=LIMIT
    ) as (lobby, port, tokens):
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:

                async def honest(name: str) -> None:
                    client = await connect(
                        port, name, tokens[name], nursery=nursery, websocket=True
                    )
                    try:
                        await play(client)
                    finally:
                        await client.aclose()

                nursery.start_soon(honest, "alice")
                if before_game:  # an idle accomplice, while the others play
                    nursery.start_soon(honest, "bob")
                    attack = functools.partial(_oversized_then_ping, before_game=True)
                    nursery.start_soon(attack, port, "carol", tokens["carol"])
                    seats = ("alice", "bob")
                else:  # a player of the game itself, mid-game
                    nursery.start_soon(
                        functools.partial(_oversized_then_ping, before_game=False),
                        port,
                        "carol",
                        tokens["carol"],
                    )
                    seats = ("alice", "carol")
                result = await remote_game(
                    lobby, seats, match_config("0.5+0", startup=1, max_line_bytes=LIMIT)
                )
                # The door still works.
                probe = await connect(
                    port, "carol", tokens["carol"], nursery=nursery, websocket=True
                )
                await probe.aclose()
                nursery.cancel_scope.cancel()
    if before_game:
        assert result.ending.termination == "normal"
    else:
        assert result.ending.places == (1, 2), result.ending  # the attacker lost, recorded
    failed = [line for line in server_lines(caplog) if "failed (" in line]
    assert failed and all(line.startswith("carol: its connection from ") for line in failed)
    assert all(line.isprintable() for line in server_lines(caplog))
