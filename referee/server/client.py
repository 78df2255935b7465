"""A small remote bot client: connect to ``referee serve``, say ``hello``, play.

For tests, load tests and as an example for bot authors (docs/server.md); a real
bot in another language does the same in a few lines: open a TCP (or TLS, or
WebSocket) connection, write the ``hello`` line, read the ``welcome`` line, then speak
the bot protocol of docs/protocol.md over the connection.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Callable
from typing import Any

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, wrap_client_stream

MAX_LINE = 4 << 20
"""The longest line this client reads from the server."""

Message = dict[str, Any]


class ClientClosed(Exception):
    """The server closed the connection."""


class BotClient:
    """One connection to the server, line by line (TCP, TLS or WebSocket)."""

    def __init__(self, stream: trio.abc.Stream, socket: WebSocketConnection | None) -> None:
        self._stream = stream
        self._socket = socket
        self._buffer = bytearray()

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        websocket: bool = False,
        nursery: trio.Nursery | None = None,
    ) -> BotClient:
        """Open a connection (a WebSocket needs a ``nursery`` for its reader)."""
        stream: trio.SocketStream | trio.SSLStream[trio.SocketStream]
        stream = await trio.open_tcp_stream(host, port)
        if ssl_context is not None:
            stream = trio.SSLStream(stream, ssl_context, server_hostname=host)
        if not websocket:
            return cls(stream, None)
        assert nursery is not None, "a WebSocket client needs a nursery"
        try:
            socket = await wrap_client_stream(nursery, stream, host, "/", max_message_size=MAX_LINE)
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
        return cls(stream, socket)

    async def send(self, message: Message) -> None:
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        try:
            if self._socket is not None:
                await self._socket.send_message(data)
            else:
                await self._stream.send_all(data)
        except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError):
            raise ClientClosed from None

    async def receive(self) -> Message:
        """The next message; raises :class:`ClientClosed` at the end."""
        return json.loads(await self.receive_line())

    async def receive_line(self) -> bytes:
        if self._socket is not None:
            try:
                message = await self._socket.get_message()
            except ConnectionClosed:
                raise ClientClosed from None
            return message.encode() if isinstance(message, str) else message
        while (newline := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > MAX_LINE:
                raise ClientClosed("line too long")
            try:
                data = await self._stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                raise ClientClosed
            self._buffer += data
        line = bytes(self._buffer[:newline])
        del self._buffer[: newline + 1]
        return line

    async def hello(self, name: str, token: str) -> Message:
        """Say ``hello``; → the server's answer (``welcome`` or ``refused``)."""
        await self.send({"type": "hello", "name": name, "token": token})
        return await self.receive()

    async def aclose(self) -> None:
        if self._socket is not None:
            with trio.move_on_after(0.5):
                await self._socket.aclose()
        await trio.aclose_forcefully(self._stream)


Choose = Callable[[Message], Any]
"""The actions of a turn reply, from the ``turn`` request (Ivy: ``[]`` passes)."""


async def play(
    client: BotClient,
    choose: Choose = lambda request: [],
    *,
    on_message: Callable[[Message], None] | None = None,
) -> str:
    """Answer ``new_game`` and ``turn`` requests until ``quit``; → ``"quit"``, or
    ``"closed"`` if the server hung up first."""
    try:
        while True:
            message = await client.receive()
            if on_message is not None:
                on_message(message)
            kind = message.get("type")
            if kind == "new_game":
                await client.send({"type": "ready", "id": message["id"], "name": "client"})
            elif kind == "turn":
                actions = choose(message)
                await client.send({"type": "turn", "id": message["id"], "actions": actions})
            elif kind == "quit":
                return "quit"
    except ClientClosed:
        return "closed"
