"""Remote players: bots that connect over the network, played like local ones.

The match runner drives every bot through a :class:`~referee.match._Link`, which moves
bytes through an object with a :class:`~referee.process.BotProcess`'s methods
(:class:`~referee.match.BotStream`). Here that object is a :class:`RemoteSession`,
so the same connection state machine, session, judgement, records and store serve
remote bots and local ones alike.

- A :class:`Connection` is one network connection of a player that said a valid
  ``hello``: a reader (bytes into the player's session) and a writer (an outbox, so a
  client that does not read never blocks the referee).
- A :class:`RemoteSession` is what a process is to a local bot: one protocol
  conversation, its message ids counting from 1. It outlives a connection: when a
  connection drops and the bot connects again, the session resumes on the new one,
  and the request it had pending is written again. Only whole lines count: the
  unfinished end of a line when a connection drops is forgotten.
- A :class:`Remote` is one remote player: its live connection (at most one: a new one
  takes over and the older is closed) and its session. After a game the bot
  faulted in, the session ends as a process would be replaced: the bot is told its
  violation and ``quit``, its connection is closed, and its next connection starts a
  new session.
- A :class:`RemotePlayer` gives a :class:`Remote` the interface of a
  :class:`~referee.match.BotPlayer` for :func:`~referee.match.play_game`.

Memory is bounded per player: what a bot sent and nobody read yet waits in its session
up to one line's length (``max_line_bytes`` + 1 bytes; then the connection is not read
until it is), what is written to it in its connection's outbox up to
:data:`OUTBOX_LIMIT` bytes (beyond that a write waits, and the match runner's deadline
for it runs).
"""

from __future__ import annotations

import logging

import trio

from referee.cgroups import Breach
from referee.errors import BotCrashed, BotFault
from referee.match import FAULT_GRACE, QUIT_GRACE, BotPlayer, _Link
from referee.server.handshake import welcome_line
from referee.server.transport import Transport, TransportClosed

OUTBOX_LIMIT = 256 << 10
"""Bytes waiting in a connection's outbox beyond which writes to it wait (one message
may go past it)."""

logger = logging.getLogger("referee.server")


class Connection:
    """One authenticated network connection of a remote player."""

    def __init__(self, transport: Transport, peer: str) -> None:
        self.transport = transport
        self.peer = peer
        self.closed = False
        self.session: RemoteSession | None = None
        """The session it carries (set by :meth:`RemoteSession.attach`)."""
        self._outbox = bytearray()
        self._written = trio.lowlevel.ParkingLot()  # the writer waits here for bytes
        self._room = trio.lowlevel.ParkingLot()  # writers wait here for room
        self._scope = trio.CancelScope()

    def offer(self, data: bytes) -> int:
        """Queue ``data`` if the outbox has room now; → how many bytes were taken (all or
        none). A closed connection takes everything, and drops it."""
        if self.closed:
            return len(data)
        if len(self._outbox) >= OUTBOX_LIMIT:
            return 0
        self._outbox += data
        self._written.unpark_all()
        return len(data)

    async def put(self, data: bytes) -> bool:
        """Queue ``data`` once the outbox has room; → ``False`` if the connection closed first."""
        while not self.closed and len(self._outbox) >= OUTBOX_LIMIT:
            await self._room.park()
        if self.closed:
            return False
        self.offer(data)
        return True

    def close(self) -> None:
        """End the connection: its reader and writer stop, :meth:`run` returns."""
        self.closed = True
        self._outbox.clear()
        self._room.unpark_all()
        self._scope.cancel()

    async def run(self, remote: Remote, first: bytes) -> None:
        """Carry bytes between the network and ``remote``'s session (``first``: what came
        after the ``hello`` line) until either end closes the connection."""
        try:
            with self._scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._write)
                    data = first
                    while True:
                        session = self.session
                        if data and (session is None or not await session.feed(self, data)):
                            break
                        data = await self.transport.receive()
                        if not data:
                            break
                    nursery.cancel_scope.cancel()
        finally:
            self.close()
            if self.session is not None:
                self.session.detach(self)
            remote.dropped(self)

    async def _write(self) -> None:
        while True:
            while not self._outbox:
                await self._written.park()
            data = bytes(self._outbox)
            self._outbox.clear()
            self._room.unpark_all()
            try:
                await self.transport.send(data)
            except TransportClosed:
                self.close()
                return


class RemoteSession:
    """One protocol conversation with a remote bot, across its reconnections: what a
    :class:`~referee.match._Link` drives, as it drives a bot process.

    While the match runner waits for a reply (:meth:`receive_some`) only whole lines are
    handed over, so a line cut by a dropped connection is never half taken; what it
    reads without waiting (:meth:`receive_nowait`, before it writes a request) is handed
    over whole, unfinished line included, so that a reply begun before its request is
    known for what it is. Writes while no connection is up are dropped, but the last
    request is kept: once the bot is back, a request still waiting for its reply is
    written again (when every line the bot sent has been read and none was the reply).
    """

    cpus: tuple[int, ...] | None = None  # the bot runs elsewhere

    def __init__(self, name: str, max_line_bytes: int) -> None:
        self.name = name
        self._max_line = max_line_bytes
        self._inbox = bytearray()
        self._mid_line = False  # the last byte handed over was not a newline
        self._connection: Connection | None = None
        self._changed = trio.lowlevel.ParkingLot()  # readers of the session wait here
        self._room = trio.lowlevel.ParkingLot()  # connections' readers wait here
        self._closed = False
        self._request = b""  # the last message written
        self._awaiting = False  # a receive_some is waiting for the reply
        self._resend = False  # the bot came back while a reply was awaited

    @property
    def buffered(self) -> int:
        """Bytes the bot sent that the match runner has not taken yet."""
        return len(self._inbox)

    # --- the network side -------------------------------------------------------

    def attach(self, connection: Connection) -> None:
        """Go on over ``connection`` (the previous one is already detached)."""
        self._connection = connection
        connection.session = self
        self._resend = self._awaiting
        self._changed.unpark_all()

    def detach(self, connection: Connection) -> None:
        """``connection`` is gone: forget the unfinished end of its last line."""
        if self._connection is not connection:
            return
        self._connection = None
        inbox = self._inbox
        last = inbox.rfind(b"\n")
        del inbox[last + 1 :]
        if self._mid_line and last < 0:
            inbox += b"\n"  # a line already partly handed over ends here
        self._changed.unpark_all()
        self._room.unpark_all()

    async def feed(self, connection: Connection, data: bytes) -> bool:
        """Take ``data`` read from ``connection``, once there is room for it (at most a
        line's length waits); → ``False`` when the session no longer reads from it."""
        while (
            self._connection is connection
            and not self._closed
            and len(self._inbox) > self._max_line
        ):
            await self._room.park()
        if self._connection is not connection or self._closed:
            return False
        self._inbox += data
        self._changed.unpark_all()
        return True

    def close(self) -> Connection | None:
        """End the session; → the connection it was using, for the caller to close."""
        self._closed = True
        connection, self._connection = self._connection, None
        self._changed.unpark_all()
        self._room.unpark_all()
        return connection

    # --- the match runner's side (BotStream) ------------------------------------

    def _check(self) -> None:
        if self._closed:
            raise BotCrashed("its session with the server was closed")

    def _take(self, count: int) -> bytes:
        data = bytes(self._inbox[:count])
        del self._inbox[:count]
        self._mid_line = not data.endswith(b"\n")
        self._room.unpark_all()
        return data

    async def receive_nowait(self, max_bytes: int = 65536) -> bytes | None:
        self._check()
        return self._take(max_bytes) if self._inbox else None

    async def receive_some(self, max_bytes: int = 65536) -> bytes:
        await trio.lowlevel.checkpoint_if_cancelled()
        self._awaiting = True
        try:
            while True:
                self._check()
                inbox = self._inbox
                if self._mid_line or len(inbox) > self._max_line:
                    count = len(inbox)  # the rest of a line already begun, or one too long
                else:
                    count = inbox.rfind(b"\n") + 1
                if count:
                    data = self._take(count)
                    await trio.lowlevel.cancel_shielded_checkpoint()
                    return data
                if self._resend and self._connection is not None:
                    # Every line it sent was read and none was the reply: ask again.
                    self._resend = False
                    self._connection.offer(self._request)
                await self._changed.park()
        finally:
            self._awaiting = False

    async def send_nowait(self, data: bytes) -> int:
        self._check()
        self._request, self._resend = data, False
        return len(data) if self._connection is None else self._connection.offer(data)

    async def send_all(self, data: bytes) -> None:
        self._check()
        self._request, self._resend = data, False
        while (connection := self._connection) is not None:
            if await connection.put(data):
                return
            await trio.lowlevel.checkpoint()  # its connection closed while it waited

    async def wait(self) -> int:
        """Wait until the bot has hung up (or the session is closed)."""
        while self._connection is not None and not self._closed:
            await self._changed.park()
        return 0

    def exit_description(self) -> str | None:
        return None

    def stderr_tail(self, n: int = 0) -> list[str]:
        return []

    def cpu_time(self) -> float | None:
        return None  # a remote bot's CPU is its own machine's: only wall time is charged

    def limit_breach(self) -> Breach | None:
        return None


class Remote:
    """One remote player: its live connection, its session, and a lock held by whoever
    plays a game with it (it plays one at a time)."""

    def __init__(self, name: str, max_line_bytes: int) -> None:
        self.name = name
        self._max_line = max_line_bytes
        self.connection: Connection | None = None
        self.session: RemoteSession | None = None
        self.link: _Link | None = None
        self.between_games: list[BotFault] = []
        self.playing = trio.Lock()

    @property
    def connected(self) -> bool:
        return self.connection is not None

    def current(self) -> _Link:
        """The player's session's link (a new session if it has none)."""
        if self.link is None:
            self.session = RemoteSession(self.name, self._max_line)
            self.link = _Link(self.session, self._max_line)
            if self.connection is not None:
                self.session.attach(self.connection)
        return self.link

    def take(self, connection: Connection) -> None:
        """``connection`` said a valid ``hello``: welcome it; it replaces any other."""
        old, self.connection = self.connection, connection
        if old is not None:
            logger.info(
                "%s: a new connection from %s took over from %s",
                self.name,
                connection.peer,
                old.peer,
            )
            if self.session is not None:
                self.session.detach(old)
            old.close()
        connection.offer(welcome_line(self.name))
        if self.session is None:
            self.current()  # a new session, on this connection
        else:
            self.session.attach(connection)

    def dropped(self, connection: Connection) -> None:
        """``connection`` ended."""
        if self.connection is connection:
            self.connection = None
            logger.info("%s: disconnected (%s)", self.name, connection.peer)

    def end_session(self) -> tuple[_Link, RemoteSession, Connection | None] | None:
        """Take the session away (the next :meth:`current` starts a new one) with the
        connection it uses, for :meth:`farewell`; ``None`` when there is none."""
        link, session, connection = self.link, self.session, self.connection
        self.link = self.session = self.connection = None
        if link is None or session is None:
            if connection is not None:
                connection.close()
            return None
        return link, session, connection

    @staticmethod
    async def farewell(
        link: _Link, session: RemoteSession, connection: Connection | None, grace: float
    ) -> None:
        """Tell the bot its violation (if nobody did) and ``quit``; give it ``grace`` to
        hang up, then close its connection."""
        try:
            await link.farewell(grace)
        finally:
            session.close()
            if connection is not None:
                connection.close()


class RemotePlayer(BotPlayer):
    """A :class:`Remote` as :func:`~referee.match.play_game` plays a
    :class:`~referee.match.BotPlayer`: :meth:`link` gives its session (a bot not
    connected then has the start-up allowance to connect and answer), :meth:`retire`
    ends the session, :meth:`close` leaves a healthy session for the next game (the bot
    is told to ``quit`` only when the server stops: :func:`quit_all`)."""

    def __init__(self, remote: Remote, nursery: trio.Nursery) -> None:
        # Nothing of BotPlayer's own state: there is no process to start here.
        self.name = remote.name
        self.remote = remote
        self._nursery = nursery
        self.between_games = remote.between_games  # shared: the game's journal empties it

    async def link(self) -> _Link:
        link = self.remote.current()
        await link.drain()  # what it wrote since its last game
        if link.fault is not None:
            self.between_games.append(link.fault)
            await self.retire(wait=False)
            link = self.remote.current()
        return link

    async def retire(self, *, grace: float = FAULT_GRACE, wait: bool = True) -> None:
        ended = self.remote.end_session()
        if ended is None:
            return
        if wait:
            await Remote.farewell(*ended, grace)
        else:
            self._nursery.start_soon(Remote.farewell, *ended, grace)

    async def close(self) -> None:
        link = self.remote.link
        if link is not None and link.broken:
            await self.retire()


async def quit_all(remotes: list[Remote]) -> None:
    """The server stops: tell every connected bot to ``quit`` and close its connection."""
    async with trio.open_nursery() as nursery:
        for remote in remotes:
            ended = remote.end_session()
            if ended is not None:
                nursery.start_soon(Remote.farewell, *ended, QUIT_GRACE)
