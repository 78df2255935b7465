"""Live spectators (referee/server/spectate.py): the hub and its web server, on loopback.

A test client speaks HTTP through h11 over a real socket and reads the server-sent
events as docs/spectators.md describes them. Nothing waits on the wall clock: each test
goes one step after another on what the server has sent (a stream's first event says
it is registered), and the browser test waits for the page to show what was fed.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import h11
import pytest
import trio
from browser import Browser, browser_session
from test_viewer import READ_BOARD, notation_from_cells, random_game, verdant_game

from referee.pgn import GameRecord, RecordedTurn
from referee.replay import replay
from referee.server.spectate import FILE_CHUNK_BYTES, Limits, Spectators, _Http
from referee.viewer import game_document, static_page
from referee.viewer.document import LiveDocument

PLAYERS = ("alice", "bob")


def record_after(full: GameRecord, plies: int) -> GameRecord:
    """``full`` as the referee knows it after ``plies`` decisions: no result yet."""
    tags = {name: value for name, value in full.tags.items() if name != "Result"}
    return GameRecord(tags=tags, turns=full.turns[:plies], result="*")


@pytest.fixture
def output(tmp_path: Path) -> Path:
    """A tournament's output directory, with files that must never be served."""
    (tmp_path / "games").mkdir()
    (tmp_path / "index.html").write_text(static_page(title="Cup", body="<p>standings</p>"))
    (tmp_path / "games" / "0001.html").write_text("<p>game one</p>")
    (tmp_path / "ratings.json").write_text('{"players": []}')
    (tmp_path / "results.sqlite").write_text("secret store")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "game-0001.log").write_text("secret log")
    (tmp_path / "games" / "0002.html").symlink_to(tmp_path / "results.sqlite")
    return tmp_path


def test_a_live_document_grown_turn_by_turn_is_the_replay_s_document() -> None:
    for full in (random_game(4), verdant_game(5)):
        # As referee serve shows a game in progress: no result, and no seed (a bot
        # watching could tell the cards to come from it).
        tags = {name: value for name, value in full.tags.items() if name not in ("Seed", "Result")}
        growing = GameRecord(tags=tags, turns=full.turns[:3], result="*")
        live = LiveDocument(growing)
        assert len(live.frames) == 4
        for plies in range(4, len(full.turns) + 1):
            record = GameRecord(tags=tags, turns=full.turns[:plies], result="*")
            new = live.extend(record)
            assert new == live.frames[-1:]
            if plies % 10 == 0 or plies == len(full.turns):  # the whole document now and then
                assert live.document == game_document(record)
        finished = game_document(full)
        assert [frame["state"] for frame in live.frames] == [
            frame["state"] for frame in finished["frames"]
        ]


@asynccontextmanager
async def serving(hub: Spectators, context: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    """The hub's server on a free loopback port, stopped at the end."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(hub.serve, "127.0.0.1", 0, context)
        yield port
        nursery.cancel_scope.cancel()


class Client:
    """One HTTP/1.1 connection to the server, read through h11."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.conn = h11.Connection(h11.CLIENT)
        self.buffer = b""
        self.last: h11.Response | None = None

    @classmethod
    async def open(
        cls, port: int, *, receive_buffer: int | None = None, source: str | None = None
    ) -> Client:
        """A connection to ``port``, from loopback address ``source`` if given."""
        sock = trio.socket.socket()
        if receive_buffer is not None:  # a small window: the server's writes stall sooner
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        if source is not None:
            await sock.bind((source, 0))
        await sock.connect(("127.0.0.1", port))
        return cls(trio.SocketStream(sock))

    async def send_request(self, target: str) -> None:
        request = h11.Request(method="GET", target=target, headers=[("host", "spectate")])
        await self.stream.send_all(self.conn.send(request) + self.conn.send(h11.EndOfMessage()))

    async def next(self) -> Any:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.conn.receive_data(bytes(await self.stream.receive_some(65536)))

    async def get(self, target: str) -> tuple[int, bytes]:
        """The status and body of ``GET target``."""
        await self.send_request(target)
        return await self.response()

    async def response(self) -> tuple[int, bytes]:
        """The status and body of the next response (to a request sent raw, pipelined,
        if h11 has not sent one)."""
        if self.conn.our_state is h11.IDLE:  # tell h11 of the request, sent already
            self.conn.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
            self.conn.send(h11.EndOfMessage())
        response = await self.next()
        self.last = response
        body = b""
        while not isinstance(event := await self.next(), h11.EndOfMessage):
            body += event.data
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
        return response.status_code, body

    async def follow(self, target: str) -> None:
        """Open the event stream ``target``."""
        await self.send_request(target)
        response = await self.next()
        assert response.status_code == 200
        assert dict(response.headers)[b"content-type"].startswith(b"text/event-stream")

    async def event(self) -> tuple[str, Any] | None:
        """The next server-sent event (``retry:`` and comment lines skipped); ``None``
        when the stream ended."""
        while True:
            while b"\n\n" in self.buffer:
                block, self.buffer = self.buffer.split(b"\n\n", 1)
                fields = dict(
                    line.split(": ", 1) for line in block.decode().splitlines() if ": " in line
                )
                if "event" in fields:
                    return fields["event"], json.loads(fields["data"])
            event = await self.next()
            if not isinstance(event, h11.Data):
                return None
            self.buffer += event.data

    async def close(self) -> None:
        await self.stream.aclose()


async def test_events_reach_a_follower_in_order(output: Path) -> None:
    hub = Spectators(output)
    full = random_game(1)
    async with serving(hub) as port:
        client = await Client.open(port)
        await client.follow("/events")
        assert await client.event() == ("hello", {"games": []})
        hub.game_started(0, PLAYERS)
        # Before the server has the game's record, its page waits, reloading itself.
        page = await Client.open(port)
        status, waiting = await page.get("/live/0001")
        assert status == 200 and b'http-equiv="refresh" content="1"' in waiting
        await page.follow("/events/0001")
        assert await page.event() == (
            "game",
            {"game": 1, "players": list(PLAYERS), "plies": 0, "document": None},
        )
        for plies in (1, 2, 3):
            hub.game_progressed(0, record_after(full, plies))
        name, game = await page.event()  # type: ignore[misc]
        assert (name, game["document"]) == ("game", game_document(record_after(full, 1)))
        await page.close()
        hub.game_finished(0)
        hub.standings_changed()
        assert await client.event() == ("game_started", {"game": 1, "players": list(PLAYERS)})
        for plies in (1, 2, 3):
            token = full.turns[plies - 1].token
            assert await client.event() == ("turn", {"game": 1, "plies": plies, "token": token})
        assert await client.event() == ("game_finished", {"game": 1, "page": "games/0001.html"})
        assert await client.event() == (
            "standings",
            {"index": "index.html", "ratings": "ratings.json"},
        )
        await client.close()


async def test_a_late_joiner_gets_the_game_so_far_then_each_turn(output: Path) -> None:
    hub = Spectators(output)
    full = random_game(2)
    hub.game_started(0, PLAYERS)
    for plies in range(1, 6):
        hub.game_progressed(0, record_after(full, plies))
    async with serving(hub) as port:
        follower = await Client.open(port)
        await follower.follow("/events")
        assert await follower.event() == (
            "hello",
            {"games": [{"game": 1, "players": list(PLAYERS), "plies": 5}]},
        )
        watcher = await Client.open(port)
        await watcher.follow("/events/0001")
        name, game = await watcher.event()  # type: ignore[misc]
        assert name == "game"
        assert (game["game"], game["plies"], game["players"]) == (1, 5, list(PLAYERS))
        assert game["document"] == game_document(record_after(full, 5))

        hub.game_progressed(0, record_after(full, 6))
        name, update = await watcher.event()  # type: ignore[misc]
        expected = game_document(record_after(full, 6))
        assert name == "frames"
        assert update["from"] == 6
        assert update["frames"] == expected["frames"][6:]
        assert update["result"] == expected["result"]

        hub.game_finished(0)
        assert await watcher.event() == ("finished", {"game": 1, "page": "games/0001.html"})
        assert await watcher.event() is None  # the stream ends with the game
        # A finished game's live page sends the spectator to its replay.
        late = await Client.open(port)
        await late.send_request("/live/0001")
        response = await late.next()
        assert response.status_code == 303
        assert dict(response.headers)[b"location"] == b"../games/0001.html"
        for client in (follower, watcher, late):
            await client.close()


async def test_a_spectator_that_never_reads_is_dropped_and_slows_nobody(output: Path) -> None:
    limits = Limits(queue=4, send_buffer=4096)
    hub = Spectators(output, limits=limits)
    async with serving(hub) as port:
        slow = await Client.open(port, receive_buffer=4096)
        await slow.follow("/events")
        assert await slow.event() == ("hello", {"games": []})  # registered; now it stops reading
        fast = await Client.open(port)
        await fast.follow("/events")
        assert (await fast.event())[0] == "hello"  # type: ignore[index]
        hub.game_started(0, PLAYERS)
        assert (await fast.event())[0] == "game_started"  # type: ignore[index]

        turns: list[RecordedTurn] = []
        record = GameRecord(tags={}, turns=turns)
        fed = 0
        while hub.dropped == 0:
            assert fed < 20_000, "the spectator that never reads was never dropped"
            turns.append(RecordedTurn("--"))
            fed += 1
            hub.game_progressed(0, record)  # never waits: it is not even async
            assert await fast.event() == ("turn", {"game": 1, "plies": fed, "token": "--"})
        assert hub.dropped == 1

        # The slow spectator's connection was closed: what it can still read is what the
        # kernel buffered before it was dropped, then the end. The events its full queue
        # held, and the one that found it full, were never sent.
        seen = 0
        try:
            while (event := await slow.event()) is not None:
                seen += event[0] == "turn"
        except (trio.BrokenResourceError, h11.RemoteProtocolError):
            pass  # closed mid-event
        assert seen <= fed - limits.queue - 1
        # Only the fast spectator is left, and the feed goes on.
        assert hub.spectators == 1
        turns.append(RecordedTurn("--"))
        hub.game_progressed(0, record)
        assert await fast.event() == ("turn", {"game": 1, "plies": fed + 1, "token": "--"})
        await fast.close()
        await slow.close()


async def test_a_stream_stuck_on_a_full_send_buffer_is_dropped_after_the_game(
    output: Path,
) -> None:
    # The queue is never full (a handful of events): only the write deadline frees it.
    limits = Limits(streams=1, send_buffer=4096, write_seconds=0.2, heartbeat_seconds=0.05)
    hub = Spectators(output, limits=limits)
    async with serving(hub) as port:
        stuck = await Client.open(port, receive_buffer=1024)
        hub.game_started(0, PLAYERS)
        await stuck.follow("/events/0001")
        assert (await stuck.event())[0] == "game"  # type: ignore[index]
        # It stops reading; a few large events fill the buffers, then the game ends.
        for _ in range(3):
            hub.game_started(0, ("x" * 100_000, "y"))
        hub.game_finished(0)
        with trio.fail_after(5):
            while hub.spectators:
                await trio.sleep(0.01)
        assert hub.dropped == 1
        other = await Client.open(port)
        await other.follow("/events")  # its slot is free again
        assert (await other.event())[0] == "hello"  # type: ignore[index]
        await other.close()
        await stuck.close()


async def test_a_large_file_is_sent_in_bounded_chunks(
    output: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = bytes(range(256)) * (3 * 1024 * 1024 // 256 + 7)  # 3 MiB and a bit
    (output / "games.pgn").write_bytes(content)
    largest = 0
    send = _Http.send

    async def counting(self: _Http, event: Any) -> None:
        nonlocal largest
        if isinstance(event, h11.Data):
            largest = max(largest, len(event.data))
        await send(self, event)

    monkeypatch.setattr(_Http, "send", counting)
    hub = Spectators(output)
    async with serving(hub) as port:
        client = await Client.open(port)
        with trio.fail_after(10):
            assert await client.get("/games.pgn") == (200, content)
        await client.close()
    assert 0 < largest <= FILE_CHUNK_BYTES


async def test_a_reader_that_stalls_on_a_large_file_is_cut_off(output: Path) -> None:
    content = b"x" * (4 * 1024 * 1024)
    (output / "games.pgn").write_bytes(content)
    hub = Spectators(output, limits=Limits(send_buffer=4096, write_seconds=0.2))
    async with serving(hub) as port:
        client = await Client.open(port, receive_buffer=1024)
        await client.send_request("/games.pgn")
        with trio.fail_after(5):  # it never reads until the server has closed it
            while hub.connections == 0:
                await trio.sleep(0.01)
            while hub.connections:
                await trio.sleep(0.01)
        body = b""
        with pytest.raises((h11.RemoteProtocolError, trio.BrokenResourceError)):
            response = await client.next()
            assert response.status_code == 200
            while isinstance(event := await client.next(), h11.Data):
                body += event.data
        assert len(body) < len(content)
        await client.close()


async def test_only_the_site_s_files_are_served(output: Path) -> None:
    hub = Spectators(output)
    async with serving(hub) as port:
        client = await Client.open(port)
        assert await client.get("/games/0001.html") == (200, b"<p>game one</p>")
        assert await client.get("/ratings.json") == (200, b'{"players": []}')
        status, page = await client.get("/")
        assert status == 200
        assert b'EventSource("events")' in page
        for target in (
            "/results.sqlite",
            "/logs/game-0001.log",
            "/../results.sqlite",
            "/games/../results.sqlite",
            "/games/..%2Fresults.sqlite",
            "/%2e%2e/results.sqlite",
            "/games/0001.html/../../results.sqlite",
            "//etc/passwd",
            "/games/0002.html",  # a link out of the directory
            "/live/0009",  # no such game
            "/events/0009",
        ):
            status, body = await client.get(target)
            assert status == 404, target
            assert b"secret" not in body
        await client.close()
        # A request head larger than the bound is refused, and its connection closed.
        big = await Client.open(port)
        await big.stream.send_all(
            b"GET / HTTP/1.1\r\nHost: spectate\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n"
        )
        assert (await big.next()).status_code == 431
        await big.close()


async def test_streams_and_connections_are_capped(output: Path) -> None:
    hub = Spectators(output, limits=Limits(streams=1, connections=2))
    async with serving(hub) as port:
        first = await Client.open(port)
        await first.follow("/events")
        assert (await first.event())[0] == "hello"  # type: ignore[index]
        second = await Client.open(port)
        assert (await second.get("/events"))[0] == 503  # one stream at most
        assert isinstance(await second.next(), h11.ConnectionClosed)  # and closed after
        third = await Client.open(port)
        assert (await third.get("/ratings.json"))[0] == 200  # two connections: the cap
        fourth = await Client.open(port)
        with pytest.raises((trio.BrokenResourceError, h11.RemoteProtocolError)):
            await fourth.get("/ratings.json")  # closed as soon as accepted
        for client in (first, second, third, fourth):
            await client.close()


async def test_connections_are_capped_per_address(output: Path) -> None:
    hub = Spectators(output, limits=Limits(connections_per_address=2))
    async with serving(hub) as port:
        held = [await Client.open(port) for _ in range(2)]
        for client in held:  # both counted: each has been answered
            assert (await client.get("/ratings.json"))[0] == 200
        third = await Client.open(port)
        with pytest.raises((trio.BrokenResourceError, h11.RemoteProtocolError)):
            await third.get("/ratings.json")  # closed as soon as accepted
        other = await Client.open(port, source="127.0.0.2")  # another address is served
        assert (await other.get("/ratings.json"))[0] == 200
        await held[0].close()
        with trio.fail_after(30):  # a bound, not a measure: it comes at once
            while hub.connections > 2:  # the server saw it go: its slot is free again
                await trio.sleep(0.01)
        again = await Client.open(port)
        assert (await again.get("/ratings.json"))[0] == 200
        for client in (*held, third, other, again):
            await client.close()


def pipelined(count: int, target: str = "/ratings.json") -> bytes:
    """``count`` GET requests, sent at once without waiting for any answer."""
    return f"GET {target} HTTP/1.1\r\nHost: spectate\r\n\r\n".encode() * count


async def test_requests_are_limited_per_address_pipelined_ones_one_by_one(output: Path) -> None:
    # A bucket of 5 that refills once in 1000 s: nothing refills during the test.
    limits = Limits(request_burst=5, requests_per_second=0.001)
    hub = Spectators(output, limits=limits)
    async with serving(hub) as port:
        client = await Client.open(port)
        await client.stream.send_all(pipelined(8))
        statuses = []
        for _ in range(6):
            statuses.append((await client.response())[0])
        assert statuses == [200] * 5 + [429]
        assert client.last is not None
        headers = dict(client.last.headers)
        assert headers[b"retry-after"] == b"1000" and headers[b"connection"] == b"close"
        assert isinstance(await client.next(), h11.ConnectionClosed)  # the rest unanswered
        # The bucket is the address's, not the connection's: a new one is refused too.
        same = await Client.open(port)
        assert (await same.get("/events"))[0] == 429
        other = await Client.open(port, source="127.0.0.3")
        assert (await other.get("/ratings.json"))[0] == 200
        for each in (client, same, other):
            await each.close()


async def test_a_connection_carries_a_bounded_number_of_requests(output: Path) -> None:
    hub = Spectators(output, limits=Limits(requests_per_connection=3))
    async with serving(hub) as port:
        client = await Client.open(port)
        await client.stream.send_all(pipelined(5))
        for number in (1, 2, 3):
            assert (await client.response())[0] == 200
            assert client.last is not None
            closing = dict(client.last.headers).get(b"connection") == b"close"
            assert closing == (number == 3)
        assert isinstance(await client.next(), h11.ConnectionClosed)
        await client.close()


async def test_with_a_certificate_it_serves_https(output: Path, tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate")
    certificate, key = tmp_path / "server.pem", tmp_path / "server.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=localhost"),
            *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(certificate)),
        ],
        check=True,
        capture_output=True,
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(certificate, key)
    trusted = ssl.create_default_context(cafile=str(certificate))
    hub = Spectators(output)
    async with serving(hub, server) as port:
        plain = await trio.open_tcp_stream("127.0.0.1", port)
        client = Client(trio.SSLStream(plain, trusted, server_hostname="127.0.0.1"))
        assert await client.get("/ratings.json") == (200, b'{"players": []}')
        await client.follow("/events")
        assert await client.event() == ("hello", {"games": []})
        await client.close()


# --- the live page in a real browser ---------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    yield from browser_session(tmp_path_factory)


async def test_the_live_page_shows_each_turn_as_it_is_played(
    browser: Browser, output: Path
) -> None:
    from selenium.webdriver.support.wait import WebDriverWait

    hub = Spectators(output)
    full = random_game(3)
    hub.game_started(0, PLAYERS)
    for plies in range(1, 8):
        hub.game_progressed(0, record_after(full, plies))

    def shown_after(plies: int) -> str:
        """Wait for the page to show its last position after ``plies`` decisions; the
        position it draws, in §6 notation."""
        WebDriverWait(browser.driver, 30).until(
            lambda driver: driver.execute_script("return document.body.dataset.frame") == str(plies)
        )
        board = browser.run(READ_BOARD)
        return notation_from_cells(board["cells"], board["toMove"], board["sun"], board["turn"])

    async with serving(hub) as port:
        browser.errors()
        await trio.to_thread.run_sync(browser.driver.get, f"http://127.0.0.1:{port}/live/0001")
        drawn = await trio.to_thread.run_sync(shown_after, 7)
        assert drawn == replay(record_after(full, 7)).notation_before()
        # Once the page follows the stream, each turn fed appears on it.
        await trio.to_thread.run_sync(
            WebDriverWait(browser.driver, 30).until,
            lambda driver: driver.execute_script(
                'return document.getElementById("live-status").textContent.startsWith('
                '"Live: following")'
            ),
        )
        for plies in (8, 9):
            hub.game_progressed(0, record_after(full, plies))
            drawn = await trio.to_thread.run_sync(shown_after, plies)
            assert drawn == replay(record_after(full, plies)).notation_before()
        moves = browser.run("return document.querySelectorAll('#moves button').length")
        assert moves == 9
        hub.game_finished(0)
        await trio.to_thread.run_sync(
            WebDriverWait(browser.driver, 30).until,
            lambda driver: driver.execute_script("return document.body.dataset.finished"),
        )
        assert browser.errors() == []


async def test_the_live_index_follows_games_and_standings(browser: Browser, output: Path) -> None:
    from selenium.webdriver.support.wait import WebDriverWait

    hub = Spectators(output)
    full = random_game(1)
    hub.game_started(0, PLAYERS)
    hub.game_progressed(0, record_after(full, 1))

    def page_shows(script: str) -> None:
        WebDriverWait(browser.driver, 30).until(
            lambda driver: driver.execute_script("return " + script)
        )

    in_progress = "document.querySelector('#live-games li a')?.getAttribute('href')"
    standings = "document.getElementById('site-index').textContent"
    async with serving(hub) as port:
        browser.errors()
        await trio.to_thread.run_sync(browser.driver.get, f"http://127.0.0.1:{port}/")
        await trio.to_thread.run_sync(page_shows, f"{in_progress} === 'live/0001'")
        await trio.to_thread.run_sync(page_shows, f"{standings}.includes('standings')")
        assert browser.run("return document.getElementById('title').textContent") == "Cup — live"
        hub.game_progressed(0, record_after(full, 2))
        await trio.to_thread.run_sync(
            page_shows,
            "document.querySelector('#live-games li').textContent.endsWith('2 moves')",
        )
        # The game ends: the run rewrites the index, and the page shows the new one.
        (output / "index.html").write_text(static_page(title="Cup", body="<p>after game 1</p>"))
        hub.game_finished(0)
        hub.standings_changed()
        await trio.to_thread.run_sync(page_shows, f"{standings}.includes('after game 1')")
        await trio.to_thread.run_sync(page_shows, f"{in_progress} === undefined")
        assert browser.errors() == []


async def test_a_live_verdant_game_numbers_its_steps_as_its_replay(
    browser: Browser, output: Path
) -> None:
    from selenium.webdriver.support.wait import WebDriverWait

    hub = Spectators(output)
    full = verdant_game(6)
    tags = {name: value for name, value in full.tags.items() if name not in ("Seed", "Result")}

    def after(plies: int) -> GameRecord:
        return GameRecord(tags=tags, turns=full.turns[:plies], result="*")

    def link(frame: dict[str, Any], index: int) -> str:
        """The ``#turn=`` ending of a frame, as assets/viewer.js writes it."""
        if index == 0 or frame["last"]:
            return f"#turn={frame['turn']}"
        return f"#turn={frame['turn']}&step={frame['step']}"

    def shown(index: int) -> str:
        WebDriverWait(browser.driver, 30).until(
            lambda driver: driver.execute_script("return document.body.dataset.frame") == str(index)
        )
        hash_: str = browser.run("return location.hash")
        return hash_

    hub.game_started(0, ("bot1", "bot2", "bot3"))
    hub.game_progressed(0, after(0))  # as the server reports a game starting
    async with serving(hub) as port:
        browser.errors()
        await trio.to_thread.run_sync(browser.driver.get, f"http://127.0.0.1:{port}/live/0001")
        await trio.to_thread.run_sync(shown, 0)
        await trio.to_thread.run_sync(
            WebDriverWait(browser.driver, 30).until,
            lambda driver: driver.execute_script(
                'return document.getElementById("live-status").textContent.startsWith('
                '"Live: following")'
            ),
        )
        for plies in range(1, 16):
            hub.game_progressed(0, after(plies))
        frames = game_document(after(15))["frames"]
        assert await trio.to_thread.run_sync(shown, 15) == link(frames[15], 15)
        # Every frame's link, walking back, is its replay's: steps and last ones included.
        for index in range(14, 0, -1):
            browser.keys("\ue012")  # ←
            assert await trio.to_thread.run_sync(shown, index) == link(frames[index], index)
        assert browser.errors() == []
