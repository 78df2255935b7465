"""Admitting remote bots: the listeners' connection handler.

Every connection, on any listener, must within ``hello_timeout`` seconds finish its
TLS handshake (with a certificate), its WebSocket upgrade (on the WebSocket port) and
send a ``hello`` line naming a remote player with that player's token
(:mod:`referee.server.handshake`). How many may be at that stage at once, and whom a
newcomer evicts, is :mod:`referee.server.admission`'s rule. A refused connection is sent
one ``refused`` line (if it reads it within :data:`REFUSAL_TIMEOUT`) and closed, and the
server logs one line saying why. An admitted connection is handed to its player
(:class:`~referee.server.remote.Remote`), replacing any earlier one.

Each connection is its own failure domain: whatever its TLS, WebSocket or socket
library raises while it is served (an ``ssl`` error, wsproto's ``LocalProtocolError``,
a broken or closed stream, anything) ends that connection alone, as a dropped
connection, logged in one line; the server, the tournament and the other games go on.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable, Iterable
from typing import cast

import trio
from trio_websocket import ConnectionClosed, HandshakeError, wrap_server_stream

from referee.server.admission import Admission, Ticket
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

MIN_PENDING_AGE = 1.0
"""Seconds after its opening during which a connection is never evicted: a bot that
completes its handshake within them is admitted, whatever other clients do."""

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
        min_pending_age: float = MIN_PENDING_AGE,
    ) -> None:
        self.remotes = {name: Remote(name, max_line_bytes) for name in names}
        self.tokens = tokens
        self.max_line_bytes = max_line_bytes
        self.hello_timeout = hello_timeout
        self._admission = Admission(
            max_pending=max_pending, per_address=max_pending_per_address, min_age=min_pending_age
        )
        self._scopes: dict[Ticket, trio.CancelScope] = {}
        """How to evict each connection that has not said a valid ``hello`` yet."""
        self._log = _LogBudget(LOG_LINES_PER_SECOND)
        self._absent = set(self.remotes)
        self._everyone = trio.Event()
        if not self._absent:
            self._everyone.set()

    @property
    def waiting(self) -> int:
        """Connections that have not said a valid ``hello`` yet."""
        return len(self._admission)

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
        """Serve one connection to the end (a :func:`trio.serve_tcp` handler); it never
        raises but :class:`trio.Cancelled` (or what stops the whole server)."""
        host, peer = _peer(stream)
        served: list[str] = []  # the player's name, once the connection is admitted
        try:
            await self._serve(stream, host, peer, ssl_context, websocket, served)
        except* Exception as group:
            cause = _failure(group)
            if served:
                logger.warning("%s: its connection from %s failed (%s)", served[0], peer, cause)
            else:
                self._log.warning("closed a connection from %s: it failed (%s)", peer, cause)

    async def _serve(
        self,
        stream: trio.SocketStream,
        host: str,
        peer: str,
        ssl_context: ssl.SSLContext | None,
        websocket: bool,
        served: list[str],
    ) -> None:
        transport: Transport | None = None
        try:
            async with trio.open_nursery() as nursery:  # a WebSocket's own reader runs here
                admitted = await self._admit(stream, host, peer, ssl_context, websocket, nursery)
                if admitted is not None:
                    transport, name, rest = admitted
                    served.append(name)
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
                try:
                    if transport is not None:
                        await transport.aclose()
                finally:
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
        ticket = self._enter(host, peer)
        if ticket is None:
            return None
        scope = self._scopes[ticket] = trio.CancelScope()
        transport: Transport | None = None
        try:
            with scope, trio.move_on_after(self.hello_timeout):
                transport = await self._open(stream, ssl_context, websocket, nursery)
                line, rest = await _first_line(transport)
                hello = read_hello(line)
                if hello.name not in self.remotes or not self.tokens.check(hello.name, hello.token):
                    raise HelloRefused("bad_token", "unknown player or wrong token")
                return transport, hello.name, rest
            if ticket.evicted_by:
                self._log.warning(
                    "closed a connection from %s: evicted, %s, by a newer one",
                    peer,
                    ticket.evicted_by,
                )
                return None
            refusal = Refused(code="timeout", message=f"no hello within {self.hello_timeout:g} s")
        except HelloRefused as refused:
            refusal = refused.refusal
        except _Failed as failed:
            self._log.warning("closed a connection from %s: %s", peer, failed)
            return None
        finally:
            self._scopes.pop(ticket, None)
            self._admission.leave(ticket)
        self._log.warning("refused a connection from %s: %s", peer, refusal.message)
        if transport is not None:
            with trio.move_on_after(REFUSAL_TIMEOUT):
                with contextlib.suppress(TransportClosed):
                    await transport.send(refused_line(refusal))
        return None

    def _enter(self, host: str, peer: str) -> Ticket | None:
        """Count a new connection as pending, evicting one first when a cap is reached
        (:mod:`referee.server.admission`); ``None``: it is turned away (and logged)."""
        admission = self._admission
        entry = admission.enter(host, trio.current_time())
        age = f"{admission.min_age:g} s"
        if entry.cap == "address":
            held = f"the {admission.per_address} from {host} not through their handshake"
        else:
            held = f"the {admission.max_pending} connections not through their handshake"
        if entry.ticket is None:
            if entry.cap == "address":
                why = f"{held} are all younger than {age}"
            else:
                why = (
                    f"none of {held} is both {age} old and from an address holding as many"
                    f" as {host}"
                )
            self._log.warning("closed a connection from %s: turned away, %s", peer, why)
            return None
        if entry.evicted is not None:
            if entry.cap == "address":
                entry.evicted.evicted_by = f"the oldest of {held}"
            else:
                entry.evicted.evicted_by = (
                    f"the oldest from {entry.evicted.host}, the address holding the most of {held}"
                )
            scope = self._scopes.get(entry.evicted)
            if scope is not None:
                scope.cancel()
        return entry.ticket

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


def _failure(group: BaseExceptionGroup[Exception]) -> str:
    """What failed, in a line: the first error's type and message, made printable."""
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    said = str(first)
    text = f"{type(first).__name__}: {said}" if said else type(first).__name__
    return clip(printable(text), 160)
