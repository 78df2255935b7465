"""The results store of one tournament: an SQLite database and the PGN file it rebuilds.

The database is the truth. It holds a snapshot of the tournament's settings
(so a resumed run can check it is the same tournament) and one row per finished
game, keyed by the game's :attr:`~tournaments.pairings.Pairing.index`; each game
is committed in its own transaction, in WAL mode with full sync, so a process
killed at any moment leaves every game either wholly recorded or not at all.

:meth:`ResultStore.open` checks the file before using it: SQLite's own
``quick_check``, then the schema. A file that fails raises :class:`DamagedStore`
(the caller may :func:`salvage` its readable rows and :func:`set_aside` the file);
a database of another kind, or of a newer version, raises :class:`StoreError`.
Whether each row is a true game of the tournament is checked one level up
(:mod:`tournaments.recovery`), where the schedule and the rules are known.

The tournament's PGN file is a copy for PGN tools. After each recorded game the
runner appends it with :func:`append_pgn` (the fast path); a kill during that
append can leave half a game at the end, and a kill between the commit and the
append leaves a game out. :meth:`ResultStore.sync_pgn` rewrites the whole file
from the database atomically (temporary file, fsync, ``os.replace``).

A write that fails for want of disk space (or any other failure of the referee's
own resources) raises :class:`~referee.errors.RefereeFault` with one line: the
game it was writing is either wholly in the database or not at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from referee.errors import RefereeError, RefereeFault

DATABASE = "results.sqlite"
PGN = "games.pgn"
"""The names of the store and of its PGN copy in a tournament's output directory."""

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

_COLUMNS = {
    "config": ("id", "hash", "json", "saved_at"),
    "games": (
        "pairing",
        "white",
        "black",
        "result",
        "termination",
        "reason",
        "plies",
        "pgn",
        "finished_at",
    ),
}
"""The columns of each table, in order: a store with other tables or columns is damaged."""

_GAME_COLUMNS = ", ".join(_COLUMNS["games"])

WAL_SUFFIXES = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database; they move with it when it is set aside."""


class StoreError(RefereeError):
    """A results store cannot be used: another tournament's, a newer version's, not ours."""


class DamagedStore(StoreError):
    """A results store is damaged: not a database any more, failing SQLite's check, or
    holding other tables than ours. Its readable rows can be :func:`salvage`\\ d."""


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

    @classmethod
    def from_row(cls, row: tuple[object, ...]) -> GameRecord | None:
        """The record of a database row, or ``None`` when a column has the wrong type."""
        kinds = (int, str, str, str, str, str, int, str, str)
        if len(row) != len(kinds) or not all(
            type(value) is kind for value, kind in zip(row, kinds, strict=True)
        ):
            return None
        return cls(*row)  # type: ignore[arg-type]


def check_same_settings(saved_json: str, config_json: str, directory: Path) -> None:
    """Raise :class:`StoreError` when the settings saved for the tournament in ``directory``
    differ from ``config_json``, naming the top-level keys that differ."""
    if config_hash(saved_json) != config_hash(config_json):
        raise StoreError(
            f"the tournament in {directory} was started with other settings"
            f"{_differences(saved_json, config_json)}; resume it with the same settings"
            " or use a new output directory"
        )


def config_hash(config_json: str) -> str:
    """The SHA-256 of the settings as canonical JSON (key order and spacing do not matter)."""
    return hashlib.sha256(_canonical(config_json).encode()).hexdigest()


def _canonical(config_json: str) -> str:
    """``config_json`` re-encoded with sorted keys and no spaces (``ValueError`` if not JSON)."""
    return json.dumps(
        json.loads(config_json), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


class ResultStore:
    """An open, checked results database. Use :meth:`open`, and :meth:`close` (or ``with``).

    Calls are synchronous and short (one transaction each); the trio runner
    makes them directly from its event loop, with no checkpoint in between, so
    cancellation cannot cut one in half.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path, *, read_only: bool) -> None:
        """Wrap an open, checked connection; see :meth:`open`."""
        self._connection = connection
        self.path = path
        self.read_only = read_only

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, read_only: bool = False) -> ResultStore:
        """Open and check the database file at ``path``.

        Creates it (and its folder) when missing, unless ``read_only``: then the
        file must exist, and is opened without writing anything beside it (for a
        tournament in a read-only directory). Raises :class:`DamagedStore` when
        the file fails the check and :class:`StoreError` when it is not ours.
        """
        path = Path(path)
        connection = _connect(path, read_only=read_only)
        try:
            if not read_only:
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("PRAGMA synchronous = FULL")
                _migrate(connection, path)
            _check(connection, path)
        except sqlite3.Error as error:
            connection.close()
            raise _open_error(path, error) from None
        except BaseException:
            connection.close()
            raise
        return cls(connection, path, read_only=read_only)

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
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed when the block ends and rolled back on error.

        An SQLite failure (disk full, I/O error, damage found while writing)
        becomes a :class:`RefereeFault` saying ``action`` did not happen.
        """
        connection = self._connection
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        except sqlite3.Error as error:
            with contextlib.suppress(sqlite3.Error):
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
            raise RefereeFault(
                f"cannot {action} in {self.path}: {error}; nothing of it was saved"
            ) from None

    # --- settings ---------------------------------------------------------------

    def check_config(self, config_json: str) -> bool:
        """Whether settings are saved; :class:`StoreError` when they differ from ``config_json``.

        Two JSON texts that decode to the same value match; the message names the
        top-level keys that differ when both are JSON objects.
        """
        saved = self.saved_config()
        if saved is None:
            return False
        check_same_settings(saved, config_json, self.path.parent)
        return True

    def save_config(self, config_json: str) -> None:
        """Save the tournament's settings, unless some are saved already (check those first)."""
        digest = config_hash(config_json)
        with self._transaction("save the settings") as db:
            db.execute(
                "INSERT INTO config (id, hash, json, saved_at) VALUES (1, ?, ?, ?)"
                " ON CONFLICT (id) DO NOTHING",
                (digest, config_json, _now()),
            )

    def check_or_save_config(self, config_json: str) -> None:
        """:meth:`check_config`, then :meth:`save_config` when nothing was saved yet."""
        if not self.check_config(config_json):
            self.save_config(config_json)

    def saved_config(self) -> str | None:
        """The settings saved by :meth:`save_config`, as given, or ``None``."""
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
        Raises :class:`RefereeFault` when the database cannot be written (disk full).
        """
        game = GameRecord(
            index, white, black, result, termination, reason, plies, pgn, finished_at or _now()
        )
        _check_game(game)
        with self._transaction(f"record game {index + 1}") as db:
            return _insert(db, game) == 1

    def replace_games(self, games: Iterable[GameRecord], *, remove: Iterable[int] = ()) -> None:
        """In one transaction: delete the games of ``remove``, then write ``games``
        (each replacing the row of its index, if any)."""
        with self._transaction("repair the results") as db:
            db.executemany("DELETE FROM games WHERE pairing = ?", ((i,) for i in remove))
            for game in games:
                _check_game(game)
                db.execute("DELETE FROM games WHERE pairing = ?", (game.index,))
                _insert(db, game)

    def game(self, index: int) -> GameRecord | None:
        """The recorded game of pairing ``index``, or ``None``."""
        row = self._connection.execute(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE pairing = ?", (index,)
        ).fetchone()
        return None if row is None else GameRecord.from_row(row)

    def rows(self) -> Iterator[tuple[int, GameRecord | None]]:
        """Every row in index order, one at a time: ``(index, record)``, the record
        ``None`` when a column holds a value of the wrong type (a damaged row)."""
        try:
            for row in self._connection.execute(
                f"SELECT {_GAME_COLUMNS} FROM games ORDER BY pairing"
            ):
                yield row[0], GameRecord.from_row(row)
        except sqlite3.Error as error:
            raise _open_error(self.path, error) from None

    def done_indices(self) -> set[int]:
        """The pairing indices of the games already recorded."""
        return {row[0] for row in self._connection.execute("SELECT pairing FROM games")}

    def count(self) -> int:
        """How many games are recorded."""
        return self._connection.execute("SELECT count(*) FROM games").fetchone()[0]

    def games(self) -> list[GameRecord]:
        """Every recorded game, in pairing-index order."""
        return [game for _, game in self.rows() if game is not None]

    def results(self) -> list[tuple[str, str, float]]:
        """``(white, black, white_score)`` of every game in index order, ready for rating."""
        rows = self._connection.execute(
            "SELECT white, black, result FROM games ORDER BY pairing"
        ).fetchall()
        return [(white, black, RESULTS[result]) for white, black, result in rows]

    def backup(self, target: str | os.PathLike[str]) -> None:
        """Copy the whole database, consistently, to a new file at ``target``."""
        try:
            with contextlib.closing(sqlite3.connect(target)) as copy:
                self._connection.backup(copy)
        except sqlite3.Error as error:
            raise RefereeFault(f"cannot copy {self.path} to {target}: {error}") from None

    # --- the PGN file -------------------------------------------------------------

    def sync_pgn(self, path: str | os.PathLike[str]) -> int:
        """Rewrite the PGN file at ``path`` from the database, atomically; returns the game count.

        The games are written in index order to ``<path>.partial``, flushed to
        disk and renamed over ``path``, so a kill at any moment leaves either the
        old file or the new one. Raises :class:`RefereeFault` when it cannot be
        written (the old file is then left as it was).
        """
        target = Path(path)
        partial = target.with_name(target.name + ".partial")
        count = 0
        try:
            with open(partial, "w", encoding="utf-8", newline="\n") as out:
                for (pgn,) in self._connection.execute("SELECT pgn FROM games ORDER BY pairing"):
                    out.write(_pgn_block(pgn))
                    count += 1
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, target)
        except OSError as error:
            with contextlib.suppress(OSError):
                partial.unlink()
            raise RefereeFault(
                f"cannot rewrite {target}: {error.strerror or error}; every game is kept in"
                f" {self.path}: free some space and run again to rewrite it"
            ) from None
        _fsync_directory(target.parent)
        return count


def append_pgn(path: str | os.PathLike[str], pgn_text: str) -> None:
    """Append one game to the PGN file at ``path`` and flush it to disk.

    Games are separated by one blank line, exactly as :meth:`ResultStore.sync_pgn`
    writes them. Call it after :meth:`ResultStore.record` has committed the game.
    Raises :class:`RefereeFault` when the file cannot be written (disk full).
    """
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as out:
            out.write(_pgn_block(pgn_text))
            out.flush()
            os.fsync(out.fileno())
    except OSError as error:
        raise RefereeFault(
            f"cannot append a game to {os.fspath(path)}: {error.strerror or error}"
        ) from None


def pgn_blocks(games: Iterable[str]) -> Iterator[str]:
    """Games' PGN texts as they go into the PGN file (see :func:`append_pgn`)."""
    return map(_pgn_block, games)


def _pgn_block(pgn_text: str) -> str:
    """One game as it goes into the PGN file: trimmed, then a blank line."""
    return pgn_text.strip() + "\n\n"


# --- damaged stores --------------------------------------------------------------


def salvage(path: str | os.PathLike[str]) -> tuple[str | None, list[GameRecord]]:
    """What can still be read from a damaged store: its settings and its games.

    The file is opened read-only and read twice, forwards and backwards by
    index, keeping every row read before an error stops a pass; rows with
    values of the wrong type are left out. Nothing is checked beyond that.
    """
    path = Path(path)
    try:
        connection = _connect(path, read_only=True)
    except StoreError:
        return None, []
    rows: dict[int, GameRecord] = {}
    config: str | None = None
    with contextlib.closing(connection):
        with contextlib.suppress(sqlite3.Error):
            row = connection.execute("SELECT json FROM config WHERE id = 1").fetchone()
            if row is not None and isinstance(row[0], str):
                config = row[0]
        for order in ("ASC", "DESC"):
            with contextlib.suppress(sqlite3.Error):
                query = f"SELECT {_GAME_COLUMNS} FROM games ORDER BY pairing {order}"
                for row in connection.execute(query):
                    game = GameRecord.from_row(row)
                    if game is not None:
                        rows.setdefault(game.index, game)
    return config, [rows[index] for index in sorted(rows)]


def damaged_name(path: Path) -> Path:
    """``<path>.damaged-N`` for the first N that no file (or SQLite companion) uses."""
    for number in itertools.count(1):
        target = path.with_name(f"{path.name}.damaged-{number}")
        if not any(Path(f"{target}{suffix}").exists() for suffix in ("", *WAL_SUFFIXES)):
            return target
    raise AssertionError("unreachable")


def set_aside(path: str | os.PathLike[str]) -> Path:
    """Rename a (damaged) file to ``<name>.damaged-N`` for the first free N; returns the new path.

    A database's companion files (``-wal``, ``-shm``, ``-journal``) move with it
    and keep SQLite's naming, so the copy still opens with its journal.
    """
    path = Path(path)
    target = damaged_name(path)
    try:
        for suffix in WAL_SUFFIXES:
            companion = Path(f"{path}{suffix}")
            if companion.exists():
                os.rename(companion, f"{target}{suffix}")
        if path.exists():
            os.rename(path, target)
    except OSError as error:
        raise RefereeFault(f"cannot move {path} aside: {error.strerror or error}") from None
    _fsync_directory(path.parent)
    return target


# --- SQLite ------------------------------------------------------------------------


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """A connection to ``path`` (created when missing unless ``read_only``)."""
    try:
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, isolation_level=None)
        else:
            connection = _connect_read_only(path)
    except sqlite3.Error as error:
        if read_only and not path.is_file():
            raise StoreError(f"cannot open results database {path}: {error}") from None
        raise _open_error(path, error) from None
    except OSError as error:
        raise StoreError(
            f"cannot open results database {path}: {error.strerror or error}"
        ) from None
    connection.execute("PRAGMA busy_timeout = 5000")
    return connection


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that writes nothing beside the file.

    SQLite needs to create a ``-shm`` file to read a WAL database; where it
    cannot (a read-only directory) and no ``-wal`` holds unsaved pages, the
    file is opened as immutable: nobody can write to it there.
    """
    if not path.is_file():
        raise sqlite3.OperationalError("no such file")
    uri = path.resolve().as_uri()
    connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        connection.close()
        if Path(f"{path}-wal").exists():
            raise
        connection = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)
    except BaseException:
        connection.close()
        raise
    return connection


_DAMAGE = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's answers that mean the file itself is damaged (or was never a database)."""


def _open_error(path: Path, error: sqlite3.Error) -> RefereeError:
    """What opening ``path`` failing with ``error`` means: damage in the file, or a failure
    of the referee's own resources (disk full, I/O, memory), which must not be taken for
    damage: a good store would be set aside."""
    if getattr(error, "sqlite_errorcode", None) in _DAMAGE:
        return DamagedStore(f"{path} is damaged ({error})")
    return RefereeFault(f"cannot open results database {path}: {error}")


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Create the tables in a new database; refuse a database that is not ours."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
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


def _check(connection: sqlite3.Connection, path: Path) -> None:
    """SQLite's quick check, then our version and schema (raises on any difference)."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(f"{path} was written by a newer version of the referee")
    tables = {
        name
        for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if version == 0 and tables:
        raise StoreError(f"{path} is an SQLite database but not a tournament's results")
    problems = [row[0] for row in connection.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        raise DamagedStore(f"{path} is damaged (SQLite's check: {'; '.join(problems)})")
    if version != SCHEMA_VERSION or tables != set(_COLUMNS):
        raise DamagedStore(f"{path} is damaged (its tables are not a results store's)")
    for table, columns in _COLUMNS.items():
        found = tuple(row[1] for row in connection.execute(f"PRAGMA table_info({table})"))
        if found != columns:
            raise DamagedStore(f"{path} is damaged (table {table} has other columns)")


def storable(game: GameRecord) -> bool:
    """Whether the schema holds ``game`` (a result, a PGN text, no negative numbers)."""
    try:
        _check_game(game)
    except ValueError:
        return False
    return True


def _check_game(game: GameRecord) -> None:
    """Refuse a record the schema would not hold (:class:`ValueError`)."""
    if game.result not in RESULTS:
        raise ValueError(f"result must be one of {', '.join(RESULTS)}, not {game.result!r}")
    if not game.pgn.strip():
        raise ValueError("the game's PGN is empty")
    if game.index < 0 or game.plies < 0:
        raise ValueError("a game's index and turn count cannot be negative")


def _insert(connection: sqlite3.Connection, game: GameRecord) -> int:
    """Insert ``game`` unless its index is recorded; how many rows were written (0 or 1)."""
    cursor = connection.execute(
        f"INSERT INTO games ({_GAME_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (pairing) DO NOTHING",
        (
            game.index,
            game.white,
            game.black,
            game.result,
            game.termination,
            game.reason,
            game.plies,
            game.pgn,
            game.finished_at,
        ),
    )
    return cursor.rowcount


def _fsync_directory(directory: Path) -> None:
    """Flush a directory entry (a rename) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


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
