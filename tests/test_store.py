"""The results store: settings check, idempotent recording, and PGN files that survive kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.errors import RefereeError
from tournaments.store import (
    GameRecord,
    ResultStore,
    StoreError,
    append_pgn,
    config_hash,
)

REPO = Path(__file__).resolve().parents[1]
CONFIG = json.dumps({"game": "ivy", "players": ["a", "b"], "games": 2, "turn_limit": 200})


def pgn(index: int, white: str = "a", black: str = "b", result: str = "1-0") -> str:
    """A small PGN game whose Event tag carries the pairing index."""
    return (
        f'[Event "game {index}"]\n[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n'
        f"1. c2+Lc2 g2 {result}\n"
    )


def record(store: ResultStore, index: int, result: str = "1-0") -> bool:
    """Record game ``index`` between a and b."""
    return store.record(
        index,
        white="a",
        black="b",
        result=result,
        termination="normal",
        reason="Green reached the top",
        plies=3,
        pgn=pgn(index, result=result),
    )


def events(pgn_path: Path) -> list[str]:
    """The Event tags in a PGN file, in order."""
    return [
        line.split('"')[1]
        for line in pgn_path.read_text().splitlines()
        if line.startswith("[Event")
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ResultStore]:
    """A fresh store in a folder that does not exist yet."""
    with ResultStore.open(tmp_path / "out" / "results.db") as opened:
        yield opened


# --- settings ----------------------------------------------------------------------


def test_settings_are_saved_then_checked(store: ResultStore) -> None:
    assert store.saved_config() is None
    store.check_or_save_config(CONFIG)
    assert store.saved_config() == CONFIG
    reordered = json.dumps(json.loads(CONFIG), indent=4, sort_keys=True)
    store.check_or_save_config(reordered)
    assert store.saved_config() == CONFIG
    assert config_hash(reordered) == config_hash(CONFIG)


def test_other_settings_in_the_same_store_are_refused(store: ResultStore) -> None:
    store.check_or_save_config(CONFIG)
    other = json.dumps({**json.loads(CONFIG), "games": 4, "seed": 7})
    with pytest.raises(StoreError, match="was started with other settings") as caught:
        store.check_or_save_config(other)
    assert "(differs in: games, seed)" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, RefereeError)
    assert store.saved_config() == CONFIG


# --- games -------------------------------------------------------------------------


def test_games_come_back_in_index_order(store: ResultStore) -> None:
    for index, result in [(3, "0-1"), (0, "1-0"), (1, "1/2-1/2")]:
        assert record(store, index, result)
    assert store.done_indices() == {0, 1, 3}
    rows = store.games()
    assert [row.index for row in rows] == [0, 1, 3]
    assert [row.white_score for row in rows] == [1.0, 0.5, 0.0]
    first = rows[0]
    assert isinstance(first, GameRecord)
    assert (first.white, first.black, first.result, first.termination, first.plies) == (
        "a",
        "b",
        "1-0",
        "normal",
        3,
    )
    assert first.reason == "Green reached the top"
    assert first.pgn == pgn(0)
    assert first.finished_at.endswith("+00:00")
    assert store.results() == [("a", "b", 1.0), ("a", "b", 0.5), ("a", "b", 0.0)]


def test_recording_an_index_twice_keeps_the_first_game(store: ResultStore) -> None:
    assert record(store, 5, "1-0")
    assert not record(store, 5, "0-1")
    assert [(row.index, row.result) for row in store.games()] == [(5, "1-0")]


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"result": "*"}, "result must be one of"), ({"pgn": "  \n"}, "PGN is empty")],
)
def test_bad_records_are_refused(store: ResultStore, changes: dict[str, str], message: str) -> None:
    arguments = {
        "white": "a",
        "black": "b",
        "result": "1-0",
        "termination": "normal",
        "reason": "",
        "plies": 0,
        "pgn": pgn(0),
        **changes,
    }
    with pytest.raises(ValueError, match=message):
        store.record(0, **arguments)
    assert store.games() == []


def test_results_survive_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with ResultStore.open(path) as first:
        first.check_or_save_config(CONFIG)
        record(first, 0)
        record(first, 2)
    with ResultStore.open(path) as again:
        again.check_or_save_config(CONFIG)
        assert again.done_indices() == {0, 2}
        assert not record(again, 2)
        assert record(again, 1)
    with ResultStore.open(path) as third:
        assert [row.index for row in third.games()] == [0, 1, 2]


def test_a_file_that_is_not_a_results_database_is_refused(tmp_path: Path) -> None:
    garbage = tmp_path / "results.db"
    garbage.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="is not a tournament results database"):
        ResultStore.open(garbage)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    connection.close()
    with pytest.raises(StoreError, match="not a tournament's results"):
        ResultStore.open(foreign)


def test_a_store_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="cannot open results database"):
        ResultStore.open(blocker / "results.db")


# --- the PGN file ------------------------------------------------------------------


def test_appending_and_syncing_write_the_same_file(store: ResultStore, tmp_path: Path) -> None:
    appended, synced = tmp_path / "appended.pgn", tmp_path / "synced.pgn"
    for index in range(3):
        record(store, index)
        append_pgn(appended, pgn(index))
    assert store.sync_pgn(synced) == 3
    assert appended.read_text() == synced.read_text()
    assert events(synced) == ["game 0", "game 1", "game 2"]
    assert synced.read_text().endswith("1-0\n\n")


def test_sync_repairs_a_half_written_tail(store: ResultStore, tmp_path: Path) -> None:
    path = tmp_path / "tournament.pgn"
    for index in range(2):
        record(store, index)
        append_pgn(path, pgn(index))
    record(store, 2)
    with path.open("a") as out:  # killed in the middle of appending game 2
        out.write(pgn(2)[:25])
    assert store.sync_pgn(path) == 3
    assert events(path) == ["game 0", "game 1", "game 2"]
    assert path.read_text().count("[Result") == 3
    assert not path.with_name(path.name + ".partial").exists()


def test_sync_drops_a_game_appended_but_never_committed(store: ResultStore, tmp_path: Path) -> None:
    path = tmp_path / "tournament.pgn"
    record(store, 0)
    append_pgn(path, pgn(0))
    append_pgn(path, pgn(1))  # the process died before recording game 1
    append_pgn(path, pgn(0))  # and a confused runner appended game 0 again
    store.sync_pgn(path)
    assert events(path) == ["game 0"]


def test_sync_survives_a_stale_partial_file(store: ResultStore, tmp_path: Path) -> None:
    path = tmp_path / "tournament.pgn"
    path.with_name(path.name + ".partial").write_text("[Event half")
    record(store, 0)
    store.sync_pgn(path)
    assert events(path) == ["game 0"]


def test_sync_of_an_empty_store_writes_an_empty_file(store: ResultStore, tmp_path: Path) -> None:
    path = tmp_path / "tournament.pgn"
    path.write_text("[Event junk")
    assert store.sync_pgn(path) == 0
    assert path.read_text() == ""


WRITER = """
import sys
from tournaments.store import ResultStore, append_pgn

database, pgn_path = sys.argv[1], sys.argv[2]
store = ResultStore.open(database)
store.check_or_save_config('{"kill": true}')
index = 0
while True:
    text = f'[Event "game {index}"]\\n[Result "1-0"]\\n\\n' + "1. c2 g2 " * 200 + "1-0\\n"
    store.record(index, white="a", black="b", result="1-0", termination="normal",
                 reason="", plies=2, pgn=text)
    append_pgn(pgn_path, text)
    if index == 0:
        print("started", flush=True)
    index += 1
"""


def test_a_runner_killed_with_sigkill_loses_no_game_and_duplicates_none(
    tmp_path: Path,
) -> None:
    database, pgn_path = tmp_path / "results.db", tmp_path / "tournament.pgn"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(database), str(pgn_path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "started\n"
        time.sleep(0.3)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()

    with ResultStore.open(database) as store:
        store.check_or_save_config('{"kill": true}')
        done = store.done_indices()
        assert done == set(range(len(done)))
        assert len(done) > 1
        store.sync_pgn(pgn_path)
        assert events(pgn_path) == [f"game {index}" for index in sorted(done)]
        assert pgn_path.read_text().count("1-0\n\n") == len(done)
        assert store.games()[-1].pgn.endswith("1-0\n")
