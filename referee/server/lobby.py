"""Admitting remote bots: the listeners' connection handler.

Every connection, on any listener, must within ``hello_timeout`` seconds finish its
TLS handshake (with a certificate), its WebSocket upgrade (on the WebSocket port) and
send a ``hello`` line naming a remote player with that player's token
(:mod:`referee.server.handshake`). At most ``max_pending`` connections may be at that
stage at once; more are closed at once, without a word. A refused connection is sent
one ``refused`` line (if it reads it within :data:`REFUSAL_TIMEOUT`) and closed, and the
server logs one line saying why. An admitted connection is handed to its player
(:class:`~referee.server.remote.Remote`), replacing any earlier one.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import cast

import trio
from trio_websocket import ConnectionClosed, HandshakeError, wrap_server_stream

from referee.server.handshake import (
    MAX_HELLO_BYTES,
    HelloRefused,
    Refused,
    read_hello,
    refused_line,
)
from referee.server.remote import Connection, Remote
from referee.server.tokens import TokenBook
from referee.server.transport import (
    StreamTransport,
    Transport,
    TransportClosed,
    WebSocketTransport,
)
from referee.untrusted import clip, printable

REFUSAL_TIMEOUT = 0.5
"""How long writing a ``refused`` line to a connection may take."""

PENDING_PER_ADDRESS = 8
"""The default cap of connections from one IP address not through their handshake."""

LOG_LINES_PER_SECOND = 5
"""Lines logged about connections that failed before their ``hello``, per second."""

logger = logging.getLogger("referee.server")


class _Failed(Exception):
    """A connection that failed before it could be answered (TLS, WebSocket, hung up)."""


class _LogBudget:
    """At most ``per_second`` log lines in each second; the lines beyond are counted and
    said as one line before the next one logged (so a flood of bad connections cannot
    flood the log, and none goes uncounted)."""

    def __init__(self, per_second: int) -> None:
        self.per_second = per_second
        self._window = -1.0
        self._spent = 0
        self._held = 0

    def warning(self, message: str, *args: object) -> None:
        now = trio.current_time()
        if now - self._window >= 1.0:
            if self._held:
                logger.warning(
                    "%d more connections were refused or closed before their hello"
                    " (not shown: over %d lines a second)",
                    self._held,
                    self.per_second,
                )
            self._window, self._spent, self._held = now, 0, 0
        if self._spent < self.per_second:
            self._spent += 1
            logger.warning(message, *args)
        else:
            self._held += 1


@dataclass(eq=False)
class _Pending:
    """A connection not through its handshake yet: whose, and how to evict it."""

    host: str
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    evicted_by: str = ""
    """The cap that evicted it ("" while it was not)."""


class Lobby:
    """The remote players (:class:`Remote`, by name) and the door to them."""

    def __init__(
        self,
        names: Iterable[str],
        tokens: TokenBook,
        *,
        max_line_bytes: int,
        hello_timeout: float,
        max_pending: int,
        max_pending_per_address: int = PENDING_PER_ADDRESS,
    ) -> None:
        self.remotes = {name: Remote(name, max_line_bytes) for name in names}
        self.tokens = tokens
        self.max_line_bytes = max_line_bytes
        self.hello_timeout = hello_timeout
        self.max_pending = max_pending
        self.max_pending_per_address = max_pending_per_address
        self._pending: dict[_Pending, None] = {}
        """Connections that have not said a valid ``hello`` yet, oldest first."""
        self._by_host: dict[str, dict[_Pending, None]] = {}
        self._log = _LogBudget(LOG_LINES_PER_SECOND)
        self._absent = set(self.remotes)
        self._everyone = trio.Event()
        if not self._absent:
            self._everyone.set()

    @property
    def waiting(self) -> int:
        """Connections that have not said a valid ``hello`` yet."""
        return len(self._pending)

    def absent(self) -> list[str]:
        """The remote players that never connected, in name order."""
        return sorted(self._absent)

    async def everyone(self) -> None:
        """Wait until every remote player has connected once."""
        await self._everyone.wait()

    async def handle(
        self,
        stream: trio.SocketStream,
        *,
        ssl_context: ssl.SSLContext | None = None,
        websocket: bool = False,
    ) -> None:
        """Serve one connection to the end (a :func:`trio.serve_tcp` handler)."""
        host, peer = _peer(stream)
        transport: Transport | None = None
        try:
            async with trio.open_nursery() as nursery:  # a WebSocket's own reader runs here
                admitted = await self._admit(stream, host, peer, ssl_context, websocket, nursery)
                if admitted is not None:
                    transport, name, rest = admitted
                    remote = self.remotes[name]
                    connection = Connection(transport, peer)
                    remote.take(connection)
                    logger.info("%s: connected from %s", name, peer)
                    self._absent.discard(name)
                    if not self._absent:
                        self._everyone.set()
                    await connection.run(remote, rest)
                nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                if transport is not None:
                    await transport.aclose()
                await trio.aclose_forcefully(stream)

    async def _admit(
        self,
        stream: trio.SocketStream,
        host: str,
        peer: str,
        ssl_context: ssl.SSLContext | None,
        websocket: bool,
        nursery: trio.Nursery,
    ) -> tuple[Transport, str, bytes] | None:
        """The connection's transport, player and the bytes after its ``hello``; ``None``
        for a connection refused (and told so, if it can still be told)."""
        pending = self._enter(host)
        transport: Transport | None = None
        try:
            with pending.scope, trio.move_on_after(self.hello_timeout):
                transport = await self._open(stream, ssl_context, websocket, nursery)
                line, rest = await _first_line(transport)
                hello = read_hello(line)
                if hello.name not in self.remotes or not self.tokens.check(hello.name, hello.token):
                    raise HelloRefused("bad_token", "unknown player or wrong token")
                return transport, hello.name, rest
            if pending.evicted_by:
                self._log.warning(
                    "closed a connection from %s: evicted, the oldest of %s not through"
                    " their handshake, by a newer one",
                    peer,
                    pending.evicted_by,
                )
                return None
            refusal = Refused(code="timeout", message=f"no hello within {self.hello_timeout:g} s")
        except HelloRefused as refused:
            refusal = refused.refusal
        except _Failed as failed:
            self._log.warning("closed a connection from %s: %s", peer, failed)
            return None
        finally:
            self._leave(pending)
        self._log.warning("refused a connection from %s: %s", peer, refusal.message)
        if transport is not None:
            with trio.move_on_after(REFUSAL_TIMEOUT):
                with contextlib.suppress(TransportClosed):
                    await transport.send(refused_line(refusal))
        return None

    def _enter(self, host: str) -> _Pending:
        """Count a new connection as pending, evicting the oldest one first when a cap is
        reached (its address's, then everyone's)."""
        mine = self._by_host.setdefault(host, {})
        if len(mine) >= self.max_pending_per_address:
            self._evict(next(iter(mine)), f"the {self.max_pending_per_address} from {host}")
        if len(self._pending) >= self.max_pending:
            self._evict(next(iter(self._pending)), f"the {self.max_pending} connections")
        pending = _Pending(host)
        self._pending[pending] = None
        mine[pending] = None
        return pending

    def _evict(self, pending: _Pending, why: str) -> None:
        pending.evicted_by = why
        pending.scope.cancel()
        self._leave(pending)  # now: its slot is the newcomer's

    def _leave(self, pending: _Pending) -> None:
        self._pending.pop(pending, None)
        mine = self._by_host.get(pending.host)
        if mine is not None:
            mine.pop(pending, None)
            if not mine:
                del self._by_host[pending.host]

    async def _open(
        self,
        stream: trio.SocketStream,
        ssl_context: ssl.SSLContext | None,
        websocket: bool,
        nursery: trio.Nursery,
    ) -> Transport:
        """TLS and the WebSocket upgrade, as the listener needs."""
        carried: trio.abc.Stream = stream
        if ssl_context is not None:
            secure = trio.SSLStream(stream, ssl_context, server_side=True)
            try:
                await secure.do_handshake()
            except trio.BrokenResourceError as error:
                raise _Failed(f"TLS handshake failed ({_cause(error)})") from None
            carried = secure
        if not websocket:
            return StreamTransport(carried)
        reader = _Reader(nursery)
        try:
            with reader.upgrading:
                request = await wrap_server_stream(
                    reader.nursery(), carried, max_message_size=self.max_line_bytes + 1
                )
                socket = await request.accept()
                return WebSocketTransport(socket, carried)
        except (ConnectionClosed, HandshakeError, trio.BrokenResourceError) as error:
            raise _Failed(f"WebSocket handshake failed ({_cause(error)})") from None
        raise _Failed("WebSocket handshake failed (not a WebSocket upgrade; answered 400)")


class _Reader:
    """Where trio_websocket runs a connection's reader task, telling when it ends.

    A request that is not a valid upgrade makes that task answer ``400 Bad Request``,
    close the connection and end, while ``wrap_server_stream`` waits on for a request
    that never comes: its end cancels :attr:`upgrading`, so the upgrade fails at once
    instead of holding a handshake slot until ``hello_timeout``.
    """

    def __init__(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        self.upgrading = trio.CancelScope()

    def nursery(self) -> trio.Nursery:
        """A stand-in nursery (``start_soon`` only, all trio_websocket calls)."""
        return cast(trio.Nursery, self)

    def start_soon(self, function: Callable[[], Awaitable[object]], name: object = None) -> None:
        async def watched() -> None:
            try:
                await function()
            finally:
                self.upgrading.cancel()  # once upgraded, this scope is gone: no effect

        self._nursery.start_soon(watched, name=name)


async def _first_line(transport: Transport) -> tuple[bytes, bytes]:
    """The connection's first line (without its newline) and the bytes after it."""
    buffer = bytearray()
    while (newline := buffer.find(b"\n")) < 0:
        if len(buffer) > MAX_HELLO_BYTES:
            raise HelloRefused("bad_hello", f"no hello line within {MAX_HELLO_BYTES} bytes")
        data = await transport.receive()
        if not data:
            if broken := transport.broken():
                reason = clip(printable(broken), 120)
                raise _Failed(f"its WebSocket broke before its hello ({reason})")
            raise _Failed("it hung up before its hello")
        buffer += data
    line = bytes(buffer[:newline])
    return line.removesuffix(b"\r"), bytes(buffer[newline + 1 :])


def _peer(stream: trio.SocketStream) -> tuple[str, str]:
    """The other end's IP address, and its ``host:port``."""
    try:
        address = stream.socket.getpeername()
    except OSError:
        return "?", "?"
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = str(address[0]), address[1]
        return host, f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return str(address), str(address)


def _cause(error: BaseException) -> str:
    """A short, printable reason for a failed handshake."""
    cause = error.__cause__ or error.__context__ or error
    return clip(printable(str(cause) or type(cause).__name__), 120)
