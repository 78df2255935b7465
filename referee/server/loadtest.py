"""A load test of the match server on loopback: many remote bots playing at once.

:func:`load_test` opens the server's door (a :class:`~referee.server.lobby.Lobby` on a
TCP and a WebSocket port of 127.0.0.1), connects ``bots`` remote bots, small clients
in a process of their own (one in four over WebSocket, the others over TCP) that
passes every turn at once, and plays ``rounds`` rounds in which every bot plays one
game, all ``bots / 2`` games of a round at once, through the server's
:class:`~referee.server.remote.RemotePlayer` and :func:`~referee.match.play_game`,
as a tournament does. It measures the server, not a tournament's bookkeeping (the
store, the ratings, the site, which :mod:`tournaments.runner` does between games). It
measures:

- games per second, from the first game to the last;
- the bots' turn latency: for each turn request a bot gets, the time since it sent its
  previous reply in that game (in a two-player game: the referee's round trip to the
  other bot and back, the other bot's answer included);
- the time the referee charged the bots per request, from the games' records (the
  network and both processes' event loops: what the margin must cover on loopback);
- this process's resident memory (``/proc/self/statm``) once all are connected, then
  after each round: it must stay flat however many rounds are played.

``bench/bench_server.py`` runs it at full size; the tests run a small one.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from protocol.messages import DEFAULT_MAX_LINE_BYTES
from referee.clock import Allowances, TimeControl
from referee.match import MatchConfig, play_game
from referee.server.client import BotClient, ClientClosed
from referee.server.lobby import Lobby
from referee.server.remote import RemotePlayer, quit_all
from referee.server.tokens import TOKENS, TokenBook

HOST = "127.0.0.1"


def resident_bytes() -> int:
    """This process's resident memory (Linux: ``/proc/self/statm``)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 90, 99)) -> dict[str, float]:
    """``p50``, ``p90``, ``p99`` (nearest rank) and ``max`` of ``values`` (0 when empty)."""
    ordered = sorted(values)
    if not ordered:
        return {**{f"p{p}": 0.0 for p in points}, "max": 0.0}
    count = len(ordered)
    picked = {f"p{p}": ordered[max(0, -(-count * p // 100) - 1)] for p in points}
    return {**picked, "max": ordered[-1]}


@dataclass
class LoadReport:
    bots: int
    games: int = 0
    seconds: float = 0.0
    most_playing: int = 0
    """The most bots in a game at the same moment."""
    turn_latency: list[float] = field(default_factory=list)
    """Seconds, one per turn request after a bot's first in a game."""
    charged_ms: Counter[int] = field(default_factory=Counter)
    """How many requests the referee charged each number of milliseconds (the records'
    clock annotations): counted, so that the report's memory does not grow with games."""
    resident: list[int] = field(default_factory=list)
    """This process's resident bytes once every bot is connected, then after each round."""
    endings: dict[str, int] = field(default_factory=dict)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds else 0.0

    def lines(self) -> list[str]:
        latency = percentiles([1000 * value for value in self.turn_latency])
        charged = percentiles([float(ms) for ms in self.charged_ms.elements()])
        memory = " → ".join(f"{size / 2**20:.1f}" for size in self.resident)
        return [
            f"{self.bots} remote bots, {self.games} games in {self.seconds:.2f} s:"
            f" {self.games_per_second:.1f} games/s; at most {self.most_playing} bots"
            " playing at once",
            "turn latency (ms, a reply to the next request, in "
            f"{len(self.turn_latency)} turns): " + _shown(latency),
            f"charged by the referee per request (ms): {_shown(charged)}",
            f"resident memory, connected then after each round (MiB): {memory}",
            f"endings: {self.endings}",
        ]


def _shown(values: dict[str, float]) -> str:
    return " ".join(f"{key} {value:.2f}" for key, value in values.items())


async def swarm(host: str, tcp: int, websocket: int, tokens: dict[str, str]) -> dict[str, Any]:
    """Connect a bot for every token (one in four over WebSocket) and play, passing, until
    each is told to ``quit``; → ``{"latency": [seconds…], "most_playing": n}``."""
    latency: list[float] = []
    playing = most = 0

    async def bot(number: int, name: str) -> None:
        nonlocal playing, most
        over_websocket = number % 4 == 3
        port = websocket if over_websocket else tcp
        async with trio.open_nursery() as nursery:
            client = await BotClient.connect(host, port, websocket=over_websocket, nursery=nursery)
            try:
                answer = await client.hello(name, tokens[name])
                assert answer["type"] == "welcome", answer
                replied: float | None = None
                while True:
                    message: dict[str, Any] = await client.receive()
                    kind = message["type"]
                    if kind == "turn":
                        if replied is not None:
                            latency.append(time.perf_counter() - replied)
                        await client.send({"type": "turn", "id": message["id"], "actions": []})
                        replied = time.perf_counter()
                    elif kind == "new_game":
                        playing += 1
                        most = max(most, playing)
                        await client.send({"type": "ready", "id": message["id"], "name": name})
                    elif kind == "game_over":
                        playing -= 1
                        replied = None
                    elif kind == "quit":
                        return
            except ClientClosed:
                return
            finally:
                await client.aclose()
                nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        for number, name in enumerate(tokens):
            nursery.start_soon(bot, number, name)
    return {"latency": latency, "most_playing": most}


async def load_test(
    folder: Path, *, bots: int = 200, rounds: int = 3, turn_limit: int = 20
) -> LoadReport:
    """Run the load test (its files in ``folder``), the bots in a process of their own;
    → what it measured."""
    names = [f"bot{number:03d}" for number in range(bots)]
    book = TokenBook(folder / TOKENS)
    tokens = {name: book.issue(name) for name in names}
    lobby = Lobby(  # every bot connects at once, all from loopback: none is evicted
        names,
        book,
        max_line_bytes=DEFAULT_MAX_LINE_BYTES,
        hello_timeout=30,
        max_pending=bots,
        max_pending_per_address=bots,
    )
    config = MatchConfig(
        control=TimeControl.parse("60+1"),
        allowances=Allowances(startup=30),
        options={"turn_limit": turn_limit},
        event="Load test",
    )
    report = LoadReport(bots)

    async def game(players: list[RemotePlayer], number: int) -> None:
        result = await play_game(players, config, round_=str(number))
        report.games += 1
        ending = result.ending.termination
        report.endings[ending] = report.endings.get(ending, 0) + 1
        report.charged_ms.update(
            turn.clock.elapsed_ms
            for turn in result.record.turns
            if turn.clock is not None and turn.clock.elapsed_ms is not None
        )

    swarmed: dict[str, Any] = {}
    swarm_done = trio.Event()

    async def bots_process(ports: list[int]) -> None:
        spec = folder / "swarm.json"
        spec.write_text(json.dumps({"host": HOST, "ports": ports, "tokens": tokens}))
        done = await trio.run_process(
            [sys.executable, "-m", "referee.server.loadtest", os.fspath(spec)],
            capture_stdout=True,
            check=True,
        )
        swarmed.update(json.loads(done.stdout))
        swarm_done.set()

    async with trio.open_nursery() as nursery:
        ports = []
        for websocket in (False, True):
            handler = functools.partial(lobby.handle, websocket=websocket)
            listeners = await nursery.start(
                functools.partial(trio.serve_tcp, handler, 0, host=HOST)
            )
            ports.append(listeners[0].socket.getsockname()[1])
        nursery.start_soon(bots_process, ports)
        with trio.fail_after(60):
            await lobby.everyone()
        players = [RemotePlayer(lobby.remotes[name], nursery) for name in names]
        report.resident.append(resident_bytes())
        started = time.perf_counter()
        for number in range(rounds):
            shift = number % bots  # each round pairs the bots differently
            seated = players[shift:] + players[:shift]
            async with trio.open_nursery() as games:
                for board in range(bots // 2):
                    games.start_soon(game, seated[2 * board : 2 * board + 2], number + 1)
            report.resident.append(resident_bytes())
        report.seconds = time.perf_counter() - started
        await quit_all(list(lobby.remotes.values()))
        await swarm_done.wait()
        nursery.cancel_scope.cancel()
    report.turn_latency = swarmed["latency"]
    report.most_playing = swarmed["most_playing"]
    return report


def main(spec: str) -> None:
    """``python -m referee.server.loadtest SPEC.json``: the bots' process of :func:`load_test`."""
    given = json.loads(Path(spec).read_text())
    tcp, websocket = given["ports"]
    result = trio.run(swarm, given["host"], tcp, websocket, given["tokens"])
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])
