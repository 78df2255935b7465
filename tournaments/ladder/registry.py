"""The ladder's registry: its entrants, their versions and its log, in ``ladder.sqlite``.

The games live in the ladder's results store (``results.sqlite``, the tournament's
:class:`~tournaments.store.ResultStore`, each version a player of its own); this file
holds what a tournament's store has no table for. The same habits as there: WAL mode,
full sync, one committed transaction per change, SQLite's ``quick_check`` at open. A
registry that fails the check is moved aside (``ladder.sqlite.damaged-N``) and rebuilt
from the entries folder and the stored games (:meth:`Registry.open` says how).

A version is ``pending`` from the moment the ladder sees it complete until its start-up
check ends, then ``active`` or ``refused`` (with the one-line reason). Only the newest
active version of an entrant that is not retired is matched and ranked.
"""

from __future__ import annotations

import contextlib
import enum
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tournaments.store import set_aside, timestamp, write_transaction

REGISTRY = "ladder.sqlite"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS versions (
        seq INTEGER PRIMARY KEY,
        entrant TEXT NOT NULL,
        version TEXT NOT NULL,
        player TEXT NOT NULL UNIQUE,
        manifest TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'active', 'refused')),
        reason TEXT NOT NULL DEFAULT '',
        seen_at TEXT NOT NULL,
        checked_at TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS entrants (
        name TEXT PRIMARY KEY,
        retired INTEGER NOT NULL DEFAULT 0,
        changed_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS log (
        seq INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        line TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
)


class State(enum.StrEnum):
    PENDING = "pending"
    ACTIVE = "active"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Version:
    """One version as registered: ``seq`` orders all versions as they were seen."""

    seq: int
    entrant: str
    version: str
    player: str
    manifest: str
    state: State
    reason: str
    seen_at: str


@dataclass(frozen=True, slots=True)
class LogLine:
    at: str
    line: str


class Registry:
    """An open, checked ``ladder.sqlite``. Use :meth:`open` and :meth:`close`."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self.path = path

    @classmethod
    def open(cls, path: Path, *, read_only: bool = False) -> tuple[Registry, str | None]:
        """Open (creating) and check the registry; → it, and a warning line when a damaged
        file was moved aside (the caller re-registers the versions then)."""
        warning = None
        if read_only:
            uri = f"file:{path}?mode=ro"
            connection = sqlite3.connect(uri, uri=True, isolation_level=None)
            return cls(connection, path), None
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = _connect(path)
        except sqlite3.DatabaseError as error:
            moved = set_aside(path)
            warning = f"Warning: {path} is damaged ({error}); moved aside as {moved.name}, rebuilt"
            connection = _connect(path)
        return cls(connection, path), warning

    def close(self) -> None:
        self._connection.close()

    def _transaction(self, action: str) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return write_transaction(self._connection, self.path, action)

    # --- versions ----------------------------------------------------------------

    def versions(self) -> list[Version]:
        rows = self._connection.execute(
            "SELECT seq, entrant, version, player, manifest, state, reason, seen_at"
            " FROM versions ORDER BY seq"
        ).fetchall()
        return [
            Version(row[0], row[1], row[2], row[3], row[4], State(row[5]), row[6], row[7])
            for row in rows
        ]

    def add_version(self, entrant: str, version: str, player: str, manifest: str) -> bool:
        """Register a version seen complete, ``pending``; ``False`` if it was registered."""
        with self._transaction(f"register {player}") as db:
            cursor = db.execute(
                "INSERT INTO versions (entrant, version, player, manifest, state, seen_at)"
                " VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT (player) DO NOTHING",
                (entrant, version, player, manifest, timestamp()),
            )
            db.execute(
                "INSERT INTO entrants (name, changed_at) VALUES (?, ?)"
                " ON CONFLICT (name) DO NOTHING",
                (entrant, timestamp()),
            )
            return cursor.rowcount == 1

    def settle(self, player: str, state: State, reason: str = "", line: str | None = None) -> None:
        """End a version's check: ``active`` or ``refused`` (``reason``); ``line`` is logged
        in the same transaction."""
        with self._transaction(f"settle {player}") as db:
            db.execute(
                "UPDATE versions SET state = ?, reason = ?, checked_at = ? WHERE player = ?",
                (state.value, reason, timestamp(), player),
            )
            if line is not None:
                db.execute("INSERT INTO log (at, line) VALUES (?, ?)", (timestamp(), line))

    # --- entrants ----------------------------------------------------------------

    def retired(self) -> frozenset[str]:
        rows = self._connection.execute("SELECT name FROM entrants WHERE retired = 1")
        return frozenset(name for (name,) in rows)

    def set_retired(self, name: str, retired: bool, line: str) -> None:
        with self._transaction(f"retire {name}") as db:
            db.execute(
                "UPDATE entrants SET retired = ?, changed_at = ? WHERE name = ?",
                (int(retired), timestamp(), name),
            )
            db.execute("INSERT INTO log (at, line) VALUES (?, ?)", (timestamp(), line))

    # --- the log and the freeze ---------------------------------------------------

    def log(self, line: str) -> None:
        with self._transaction("log") as db:
            db.execute("INSERT INTO log (at, line) VALUES (?, ?)", (timestamp(), line))

    def log_lines(self, last: int = 50) -> list[LogLine]:
        rows = self._connection.execute(
            "SELECT at, line FROM log ORDER BY seq DESC LIMIT ?", (last,)
        ).fetchall()
        return [LogLine(*row) for row in reversed(rows)]

    def frozen(self) -> str | None:
        """When submissions were frozen (``referee ladder final``), or ``None``."""
        row = self._connection.execute("SELECT value FROM meta WHERE key = 'frozen'").fetchone()
        return None if row is None else row[0]

    def freeze(self) -> str:
        with self._transaction("freeze submissions") as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES ('frozen', ?) ON CONFLICT (key) DO NOTHING",
                (timestamp(),),
            )
        frozen = self.frozen()
        assert frozen is not None
        return frozen


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        (verdict,) = connection.execute("PRAGMA quick_check").fetchone()
        if verdict != "ok":
            raise sqlite3.DatabaseError(f"quick_check: {verdict}")
        for statement in _SCHEMA:
            connection.execute(statement)
    except BaseException:
        connection.close()
        raise
    return connection
