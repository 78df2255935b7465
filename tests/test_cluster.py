"""Tournaments on a real Dask cluster (``distributed.LocalCluster``: a scheduler and worker
processes on loopback): every game recorded once, a worker killed in the middle of a game,
a game that keeps killing its workers, a stopped run, the bots workers keep between games,
a scheduler lost mid-game, the sandbox and the bots checked on the workers, an
unreachable scheduler, and the ``cluster`` setting.

A game is held in its middle, for as long as a test needs, by :data:`GATE_BOT` and its
:class:`Gate`: what a test does to a game it does at a known point of it, never after a
guessed delay."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dask
import pytest
import trio
from click.testing import CliRunner, Result
from distributed import Client, LocalCluster
from fakebots import FAKEBOTS, MARK, leftover_processes

import tournaments.cluster
from referee.cli import main
from referee.errors import RefereeError, RefereeFault
from referee.pgn import GameRecord, format_game, read_games, read_pgn_file
from referee.process import BotCommand
from tournaments.cluster import cluster_pool
from tournaments.config import ConfigError, Entrant, TournamentConfig, load_config
from tournaments.runner import DATABASE, LOST_ATTEMPTS, PGN, RATINGS_JSON, run_tournament
from tournaments.store import ResultStore

GATE_BOT = (
    "import json, os, socket, sys; sys.path.insert(0, sys.argv[1])\n"
    "from pass_bot import pass_turn, requests, send\n"
    "asking = None\n"
    "for message in requests():\n"
    "    if message['type'] == 'new_game':\n"
    "        asking = message['players']\n"
    "        send({'type': 'ready', 'id': message['id'], 'name': 'gate', 'version': '1.0'})\n"
    "    elif message['type'] == 'turn':\n"
    "        if asking is not None:\n"
    "            address = ('127.0.0.1', int(os.environ['GATE_PORT']))\n"
    "            with socket.create_connection(address) as gate:\n"
    "                gate.sendall(json.dumps(asking).encode() + b'\\n')\n"
    "                gate.recv(1)\n"
    "            asking = None\n"
    "        pass_turn(message)\n"
)
"""A bot that, at its first turn of each game, tells the test's :class:`Gate` who plays the
game and waits for its word: the test holds a game in the middle for as long as it likes."""


@dataclasses.dataclass
class Gate:
    """A loopback server for :data:`GATE_BOT`: the first ``hold`` games to ask are held (their
    bot waits until it dies); the others are let go at once."""

    hold: int
    asked: list[tuple[str, ...]] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.held_send, self.held = trio.open_memory_channel[tuple[str, ...]](100)
        self.gone = trio.Event()
        """Set when the bot of a held game is gone."""

    async def serve(self, stream: trio.SocketStream) -> None:
        line = b""
        while not line.endswith(b"\n"):
            chunk = await stream.receive_some()
            if not chunk:
                return
            line += chunk
        players = tuple(json.loads(line))
        self.asked.append(players)
        if len(self.asked) > self.hold:
            await stream.send_all(b"g")
            return
        self.held_send.send_nowait(players)
        try:
            while await stream.receive_some():  # until the bot is gone
                pass
        except trio.BrokenResourceError:
            pass
        self.gone.set()

    async def start(self, nursery: trio.Nursery) -> int:
        """Serve in ``nursery``; returns the port."""
        serve = functools.partial(trio.serve_tcp, self.serve, 0, host="127.0.0.1")
        listeners = await nursery.start(serve)
        return int(listeners[0].socket.getsockname()[1])


@pytest.fixture(scope="module", autouse=True)
def no_resource_tracker_left() -> Iterator[None]:
    """Stop multiprocessing's resource tracker once this module is done: Dask's worker
    processes start it as a child of the test process, which it would outlive, and the
    later tests' leftover checks would take it for a bot nobody stopped."""
    yield
    from multiprocessing import resource_tracker

    resource_tracker._resource_tracker._stop()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, Client]]:
    """A local cluster of three workers (:func:`local_cluster`), shared by the tests of
    this module (a worker killed by one is restarted for the next)."""
    with local_cluster(3) as cluster:
        yield cluster


@pytest.fixture
def touchy_cluster() -> Iterator[tuple[str, Client]]:
    """Two workers, and a scheduler that gives up on a task as soon as one worker dies
    running it (``KilledWorker`` at once)."""
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        local_cluster(2) as cluster,
    ):
        yield cluster


@pytest.fixture
def cluster_without_bwrap() -> Iterator[str]:
    """Two workers that find no bubblewrap (nor anything else) on their ``PATH``."""
    with local_cluster(2, env={"PATH": "/nonexistent"}) as (address, _):
        yield address


@contextlib.contextmanager
def local_cluster(workers: int, **settings: Any) -> Iterator[tuple[str, Client]]:
    """A ``LocalCluster`` of ``workers`` one-thread worker processes on loopback (each
    behind a nanny that restarts it when it dies), its address and a client of it."""
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # never 8787: another cluster may hold it
            **settings,
        ) as local,
        Client(local.scheduler_address, set_as_default=False) as client,
    ):
        yield local.scheduler_address, client


def pass_bot(name: str) -> Entrant:
    argv = (sys.executable, "-u", str(FAKEBOTS / "pass_bot.py"))
    return Entrant(name, BotCommand(argv, env={"REFEREE_TEST_MARK": MARK}))


def gate_bot(name: str, port: int) -> Entrant:
    argv = (sys.executable, "-u", "-c", GATE_BOT, str(FAKEBOTS))
    env = {"REFEREE_TEST_MARK": MARK, "GATE_PORT": str(port)}
    return Entrant(name, BotCommand(argv, env=env, network=True))


def config(tmp_path: Path, players: list[Entrant], **settings: Any) -> TournamentConfig:
    """A fast round-robin of these players, one game per pairing, in ``tmp_path/out``."""
    defaults: dict[str, Any] = {
        "players": players,
        "tc": "30+0",  # a held game must not end on time: the test decides when it ends
        "startup": 5,
        "options": {"turn_limit": 6},
        "games": 1,
        "output": tmp_path / "out",
        "event": "Cluster",
    }
    return load_config(None, **{**defaults, **settings})


def assert_each_game_once(cfg: TournamentConfig) -> list[Any]:
    """Every game of the schedule is in the store once and in the PGN file once, the same."""
    with ResultStore.open(cfg.output / DATABASE) as store:
        games = store.games()
    assert sorted(game.index for game in games) == list(range(len(cfg.schedule())))
    records = read_pgn_file(cfg.output / PGN)
    assert all(isinstance(record, GameRecord) for record in records), records
    in_file = Counter(format_game(record) for record in records)  # type: ignore[arg-type]
    in_store = Counter(format_game(next(iter(read_games(game.pgn)))) for game in games)  # type: ignore[arg-type]
    assert in_file == in_store
    numbers = sorted(int(record.tags["GameNumber"]) for record in records)  # type: ignore[union-attr]
    assert numbers == list(range(1, len(games) + 1))
    return games


def games_running(client: Client) -> int:
    """How many tasks the workers are running (a cancelled one runs until it returns)."""
    return sum(client.run(lambda dask_worker: len(dask_worker.state.executing)).values())


def leftover_bots(client: Client | None = None) -> list[str]:
    """The fake bots (or their sandboxes) still running among the children of this process
    (where those of a killed worker go) and of each worker process of ``client``'s."""
    found = leftover_processes()
    if client is not None:
        on_workers = client.run(leftover_processes)  # workers get this process's sys.path
        found += [line for lines in on_workers.values() for line in lines]
    return [line for line in found if str(FAKEBOTS) in line]


async def assert_no_bots_left(client: Client | None = None) -> None:
    """No fake bot runs any more. The bots of a killed worker are this process's children
    now, sent SIGKILL as it died (``PR_SET_PDEATHSIG``): each is waited for, so one that
    did not get it fails the test."""
    for line in leftover_bots():
        with trio.fail_after(10):
            pid = int(line.split()[0])
            await trio.to_thread.run_sync(os.waitpid, pid, 0, abandon_on_cancel=True)
    assert await trio.to_thread.run_sync(leftover_bots, client) == []


async def kill_worker_playing(
    client: Client, cfg: TournamentConfig, players: tuple[str, ...]
) -> str:
    """SIGKILL the worker process that plays the game between ``players`` (the scheduler
    says which); returns its address."""
    index = next(p.index for p in cfg.schedule() if p.players == players)
    processing = await trio.to_thread.run_sync(client.processing)
    playing = [
        worker
        for worker, keys in processing.items()
        if any(str(key).startswith(f"game-{index + 1}-") for key in keys)
    ]
    assert len(playing) == 1, processing
    pids = await trio.to_thread.run_sync(lambda: client.run(os.getpid, workers=playing))
    os.kill(pids[playing[0]], signal.SIGKILL)
    return playing[0]


# --- playing ------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_tournament_on_a_cluster_records_every_game_once(cluster, tmp_path):
    address, client = cluster
    cfg = config(tmp_path, [pass_bot(f"p{n}") for n in range(1, 5)], tc="2+0")
    table = await run_tournament(cfg, pool=cluster_pool(address))
    games = assert_each_game_once(cfg)
    assert len(games) == 6 and {game.termination for game in games} == {"normal"}
    assert [player.games for player in table.players] == [3, 3, 3, 3]
    ratings = json.loads((cfg.output / RATINGS_JSON).read_text())
    assert sorted((row["name"], row["games"]) for row in ratings["players"]) == [
        ("p1", 3),
        ("p2", 3),
        ("p3", 3),
        ("p4", 3),
    ]
    await assert_no_bots_left(client)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_a_worker_killed_mid_game_has_its_game_played_again_once(cluster, tmp_path, sandbox):
    address, client = cluster
    gate = Gate(hold=1)
    killed: list[str] = []
    async with trio.open_nursery() as nursery:
        port = await gate.start(nursery)
        players = [gate_bot("p1", port), pass_bot("p2"), pass_bot("p3")]
        cfg = config(tmp_path, players, sandbox=sandbox)

        async def kill_when_held() -> None:
            held = await gate.held.receive()  # p1 is in the middle of this game
            killed.append(await kill_worker_playing(client, cfg, held))

        nursery.start_soon(kill_when_held)
        with trio.fail_after(60):  # a hang fails the test instead of stalling the suite
            await run_tournament(cfg, pool=cluster_pool(address))
        nursery.cancel_scope.cancel()
    assert len(killed) == 1
    games = assert_each_game_once(cfg)
    assert {game.termination for game in games} == {"normal"}  # replayed whole, not forfeited
    held = gate.asked[0]
    assert gate.asked.count(held) == 2  # held, then played again on another worker
    # Not Dask's rerun of the same task (its seed, its deal): a new attempt.
    index = next(p.index for p in cfg.schedule() if p.players == held)
    with ResultStore.open(cfg.output / DATABASE) as store:
        attempts = [(a.number, a.abandoned) for a in store.attempts(index)]
        record = store.game(index)
    assert attempts == [(1, "a Dask worker died"), (2, None)]
    assert record is not None and '[Attempt "2"]' in record.pgn
    # Those of the killed worker died with it.
    await assert_no_bots_left(client)


@pytest.mark.slow
async def test_a_worker_closes_by_itself_the_bots_of_a_run_never_closed(
    cluster, tmp_path, monkeypatch
):
    address, client = cluster
    # As if the coordinator died after its last game: the workers are never told.
    monkeypatch.setattr(tournaments.cluster, "_close_everywhere", lambda client, run: None)
    cfg = config(tmp_path, [pass_bot("p1"), pass_bot("p2")], games=2)
    await run_tournament(cfg, pool=cluster_pool(address))
    assert len(assert_each_game_once(cfg)) == 2
    assert await trio.to_thread.run_sync(leftover_bots, client) != []  # kept for more games

    def idle_close(seconds: float) -> Callable[[], None]:
        module = "tournaments.cluster"
        return lambda: setattr(importlib.import_module(module), "IDLE_CLOSE", seconds)

    await trio.to_thread.run_sync(client.run, idle_close(0))
    try:
        with trio.fail_after(20):
            while await trio.to_thread.run_sync(leftover_bots, client):
                await trio.sleep(0.1)  # each worker looks for idle bots every IDLE_POLL s
    finally:
        await trio.to_thread.run_sync(client.run, idle_close(tournaments.cluster.IDLE_CLOSE))


@pytest.mark.slow
async def test_a_game_that_keeps_killing_its_workers_stops_the_run_in_one_line(
    touchy_cluster, tmp_path
):
    address, client = touchy_cluster
    gate = Gate(hold=LOST_ATTEMPTS)
    async with trio.open_nursery() as nursery:
        port = await gate.start(nursery)
        cfg = config(tmp_path, [gate_bot("p1", port), pass_bot("p2")], sandbox="off")

        async def kill_each_time() -> None:
            async for held in gate.held:
                await kill_worker_playing(client, cfg, held)

        nursery.start_soon(kill_each_time)
        warnings: list[str] = []
        with pytest.raises(RefereeFault) as stopped, trio.fail_after(60):
            await run_tournament(cfg, pool=cluster_pool(address), warn=warnings.append)
        nursery.cancel_scope.cancel()
    message = str(stopped.value)
    assert "\n" not in message
    assert message.startswith(
        f"game 1 was lost {LOST_ATTEMPTS} times in a row (1 Dask worker died; 1 Dask worker"
        " died; 1 Dask worker died) (see the workers' logs); it was not recorded"
    ), message
    assert warnings == [
        f"1 Dask worker died while playing game 1: attempt {n} abandoned, playing it again as"
        f" attempt {n + 1}"
        for n in range(1, LOST_ATTEMPTS)
    ]
    assert "0 of 1 games played" in message
    with ResultStore.open(cfg.output / DATABASE) as store:
        assert store.games() == []
    await assert_no_bots_left(client)


@pytest.mark.slow
async def test_a_stopped_run_stops_its_games_on_the_workers(cluster, tmp_path):
    address, client = cluster
    before = await trio.to_thread.run_sync(client.nthreads)
    gate = Gate(hold=1)
    async with trio.open_nursery() as nursery:
        port = await gate.start(nursery)
        cfg = config(tmp_path, [gate_bot("p1", port), pass_bot("p2")])
        with trio.CancelScope() as run:  # as Ctrl-C cancels it

            async def stop_when_held() -> None:
                await gate.held.receive()
                run.cancel()

            nursery.start_soon(stop_when_held)
            await run_tournament(cfg, pool=cluster_pool(address))
        assert run.cancelled_caught
        with trio.fail_after(20):  # less than the time control: only the stop ends the game
            await gate.gone.wait()  # the worker stopped the game by itself
            while await trio.to_thread.run_sync(games_running, client):
                await trio.sleep(0.05)  # its task is reaping the other bot
        nursery.cancel_scope.cancel()
    with ResultStore.open(cfg.output / DATABASE) as store:
        assert store.games() == []
    processing = await trio.to_thread.run_sync(client.processing)
    assert not any(processing.values()), processing
    after = await trio.to_thread.run_sync(client.nthreads)
    assert set(before) <= set(after)  # no worker was lost (one restarted may have joined)
    await assert_no_bots_left(client)


@pytest.mark.slow
async def test_the_sandbox_is_checked_on_the_workers(cluster_without_bwrap, tmp_path):
    address = cluster_without_bwrap
    players = [pass_bot("p1"), pass_bot("p2")]
    refused = config(tmp_path / "on", players, sandbox="on")
    with pytest.raises(RefereeError) as error:
        await run_tournament(refused, pool=cluster_pool(address))
    assert str(error.value).startswith(f"on the Dask worker {address.rsplit(':', 1)[0]}:")
    assert "cannot sandbox bots: bubblewrap (bwrap) is not installed" in str(error.value)
    warnings: list[str] = []
    allowed = config(tmp_path / "auto", players, sandbox="auto")
    await run_tournament(allowed, pool=cluster_pool(address, warn=warnings.append))
    assert len(warnings) == 1, warnings  # one line for the one machine
    assert warnings[0].startswith("on the Dask worker tcp://127.0.0.1:")
    assert "bots run without a sandbox: bubblewrap (bwrap) is not installed" in warnings[0]
    assert len(assert_each_game_once(allowed)) == 1


def wait_for_a_worker(address: str) -> None:
    with Client(address, timeout=60, set_as_default=False) as client:
        client.wait_for_workers(1, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["killed", "stopped"])
async def test_a_scheduler_lost_mid_game_stops_the_run_in_one_line(tmp_path, monkeypatch, how):
    # A scheduler of its own, in a process this test can kill (or stop: it then holds its
    # connections open and answers nothing), and one worker.
    monkeypatch.setattr(tournaments.cluster, "SCHEDULER_CHECK", 0.5)
    info = tmp_path / "scheduler.json"
    scheduler = await trio.lowlevel.open_process(
        [*SCHEDULER, "--host", "127.0.0.1", "--port", "0", "--scheduler-file", str(info)],
        stderr=subprocess.DEVNULL,
    )
    worker: trio.Process | None = None
    try:
        with trio.fail_after(60):
            while (address := scheduler_address(info)) is None:
                await trio.sleep(0.05)  # the scheduler writes its address once it listens
            worker = await trio.lowlevel.open_process(
                [*WORKER, address, "--nthreads", "1", "--no-nanny", "--no-dashboard"],
                stderr=subprocess.DEVNULL,
            )
            # A loaded machine may take longer than the run's own wait to start a worker.
            await trio.to_thread.run_sync(wait_for_a_worker, address)
            gate = Gate(hold=1)
            async with trio.open_nursery() as nursery:
                port = await gate.start(nursery)
                cfg = config(tmp_path, [gate_bot("p1", port), pass_bot("p2")], sandbox="off")

                async def kill_scheduler_when_held() -> None:
                    await gate.held.receive()
                    if how == "killed":
                        scheduler.kill()
                    else:
                        scheduler.send_signal(signal.SIGSTOP)

                nursery.start_soon(kill_scheduler_when_held)
                with pytest.raises(RefereeFault) as stopped:
                    await run_tournament(cfg, pool=cluster_pool(address))
                nursery.cancel_scope.cancel()
    finally:
        for process in (worker, scheduler):  # the worker's bots die with it
            if process is not None:
                process.kill()
                await process.wait()
    message = str(stopped.value)
    if how == "killed":
        assert message.startswith(f"the Dask scheduler at {address} dropped game 1 ("), message
        assert "it was not recorded; the run stopped with 0 of 1 games played" in message
    else:
        assert message.startswith(
            f"the Dask scheduler at {address} did not answer for 5 s while it played game 1;"
            " the run stopped with 0 of 1 games played"
        ), message
    assert "\n" not in message
    await assert_no_bots_left()


SCHEDULER = (sys.executable, "-m", "distributed.cli.dask_scheduler", "--no-dashboard")
WORKER = (sys.executable, "-m", "distributed.cli.dask_worker")
"""``dask scheduler`` and ``dask worker``, run by this Python."""


def scheduler_address(info: Path) -> str | None:
    """The address in a scheduler's ``--scheduler-file``, once it is written whole."""
    try:
        return str(json.loads(info.read_text())["address"])
    except (OSError, ValueError, KeyError):
        return None


# --- failing in one line --------------------------------------------------------------


def write_toml(path: Path, players: list[Entrant], **settings: Any) -> Path:
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    for player in players:
        assert player.command is not None
        lines += [
            "[[players]]",
            f"name = {json.dumps(player.name)}",
            f"cmd = {json.dumps(list(player.command.argv))}",
        ]
    lines += ["[options]", "turn_limit = 6"]
    path.write_text("\n".join(lines) + "\n")
    return path


def one_error_line(result: Result) -> str:
    """The single ``Error:`` line of a failed command (no traceback)."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


@pytest.mark.slow
def test_a_bot_missing_on_the_workers_fails_the_preflight_in_one_line(
    cluster, tmp_path, monkeypatch
):
    address, client = cluster
    # The bot is in the coordinator's working directory, not in the workers' (they were
    # started from another one): the start-up check must run where the games will.
    here = tmp_path / "coordinator"
    here.mkdir()
    (here / "local_bot.py").write_text((FAKEBOTS / "pass_bot.py").read_text())
    monkeypatch.chdir(here)
    local = Entrant("local", BotCommand(("python", "-u", "local_bot.py")))
    path = write_toml(tmp_path / "t.toml", [pass_bot("p1"), local], tc="2+0")
    output = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["tournament", str(path), "--cluster", address, "--output", str(output), "--quiet"]
    )
    line = one_error_line(result)
    assert line.startswith("Error: on the Dask worker tcp://127.0.0.1:"), line
    assert "a player failed the start-up check (local: " in line
    with ResultStore.open(output / DATABASE) as store:
        assert store.games() == []
    assert leftover_bots(client) == []


def free_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_scheduler_is_one_error_line(tmp_path, monkeypatch):
    monkeypatch.setattr(tournaments.cluster, "CONNECT_TIMEOUT", 0.5)
    monkeypatch.chdir(tmp_path)  # where the output directory goes
    address = f"tcp://127.0.0.1:{free_port()}"
    path = write_toml(tmp_path / "t.toml", [pass_bot("p1"), pass_bot("p2")], cluster=address)
    result = CliRunner().invoke(main, ["tournament", str(path), "--quiet"])
    line = one_error_line(result)
    assert line.startswith(f"Error: cannot reach the Dask scheduler at {address}: "), line


async def test_an_unreachable_scheduler_stops_the_run_before_any_game(tmp_path, monkeypatch):
    monkeypatch.setattr(tournaments.cluster, "CONNECT_TIMEOUT", 0.5)
    cfg = config(tmp_path, [pass_bot("p1"), pass_bot("p2")])
    address = f"127.0.0.1:{free_port()}"  # Dask's commands take an address without tcp://
    with pytest.raises(RefereeFault, match=r"^cannot reach the Dask scheduler at tcp://"):
        await run_tournament(cfg, pool=cluster_pool(address))


# --- the setting ---------------------------------------------------------------------


def test_the_cluster_setting_is_read_overridden_and_not_part_of_the_snapshot(tmp_path):
    path = write_toml(
        tmp_path / "t.toml", [pass_bot("p1"), pass_bot("p2")], cluster="tcp://10.0.0.1:8786"
    )
    from_file = load_config(path)
    assert from_file.cluster == "tcp://10.0.0.1:8786"
    overridden = load_config(path, cluster="tcp://10.0.0.2:8786")
    assert overridden.cluster == "tcp://10.0.0.2:8786"
    assert load_config(path, cluster=None).cluster == "tcp://10.0.0.1:8786"
    local = dataclasses.replace(from_file, cluster=None)
    assert from_file.to_json() == local.to_json()  # resumed locally or on a cluster alike
    for bad in ("", "tcp://host :8786", 8786):
        with pytest.raises(ConfigError, match="cluster must be"):
            load_config(path, cluster=bad)
