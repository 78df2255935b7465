"""The spectators' own process: where ``referee serve`` serves its site and live games.

The referee's trio loop reads and writes to the bots and times their replies; nothing a
spectator does may delay it. So the spectators' web server (:class:`~referee.server.
spectate.Spectators`) runs in a process of its own, with its own event loop, at the
lowest CPU priority (``nice`` 19), and everything done for spectators is done there: parsing
their requests, computing live positions, encoding events and pages, reading site
files. The referee's side only tells it what happens, through :class:`SpectatorFeed`:

- each of the four calls the match server makes (a game started, progressed, finished,
  the standings changed) puts one small message in a bounded queue (:data:`FEED_QUEUE`)
  and returns: it never waits, whatever the spectators do. A decision is sent as the
  turns the record gained since the last message, not the whole record, so its cost is
  the same however long the game or however many spectators there are;
- one task writes the queue to the process's standard input (length-prefixed msgpack,
  :class:`Message`). When the process does not keep up (stopped, flooded), the pipe
  fills, the queue with it, and the next message that finds it full empties it: the
  events it held are dropped and, once the pipe takes data again, a :class:`Resync`
  (every game in progress with its record so far) is sent instead. The spectator side
  then starts again from it (:meth:`~referee.server.spectate.Spectators.resynchronise`):
  its clients get what they missed as a new snapshot.

The listening sockets are opened by the referee's process (so a port in use is its one
error line, and the port picked for 0 is known at once) and inherited by the child,
which accepts on them. The child dies with the referee: it is terminated when the
server stops, and ends when its standard input closes, as it does when the referee dies
(no ``PR_SET_PDEATHSIG``: it follows the thread that started the child, and trio starts
children from a worker thread that does not last). If it fails, the tournament goes on
without spectators, with one log line.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import socket
import struct
import subprocess
import sys
from collections import deque
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.pgn import GameRecord, RecordedTurn, seat_players
from referee.server.settings import ServerSettings
from referee.server.spectate import Spectators

logger = logging.getLogger("referee.server")

FEED_QUEUE = 1024
"""Messages the feed holds for the spectators' process; when full, they are dropped and
a :class:`Resync` is sent in their place."""

NICE = 19
"""How much lower the spectators' process's CPU priority is than the referee's."""

_FRAME = struct.Struct("!I")


class Started(msgspec.Struct, tag="started", frozen=True):
    index: int
    players: tuple[str, ...]


class Progressed(msgspec.Struct, tag="progressed", frozen=True):
    """Game ``index``'s record now: its turns from number ``start`` on (the ones before
    were sent already), its tags, result and comment."""

    index: int
    start: int
    turns: list[RecordedTurn]
    tags: dict[str, str]
    result: str
    comment: str | None


class Finished(msgspec.Struct, tag="finished", frozen=True):
    index: int


class Standings(msgspec.Struct, tag="standings", frozen=True):
    pass


class InProgress(msgspec.Struct, frozen=True):
    index: int
    players: tuple[str, ...]
    record: GameRecord | None


class Resync(msgspec.Struct, tag="resync", frozen=True):
    """Every game in progress, whole: what the spectator side starts again from after
    the feed dropped messages."""

    games: list[InProgress]


Message = Started | Progressed | Finished | Standings | Resync


class _Followed:
    """A game in progress as the feed knows it."""

    __slots__ = ("players", "record", "sent")

    def __init__(self, players: tuple[str, ...]) -> None:
        self.players = players
        self.record: GameRecord | None = None
        self.sent = 0
        """Turns of its record the spectator side has (or will have from the queue)."""


class SpectatorFeed:
    """The referee's side of the spectators' process: the four calls the match server
    makes (as on :class:`~referee.server.spectate.Spectators`), which never wait and
    never raise, and :meth:`run`, the task that writes them to the process."""

    def __init__(self, capacity: int = FEED_QUEUE) -> None:
        self._capacity = capacity
        self._queue: deque[Message] = deque()
        self._games: dict[int, _Followed] = {}
        self._lost = False
        self._closed = False
        self._wake = trio.Event()
        self.resyncs = 0
        """How many times the queue was full, its messages dropped and a resync sent."""

    def game_started(self, index: int, players: tuple[str, ...]) -> None:
        self._games[index] = _Followed(tuple(players))
        self._put(Started(index, tuple(players)))

    def game_progressed(self, index: int, record: GameRecord) -> None:
        game = self._games.get(index)
        if game is None:  # a game nobody announced: follow it all the same
            game = self._games[index] = _Followed(seat_players(record.tags))
        game.record = record
        start = game.sent if game.sent <= len(record.turns) else 0
        game.sent = len(record.turns)
        new = record.turns[start:]
        self._put(Progressed(index, start, new, record.tags, record.result, record.comment))

    def game_finished(self, index: int) -> None:
        self._games.pop(index, None)
        self._put(Finished(index))

    def standings_changed(self) -> None:
        self._put(Standings())

    def _put(self, message: Message) -> None:
        if self._closed or self._lost:
            return  # a resync will carry it
        if len(self._queue) >= self._capacity:
            self._queue.clear()
            self._lost = True
            self.resyncs += 1
        else:
            self._queue.append(message)
        self._wake.set()

    def _resync(self) -> Resync:
        self._lost = False
        for game in self._games.values():
            game.sent = 0 if game.record is None else len(game.record.turns)
        return Resync(
            [
                InProgress(index, game.players, game.record)
                for index, game in sorted(self._games.items())
            ]
        )

    async def run(self, stream: trio.abc.SendStream) -> None:
        """Write the queue to ``stream`` (the process's standard input) until cancelled
        or the process is gone; then the calls above do nothing."""
        encoder = msgspec.msgpack.Encoder()
        try:
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                while self._lost or self._queue:
                    message = self._resync() if self._lost else self._queue.popleft()
                    data = encoder.encode(message)
                    await stream.send_all(_FRAME.pack(len(data)) + data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the process ended: its supervisor says so
        finally:
            self._closed = True
            self._queue.clear()


async def start_spectators(
    nursery: trio.Nursery, feed: SpectatorFeed, output: Path, settings: ServerSettings
) -> int:
    """Open the spectators' port of ``settings`` and start their process in
    ``nursery``, fed by ``feed``; → the port (the one the system picked for 0). Raises
    ``OSError`` when the port cannot be opened."""
    assert settings.http_port is not None
    sockets = await trio.open_tcp_listeners(settings.http_port, host=settings.host)
    bound: int = sockets[0].socket.getsockname()[1]
    spec = {
        "output": os.fspath(output),
        "sockets": [[item.socket.fileno(), int(item.socket.family)] for item in sockets],
        "certificate": None if settings.certificate is None else os.fspath(settings.certificate),
        "key": None if settings.key is None else os.fspath(settings.key),
    }
    command = [sys.executable, "-P", "-m", "referee.server.spectator_process", json.dumps(spec)]
    try:
        process = await nursery.start(
            functools.partial(_supervise, command, tuple(item.socket.fileno() for item in sockets))
        )
    finally:
        for item in sockets:  # the child has its own copies
            item.socket.close()
    nursery.start_soon(feed.run, process.stdin)
    return bound


async def _supervise(
    command: list[str],
    fds: tuple[int, ...],
    *,
    task_status: trio.TaskStatus[trio.Process] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the spectators' process until it ends or is cancelled (then terminated and
    reaped by :func:`trio.run_process`); a process that ends by itself is logged."""
    done = await trio.run_process(
        command,
        stdin=subprocess.PIPE,
        pass_fds=fds,
        start_new_session=True,  # a Ctrl-C at the terminal is the referee's to handle
        check=False,
        task_status=task_status,
    )
    logger.warning(
        "the spectators' server stopped (exit status %s); the games go on without it",
        done.returncode,
    )


# --- the spectators' process ---------------------------------------------------------------


async def read_feed(stream: trio.abc.ReceiveStream) -> AsyncGenerator[Message, None]:
    """The messages :meth:`SpectatorFeed.run` wrote to ``stream``, until it ends."""
    decoder = msgspec.msgpack.Decoder(Message)
    buffer = bytearray()
    while chunk := await stream.receive_some(1 << 16):
        buffer += chunk
        while len(buffer) >= _FRAME.size:
            (size,) = _FRAME.unpack_from(buffer)
            if len(buffer) < _FRAME.size + size:
                break
            yield decoder.decode(buffer[_FRAME.size : _FRAME.size + size])
            del buffer[: _FRAME.size + size]


class FeedReceiver:
    """The spectator side of the feed: its messages in, the hub's calls out."""

    def __init__(self, hub: Spectators) -> None:
        self.hub = hub
        self.turns: dict[int, list[RecordedTurn]] = {}

    def apply(self, message: Message) -> None:
        hub = self.hub
        if isinstance(message, Started):
            self.turns[message.index] = []
            hub.game_started(message.index, message.players)
        elif isinstance(message, Progressed):
            turns = self.turns.setdefault(message.index, [])
            del turns[message.start :]
            turns.extend(message.turns)
            record = GameRecord(
                tags=message.tags, turns=list(turns), result=message.result, comment=message.comment
            )
            hub.game_progressed(message.index, record)
        elif isinstance(message, Finished):
            self.turns.pop(message.index, None)
            hub.game_finished(message.index)
        elif isinstance(message, Standings):
            hub.standings_changed()
        else:
            self.turns = {
                game.index: [] if game.record is None else list(game.record.turns)
                for game in message.games
            }
            hub.resynchronise({game.index: (game.players, game.record) for game in message.games})


async def _serve(spec: dict[str, Any]) -> None:
    hub = Spectators(Path(spec["output"]))
    context = None
    if spec["certificate"] is not None:
        context = ServerSettings(
            certificate=Path(spec["certificate"]), key=Path(spec["key"])
        ).ssl_context()
    listeners = [
        trio.SocketListener(trio.socket.from_stdlib_socket(socket.socket(family, fileno=fd)))
        for fd, family in spec["sockets"]
    ]
    receiver = FeedReceiver(hub)
    feed = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.serve_on, listeners, context)
        async with contextlib.aclosing(read_feed(feed)) as messages:
            async for message in messages:
                receiver.apply(message)
        nursery.cancel_scope.cancel()  # the referee is gone: so are its spectators


def main(argument: str) -> None:
    """``python -m referee.server.spectator_process SPEC``: the process itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(NICE)
    try:
        trio.run(_serve, json.loads(argument))
    except Exception as error:  # one line, never a traceback, in the server's output
        print(f"spectators' server: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
