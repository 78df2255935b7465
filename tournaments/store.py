"""The results store of one tournament: an SQLite database and the PGN file it rebuilds.

The database is the truth. It holds a snapshot of the tournament's settings
(so a resumed run can check it is the same tournament) and one row per finished
game, keyed by the game's :attr:`~tournaments.pairings.Pairing.index`: its players
in seat order, its result, each seat's place and score, how it ended and its PGN
text (schema version 2: games of 1 to 5 seats). Each game is committed in its own
transaction, in WAL mode with full sync, so a process killed at any moment leaves
every game either wholly recorded or not at all.

A store of schema version 1 (two seats: ``white`` and ``black`` columns) is
upgraded in place, in one transaction, when it is opened for writing; opened
read-only, it is upgraded in a copy in memory and the file is left as it is.

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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from referee.errors import RefereeError, RefereeFault
from referee.pgn import MAX_SEATS, is_ranking, result_places, result_token
from tournaments.ratings import TableResult

DATABASE = "results.sqlite"
PGN = "games.pgn"
"""The names of the store and of its PGN copy in a tournament's output directory."""

SCHEMA_VERSION = 3
"""Stored in ``PRAGMA user_version``; a store written by a newer version is refused."""

_CONFIG_TABLE = """
CREATE TABLE config (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    hash TEXT NOT NULL,
    json TEXT NOT NULL,
    saved_at TEXT NOT NULL
)"""

_GAMES_TABLE = """
CREATE TABLE {name} (
    pairing INTEGER PRIMARY KEY CHECK (pairing >= 0),
    players TEXT NOT NULL,
    result TEXT NOT NULL CHECK (result <> '*'),
    places TEXT NOT NULL,
    scores TEXT NOT NULL,
    termination TEXT NOT NULL,
    reason TEXT NOT NULL,
    plies INTEGER NOT NULL CHECK (plies >= 0),
    pgn TEXT NOT NULL,
    finished_at TEXT NOT NULL
)"""
"""The games table; ``players``, ``places`` and ``scores`` hold JSON lists in seat order."""

_ATTEMPTS_TABLE = """
CREATE TABLE attempts (
    pairing INTEGER NOT NULL CHECK (pairing >= 0),
    attempt INTEGER NOT NULL CHECK (attempt >= 1),
    started_at TEXT NOT NULL,
    abandoned TEXT,
    PRIMARY KEY (pairing, attempt)
)"""
"""The attempts table: one row per attempt at a game, ``abandoned`` saying why it was
given up (``NULL`` while it is played, and for the attempt whose game is recorded)."""

_COLUMNS = {
    "config": ("id", "hash", "json", "saved_at"),
    "games": (
        "pairing",
        "players",
        "result",
        "places",
        "scores",
        "termination",
        "reason",
        "plies",
        "pgn",
        "finished_at",
    ),
    "attempts": ("pairing", "attempt", "started_at", "abandoned"),
}
"""The columns of each table, in order: a store with other tables or columns is damaged."""

_GAME_COLUMNS = ", ".join(_COLUMNS["games"])
_SUMMARY_COLUMNS = ", ".join("'' AS pgn" if c == "pgn" else c for c in _COLUMNS["games"])
"""The columns of a game without its PGN text (read for every game: the text is most of it)."""
_PLACEHOLDERS = ", ".join("?" * len(_COLUMNS["games"]))

_V1_GAME_COLUMNS = (
    "pairing",
    "white",
    "black",
    "result",
    "termination",
    "reason",
    "plies",
    "pgn",
    "finished_at",
)
"""The games table of schema version 1 (two seats), which a store is upgraded from."""

DUEL_SCORES: dict[tuple[int, ...], tuple[float, ...]] = {
    (1, 2): (1.0, 0.0),
    (2, 1): (0.0, 1.0),
    (1, 1): (0.5, 0.5),
}
"""The scores of a two-seat game scored as chess is (Ivy), by its places: every game of
a schema-1 store, and a game rebuilt from a record without a ``Scores`` tag."""

WAL_SUFFIXES = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database; they move with it when it is set aside."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt at the game of pairing ``index``: its number (from 1), when it started
    (ISO 8601), and why it was abandoned (``None``: being played, or the one recorded)."""

    index: int
    number: int
    started_at: str
    abandoned: str | None = None


class StoreError(RefereeError):
    """A results store cannot be used: another tournament's, a newer version's, not ours."""


class DamagedStore(StoreError):
    """A results store is damaged: not a database any more, failing SQLite's check, or
    holding other tables than ours. Its readable rows can be :func:`salvage`\\ d."""


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One finished game as stored: ``index`` is its pairing index, ``pgn`` its whole record.

    ``players``, ``places`` and ``scores`` are in seat order (1 to 5 seats): places
    1 best, ties sharing a place; scores in the game's unit (Ivy 1, ½ or 0; Verdant
    points). ``result`` is the record's ``Result`` (:func:`referee.pgn.result_token`
    of the places and scores); ``plies`` how many decisions the record holds.
    """

    index: int
    players: tuple[str, ...]
    result: str
    places: tuple[int, ...]
    scores: tuple[float, ...]
    termination: str
    reason: str
    plies: int
    pgn: str
    finished_at: str

    @classmethod
    def from_row(cls, row: Sequence[object]) -> GameRecord | None:
        """The record of a database row, or ``None`` when a column holds a value of the
        wrong type (the JSON lists included)."""
        if len(row) != len(_COLUMNS["games"]):
            return None
        index, plies = row[0], row[7]
        texts = [value for value in (*row[1:7], *row[8:]) if type(value) is str]
        if type(index) is not int or type(plies) is not int or len(texts) != 8:
            return None
        players, result, places, scores, termination, reason, pgn, finished_at = texts
        names, ranks, points = _strings(players), _whole_numbers(places), _numbers(scores)
        if names is None or ranks is None or points is None:
            return None
        return cls(
            index, names, result, ranks, points, termination, reason, plies, pgn, finished_at
        )


def _json_list(text: str) -> list[object] | None:
    """The JSON list ``text`` holds, or ``None``."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def _strings(text: str) -> tuple[str, ...] | None:
    """A JSON list of strings, or ``None``."""
    items = _json_list(text) or [None]
    kept = tuple(item for item in items if isinstance(item, str))
    return kept if len(kept) == len(items) else None


def _whole_numbers(text: str) -> tuple[int, ...] | None:
    """A JSON list of integers, or ``None``."""
    items = _json_list(text) or [None]
    kept = tuple(item for item in items if type(item) is int)
    return kept if len(kept) == len(items) else None


def _numbers(text: str) -> tuple[float, ...] | None:
    """A JSON list of numbers, as floats, or ``None``."""
    items = _json_list(text) or [None]
    kept = tuple(float(item) for item in items if type(item) is int or type(item) is float)
    return kept if len(kept) == len(items) else None


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


@contextlib.contextmanager
def write_transaction(
    connection: sqlite3.Connection, path: str | os.PathLike[str], action: str
) -> Iterator[sqlite3.Connection]:
    """One write transaction on the database at ``path``, committed when the block ends
    and rolled back on error. An SQLite failure (disk full, I/O error, damage found while
    writing) becomes a :class:`RefereeFault` saying ``action`` did not happen."""
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
            f"cannot {action} in {os.fspath(path)}: {error}; nothing of it was saved"
        ) from None


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
            elif _version(connection) < SCHEMA_VERSION:
                connection = _upgraded_copy(connection, path)
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

    def _transaction(self, action: str) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction (:func:`write_transaction`)."""
        return write_transaction(self._connection, self.path, action)

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
                (digest, config_json, timestamp()),
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
        players: Sequence[str],
        result: str,
        places: Sequence[int],
        scores: Sequence[float],
        termination: str,
        reason: str,
        plies: int,
        pgn: str,
        finished_at: str | None = None,
    ) -> bool:
        """Record the finished game of pairing ``index`` in one committed transaction.

        ``players``, ``places`` and ``scores`` are in seat order (see
        :class:`GameRecord`); ``result`` must be
        :func:`~referee.pgn.result_token` of the places and scores, else
        :class:`ValueError`. ``finished_at`` is an ISO 8601 time (default now, UTC).
        Returns ``False``, changing nothing, when that index is already recorded, so
        recording twice never duplicates a game. Raises :class:`RefereeFault` when
        the database cannot be written (disk full).
        """
        game = GameRecord(
            index,
            tuple(players),
            result,
            tuple(places),
            tuple(float(score) for score in scores),
            termination,
            reason,
            plies,
            pgn,
            finished_at or timestamp(),
        )
        return self.add(game)

    def add(self, game: GameRecord) -> bool:
        """Record ``game`` in one committed transaction, as :meth:`record` does."""
        _check_game(game)
        with self._transaction(f"record game {game.index + 1}") as db:
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

    def rows(self, *, pgn: bool = True) -> Iterator[tuple[int, GameRecord | None]]:
        """Every row in index order, one at a time: ``(index, record)``, the record
        ``None`` when a column holds a value of the wrong type (a damaged row); without
        ``pgn``, each record's ``pgn`` is empty."""
        columns = _GAME_COLUMNS if pgn else _SUMMARY_COLUMNS
        try:
            for row in self._connection.execute(f"SELECT {columns} FROM games ORDER BY pairing"):
                yield row[0], GameRecord.from_row(row)
        except sqlite3.Error as error:
            raise _open_error(self.path, error) from None

    def done_indices(self) -> set[int]:
        """The pairing indices of the games already recorded."""
        return {row[0] for row in self._connection.execute("SELECT pairing FROM games")}

    def count(self) -> int:
        """How many games are recorded."""
        return self._connection.execute("SELECT count(*) FROM games").fetchone()[0]

    def games(self, *, pgn: bool = True) -> list[GameRecord]:
        """Every recorded game, in pairing-index order (without ``pgn``: with its ``pgn``
        empty, which is much less to read)."""
        return [game for _, game in self.rows(pgn=pgn) if game is not None]

    def results(self) -> list[TableResult]:
        """The players, places and scores of every game in index order, ready for rating
        (a damaged row, which :mod:`tournaments.recovery` repairs first, is left out)."""
        games = self.games(pgn=False)
        return [TableResult(game.players, game.places, game.scores) for game in games]

    def backup(self, target: str | os.PathLike[str]) -> None:
        """Copy the whole database, consistently, to a new file at ``target``."""
        try:
            with contextlib.closing(sqlite3.connect(target)) as copy:
                self._connection.backup(copy)
        except sqlite3.Error as error:
            raise RefereeFault(f"cannot copy {self.path} to {target}: {error}") from None

    # --- attempts -----------------------------------------------------------------

    def start_attempt(self, index: int) -> int:
        """Note that a new attempt at the game of pairing ``index`` starts, in one committed
        transaction, before any of it is played; → its number (1, then one more than the
        last attempt noted, however that one ended)."""
        with self._transaction(f"note the start of game {index + 1}") as db:
            (last,) = db.execute(
                "SELECT coalesce(max(attempt), 0) FROM attempts WHERE pairing = ?", (index,)
            ).fetchone()
            db.execute(
                "INSERT INTO attempts (pairing, attempt, started_at) VALUES (?, ?, ?)",
                (index, last + 1, timestamp()),
            )
        return int(last) + 1

    def abandon_attempt(self, index: int, number: int, cause: str) -> None:
        """Note why attempt ``number`` at the game of pairing ``index`` was given up (unless
        a cause is noted already)."""
        with self._transaction(f"note the end of game {index + 1}") as db:
            db.execute(
                "UPDATE attempts SET abandoned = ?"
                " WHERE pairing = ? AND attempt = ? AND abandoned IS NULL",
                (cause, index, number),
            )

    def abandon_unfinished(self, cause: str) -> list[Attempt]:
        """Note ``cause`` on every attempt started and neither recorded nor abandoned (a run
        that ended while it was played), in one transaction; → those attempts, by game."""
        with self._transaction("note the games a run left unfinished") as db:
            rows = db.execute(
                "SELECT pairing, attempt, started_at FROM attempts WHERE abandoned IS NULL"
                " AND pairing NOT IN (SELECT pairing FROM games) ORDER BY pairing, attempt"
            ).fetchall()
            db.executemany(
                "UPDATE attempts SET abandoned = ? WHERE pairing = ? AND attempt = ?",
                ((cause, index, number) for index, number, _ in rows),
            )
        return [Attempt(index, number, started, cause) for index, number, started in rows]

    def attempts(self, index: int | None = None) -> list[Attempt]:
        """Every attempt noted (at the game of pairing ``index`` only, when given), by game
        and number."""
        where, arguments = ("WHERE pairing = ?", (index,)) if index is not None else ("", ())
        rows = self._connection.execute(
            f"SELECT {', '.join(_COLUMNS['attempts'])} FROM attempts {where}"
            " ORDER BY pairing, attempt",
            arguments,
        )
        return [attempt for row in rows if (attempt := _attempt(row)) is not None]

    def restore_attempts(self, attempts: Iterable[Attempt]) -> None:
        """Write ``attempts`` back (those of a damaged store), keeping any noted already."""
        with self._transaction("restore the attempts") as db:
            db.executemany(
                "INSERT INTO attempts (pairing, attempt, started_at, abandoned)"
                " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                ((a.index, a.number, a.started_at, a.abandoned) for a in attempts),
            )

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
        version = 0
        with contextlib.suppress(sqlite3.Error):
            version = _version(connection)
        columns, convert = (
            (_V1_GAME_COLUMNS, _row_from_v1) if version == 1 else (_COLUMNS["games"], tuple)
        )
        for order in ("ASC", "DESC"):
            with contextlib.suppress(sqlite3.Error):
                query = f"SELECT {', '.join(columns)} FROM games ORDER BY pairing {order}"
                for row in connection.execute(query):
                    game = GameRecord.from_row(convert(row))
                    if game is not None:
                        rows.setdefault(game.index, game)
    return config, [rows[index] for index in sorted(rows)]


def salvage_attempts(path: str | os.PathLike[str]) -> list[Attempt]:
    """The attempts still readable in a damaged store (none from one of an older schema),
    so that a store rebuilt from it never plays an attempt again under a used seed."""
    try:
        connection = _connect(Path(path), read_only=True)
    except StoreError:
        return []
    found: dict[tuple[int, int], Attempt] = {}
    with contextlib.closing(connection):
        for order in ("ASC", "DESC"):
            with contextlib.suppress(sqlite3.Error):
                query = (
                    f"SELECT {', '.join(_COLUMNS['attempts'])} FROM attempts"
                    f" ORDER BY pairing {order}, attempt {order}"
                )
                for row in connection.execute(query):
                    if (attempt := _attempt(row)) is not None:
                        found.setdefault((attempt.index, attempt.number), attempt)
    return [found[key] for key in sorted(found)]


def _attempt(row: Sequence[object]) -> Attempt | None:
    """The attempt of a database row, or ``None`` when a value has the wrong type."""
    index, number, started, abandoned = row
    if type(index) is not int or type(number) is not int or type(started) is not str:
        return None
    if abandoned is not None and type(abandoned) is not str:
        return None
    return Attempt(index, number, started, abandoned)


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


def _version(connection: sqlite3.Connection) -> int:
    """The schema version the database says it has (0: none yet)."""
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    return version


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Create the tables in a new database, or upgrade one of schema version 1, in one
    transaction; refuse a database that is not ours."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = _version(connection)
        if version == 0:
            if connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise StoreError(f"{path} is an SQLite database but not a tournament's results")
            connection.execute(_CONFIG_TABLE)
            connection.execute(_GAMES_TABLE.format(name="games"))
            connection.execute(_ATTEMPTS_TABLE)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        elif version < SCHEMA_VERSION:
            if version == 1:
                _upgrade_from_1(connection, path)
            _upgrade_from_2(connection, path)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _upgrade_from_1(connection: sqlite3.Connection, path: Path) -> None:
    """Rewrite the games of a schema-1 store (two seats, ``white``/``black``) as schema 2,
    inside the caller's transaction.

    The store is checked first as :func:`_check` checks one of version 2, so that
    damage is reported as damage and not migrated. Each row keeps its values; a row
    whose values have the wrong types stays one that :meth:`GameRecord.from_row`
    refuses, to be repaired by :mod:`tournaments.recovery` like any damaged row.
    """
    _check_integrity(connection, path)
    _check_tables(connection, path, {"config": _COLUMNS["config"], "games": _V1_GAME_COLUMNS})
    connection.execute(_GAMES_TABLE.format(name="games_v2"))
    rows = connection.execute(f"SELECT {', '.join(_V1_GAME_COLUMNS)} FROM games")
    connection.executemany(
        f"INSERT INTO games_v2 ({_GAME_COLUMNS}) VALUES ({_PLACEHOLDERS})",
        (_row_from_v1(row) for row in rows.fetchall()),
    )
    connection.execute("DROP TABLE games")
    connection.execute("ALTER TABLE games_v2 RENAME TO games")


def _upgrade_from_2(connection: sqlite3.Connection, path: Path) -> None:
    """Add the attempts table to a schema-2 store (none noted: its games in progress,
    if any, were played with the seeds of first attempts), inside the caller's
    transaction, after the same checks as :func:`_upgrade_from_1`'s."""
    _check_integrity(connection, path)
    _check_tables(connection, path, {"config": _COLUMNS["config"], "games": _COLUMNS["games"]})
    connection.execute(_ATTEMPTS_TABLE)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _row_from_v1(row: Sequence[object]) -> tuple[object, ...]:
    """A schema-1 games row as a schema-2 one: ``[white, black]``, places and scores from
    the result. Values of the wrong type are kept as they are (the row stays damaged)."""
    pairing, white, black, result, termination, reason, plies, pgn, finished_at = row
    players: object = white
    places: object = result
    scores: object = result
    if isinstance(white, str) and isinstance(black, str):
        players = json.dumps([white, black], ensure_ascii=False)
    ranks = result_places(result, 2) if isinstance(result, str) else None
    if ranks is not None:
        places = json.dumps(ranks)
        scores = json.dumps(DUEL_SCORES[ranks])
    return (pairing, players, result, places, scores, termination, reason, plies, pgn, finished_at)


def _upgraded_copy(connection: sqlite3.Connection, path: Path) -> sqlite3.Connection:
    """An in-memory copy of an older store opened read-only, upgraded: the file is
    left as it is (it may lie in a read-only directory)."""
    copy = sqlite3.connect(":memory:", isolation_level=None)
    try:
        connection.backup(copy)
        _migrate(copy, path)
    except BaseException:
        copy.close()
        raise
    finally:
        connection.close()
    return copy


def _check(connection: sqlite3.Connection, path: Path) -> None:
    """SQLite's quick check, then our version and schema (raises on any difference)."""
    version = _version(connection)
    if version > SCHEMA_VERSION:
        raise StoreError(f"{path} was written by a newer version of the referee")
    tables = {
        name
        for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if version == 0 and tables:
        raise StoreError(f"{path} is an SQLite database but not a tournament's results")
    _check_integrity(connection, path)
    if version != SCHEMA_VERSION:
        raise DamagedStore(f"{path} is damaged (its tables are not a results store's)")
    _check_tables(connection, path, _COLUMNS)


def _check_integrity(connection: sqlite3.Connection, path: Path) -> None:
    """SQLite's quick check (:class:`DamagedStore` when it finds a problem)."""
    problems = [row[0] for row in connection.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        raise DamagedStore(f"{path} is damaged (SQLite's check: {'; '.join(problems)})")


def _check_tables(
    connection: sqlite3.Connection, path: Path, columns: dict[str, tuple[str, ...]]
) -> None:
    """:class:`DamagedStore` unless the database has exactly these tables and columns."""
    tables = {
        name
        for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if tables != set(columns):
        raise DamagedStore(f"{path} is damaged (its tables are not a results store's)")
    for table, expected in columns.items():
        found = tuple(row[1] for row in connection.execute(f"PRAGMA table_info({table})"))
        if found != expected:
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
    seats = len(game.players)
    if not 1 <= seats <= MAX_SEATS or len(game.places) != seats or len(game.scores) != seats:
        raise ValueError(
            f"a game has 1 to {MAX_SEATS} seats, each with a player, a place and a score"
        )
    if not is_ranking(game.places):
        raise ValueError(f"places {game.places} are not places (1 best, ties share)")
    expected = result_token(game.places, game.scores)
    if game.result != expected:
        raise ValueError(
            f"result must be {expected} for these places and scores, not {game.result!r}"
        )
    if not game.pgn.strip():
        raise ValueError("the game's PGN is empty")
    if game.index < 0 or game.plies < 0:
        raise ValueError("a game's index and turn count cannot be negative")


def _insert(connection: sqlite3.Connection, game: GameRecord) -> int:
    """Insert ``game`` unless its index is recorded; how many rows were written (0 or 1)."""
    cursor = connection.execute(
        f"INSERT INTO games ({_GAME_COLUMNS}) VALUES ({_PLACEHOLDERS})"
        " ON CONFLICT (pairing) DO NOTHING",
        (
            game.index,
            json.dumps(game.players, ensure_ascii=False),
            game.result,
            json.dumps(game.places),
            json.dumps(game.scores),
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


def timestamp() -> str:
    """The current time, UTC, as ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")
