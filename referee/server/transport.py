"""A remote bot's connection as bytes in and out, whatever carries it: TCP (with or
without TLS) or WebSocket.

Over TCP the bytes are the bot protocol's JSON lines as they are. Over WebSocket each
message holds one or more whole lines; a message that does not end with a newline is
taken as ending with one, so a browser may send one JSON object per message. What the
server writes goes out one line per text message, without its newline.
"""

from __future__ import annotations

from typing import Protocol

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection

RECEIVE_BYTES = 65536
"""The most bytes read from a TCP connection at once."""

CLOSE_TIMEOUT = 0.5
"""How long closing a WebSocket politely (its closing handshake) may take."""


_HANG_UPS = frozenset({1000, 1001, 1005, 1006})
"""WebSocket close codes that only say the client went away (normal, going away, no
code, the connection dropped)."""


class TransportClosed(Exception):
    """The connection is gone: nothing more can be written to it."""


class Transport(Protocol):
    """One connection: ``receive`` returns the next bytes (``b""`` once it is closed,
    however that happened), ``send`` writes (raising :class:`TransportClosed` when it
    cannot), ``aclose`` closes it without waiting long."""

    async def receive(self) -> bytes: ...

    async def send(self, data: bytes) -> None: ...

    async def aclose(self) -> None: ...

    def broken(self) -> str | None:
        """Why the client's side broke the connection, when the transport knows (a
        WebSocket's close code and reason); ``None`` for a plain hang-up."""
        ...


class StreamTransport:
    """A TCP connection, or a TLS one over it."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream

    async def receive(self) -> bytes:
        try:
            return bytes(await self.stream.receive_some(RECEIVE_BYTES))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    async def send(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TransportClosed from None

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)

    def broken(self) -> str | None:
        return None


class WebSocketTransport:
    """A WebSocket connection (over TCP or TLS), its closing handshake bounded in time."""

    def __init__(self, socket: WebSocketConnection, stream: trio.abc.Stream) -> None:
        self.socket = socket
        self.stream = stream
        self._broken: str | None = None

    async def receive(self) -> bytes:
        try:
            message = await self.socket.get_message()
        except ConnectionClosed as closed:
            reason = closed.reason
            if reason is not None and reason.code not in _HANG_UPS:
                self._broken = f"{reason.code} {reason.name}: {reason.reason or ''}".rstrip(": ")
            return b""
        data = message.encode("utf-8", "surrogatepass") if isinstance(message, str) else message
        return data if data.endswith(b"\n") else data + b"\n"

    async def send(self, data: bytes) -> None:
        try:
            for line in data.split(b"\n"):
                if line:
                    await self.socket.send_message(line.decode("utf-8", "replace"))
        except ConnectionClosed:
            raise TransportClosed from None

    def broken(self) -> str | None:
        return self._broken

    async def aclose(self) -> None:
        with trio.move_on_after(CLOSE_TIMEOUT):
            await self.socket.aclose()
        await trio.aclose_forcefully(self.stream)
