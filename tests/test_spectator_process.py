"""The spectators' own process (referee/server/spectator_process.py): the feed the games
never wait on, and games that go on while the spectators' process is stopped dead.

No wall-clock margin: the feed is driven by hand over a stream nobody reads (its calls
are not even async, so they cannot wait), and the stopped process is stopped by
``SIGSTOP`` for the whole of a tournament, found among this process's own children.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import trio
import trio.testing
from test_server_helpers import played, write_tournament
from test_spectate import Client, record_after
from test_viewer import random_game

from referee.server.serve import Listening, issue_tokens, serve_tournament
from referee.server.spectate import Spectators
from referee.server.spectator_process import (
    FeedReceiver,
    Progressed,
    Resync,
    SpectatorFeed,
    Started,
    read_feed,
)
from tournaments.config import load_config
from tournaments.store import DATABASE, ResultStore

PLAYERS = ("alice", "bob")


async def test_a_full_feed_drops_its_messages_and_sends_the_games_whole(tmp_path: Path) -> None:
    feed = SpectatorFeed(capacity=4)
    sending, receiving = trio.testing.lockstep_stream_one_way_pair()  # nobody reads yet
    full = random_game(2)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed.run, sending)
        feed.game_started(0, PLAYERS)
        await trio.testing.wait_all_tasks_blocked()  # its first message is being written
        for plies in range(1, 21):
            feed.game_progressed(0, record_after(full, plies))
        assert feed.resyncs == 1  # 4 queued, the 5th found the queue full

        async with contextlib.aclosing(read_feed(receiving)) as messages:
            assert await anext(messages) == Started(0, PLAYERS)
            resync = await anext(messages)
            assert isinstance(resync, Resync) and len(resync.games) == 1
            assert resync.games[0].record == record_after(full, 20)
            feed.game_progressed(0, record_after(full, 21))
            update = await anext(messages)
            assert isinstance(update, Progressed)  # back to the turns gained, and only those
            assert (update.start, update.turns) == (20, full.turns[20:21])

        # The spectator side starts again from the resync: a client sees the game so far.
        hub = Spectators(tmp_path)
        receiver = FeedReceiver(hub)
        for message in (Started(0, PLAYERS), resync, update):
            receiver.apply(message)
        port = await nursery.start(hub.serve, "127.0.0.1", 0, None)
        follower = await Client.open(port)
        await follower.follow("/events")
        assert await follower.event() == (
            "hello",
            {"games": [{"game": 1, "players": list(PLAYERS), "plies": 21}]},
        )
        await follower.close()
        nursery.cancel_scope.cancel()


def own_children() -> list[int]:
    """This process's children (from /proc, never a scan of every process)."""
    pids = []
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            pids += [int(pid) for pid in (task / "children").read_text().split()]
    return pids


def spectators_process() -> int:
    (pid,) = [
        pid
        for pid in own_children()
        if b"referee.server.spectator_process" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    return pid


def state_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


async def test_games_go_on_while_the_spectators_process_is_stopped(tmp_path: Path) -> None:
    players = ("alice", "bob", "carol")  # a round robin of 3 games
    config = load_config(
        write_tournament(tmp_path, remote=players, head="concurrency = 2\ngames = 1")
    )
    tokens = issue_tokens(config)
    where: list[Listening] = []
    stopped: list[int] = []
    states: list[str] = []
    seen: list[int] = []

    def at_quit(message: dict[str, Any]) -> None:
        """Every game is over and saved: see that the process was stopped all along,
        then let it go (so that it can be terminated as the server stops)."""
        if message.get("type") == "quit" and stopped:
            states.append(state_of(stopped[0]))
            os.kill(stopped.pop(), signal.SIGCONT)

    async def flood(port: int) -> None:
        """Connections queued at the stopped process, each with requests pipelined."""
        with contextlib.ExitStack() as held:
            for number in range(40):
                sock = held.enter_context(trio.socket.socket())
                await sock.bind((f"127.0.0.{2 + number % 8}", 0))
                await sock.connect(("127.0.0.1", port))  # the kernel's backlog takes it
                await sock.send(b"GET /live/0001 HTTP/1.1\r\nHost: x\r\n\r\n" * 50)
            await trio.sleep_forever()  # held open until the tournament is over

    async def spectate_then_play() -> None:
        while not where:
            await trio.sleep(0.01)
        http, tcp = where[0].http, where[0].tcp
        assert http is not None and tcp is not None
        follower = await Client.open(http)
        await follower.follow("/events")
        assert (await follower.event())[0] == "hello"  # type: ignore[index]
        pid = spectators_process()
        seen.append(pid)
        os.kill(pid, signal.SIGSTOP)
        stopped.append(pid)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood, http)
            async with trio.open_nursery() as bots:
                for name in players:
                    bots.start_soon(
                        lambda name=name: played(tcp, name, tokens[name], on_message=at_quit)
                    )
            nursery.cancel_scope.cancel()
        await follower.close()

    with trio.fail_after(60):  # a bound, not a measure
        async with trio.open_nursery() as nursery:
            nursery.start_soon(spectate_then_play)
            await serve_tournament(config, listening=where.append)
    assert states == ["T"]  # stopped until every game was over
    with ResultStore.open(config.output / DATABASE, read_only=True) as store:
        games = list(store.games())
    assert len(games) == 3 and all(game.termination == "normal" for game in games)
    assert seen[0] not in own_children()  # the spectators' process was reaped with the server
