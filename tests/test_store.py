"""The results store: settings check, idempotent recording, checks at open, damage set aside,
disk-full faults, and PGN files that survive kill -9."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tinygames import dice_record, registered

from referee.errors import RefereeError, RefereeFault
from referee.games import game_seed
from referee.pgn import format_game
from referee.process import BotCommand
from referee.replay import verify
from tournaments.config import Entrant, TournamentConfig, load_config
from tournaments.ratings import TableResult
from tournaments.recovery import numbered, open_records
from tournaments.store import (
    DUEL_SCORES,
    SCHEMA_VERSION,
    Attempt,
    DamagedStore,
    GameRecord,
    ResultStore,
    StoreError,
    append_pgn,
    config_hash,
    salvage,
    salvage_attempts,
    set_aside,
)

REPO = Path(__file__).resolve().parents[1]
CONFIG = json.dumps({"game": "ivy", "players": ["a", "b"], "games": 2, "turn_limit": 200})


def pgn(index: int, white: str = "a", black: str = "b", result: str = "1-0") -> str:
    """A small PGN game whose Event tag carries the pairing index."""
    return (
        f'[Event "game {index}"]\n[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n'
        f"1. c2+Lc2 g2 {result}\n"
    )


PLACES = {"1-0": (1, 2), "0-1": (2, 1), "1/2-1/2": (1, 1)}


def record(store: ResultStore, index: int, result: str = "1-0") -> bool:
    """Record game ``index`` between a and b."""
    return store.record(
        index,
        players=("a", "b"),
        result=result,
        places=PLACES[result],
        scores=DUEL_SCORES[PLACES[result]],
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
    assert [row.scores for row in rows] == [(1.0, 0.0), (0.5, 0.5), (0.0, 1.0)]
    first = rows[0]
    assert isinstance(first, GameRecord)
    assert (first.players, first.result, first.places, first.termination, first.plies) == (
        ("a", "b"),
        "1-0",
        (1, 2),
        "normal",
        3,
    )
    assert first.reason == "Green reached the top"
    assert first.pgn == pgn(0)
    assert first.finished_at.endswith("+00:00")
    assert store.results() == [
        TableResult(("a", "b"), (1, 2), (1.0, 0.0)),
        TableResult(("a", "b"), (1, 1), (0.5, 0.5)),
        TableResult(("a", "b"), (2, 1), (0.0, 1.0)),
    ]


def test_games_of_one_to_five_seats_are_stored(store: ResultStore) -> None:
    games = [
        (("solo",), "47", (1,), (47.0,)),
        (("a", "b"), "0-1", (2, 1), (30.0, 41.0)),  # points, as Verdant scores a duel
        (("a", "b", "c"), "2-1-3", (2, 1, 3), (40.0, 47.5, 12.0)),
        (("a", "b", "c", "d", "e"), "1-1-3-3-5", (1, 1, 3, 3, 5), (9.0, 9.0, 5.0, 5.0, 1.0)),
    ]
    for index, (players, result, places, scores) in enumerate(games):
        assert store.record(
            index,
            players=players,
            result=result,
            places=places,
            scores=scores,
            termination="normal",
            reason="all turns played",
            plies=40,
            pgn=pgn(index),
        )
    assert [(g.players, g.result, g.places, g.scores) for g in store.games()] == games
    assert store.results() == [TableResult(p, places, s) for p, _, places, s in games]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"result": "2-1-3"}, "result must be 1-2-3"),
        ({"places": (1, 1, 2)}, "are not places"),
        ({"players": ("a", "b")}, "each with a player, a place and a score"),
        ({"players": ("a",) * 6, "places": (1,) * 6, "scores": (0,) * 6}, "1 to 5 seats"),
        ({"players": ("a",), "places": (1,), "scores": (47,), "result": "1-0"}, "must be 47"),
    ],
)
def test_games_whose_columns_disagree_are_refused(
    store: ResultStore, changes: dict[str, object], message: str
) -> None:
    arguments: dict[str, object] = {
        "players": ("a", "b", "c"),
        "result": "1-2-3",
        "places": (1, 2, 3),
        "scores": (3, 2, 1),
        "termination": "normal",
        "reason": "",
        "plies": 9,
        "pgn": pgn(0),
        **changes,
    }
    with pytest.raises(ValueError, match=message):
        store.record(0, **arguments)  # type: ignore[arg-type]
    assert store.games() == []


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("players", "not json"),
        ("players", '["a", 7]'),
        ("places", "[1.5, 2]"),
        ("places", "[true, 2]"),
        ("scores", '{"a": 1}'),
        ("scores", "[]"),
    ],
)
def test_a_row_whose_json_is_not_a_list_of_the_right_kind_is_damaged(
    tmp_path: Path, column: str, value: str
) -> None:
    path = tmp_path / "results.db"
    with ResultStore.open(path) as store:
        record(store, 0)
        record(store, 1)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute(f"UPDATE games SET {column} = ? WHERE pairing = 1", (value,))
        connection.commit()
    with ResultStore.open(path) as store:
        assert [(index, game is None) for index, game in store.rows()] == [(0, False), (1, True)]
        assert [game.index for game in store.games()] == [0]


def test_recording_an_index_twice_keeps_the_first_game(store: ResultStore) -> None:
    assert record(store, 5, "1-0")
    assert not record(store, 5, "0-1")
    assert [(row.index, row.result) for row in store.games()] == [(5, "1-0")]


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"result": "*"}, "result must be 1-0"), ({"pgn": "  \n"}, "PGN is empty")],
)
def test_bad_records_are_refused(store: ResultStore, changes: dict[str, str], message: str) -> None:
    arguments = {
        "players": ("a", "b"),
        "places": (1, 2),
        "scores": (1, 0),
        "result": "1-0",
        "termination": "normal",
        "reason": "",
        "plies": 0,
        "pgn": pgn(0),
        **changes,
    }
    with pytest.raises(ValueError, match=message):
        store.record(0, **arguments)  # type: ignore[arg-type]
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


def test_a_file_that_is_not_a_database_is_damaged_and_a_foreign_database_is_refused(
    tmp_path: Path,
) -> None:
    garbage = tmp_path / "results.db"
    garbage.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(DamagedStore, match=r"results.db is damaged \(file is not a database\)"):
        ResultStore.open(garbage)
    foreign = tmp_path / "foreign.db"
    with contextlib.closing(sqlite3.connect(foreign)) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.commit()
    with pytest.raises(StoreError, match="not a tournament's results") as caught:
        ResultStore.open(foreign)
    assert not isinstance(caught.value, DamagedStore)  # someone else's file: never set aside


def test_a_store_of_a_newer_version_is_refused_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    ResultStore.open(path).close()
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="newer version") as caught:
        ResultStore.open(path)
    assert not isinstance(caught.value, DamagedStore)


@pytest.mark.parametrize(
    "change",
    [
        "ALTER TABLE games ADD COLUMN extra TEXT",
        "CREATE TABLE extra (x)",
        "DROP TABLE config",
    ],
)
def test_a_store_with_another_schema_is_damaged(tmp_path: Path, change: str) -> None:
    path = tmp_path / "results.db"
    ResultStore.open(path).close()
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute(change)
    with pytest.raises(DamagedStore, match=r"tables are not|other columns"):
        ResultStore.open(path)


def test_a_truncated_store_fails_the_check_its_rows_are_salvaged_and_it_is_set_aside(
    tmp_path: Path,
) -> None:
    path = tmp_path / "results.db"
    with ResultStore.open(path) as store:
        store.check_or_save_config(CONFIG)
        for index in range(400):  # enough rows for several pages
            record(store, index)
    size = path.stat().st_size
    with open(path, "r+b") as file:  # damage one page in the middle
        file.seek(size // 2)
        file.write(b"\xff" * 4096)
    with pytest.raises(DamagedStore, match="is damaged"):
        ResultStore.open(path)
    saved, rows = salvage(path)
    assert saved == CONFIG
    indices = [row.index for row in rows]
    assert 0 < len(rows) < 400 and indices == sorted(indices)
    assert {0, 399} <= set(indices)  # read from both ends, past the damaged page
    assert all(row.pgn == pgn(row.index) for row in rows)
    aside = set_aside(path)
    assert aside.name == "results.db.damaged-1" and aside.stat().st_size == size
    assert not path.exists()
    # The next damaged file gets the next number, and its journal moves with it.
    path.write_bytes(b"x")
    Path(f"{path}-wal").write_bytes(b"y")
    again = set_aside(path)
    assert again.name == "results.db.damaged-2"
    assert Path(f"{again}-wal").read_bytes() == b"y" and not Path(f"{path}-wal").exists()


def test_settings_are_checked_without_being_saved(store: ResultStore) -> None:
    assert store.check_config(CONFIG) is False
    assert store.saved_config() is None  # a run that fails its preflight saves nothing
    store.save_config(CONFIG)
    store.save_config(json.dumps({"other": 1}))  # the first settings stay
    assert store.check_config(CONFIG) is True
    assert store.saved_config() == CONFIG


def test_replace_games_repairs_rows_in_one_transaction(store: ResultStore) -> None:
    for index in range(3):
        record(store, index)
    damaged = store.game(1)
    assert damaged is not None
    store.replace_games([dataclasses.replace(damaged, reason="ok")], remove=[2])
    assert [(game.index, game.reason) for game in store.games()] == [
        (0, "Green reached the top"),
        (1, "ok"),
    ]
    unstorable = GameRecord(5, ("a", "b"), "*", (1, 2), (1.0, 0.0), "normal", "", 0, pgn(5), "")
    with pytest.raises(ValueError, match="result must be"):
        store.replace_games([unstorable], remove=[0])
    assert [game.index for game in store.games()] == [0, 1]  # rolled back as a whole


def test_a_store_opened_read_only_is_checked_and_never_written(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with ResultStore.open(path) as store:
        store.check_or_save_config(CONFIG)
        record(store, 0)
    content = path.read_bytes()
    with ResultStore.open(path, read_only=True) as store:
        assert store.check_config(CONFIG) and store.done_indices() == {0}
        with pytest.raises(RefereeFault, match="cannot record game 2") as caught:
            record(store, 1)
        assert "\n" not in str(caught.value)
    assert path.read_bytes() == content
    with pytest.raises(StoreError, match="cannot open results database"):
        ResultStore.open(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


def test_a_store_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="cannot open results database"):
        ResultStore.open(blocker / "results.db")


# --- stores of schema version 1 -----------------------------------------------------

SCHEMA_1 = """
CREATE TABLE config (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    hash TEXT NOT NULL,
    json TEXT NOT NULL,
    saved_at TEXT NOT NULL
);
CREATE TABLE games (
    pairing INTEGER PRIMARY KEY CHECK (pairing >= 0),
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    result TEXT NOT NULL CHECK (result IN ('1-0', '0-1', '1/2-1/2')),
    termination TEXT NOT NULL,
    reason TEXT NOT NULL,
    plies INTEGER NOT NULL CHECK (plies >= 0),
    pgn TEXT NOT NULL,
    finished_at TEXT NOT NULL
);
"""
"""The schema the referee wrote before games of any number of seats (user_version 1)."""


def schema_1_store(path: Path, *, damaged_row: bool = False) -> None:
    """A store as the previous version wrote it: three games, and one row whose turn
    count is not a number when ``damaged_row``."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.executescript(SCHEMA_1)
        connection.execute(
            "INSERT INTO config VALUES (1, ?, ?, '2026-01-01T00:00:00+00:00')",
            (config_hash(CONFIG), CONFIG),
        )
        rows = [
            (0, "alice", "bob", "1-0"),
            (1, "bob", "carol", "0-1"),
            (2, "carol", "alice", "1/2-1/2"),
        ]
        for index, white, black, result in rows:
            connection.execute(
                "INSERT INTO games VALUES (?, ?, ?, ?, 'normal', 'why', 7, ?, '2026-01-01')",
                (index, white, black, result, pgn(index, white, black, result)),
            )
        if damaged_row:
            connection.execute(
                "INSERT INTO games VALUES (3, 'a', 'b', '1-0', 'normal', '', 'seven', ?, '')",
                (pgn(3),),
            )
        connection.execute("PRAGMA user_version = 1")
        connection.commit()


MIGRATED = [
    (0, ("alice", "bob"), "1-0", (1, 2), (1.0, 0.0)),
    (1, ("bob", "carol"), "0-1", (2, 1), (0.0, 1.0)),
    (2, ("carol", "alice"), "1/2-1/2", (1, 1), (0.5, 0.5)),
]


def summary(store: ResultStore) -> list[tuple[object, ...]]:
    return [(g.index, g.players, g.result, g.places, g.scores) for g in store.games()]


def test_a_schema_1_store_is_upgraded_in_place_keeping_every_game(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    schema_1_store(path, damaged_row=True)
    with ResultStore.open(path) as store:
        assert store.check_config(CONFIG)
        assert summary(store) == MIGRATED
        first = store.game(0)
        assert first is not None
        assert (first.termination, first.reason, first.plies, first.finished_at) == (
            "normal",
            "why",
            7,
            "2026-01-01",
        )
        assert first.pgn == pgn(0, "alice", "bob", "1-0")
        # The damaged row stays damaged, for recovery to repair as any other.
        assert [index for index, game in store.rows() if game is None] == [3]
        assert record(store, 4)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        columns = [row[1] for row in connection.execute("PRAGMA table_info(games)")]
        assert columns[:5] == ["pairing", "players", "result", "places", "scores"]
    with ResultStore.open(path) as again:  # a second open finds schema 2: nothing to do
        assert summary(again)[:3] == MIGRATED and again.done_indices() == {0, 1, 2, 3, 4}


def test_a_schema_1_store_opened_read_only_is_upgraded_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    schema_1_store(path)
    before = path.read_bytes()
    with ResultStore.open(path, read_only=True) as store:
        assert store.check_config(CONFIG)
        assert summary(store) == MIGRATED
        assert [r.places for r in store.results()] == [(1, 2), (2, 1), (1, 1)]
    assert path.read_bytes() == before
    with contextlib.closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 1


def test_a_damaged_schema_1_store_is_damaged_not_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    schema_1_store(path)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("ALTER TABLE games ADD COLUMN extra TEXT")
    with pytest.raises(DamagedStore, match="other columns"):
        ResultStore.open(path)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 1  # rolled back
    saved, rows = salvage(path)
    assert saved == CONFIG
    assert [(g.index, g.players, g.result, g.places, g.scores) for g in rows] == MIGRATED


def test_the_rows_of_a_schema_1_store_are_salvaged(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    schema_1_store(path, damaged_row=True)
    saved, rows = salvage(path)
    assert saved == CONFIG
    assert [(g.index, g.players, g.result, g.places, g.scores) for g in rows] == MIGRATED


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
    store.record(index, players=["a", "b"], result="1-0", places=[1, 2], scores=[1, 0],
                 termination="normal", reason="", plies=2, pgn=text)
    append_pgn(pgn_path, text)
    if index == 2:
        print("three games recorded", flush=True)  # and it goes on writing until killed
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
        assert child.stdout.readline() == "three games recorded\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()

    with ResultStore.open(database) as store:
        store.check_or_save_config('{"kill": true}')
        done = store.done_indices()
        assert done == set(range(len(done)))
        assert len(done) >= 3
        store.sync_pgn(pgn_path)
        assert events(pgn_path) == [f"game {index}" for index in sorted(done)]
        assert pgn_path.read_text().count("1-0\n\n") == len(done)
        assert store.games()[-1].pgn.endswith("1-0\n")


# --- recovery of a tournament of three-seat games of chance ---------------------------


def dice_tournament(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TournamentConfig:
    """A finished tournament of dice (tests/tinygames.py) at tables of three, written as
    the runner writes one: each game in the store, then appended to the PGN."""
    registered(monkeypatch)
    players = [Entrant(name, BotCommand(("true",))) for name in ("ann", "bea", "cy", "dan")]
    config = load_config(
        None,
        game="dice",
        players=players,
        players_per_table=3,
        options={"rounds": 1},
        tc="1+0",
        seed=9,
        event="Dice",
        output=tmp_path / "out",
    )
    with ResultStore.open(config.output / "results.sqlite") as store:
        store.save_config(config.to_json())
        for pairing in config.schedule():
            record = numbered(
                dice_record(
                    pairing.players,
                    seed=game_seed(config.seed, pairing.index),
                    rounds=1,
                    tags={
                        "Event": "Dice",
                        "Round": str(pairing.round),
                        "TimeControl": config.tc.pgn_tag,
                    },
                ),
                pairing.index,
            )
            outcome = verify(record).outcome
            assert outcome is not None
            text = format_game(record)
            store.record(
                pairing.index,
                players=pairing.players,
                result=record.result,
                places=outcome.places,
                scores=outcome.scores,
                termination="normal",
                reason=outcome.reason,
                plies=len(record.turns),
                pgn=text,
            )
            append_pgn(config.output / "games.pgn", text)
    return config


def stored(config: TournamentConfig) -> list[tuple[object, ...]]:
    with ResultStore.open(config.output / "results.sqlite", read_only=True) as store:
        return [(g.index, g.players, g.result, g.places, g.scores) for g in store.games()]


def test_a_tournament_of_three_seat_games_is_checked_and_rebuilt_from_its_pgn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = dice_tournament(tmp_path, monkeypatch)
    games = stored(config)
    assert len(games) == len(config.schedule()) and all(len(g[1]) == 3 for g in games)
    store, notes = open_records(config)
    store.close()
    assert notes == ()
    # A row whose places disagree with its record is restored from the PGN's copy.
    with contextlib.closing(sqlite3.connect(config.output / "results.sqlite")) as db:
        db.execute("UPDATE games SET places = '[3, 2, 1]', scores = '[1, 2, 3]' WHERE pairing = 1")
        db.commit()
    store, notes = open_records(config)
    store.close()
    assert len(notes) == 1 and "game 2: its result columns disagree" in notes[0]
    assert stored(config) == games
    # A lost store is rebuilt from the PGN: players, places and scores from the tags.
    for name in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm"):
        (config.output / name).unlink(missing_ok=True)
    store, notes = open_records(config)
    store.close()
    assert notes == (
        f"results.sqlite was missing: rebuilt it from {len(games)} games of games.pgn",
    )
    assert stored(config) == games


def test_a_three_seat_game_with_another_seed_or_seating_is_not_the_tournaments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = dice_tournament(tmp_path, monkeypatch)
    pgn_path = config.output / "games.pgn"
    text = pgn_path.read_text()
    first = text.split("\n\n[Event")[0]
    seed = next(line for line in first.splitlines() if line.startswith("[Seed "))
    pgn_path.write_text(text.replace(seed, '[Seed "1"]', 1))
    (config.output / "results.sqlite").unlink()
    store, notes = open_records(config)
    store.close()
    assert any("its Seed is '1', not the seed of game 1" in note for note in notes), notes
    assert [g[0] for g in stored(config)] == list(range(1, len(config.schedule())))


def test_attempts_are_noted_before_play_counted_on_and_kept_through_damage(tmp_path):
    path = tmp_path / "results.sqlite"
    with ResultStore.open(path) as store:
        assert store.start_attempt(4) == 1
        store.abandon_attempt(4, 1, "worker process 1 was killed by SIGKILL")
        assert store.start_attempt(4) == 2  # a kill -9 now leaves it started, not ended
        assert store.start_attempt(0) == 1
        assert record(store, 0)  # game 1 was recorded: its attempt is not left unfinished
    with ResultStore.open(path) as store:
        (left,) = store.abandon_unfinished("the run ended")
        assert (left.index, left.number, left.abandoned) == (4, 2, "the run ended")
        assert store.abandon_unfinished("again") == []
        assert store.start_attempt(4) == 3
        noted = [(a.index, a.number, a.abandoned) for a in store.attempts()]
    assert noted == [
        (0, 1, None),
        (4, 1, "worker process 1 was killed by SIGKILL"),
        (4, 2, "the run ended"),
        (4, 3, None),
    ]
    assert [(a.index, a.number) for a in salvage_attempts(path)] == [(0, 1), (4, 1), (4, 2), (4, 3)]
    assert all(isinstance(a, Attempt) for a in salvage_attempts(path))


def test_a_schema_2_store_gains_the_attempts_table_keeping_its_games(tmp_path):
    path = tmp_path / "results.sqlite"
    with ResultStore.open(path) as store:
        assert record(store, 0)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("DROP TABLE attempts")
        connection.execute("PRAGMA user_version = 2")
        connection.commit()
    with ResultStore.open(path, read_only=True) as store:  # upgraded in a copy in memory
        assert store.count() == 1 and store.attempts() == []
    with ResultStore.open(path) as store:
        assert store.count() == 1 and store.start_attempt(1) == 1
    with contextlib.closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
