"""The pools that play a tournament's games (tournaments.workers), below the runner."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import trio
from fakebots import fake, leftover_processes

import tournaments.workers
from referee.match import MatchConfig
from referee.pgn import read_games
from referee.sandbox import SandboxPolicy
from tournaments.workers import (
    WORKER_LOG,
    GameDone,
    GameJob,
    GameLost,
    Work,
    _Cut,
    _frame,
    _Frames,
    cpu_shares,
    process_pool,
    task_pool,
)


def work(tmp_path: Path, **modes: str | None) -> Work:
    """The work of a tournament of fake bots (misbehave.py modes; ``None``: the pass
    bot), by player name."""
    return Work(
        match=MatchConfig(options={"turn_limit": 4}, sandbox=SandboxPolicy(mode="off")),
        commands={name: fake(mode, name) for name, mode in modes.items()},
        log_dir=tmp_path / "logs",
    )


def job(index: int = 0, players: tuple[str, ...] = ("a", "b")) -> GameJob:
    return GameJob(index=index, players=players, round="1", seed=7)


@pytest.mark.parametrize(
    ("cpus", "workers", "seats", "shares"),
    [
        ([0, 1], 2, 2, [(0, 1), (0, 1)]),  # too few: every game shares both
        ([0, 1, 2, 3], 2, 2, [(0, 1), (2, 3)]),
        ([0, 1, 2, 3, 4, 5, 6, 7], 3, 2, [(0, 1), (2, 3, 4), (5, 6, 7)]),
        ([0, 1, 2], 2, 2, [(0, 1), (2, 0)]),  # in turn round the list
        ([4], 2, 2, [(4,), (4,)]),
        ([0, 1, 2, 3, 4, 5], 2, 3, [(0, 1, 2), (3, 4, 5)]),
    ],
)
def test_each_worker_pins_its_bots_within_a_share_of_the_cpus(cpus, workers, seats, shares):
    assert cpu_shares(cpus, workers, seats) == shares


async def test_messages_are_read_whole_however_the_stream_cuts_them():
    send, receive = trio.testing.memory_stream_one_way_pair()
    frames = _Frames(receive)
    data = _frame(job(3)) + _frame(job(4))
    for byte in data:  # one byte at a time
        await send.send_all(bytes([byte]))
    assert await frames.receive() == job(3)
    assert await frames.receive() == job(4)
    await send.send_all(_frame(job(5))[:-1])
    await send.aclose()
    with pytest.raises(_Cut):
        await frames.receive()


async def test_a_game_comes_back_ready_to_save(tmp_path):
    async with task_pool()(work(tmp_path, a=None, b=None), 1) as pool:
        done = await pool.play(0, job(6))
    game = done.game
    assert isinstance(done, GameDone) and game.index == 6 and game.players == ("a", "b")
    (record,) = read_games(game.pgn)
    assert record.tags["GameNumber"] == "7" and record.result == game.result
    assert game.plies == len(record.turns) == 4
    assert "<html" in done.page.lower()


async def test_a_worker_process_plays_games_on_the_bots_it_keeps(tmp_path):
    async with process_pool(work(tmp_path, a=None, b=None, c=None), 1) as pool:
        first = await pool.play(0, job(0, ("a", "b")))
        second = await pool.play(0, job(1, ("b", "c")))
    assert (first.game.index, second.game.index) == (0, 1)
    logs = tmp_path / "logs" / "worker-1"
    # b's one process played both games; a's and c's one each.
    assert sorted(path.name for path in logs.glob("*.stderr.log")) == [
        "a-1.stderr.log",
        "b-1.stderr.log",
        "c-1.stderr.log",
    ]
    assert (logs / WORKER_LOG).exists()


async def test_a_worker_that_dies_loses_its_game_in_one_line_and_the_next_game_has_a_new_one(
    tmp_path,
):
    async with process_pool(work(tmp_path, a=None, b=None), 1) as pool:
        with pytest.raises(GameLost) as caught:
            await pool.play(0, job(4, ("a", "nobody")))  # no such player: the worker crashes
        done = await pool.play(0, job(5))  # the pool is not broken: a new worker plays it
    log = tmp_path / "logs" / "worker-1" / WORKER_LOG
    # Never played again by the pool itself: the runner decides, as a new attempt.
    assert str(caught.value) == "worker process 1 exited with status 1"
    assert caught.value.hint == f" (see {log})"
    assert done.game.index == 5 and "KeyError: 'nobody'" in log.read_text()


async def test_closing_the_pool_in_the_middle_of_a_game_stops_its_worker_and_bots(tmp_path):
    pids: list[int] = []
    with trio.move_on_after(30):  # a hang guard only: the game below never ends by itself
        pool_of_one = process_pool(work(tmp_path, a="timeout", b="timeout"), 1)
        async with pool_of_one as pool, trio.open_nursery() as nursery:
            nursery.start_soon(pool.play, 0, job())
            while not list((tmp_path / "logs" / "worker-1").glob("b-1.stderr.log")):
                await trio.sleep(0.01)
            pids.append(pool.workers[0]._process.pid)  # type: ignore[attr-defined,union-attr]
            nursery.cancel_scope.cancel()
    assert pids and not os.path.exists(f"/proc/{pids[0]}")
    assert leftover_processes() == []


async def test_what_a_worker_prints_goes_to_its_log_not_into_its_messages(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("print('a banner at start-up')\n")
    monkeypatch.setenv("PYTHONPATH", str(site))  # the worker process starts with it
    async with process_pool(work(tmp_path, a=None, b=None), 1) as pool:
        done = await pool.play(0, job(2))
    assert done.game.index == 2
    log = tmp_path / "logs" / "worker-1" / WORKER_LOG
    assert "a banner at start-up" in log.read_text()


async def test_a_worker_that_falls_silent_is_killed_and_its_game_lost(tmp_path, monkeypatch):
    async with process_pool(work(tmp_path, a=None, b=None), 1) as pool:
        await pool.play(0, job(0))
        monkeypatch.setattr(tournaments.workers, "WORKER_SILENCE", 1.0)
        stopped = pool.workers[0]._process  # type: ignore[attr-defined]
        os.kill(stopped.pid, signal.SIGSTOP)  # hung: it will never answer
        with pytest.raises(GameLost) as caught:
            await pool.play(0, job(1))
        # Only the stopped worker meets the short limit: the one started in its place (its
        # start-up is silent, and slow on a loaded machine) is judged by the real one.
        monkeypatch.setattr(tournaments.workers, "WORKER_SILENCE", 30.0)
        done = await pool.play(0, job(2))
    assert done.game.index == 2 and stopped.returncode == -signal.SIGKILL
    assert str(caught.value) == "worker process 1 said nothing for 1 s and was killed"


async def test_an_attempt_after_the_first_carries_its_number_in_an_attempt_tag(tmp_path):
    async with process_pool(work(tmp_path, a=None, b=None), 1) as pool:
        first = await pool.play(0, job(3))
        again = await pool.play(
            0, GameJob(index=3, players=("a", "b"), round="1", seed=8, attempt=2)
        )
    (one,), (two,) = read_games(first.game.pgn), read_games(again.game.pgn)
    assert not isinstance(one, Exception) and not isinstance(two, Exception)
    assert "Attempt" not in one.tags and two.tags["Attempt"] == "2"
    assert two.tags["GameNumber"] == one.tags["GameNumber"] == "4"


async def test_a_module_file_in_the_current_directory_never_runs_in_a_worker(tmp_path, monkeypatch):
    folder = tmp_path / "bots"
    folder.mkdir()
    for module in ("random", "signal", "struct", "pickle"):  # what a worker imports
        (folder / f"{module}.py").write_text("raise SystemExit(3)\n")
    monkeypatch.chdir(folder)
    async with process_pool(work(tmp_path, a=None, b=None), 1) as pool:
        done = await pool.play(0, job(0))
    assert done.game.index == 0
