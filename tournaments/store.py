"""The results store of one tournament: an SQLite database and the PGN file it rebuilds.

The database is the truth. It holds a snapshot of the tournament's settings
(so a resumed run can check it is the same tournament) and one row per finished
game, keyed by the game's :attr:`~tournaments.pairings.Pairing.index`; each game
is committed in its own transaction, in WAL mode with full sync, so a process
killed at any moment leaves every game either wholly recorded or not at all.

The tournament's PGN file is a copy for PGN tools. After each recorded game the
runner appends it with :func:`append_pgn` (the fast path); a kill during that
append can leave half a game at the end, and a kill between the commit and the
append leaves a game out. So a resumed run first calls
:meth:`ResultStore.sync_pgn`, which rewrites the whole file from the database
atomically (temporary file, fsync, ``os.replace``): it never holds a duplicate
or a half game.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from referee.errors import RefereeError

SCHEMA_VERSION = 1
"""Stored in ``PRAGMA user_version``; a store written by a newer version is refused."""

RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
"""The results a finished game can have, with White's score for each."""

_SCHEMA = """
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


class StoreError(RefereeError):
    """A results store cannot be used: not a results database, or another tournament's."""


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One finished game as stored: ``index`` is its pairing index, ``pgn`` its whole record."""

    index: int
    white: str
    black: str
    result: str
    termination: str
    reason: str
    plies: int
    pgn: str
    finished_at: str

    @property
    def white_score(self) -> float:
        """White's score: 1, 0.5 or 0."""
        return RESULTS[self.result]


def config_hash(config_json: str) -> str:
    """The SHA-256 of the settings as canonical JSON (key order and spacing do not matter)."""
    return hashlib.sha256(_canonical(config_json).encode()).hexdigest()


def _canonical(config_json: str) -> str:
    """``config_json`` re-encoded with sorted keys and no spaces (``ValueError`` if not JSON)."""
    return json.dumps(
        json.loads(config_json), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


class ResultStore:
    """An open results database. Use :meth:`open`, and :meth:`close` (or ``with``) when done.

    Calls are synchronous and short (one transaction each); the trio runner
    makes them directly from its event loop, with no checkpoint in between, so
    cancellation cannot cut one in half.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        """Wrap an open, migrated connection; see :meth:`open`."""
        self._connection = connection
        self.path = path

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ResultStore:
        """Open the database file at ``path``, creating it (and its folder) if needed."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"cannot open results database {path}: {error}") from None
        try:
            connection.execute("PRAGMA busy_timeout = 5000")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")
            _migrate(connection, path)
        except sqlite3.DatabaseError as error:
            connection.close()
            raise StoreError(f"{path} is not a tournament results database ({error})") from None
        except BaseException:
            connection.close()
            raise
        return cls(connection, path)

    def close(self) -> None:
        """Close the database (further calls fail)."""
        self._connection.close()

    def __enter__(self) -> ResultStore:
        """The store itself, closed again when the ``with`` block ends."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the store."""
        self.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed when the block ends and rolled back on error."""
        self._connection.execute("BEGIN IMMEDIATE")
        try:
            yield self._connection
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        self._connection.execute("COMMIT")

    # --- settings ---------------------------------------------------------------

    def check_or_save_config(self, config_json: str) -> None:
        """Save the tournament's settings, or check they match the ones saved before.

        ``config_json`` is any JSON text; two texts that decode to the same value
        match. Different settings raise :class:`StoreError`, naming the top-level
        keys that differ when both are JSON objects.
        """
        digest = config_hash(config_json)
        with self._transaction() as db:
            row = db.execute("SELECT hash, json FROM config WHERE id = 1").fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO config (id, hash, json, saved_at) VALUES (1, ?, ?, ?)",
                    (digest, config_json, _now()),
                )
                return
        if row[0] != digest:
            raise StoreError(
                f"the tournament in {self.path.parent} was started with other settings"
                f"{_differences(row[1], config_json)}; resume it with the same settings"
                " or use a new output directory"
            )

    def saved_config(self) -> str | None:
        """The settings saved by :meth:`check_or_save_config`, as given, or ``None``."""
        row = self._connection.execute("SELECT json FROM config WHERE id = 1").fetchone()
        return None if row is None else row[0]

    # --- games ------------------------------------------------------------------

    def record(
        self,
        index: int,
        *,
        white: str,
        black: str,
        result: str,
        termination: str,
        reason: str,
        plies: int,
        pgn: str,
        finished_at: str | None = None,
    ) -> bool:
        """Record the finished game of pairing ``index`` in one committed transaction.

        ``result`` is ``"1-0"``, ``"0-1"`` or ``"1/2-1/2"``; ``finished_at`` an
        ISO 8601 time (default now, UTC). Returns ``False``, changing nothing, when
        that index is already recorded, so recording twice never duplicates a game.
        """
        if result not in RESULTS:
            raise ValueError(f"result must be one of {', '.join(RESULTS)}, not {result!r}")
        if not pgn.strip():
            raise ValueError("the game's PGN is empty")
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO games (pairing, white, black, result, termination, reason, plies,"
                " pgn, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (pairing) DO NOTHING",
                (
                    index,
                    white,
                    black,
                    result,
                    termination,
                    reason,
                    plies,
                    pgn,
                    finished_at or _now(),
                ),
            )
            return cursor.rowcount == 1

    def done_indices(self) -> set[int]:
        """The pairing indices of the games already recorded."""
        return {row[0] for row in self._connection.execute("SELECT pairing FROM games")}

    def games(self) -> list[GameRecord]:
        """Every recorded game, in pairing-index order."""
        rows = self._connection.execute(
            "SELECT pairing, white, black, result, termination, reason, plies, pgn,"
            " finished_at FROM games ORDER BY pairing"
        ).fetchall()
        return [GameRecord(*row) for row in rows]

    def results(self) -> list[tuple[str, str, float]]:
        """``(white, black, white_score)`` of every game in index order, ready for rating."""
        rows = self._connection.execute(
            "SELECT white, black, result FROM games ORDER BY pairing"
        ).fetchall()
        return [(white, black, RESULTS[result]) for white, black, result in rows]

    # --- the PGN file -------------------------------------------------------------

    def sync_pgn(self, path: str | os.PathLike[str]) -> int:
        """Rewrite the PGN file at ``path`` from the database, atomically; returns the game count.

        The games are written in index order to ``<path>.partial``, flushed to
        disk and renamed over ``path``, so a kill at any moment leaves either the
        old file or the new one.
        """
        target = Path(path)
        partial = target.with_name(target.name + ".partial")
        count = 0
        with open(partial, "w", encoding="utf-8", newline="\n") as out:
            for (pgn,) in self._connection.execute("SELECT pgn FROM games ORDER BY pairing"):
                out.write(_pgn_block(pgn))
                count += 1
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)
        _fsync_directory(target.parent)
        return count


def append_pgn(path: str | os.PathLike[str], pgn_text: str) -> None:
    """Append one game to the PGN file at ``path`` and flush it to disk.

    Games are separated by one blank line, exactly as :meth:`ResultStore.sync_pgn`
    writes them. Call it after :meth:`ResultStore.record` has committed the game.
    """
    with open(path, "a", encoding="utf-8", newline="\n") as out:
        out.write(_pgn_block(pgn_text))
        out.flush()
        os.fsync(out.fileno())


def _pgn_block(pgn_text: str) -> str:
    """One game as it goes into the PGN file: trimmed, then a blank line."""
    return pgn_text.strip() + "\n\n"


def _fsync_directory(directory: Path) -> None:
    """Flush a directory entry (a rename) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Create the tables in a new database; refuse a database that is not ours."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"{path} was written by a newer version of the referee")
        if version == 0:
            if connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise StoreError(f"{path} is an SQLite database but not a tournament's results")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _differences(saved_json: str, new_json: str) -> str:
    """`` (differs in: a, b)`` for the top-level keys two JSON objects disagree on, else ``""``."""
    saved, new = json.loads(saved_json), json.loads(new_json)
    if not (isinstance(saved, dict) and isinstance(new, dict)):
        return ""
    keys = sorted(key for key in saved.keys() | new.keys() if saved.get(key) != new.get(key))
    return f" (differs in: {', '.join(keys)})" if keys else ""


def _now() -> str:
    """The current time, UTC, as ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")
