"""Spectators cannot touch the clocks: ``python bench/bench_spectators.py [--games 200]``.

The match server's pieces as ``referee serve`` wires them, on loopback: remote bots
through a :class:`~referee.server.lobby.Lobby`, each game fed to the spectators'
process (:mod:`referee.server.spectator_process`) as the server feeds it. ``--bots``
remote bots (a process of their own) answer every turn after ``--delay`` seconds (a
pass), and play Ivy games of 20 turns at 1+0.05, ``--bots / 2`` games at once, in rounds
that alternate in the same run (so that whatever else the machine does weighs on both
alike): ``--games`` games in quiet rounds, ``--games`` more in the rounds between, while
a flood process, without a token and at the lowest CPU priority (it stands for clients elsewhere),
hammers the spectators' port from ``--addresses`` loopback addresses:
``--pages`` connections churning, each sending 50 pipelined ``/live/NNNN`` requests
for games in progress at once and reading what comes, and ``--streams`` event streams
(``/events`` and ``/events/NNNN``) opened again as soon as they end. It prints, for each
kind of round, the time the referee charged per turn (p50, p99, max, from the records' clock
annotations) and the games lost on time, then what the flood sent and got. Bounded:
``--timeout`` seconds (default 600) at most; the flood stops with the games.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout

from protocol.messages import DEFAULT_MAX_LINE_BYTES  # noqa: E402
from referee.clock import Allowances, TimeControl  # noqa: E402
from referee.match import MatchConfig, play_game  # noqa: E402
from referee.server.client import BotClient, ClientClosed  # noqa: E402
from referee.server.loadtest import percentiles  # noqa: E402
from referee.server.lobby import Lobby  # noqa: E402
from referee.server.remote import RemotePlayer, quit_all  # noqa: E402
from referee.server.serve import _progressed  # noqa: E402
from referee.server.settings import ServerSettings  # noqa: E402
from referee.server.spectator_process import SpectatorFeed, start_spectators  # noqa: E402
from referee.server.tokens import TOKENS, TokenBook  # noqa: E402

HOST = "127.0.0.1"
PIPELINED = 50
FLOOD_NICE = 19
"""The flood's process runs at the lowest CPU priority: it stands for clients on other
machines, whose CPU is not the server's (the kernel's work for their connections is)."""


# --- the bots' process ------------------------------------------------------------------


async def bots_main(spec: dict[str, Any]) -> None:
    async def bot(name: str) -> None:
        async with trio.open_nursery() as nursery:
            client = await BotClient.connect(HOST, spec["port"], nursery=nursery)
            try:
                answer = await client.hello(name, spec["tokens"][name])
                assert answer["type"] == "welcome", answer
                while True:
                    message: dict[str, Any] = await client.receive()
                    if message["type"] == "turn":
                        await trio.sleep(spec["delay"])
                        await client.send({"type": "turn", "id": message["id"], "actions": []})
                    elif message["type"] == "new_game":
                        await client.send({"type": "ready", "id": message["id"], "name": name})
                    elif message["type"] == "quit":
                        return
            except ClientClosed:
                return
            finally:
                await client.aclose()
                nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        for name in spec["tokens"]:
            nursery.start_soon(bot, name)


# --- the flood's process -------------------------------------------------------------------


async def flood_main(spec: dict[str, Any]) -> None:
    port, addresses = spec["port"], spec["addresses"]
    live: set[int] = set()
    got: Counter[str] = Counter()

    def source(number: int) -> str:
        return f"127.0.{1 + number // 250}.{2 + number % 250}"

    async def connect(number: int) -> trio.SocketStream:
        sock = trio.socket.socket()
        await sock.bind((source(number % addresses), 0))
        await sock.connect((HOST, port))
        return trio.SocketStream(sock)

    def game() -> int:
        return random.choice(sorted(live)) if live else random.randint(1, 400)

    async def read_all(stream: trio.SocketStream, on_data: Any = None) -> bytes:
        """Everything until the server closes (the last 64 KiB of it)."""
        seen = b""
        while data := await stream.receive_some(65536):
            got["bytes"] += len(data)
            if on_data is not None:
                on_data(data)
            seen = (seen + data)[-65536:]
        return seen

    async def follower() -> None:
        buffer = b""

        def parse(data: bytes) -> None:
            nonlocal buffer
            buffer += data
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                lines = dict(line.split(b": ", 1) for line in block.split(b"\n") if b": " in line)
                if b"data" not in lines:
                    continue
                payload = json.loads(lines[b"data"])
                if lines.get(b"event") == b"game_started":
                    live.add(payload["game"])
                elif lines.get(b"event") == b"game_finished":
                    live.discard(payload["game"])
                elif lines.get(b"event") == b"hello":
                    live.update(item["game"] for item in payload["games"])

        while True:
            try:
                stream = await connect(addresses)  # an address of its own
                await stream.send_all(b"GET /events HTTP/1.1\r\nHost: flood\r\n\r\n")
                await read_all(stream, parse)
            except OSError:
                await trio.sleep(0.05)

    def count(data: bytes) -> None:
        """Responses by status (a status line cut between two reads is missed)."""
        for status in (b"200", b"303", b"404", b"429"):
            got[f"answered {status.decode()}"] += data.count(b"HTTP/1.1 " + status + b" ")

    async def pages(number: int) -> None:
        while True:
            try:
                stream = await connect(number)
                requests = b"".join(
                    f"GET /live/{game():04d} HTTP/1.1\r\nHost: flood\r\n\r\n".encode()
                    for _ in range(PIPELINED)
                )
                got["connections"] += 1
                got["requests sent"] += PIPELINED
                await stream.send_all(requests)
                await read_all(stream, count)
                await stream.aclose()
            except OSError:
                got["refused or reset"] += 1
                await trio.sleep(0.01)

    async def streams(number: int) -> None:
        while True:
            try:
                stream = await connect(number)
                target = "/events" if number % 2 else f"/events/{game():04d}"
                await stream.send_all(f"GET {target} HTTP/1.1\r\nHost: flood\r\n\r\n".encode())
                got["streams opened"] += 1
                await read_all(stream)
                await stream.aclose()
            except OSError:
                got["refused or reset"] += 1
                await trio.sleep(0.01)

    async def flooding(task_status: trio.TaskStatus[trio.CancelScope]) -> None:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                for number in range(spec["pages"]):
                    nursery.start_soon(pages, number)
                for number in range(spec["streams"]):
                    nursery.start_soon(streams, spec["pages"] + number)
                task_status.started(scope)

    # "+" starts the flood, "-" stops it (every connection closed), the end of the pipe
    # ends the process.
    stdin = trio.lowlevel.FdStream(os.dup(0))
    with trio.move_on_after(spec["seconds"]):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(follower)
            on: trio.CancelScope | None = None
            print("ready", flush=True)
            while command := await stdin.receive_some(1):
                if command == b"+" and on is None:
                    on = await nursery.start(flooding)
                elif command == b"-" and on is not None:
                    on.cancel()
                    on = None
            nursery.cancel_scope.cancel()
    print(json.dumps(dict(got)), flush=True)


# --- the games ------------------------------------------------------------------------------


async def run(args: argparse.Namespace, folder: Path) -> None:
    names = [f"bot{number:03d}" for number in range(args.bots)]
    book = TokenBook(folder / TOKENS)
    tokens = {name: book.issue(name) for name in names}
    lobby = Lobby(
        names,
        book,
        max_line_bytes=DEFAULT_MAX_LINE_BYTES,
        hello_timeout=30,
        max_pending=args.bots,
        max_pending_per_address=args.bots,
    )
    config = MatchConfig(
        control=TimeControl.parse("1+0.05"),
        allowances=Allowances(startup=30),
        options={"turn_limit": 20},
        event="Spectators bench",
    )
    feed = SpectatorFeed()
    (folder / "site").mkdir()
    charged: dict[str, list[int]] = {"quiet": [], "flood": []}
    endings: dict[str, Counter[str]] = {"quiet": Counter(), "flood": Counter()}

    seconds = {"quiet": 0.0, "flood": 0.0}

    async def one_round(label: str, first: int, players: list[RemotePlayer]) -> None:
        """Every board plays one game, numbered from ``first``."""
        started = time.perf_counter()

        async def board(number: int) -> None:
            index = first + number
            seated = players[2 * number : 2 * number + 2]
            feed.game_started(index, tuple(names[2 * number : 2 * number + 2]))
            result = await play_game(
                seated,
                config,
                round_=label,
                watch=lambda record: _progressed(feed, index, record),
            )
            feed.game_finished(index)
            feed.standings_changed()
            endings[label][result.ending.termination] += 1
            charged[label].extend(
                turn.clock.elapsed_ms
                for turn in result.record.turns
                if turn.clock is not None and turn.clock.elapsed_ms is not None
            )

        async with trio.open_nursery() as nursery:
            for number in range(len(players) // 2):
                nursery.start_soon(board, number)
        seconds[label] += time.perf_counter() - started

    flood_report: dict[str, int] = {}
    async with trio.open_nursery() as nursery:
        settings = ServerSettings(host=HOST, http_port=0)
        http = await start_spectators(nursery, feed, folder / "site", settings)
        listeners = await nursery.start(trio.serve_tcp, lobby.handle, 0)
        tcp = listeners[0].socket.getsockname()[1]
        spec = folder / "bots.json"
        spec.write_text(json.dumps({"port": tcp, "tokens": tokens, "delay": args.delay}))
        me = [sys.executable, os.fspath(Path(__file__).resolve())]
        nursery.start_soon(
            lambda: trio.run_process([*me, "--bots-process", os.fspath(spec)], check=False)
        )
        with trio.fail_after(60):
            await lobby.everyone()
        players = [RemotePlayer(lobby.remotes[name], nursery) for name in names]

        flood_spec = {
            "port": http,
            "addresses": args.addresses,
            "pages": args.pages,
            "streams": args.streams,
            "seconds": args.timeout,
        }
        flood = await trio.lowlevel.open_process(
            [*me, "--flood-process", json.dumps(flood_spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert flood.stdin is not None and flood.stdout is not None
        output = b""
        while b"ready" not in output:
            output += await flood.stdout.receive_some(4096) or b"ready"
        # Rounds with and without the flood alternate, so that what else the machine
        # does weighs on both alike.
        boards = args.bots // 2
        for number in range(2 * -(-args.games // boards)):
            label = "flood" if number % 2 else "quiet"
            await flood.stdin.send_all(b"+" if label == "flood" else b"-")
            if label == "flood":
                await trio.sleep(0.5)  # the flood at full strength before the games
            await one_round(label, number * boards, players)
        await flood.stdin.aclose()
        while chunk := await flood.stdout.receive_some(65536):
            output += chunk
        await flood.wait()
        lines = output.decode().splitlines()
        flood_report = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
        await quit_all(list(lobby.remotes.values()))
        nursery.cancel_scope.cancel()

    print(
        f"{args.bots} remote bots answering after {1000 * args.delay:.0f} ms, Ivy games of"
        " 20 turns at 1+0.05"
    )
    for label in ("quiet", "flood"):
        shown = percentiles([float(ms) for ms in charged[label]])
        losses = endings[label]["time forfeit"]
        print(
            f"{label:5}: {sum(endings[label].values())} games in {seconds[label]:.1f} s;"
            f" charged per turn (ms, {len(charged[label])} turns): p50 {shown['p50']:.0f}"
            f" p99 {shown['p99']:.0f} max {shown['max']:.0f}; lost on time: {losses};"
            f" endings {dict(endings[label])}"
        )
    quiet_p99 = percentiles([float(ms) for ms in charged["quiet"]])["p99"]
    flood_p99 = percentiles([float(ms) for ms in charged["flood"]])["p99"]
    print(f"p99 with the flood minus without: {flood_p99 - quiet_p99:+.0f} ms")
    print(f"flood ({args.pages} page connections, {args.streams} streams): {flood_report}")
    print(f"feed resyncs (queue full, events dropped on the spectators' side): {feed.resyncs}")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--bots-process":
        trio.run(bots_main, json.loads(Path(sys.argv[2]).read_text()))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--flood-process":
        os.nice(FLOOD_NICE)
        trio.run(flood_main, json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per half (default 200)")
    parser.add_argument("--bots", type=int, default=40, help="remote bots (even, default 40)")
    parser.add_argument("--delay", type=float, default=0.045, help="seconds a bot takes a turn")
    parser.add_argument("--addresses", type=int, default=64, help="flood's loopback addresses")
    parser.add_argument("--pages", type=int, default=192, help="flood's page connections")
    parser.add_argument("--streams", type=int, default=48, help="flood's event streams")
    parser.add_argument("--timeout", type=float, default=600, help="seconds at most")
    args = parser.parse_args()
    if args.bots < 2 or args.bots % 2:
        parser.error("--bots must be an even number, at least 2")

    async def bounded() -> None:
        with tempfile.TemporaryDirectory() as folder, trio.fail_after(args.timeout):
            await run(args, Path(folder))

    trio.run(bounded)


if __name__ == "__main__":
    main()
