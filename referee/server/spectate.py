"""Live spectators: the tournament site over HTTP(S), and its games as they are played.

:class:`Spectators` is the hub the match server (``referee serve``) tells about each
game as it starts, after each turn, as it ends, and whenever the standings change;
:meth:`Spectators.serve` is its web server. It serves

- ``/``: the live index (``assets/live-site.*``): the games in progress, above the
  tournament's own ``index.html``, fetched again as the standings change;
- the tournament site as the run writes it in its output directory: ``index.html``,
  ``ratings.json``, ``ratings.csv``, ``games.pgn`` and ``games/NNNN.html``, and no other
  file (never the store, the logs or anything else there);
- ``/live/NNNN``: game NNNN in progress in the replay viewer, with every position so far,
  computed in Python exactly as for a finished game (:class:`~referee.viewer.document.
  LiveDocument`), then each new one as it is played;
- ``/events`` and ``/events/NNNN``: the server-sent event streams these pages follow
  (their format is docs/spectators.md's contract).

HTTP is parsed by h11 (sans-I/O); this module only moves its bytes over trio streams,
each connection under deadlines. Everything a spectator can make the server hold is
bounded (:class:`Limits`): connections, event streams, a request's size, the time to
send a request, receive a page or take one write of a stream, each stream's queue, and
the bytes of a site file held at once (:data:`FILE_CHUNK_BYTES`). The hub never waits for a
spectator: an event is encoded once and put in each stream's queue without blocking; a
stream whose queue is full is *dropped* (its connection closed at once, whatever it was
doing). A browser's ``EventSource`` then reconnects by itself, and every stream starts
with a snapshot (the games in progress, or the game so far), so a dropped spectator
loses no state, only the frames it could not keep up with.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import ssl
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from http import HTTPStatus
from pathlib import Path
from typing import Any, BinaryIO

import h11
import trio

from referee.pgn import GameRecord, seat_players
from referee.viewer.document import LiveDocument
from referee.viewer.page import document_page, live_index_page, static_page

EVENT_RETRY_MS = 2000
"""How long a browser waits before reconnecting a dropped event stream (``retry:``)."""

_RECEIVE_BYTES = 16 * 1024

FILE_CHUNK_BYTES = 64 * 1024
"""The most bytes of a site file held in memory at once for one response: a file is
read, sent and read on in chunks of this size."""

_SITE_FILES = {
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/ratings.json": ("ratings.json", "application/json"),
    "/ratings.csv": ("ratings.csv", "text/csv; charset=utf-8"),
    "/games.pgn": ("games.pgn", "application/vnd.chess-pgn; charset=utf-8"),
}
"""The files of the output directory served as they are (besides ``games/NNNN.html``)."""

_GAME_PAGE = re.compile(r"/games/([0-9]{4,9})\.html")
_LIVE_PAGE = re.compile(r"/live/([0-9]{4,9})")
_GAME_EVENTS = re.compile(r"/events/([0-9]{4,9})")

_COMMON_HEADERS = [
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
]


@dataclass(frozen=True, slots=True)
class Limits:
    """What one spectator, or all of them, can make the server hold."""

    connections: int = 256
    """HTTP connections at once; a connection beyond them is closed as soon as accepted."""
    connections_per_address: int = 16
    """HTTP connections at once from one IP address (part of ``connections``); one more
    from it is closed as soon as accepted."""
    requests_per_second: float = 10.0
    """The rate at which one IP address earns requests (a token bucket shared by all its
    connections, pipelined requests counted one by one)."""
    request_burst: int = 40
    """The most requests one IP address can have in hand (the bucket's size, and what a
    new address starts with); a request that finds none is answered 429 and its
    connection closed."""
    requests_per_connection: int = 100
    """Requests on one connection: the last one's response says ``Connection: close``,
    and the connection is closed after it."""
    addresses: int = 4096
    """IP addresses whose request buckets are remembered; beyond them the one seen least
    recently is forgotten (it comes back with a full bucket)."""
    streams: int = 200
    """Event streams at once (part of ``connections``); one more is answered 503."""
    queue: int = 256
    """Events waiting to be sent on one stream; a stream that falls further behind is
    dropped."""
    request_seconds: float = 10.0
    """Time to send a whole request head (and, on a kept-alive connection, to start the
    next one); then the connection is closed."""
    request_bytes: int = 16 * 1024
    """Largest request head (and body) accepted."""
    write_seconds: float = 30.0
    """Time to receive one whole page or file, or one write of an event stream (an event
    or a keep-alive); then the connection (and its stream) is closed."""
    heartbeat_seconds: float = 15.0
    """A stream with no event for this long gets a comment line, so a client gone
    without a word is found out."""
    send_buffer: int = 128 * 1024
    """The kernel's send buffer of each connection (``SO_SNDBUF``)."""


def _event(name: str, payload: dict[str, Any]) -> bytes:
    """One server-sent event: its name and its data, one line of JSON."""
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return f"event: {name}\ndata: {data}\n\n".encode()


_HEARTBEAT = b": keep-alive\n\n"


class _Buckets:
    """The request buckets of the addresses seen lately (:attr:`Limits.requests_per_second`,
    :attr:`Limits.request_burst`), least recently used first."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, address: str, now: float) -> bool:
        """Spend one of ``address``'s requests; ``False`` when it has none left."""
        rate, burst = self._limits.requests_per_second, float(self._limits.request_burst)
        tokens, then = self._buckets.pop(address, (burst, now))
        tokens = min(burst, tokens + (now - then) * rate)
        allowed = tokens >= 1.0
        self._buckets[address] = (tokens - 1.0 if allowed else tokens, now)
        while len(self._buckets) > self._limits.addresses:
            self._buckets.popitem(last=False)
        return allowed

    def retry_after(self) -> int:
        """Whole seconds until a spent address has a request again (``Retry-After``)."""
        return max(1, math.ceil(1.0 / self._limits.requests_per_second))


class _Stream:
    """One spectator's event stream: a bounded queue the hub fills without waiting, and
    the cancel scope of the connection that empties it."""

    def __init__(self, capacity: int) -> None:
        self._send, self.receive = trio.open_memory_channel[bytes](capacity)
        self.scope = trio.CancelScope()
        self.dropped = False

    def offer(self, event: bytes) -> bool:
        """Queue ``event``; ``False`` when the stream is closed, or full and so dropped."""
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            self.dropped = True
            self.close()
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        return True

    def end(self) -> None:
        """No more events: the connection sends what is queued, then ends the stream."""
        self._send.close()

    def close(self) -> None:
        """Stop the connection now, whatever it is doing, and free the queue."""
        self._send.close()
        self.scope.cancel()


@dataclass(eq=False)
class _Game:
    """A game in progress as the hub knows it."""

    number: int
    players: tuple[str, ...]
    record: GameRecord | None = None
    live: LiveDocument | None = None
    failed: str | None = None
    snapshot: bytes | None = None
    page: bytes | None = None
    watchers: set[_Stream] = field(default_factory=set)

    @property
    def plies(self) -> int:
        return 0 if self.record is None else len(self.record.turns)


class Spectators:
    """The spectators of one tournament, whose site is written into ``output``.

    The match server calls :meth:`game_started`, :meth:`game_progressed`,
    :meth:`game_finished` and :meth:`standings_changed` from its trio loop; they never
    wait and never raise. :meth:`serve` runs the web server until cancelled.
    """

    def __init__(self, output: Path, *, limits: Limits = Limits()) -> None:
        self._output = Path(output)
        self.limits = limits
        self._games: dict[int, _Game] = {}
        self._followers: set[_Stream] = set()
        self._connections = 0
        self._per_address: Counter[str] = Counter()
        self._buckets = _Buckets(limits)
        self._streams = 0
        self.dropped = 0
        """Streams dropped so far because their spectator fell too far behind (its queue
        full, or a write not done within ``write_seconds``)."""
        self._index_page = live_index_page(title="Tournament — live").encode()

    # --- what the match server calls --------------------------------------------------

    def game_started(self, index: int, players: tuple[str, ...]) -> None:
        """Game ``index`` (0-based pairing index: game ``index + 1``) has begun."""
        previous = self._games.get(index)
        game = _Game(number=index + 1, players=tuple(players))
        self._games[index] = game
        self._broadcast(
            self._followers, "game_started", {"game": game.number, "players": list(players)}
        )
        if previous is not None:  # played again from the start: its watchers start over
            game.watchers = previous.watchers
            self._broadcast(game.watchers, "game", self._snapshot_payload(game))

    def game_progressed(self, index: int, record: GameRecord) -> None:
        """A decision of game ``index`` was played; ``record`` is the game so far."""
        game = self._games.get(index)
        if game is None:  # a game nobody announced: follow it all the same
            game = _Game(number=index + 1, players=seat_players(record.tags))
            self._games[index] = game
        game.record = record
        game.snapshot = game.page = None
        last = record.turns[-1].token if record.turns else None
        self._broadcast(
            self._followers, "turn", {"game": game.number, "plies": game.plies, "token": last}
        )
        if not game.watchers:
            return  # positions are computed only for games someone watches
        start = len(game.live.frames) if game.live is not None else 0
        frames = self._frames(game)
        if game.live is None:
            self._drop(game.watchers)
            return
        if start == 0:  # the document was made just now: send it whole
            self._broadcast(game.watchers, "game", self._snapshot_payload(game))
            return
        self._broadcast(
            game.watchers,
            "frames",
            {
                "game": game.number,
                "from": len(game.live.frames) - len(frames),
                "frames": frames,
                "result": game.live.document["result"],
            },
        )

    def game_finished(self, index: int) -> None:
        """Game ``index`` is saved and its page ``games/NNNN.html`` written."""
        game = self._games.pop(index, None)
        number = index + 1
        finished = _event("finished", {"game": number, "page": _page_of(number)})
        if game is not None:
            for stream in game.watchers:
                if self._offer(stream, finished):
                    stream.end()
        self._broadcast(
            self._followers, "game_finished", {"game": number, "page": _page_of(number)}
        )

    def standings_changed(self) -> None:
        """``index.html`` and ``ratings.json`` were rewritten."""
        self._broadcast(
            self._followers, "standings", {"index": "index.html", "ratings": "ratings.json"}
        )

    # --- the hub's own bookkeeping --------------------------------------------------------

    @property
    def spectators(self) -> int:
        """Event streams open now."""
        return self._streams

    @property
    def connections(self) -> int:
        """HTTP connections open now (event streams included)."""
        return self._connections

    def _broadcast(self, streams: set[_Stream], name: str, payload: dict[str, Any]) -> None:
        """Queue one event, encoded once, on each of ``streams``; drop those that are full."""
        if not streams:
            return
        event = _event(name, payload)
        for stream in list(streams):
            if not self._offer(stream, event):
                streams.discard(stream)

    def _offer(self, stream: _Stream, event: bytes) -> bool:
        """Queue ``event`` on ``stream``, counting it when that drops it."""
        already = stream.dropped
        queued = stream.offer(event)
        if stream.dropped and not already:
            self.dropped += 1
        return queued

    def _drop(self, streams: set[_Stream]) -> None:
        for stream in streams:
            stream.close()
        streams.clear()

    def _frames(self, game: _Game) -> list[Any]:
        """Bring the game's live document up to its record; returns the new frames."""
        if game.record is None or game.failed is not None:
            return []
        try:
            if game.live is None:
                game.live = LiveDocument(game.record)
                return []
            return game.live.extend(game.record)
        except Exception as error:  # a spectators' fault must never stop a game
            game.failed = f"{type(error).__name__}: {error}"
            game.live = None
            return []

    def _snapshot_payload(self, game: _Game) -> dict[str, Any]:
        self._frames(game)
        return {
            "game": game.number,
            "players": list(game.players),
            "plies": game.plies,
            "document": None if game.live is None else game.live.document,
        }

    def _snapshot(self, game: _Game) -> bytes:
        """The ``game`` event a new watcher starts with (kept until the next decision)."""
        if game.snapshot is None:
            game.snapshot = _event("game", self._snapshot_payload(game))
        return game.snapshot

    def _hello(self) -> bytes:
        games = [
            {"game": game.number, "players": list(game.players), "plies": game.plies}
            for game in sorted(self._games.values(), key=lambda game: game.number)
        ]
        return _event("hello", {"games": games})

    # --- the web server -------------------------------------------------------------------

    async def serve(
        self,
        host: str,
        port: int,
        ssl_context: ssl.SSLContext | None,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve the site and the event streams on ``host``:``port`` (HTTPS with
        ``ssl_context``) until cancelled; ``nursery.start`` returns the port listened on
        (the one picked by the system when ``port`` is 0)."""
        sockets = await trio.open_tcp_listeners(port, host=host)
        await self.serve_on(sockets, ssl_context, task_status=task_status)

    async def serve_on(
        self,
        sockets: Sequence[trio.SocketListener],
        ssl_context: ssl.SSLContext | None,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve on listening ``sockets`` already open (as :meth:`serve` does); →
        through ``nursery.start``, the port of the first."""
        bound = sockets[0].socket.getsockname()[1]
        listeners: list[trio.abc.Listener[trio.abc.Stream]] = []
        for listener in sockets:
            if ssl_context is None:
                listeners.append(listener)
            else:
                listeners.append(trio.SSLListener(listener, ssl_context, https_compatible=True))
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(trio.serve_listeners, self._connection, listeners)
                task_status.started(bound)
        finally:
            for stream in self._followers:
                stream.close()
            for game in self._games.values():
                self._drop(game.watchers)

    async def _connection(self, stream: trio.abc.Stream) -> None:
        """One HTTP connection: requests one after the other, each under its deadlines."""
        address = _peer_address(stream)
        if (
            self._connections >= self.limits.connections
            or self._per_address[address] >= self.limits.connections_per_address
        ):
            await trio.aclose_forcefully(stream)
            return
        self._connections += 1
        self._per_address[address] += 1
        try:
            _set_send_buffer(stream, self.limits.send_buffer)
            http = _Http(stream, self.limits, address)
            while await self._exchange(http):
                if http.conn.our_state is not h11.DONE or http.conn.their_state is not h11.DONE:
                    break  # either side asked to close after this exchange
                http.conn.start_next_cycle()
        except (
            trio.BrokenResourceError,
            trio.ClosedResourceError,
            trio.TooSlowError,
            h11.ProtocolError,
            OSError,
        ):
            pass  # the client went away, was too slow or broke HTTP: nothing more to say
        finally:
            self._connections -= 1
            self._per_address[address] -= 1
            if not self._per_address[address]:
                del self._per_address[address]
            await trio.aclose_forcefully(stream)

    async def _exchange(self, http: _Http) -> bool:
        """Answer one request; whether the connection may carry another."""
        try:
            request = None
            with trio.move_on_after(self.limits.request_seconds):
                request = await http.read_request()
            if request is None:
                return False  # closed by the client, or no whole request in time
            http.requests += 1
            if http.requests >= self.limits.requests_per_connection:
                http.closing = True  # this response is the connection's last
            if not self._buckets.take(http.address, trio.current_time()):
                wait = str(self._buckets.retry_after())
                with trio.move_on_after(self.limits.write_seconds):
                    await http.simple(
                        429, "Too many requests.", headers=[("retry-after", wait)], close=True
                    )
                return False
            return await self._respond(http, request)
        except h11.RemoteProtocolError as error:
            if http.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                status = error.error_status_hint
                with trio.move_on_after(self.limits.write_seconds):
                    await http.simple(status, f"Bad request: {error}", close=True)
            return False

    async def _respond(self, http: _Http, request: h11.Request) -> bool:
        method = request.method.decode("ascii", "replace")
        path = request.target.decode("ascii", "replace").split("?", 1)[0]
        head = method == "HEAD"
        if method not in ("GET", "HEAD"):
            await http.simple(405, "Only GET and HEAD.", headers=[("allow", "GET, HEAD")])
            return False
        if path == "/events":
            return await self._follow(http, head)
        if found := _GAME_EVENTS.fullmatch(path):
            return await self._watch(http, int(found[1]) - 1, head)
        with trio.fail_after(self.limits.write_seconds):
            if path == "/":
                await http.page(200, self._index_page, "text/html; charset=utf-8", head=head)
                return True
            if found := _LIVE_PAGE.fullmatch(path):
                return await self._live_page(http, int(found[1]) - 1, head)
            if found := _GAME_PAGE.fullmatch(path):
                named = (f"games/{found[1]}.html", "text/html; charset=utf-8")
            elif path in _SITE_FILES:
                named = _SITE_FILES[path]
            else:
                await http.simple(404, "Not found.")
                return True
            file = await trio.to_thread.run_sync(self._open, named[0])
            if file is None:
                await http.simple(404, "Not found.")
                return True
            with file:
                await http.file(file, named[1], head=head)
            return True

    def _site_path(self, relative: str) -> Path | None:
        """The file ``relative`` of the output directory, if it is a regular file there
        (a symbolic link, which could lead anywhere, is not served)."""
        root = self._output.resolve()
        path = root / relative
        if path.resolve() != path or not path.is_file():
            return None
        return path

    def _exists(self, relative: str) -> bool:
        return self._site_path(relative) is not None

    def _open(self, relative: str) -> BinaryIO | None:
        """The file ``relative`` of the output directory open for reading (see
        :meth:`_site_path`), or ``None``."""
        path = self._site_path(relative)
        if path is None:
            return None
        try:  # a symbolic link put there since the check is not followed either
            return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb")
        except OSError:
            return None

    async def _live_page(self, http: _Http, index: int, head: bool) -> bool:
        number = index + 1
        game = self._games.get(index)
        if game is None:
            if not await trio.to_thread.run_sync(self._exists, _page_of(number)):
                await http.simple(404, f"No game {number} is in progress or finished.")
            else:
                await http.redirect(f"../{_page_of(number)}")
            return True
        page = self._page(game)
        await http.page(200, page, "text/html; charset=utf-8", head=head)
        return True

    def _page(self, game: _Game) -> bytes:
        """The live page of ``game`` (kept until its next decision: a spectator reloading
        it again and again costs the games' loop next to nothing)."""
        if game.page is not None:
            return game.page
        number = game.number
        back = ("← Tournament (live)", "../")
        self._frames(game)
        if game.live is None:
            waiting = game.failed is None  # for its first record: reload until it comes
            why = (
                "has started; this page shows it from its first move"
                if waiting
                else f"cannot be shown live: {game.failed}"
            )
            body = (
                f'<p><a href="{back[1]}">{escape(back[0])}</a></p>'
                f"<p>Game {number} ({escape(' – '.join(game.players))}) {escape(why)}.</p>"
            )
            page = static_page(title=f"Game {number}", body=body, refresh=1 if waiting else None)
        else:
            live = {"events": f"../events/{number:04d}", "game": number}
            page = document_page(
                {**game.live.document, "links": [{"text": back[0], "href": back[1]}], "live": live},
                live=True,
            )
        game.page = page.encode()
        return game.page

    async def _follow(self, http: _Http, head: bool) -> bool:
        """``/events``: the tournament's stream."""
        return await self._stream(http, head, self._followers, [self._hello()])

    async def _watch(self, http: _Http, index: int, head: bool) -> bool:
        """``/events/NNNN``: one game's stream."""
        game = self._games.get(index)
        if game is not None:
            return await self._stream(http, head, game.watchers, [self._snapshot(game)])
        number = index + 1
        if not await trio.to_thread.run_sync(self._exists, _page_of(number)):
            with trio.fail_after(self.limits.write_seconds):
                await http.simple(404, f"No game {number} is in progress or finished.")
            return True
        finished = _event("finished", {"game": number, "page": _page_of(number)})
        return await self._stream(http, head, None, [finished])

    async def _stream(
        self, http: _Http, head: bool, into: set[_Stream] | None, first: Iterable[bytes]
    ) -> bool:
        """An event stream: ``first`` events, then those the hub queues for it while it is
        in ``into`` (``None``: no more). Its connection ends with it."""
        if self._streams >= self.limits.streams:
            with trio.fail_after(self.limits.write_seconds):
                await http.simple(503, "Too many spectators.", headers=[("retry-after", "10")])
            return False
        stream = _Stream(self.limits.queue)
        for queued in first:
            stream.offer(queued)
        if into is None or head:
            stream.end()
        else:
            into.add(stream)
        self._streams += 1
        try:
            with stream.scope:
                with trio.fail_after(self.limits.write_seconds):
                    await http.stream_head(head)
                    if head:
                        return False
                    await http.send(h11.Data(data=f"retry: {EVENT_RETRY_MS}\n\n".encode()))
                while True:
                    event: bytes | None = _HEARTBEAT
                    with trio.move_on_after(self.limits.heartbeat_seconds):
                        try:
                            event = await stream.receive.receive()
                        except trio.EndOfChannel:
                            event = None  # the stream's end, sent as any other write
                    if not await self._write(http, event) or event is None:
                        return False
            return False  # dropped: the hub cancelled it
        finally:
            self._streams -= 1
            if into is not None:
                into.discard(stream)
            stream.close()

    async def _write(self, http: _Http, data: bytes | None) -> bool:
        """Send ``data`` on an event stream (``None``: the stream's end) within
        ``write_seconds``; ``False`` when it could not: the stream is then dropped (a
        spectator that stops reading holds its slot no longer than that, even when no
        event comes to fill its queue)."""
        with trio.move_on_after(self.limits.write_seconds):
            await http.send(h11.EndOfMessage() if data is None else h11.Data(data=data))
            return True
        self.dropped += 1
        return False

    def resynchronise(self, games: Mapping[int, tuple[tuple[str, ...], GameRecord | None]]) -> None:
        """Start again from ``games``, every game in progress by index (its players and
        its record so far, if any), after the feed lost events: a game no longer in
        progress is finished, a new one started, and every game's record brought up to
        date (its watchers get the frames they missed, or the whole game again)."""
        for index in [index for index in self._games if index not in games]:
            self.game_finished(index)
        for index, (players, record) in sorted(games.items()):
            known = self._games.get(index)
            replayed = (  # played again from its start since: it starts over
                known is not None
                and record is not None
                and known.record is not None
                and known.record.turns != record.turns[: len(known.record.turns)]
            )
            if known is None or known.players != tuple(players) or replayed:
                self.game_started(index, players)
            if record is not None:
                self.game_progressed(index, record)
        self.standings_changed()


class _Http:
    """One HTTP/1.1 connection: h11's state machine over a trio stream."""

    def __init__(self, stream: trio.abc.Stream, limits: Limits, address: str = "") -> None:
        self.stream = stream
        self.limits = limits
        self.address = address
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.request_bytes)
        self.requests = 0
        """Requests read on this connection so far."""
        self.closing = False
        """Whether the next response is the connection's last (``Connection: close``)."""

    async def _next(self) -> Any:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.conn.receive_data(bytes(await self.stream.receive_some(_RECEIVE_BYTES)))

    async def read_request(self) -> h11.Request | None:
        """The next request, its body read and thrown away; ``None`` when the client closed."""
        request = await self._next()
        if not isinstance(request, h11.Request):
            return None
        # h11 bounds a head still arriving; this bounds one that arrived whole.
        head = len(request.target) + sum(len(name) + len(value) for name, value in request.headers)
        if head > self.limits.request_bytes:
            raise h11.RemoteProtocolError("request head too large", 431)
        size = 0
        while True:
            event = await self._next()
            if isinstance(event, h11.EndOfMessage):
                return request
            if isinstance(event, h11.Data):
                size += len(event.data)
                if size > self.limits.request_bytes:
                    raise h11.RemoteProtocolError("request body too large", 413)
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def send(self, event: Any) -> None:
        if (
            self.closing
            and isinstance(event, h11.Response)
            and not any(name == b"connection" for name, _ in event.headers)
        ):
            event = h11.Response(
                status_code=event.status_code,
                headers=[*event.headers, (b"connection", b"close")],
                reason=event.reason,
            )
        data = self.conn.send(event)
        if data:
            await self.stream.send_all(data)

    async def page(self, status: int, content: bytes, kind: str, *, head: bool = False) -> None:
        """A whole response: ``content`` of media type ``kind``."""
        headers = [
            ("content-type", kind),
            ("content-length", str(len(content))),
            ("cache-control", "no-cache"),
            *_COMMON_HEADERS,
        ]
        await self.send(_response(status, headers))
        if not head:
            await self.send(h11.Data(data=content))
        await self.send(h11.EndOfMessage())

    async def file(self, file: BinaryIO, kind: str, *, head: bool = False) -> None:
        """A whole response: the open ``file`` of media type ``kind``, read and sent
        :data:`FILE_CHUNK_BYTES` at a time (so a large file costs no more memory than a
        small one); the bytes it had when opened, even if it grows meanwhile."""
        size = os.fstat(file.fileno()).st_size
        headers = [
            ("content-type", kind),
            ("content-length", str(size)),
            ("cache-control", "no-cache"),
            *_COMMON_HEADERS,
        ]
        await self.send(_response(200, headers))
        left = 0 if head else size
        while left > 0:
            chunk = await trio.to_thread.run_sync(file.read, min(left, FILE_CHUNK_BYTES))
            if not chunk:  # cut short while being sent: the client sees the body end early
                raise trio.BrokenResourceError("the file shrank while being sent")
            left -= len(chunk)
            await self.send(h11.Data(data=chunk))
        await self.send(h11.EndOfMessage())

    async def simple(
        self,
        status: int,
        text: str,
        *,
        headers: list[tuple[str, str]] | None = None,
        close: bool = False,
    ) -> None:
        """A one-line plain-text response."""
        content = (text + "\n").encode()
        extra = [*(headers or []), *([("connection", "close")] if close else [])]
        all_headers = [
            ("content-type", "text/plain; charset=utf-8"),
            ("content-length", str(len(content))),
            *_COMMON_HEADERS,
            *extra,
        ]
        await self.send(_response(status, all_headers))
        await self.send(h11.Data(data=content))
        await self.send(h11.EndOfMessage())

    async def redirect(self, location: str) -> None:
        content = f"See {location}\n".encode()
        headers = [
            ("location", location),
            ("content-type", "text/plain; charset=utf-8"),
            ("content-length", str(len(content))),
            *_COMMON_HEADERS,
        ]
        await self.send(_response(303, headers))
        await self.send(h11.Data(data=content))
        await self.send(h11.EndOfMessage())

    async def stream_head(self, head: bool) -> None:
        """The head of an event stream's response (its body follows as events)."""
        headers = [
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-store"),
            ("x-accel-buffering", "no"),  # a proxy in front must not hold events back
            ("connection", "close"),
            *_COMMON_HEADERS,
        ]
        await self.send(_response(200, headers))
        if head:
            await self.send(h11.EndOfMessage())


def _response(status: int, headers: list[tuple[str, str]]) -> h11.Response:
    """A response head with its status's reason phrase."""
    return h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase)


def _page_of(number: int) -> str:
    """The page of finished game ``number``, relative to the site's root."""
    return f"games/{number:04d}.html"


def _peer_address(stream: trio.abc.Stream) -> str:
    """The IP address a connection comes from (``""`` when it has none)."""
    transport = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
    if isinstance(transport, trio.SocketStream):
        try:
            peer = transport.socket.getpeername()
        except OSError:  # already gone
            return ""
        return str(peer[0]) if isinstance(peer, tuple) else ""
    return ""


def _set_send_buffer(stream: trio.abc.Stream, size: int) -> None:
    """Bound the kernel's buffer of a connection's unsent bytes."""
    transport = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
    if isinstance(transport, trio.SocketStream):
        transport.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
