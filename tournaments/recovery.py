"""A tournament's records checked at every start, and repaired without losing a game.

The results store is the truth and ``games.pgn`` its copy, but either can lose
games or be damaged: a kill between a commit and the PGN append, a store deleted,
truncated or left without its WAL, a disk that filled up, a file edited by hand.
:func:`open_records` opens the store of a tournament and reconciles the two:

- every row of the store is judged: its players (in seat order), round, event,
  game, time control, seed and number must be those of its pairing in the schedule
  (for a Swiss or knockout, the pairings that the stored games imply: round 1's,
  then each round that the games of the rounds before it pair, as the run does),
  its columns (result, places, scores, termination, decisions) must agree with its
  PGN text, and its decisions must replay to its result under the rules
  (:func:`referee.replay.verify`); the PGN file, when it holds exactly the store's
  games (the usual case, checked byte for byte), needs nothing more, and otherwise
  each of its games is judged the same way;
- a true game found in either file is kept: games only the PGN holds are added to
  the store (a missing store is rebuilt from the PGN, a damaged one from its
  readable rows and the PGN); a damaged row is restored from the PGN's copy, or
  dropped so that the game is played again;
- the PGN is rewritten from the store only when it lacks games, ends in half a
  game, or holds a game that is not a true game of the tournament, so a rewrite
  never drops a true game;
- nothing damaged is deleted: a damaged store is moved (or copied) aside as
  ``results.sqlite.damaged-N``, a PGN holding damaged games as
  ``games.pgn.damaged-N``, and each repair is reported as one line.

It refuses (:class:`~tournaments.store.StoreError`, one line) what it cannot
decide: settings that differ from the stored ones, a PGN of another tournament,
and a game recorded differently, but validly, in the two files.

A game of a tournament carries its 1-based number in the schedule in a
``[GameNumber "7"]`` tag (:func:`numbered`), which ties its PGN copy to its row, and,
when it was played again, the number of its attempt in an ``[Attempt "2"]`` tag (its
``Seed`` must then be that attempt's). Each run first notes, as abandoned, the attempts
an earlier run started and never recorded (it was killed, crashed or stopped): a
game's next attempt is always a new one, with a seed no attempt before it used.
A row rebuilt from a PGN game takes its players from the seat tags
(:func:`referee.pgn.seat_players`), its places from the result and its scores from
the ``Scores`` tag, or, without one, 1, ½ and 0 for two seats and 0 otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from referee.errors import RecordError, RefereeFault
from referee.games import game_seed
from referee.pgn import (
    ATTEMPT_TAG,
    PgnError,
    format_game,
    iter_pgn_file,
    read_games,
    result_places,
    seat_players,
    tagged_attempt,
    tagged_scores,
)
from referee.pgn import GameRecord as PgnRecord
from referee.replay import verify
from tournaments.config import TournamentConfig
from tournaments.knockout import Knockout
from tournaments.pairings import Pairing
from tournaments.store import (
    DATABASE,
    DUEL_SCORES,
    PGN,
    DamagedStore,
    GameRecord,
    ResultStore,
    StoreError,
    check_same_settings,
    damaged_name,
    pgn_blocks,
    salvage,
    salvage_attempts,
    set_aside,
    storable,
)
from tournaments.swiss import Finished, Swiss

NUMBER_TAG = "GameNumber"
"""The PGN tag holding a tournament game's 1-based number in the schedule."""

_ANNOTATION = re.compile(r"^\s*(?:\[%[^\]]*\]\s*)*")


UNFINISHED = "the run ended before it was recorded (killed, crashed or stopped)"
"""The cause noted at the next start for an attempt its run started and never recorded
nor abandoned itself."""


def numbered(record: PgnRecord, index: int, attempt: int = 1) -> PgnRecord:
    """``record`` with the :data:`NUMBER_TAG` of the game of pairing ``index`` and, from
    the second attempt on, the :data:`~referee.pgn.ATTEMPT_TAG` of ``attempt``."""
    tags = {**record.tags, NUMBER_TAG: str(index + 1)}
    if attempt > 1:
        tags[ATTEMPT_TAG] = str(attempt)
    return PgnRecord(tags=tags, turns=record.turns, result=record.result, comment=record.comment)


def open_records(
    config: TournamentConfig, *, read_only: bool = False
) -> tuple[ResultStore, tuple[str, ...]]:
    """Open the tournament's store, checked and reconciled with its PGN (see the module).

    Returns the open store and one line per repair made. With ``read_only``
    nothing is written: a store or PGN that needs a repair the store would
    have to take raises :class:`StoreError`, a PGN that merely lags is left.
    """
    database = config.output / DATABASE
    existed = database.exists()
    try:
        return _reconciled(config, ResultStore.open(database, read_only=read_only), existed)
    except DamagedStore as damage:
        if read_only:
            raise StoreError(
                f"{damage}; make {config.output} writable and run again to rebuild it from {PGN}"
            ) from None
        return _rebuilt(config, damage)


def _reconciled(
    config: TournamentConfig,
    store: ResultStore,
    store_existed: bool,
    *,
    kept_aside: Path | None = None,
    notes: tuple[str, ...] = (),
) -> tuple[ResultStore, tuple[str, ...]]:
    """``store``, reconciled (see :class:`_Reconciler`), with ``notes`` and the repairs made;
    the store is closed again when that fails."""
    try:
        reconciler = _Reconciler(config, store, read_only=store.read_only, kept_aside=kept_aside)
        return store, (*notes, *reconciler.run(store_existed=store_existed))
    except BaseException:
        store.close()
        raise


def _rebuilt(config: TournamentConfig, damage: DamagedStore) -> tuple[ResultStore, tuple[str, ...]]:
    """A new store in place of a damaged one: its readable rows, then the PGN's games."""
    database = config.output / DATABASE
    saved, salvaged = salvage(database)
    if saved is not None:
        check_same_settings(saved, config.to_json(), config.output)
    kept_aside = set_aside(database)
    note = (
        f"{damage}: moved it to {kept_aside.name} and rebuilt it from the"
        f" {_games(len(salvaged))} still readable in it and from {PGN}"
    )
    attempts = salvage_attempts(database)
    store = ResultStore.open(database)
    try:
        store.replace_games(game for game in salvaged if storable(game))
        store.restore_attempts(attempts)
    except BaseException:
        store.close()
        raise
    return _reconciled(config, store, False, kept_aside=kept_aside, notes=(note,))


@dataclass(slots=True)
class _Pgn:
    """What the PGN file holds, judged game by game."""

    games: int = 0
    fitting: int = 0
    foreign: list[str] = field(default_factory=list)
    """Why games that are not of this tournament's schedule are not (a subset of damaged)."""
    seen: set[int] = field(default_factory=set)
    missing_from_store: dict[int, tuple[PgnRecord, int]] = field(default_factory=dict)
    damaged: list[str] = field(default_factory=list)
    duplicates: int = 0
    torn: bool = False


class _Reconciler:
    """One check of a tournament's store against its schedule, the rules and its PGN."""

    def __init__(
        self,
        config: TournamentConfig,
        store: ResultStore,
        *,
        read_only: bool,
        kept_aside: Path | None,
    ) -> None:
        self.config = config
        self.store = store
        self.read_only = read_only
        self.kept_aside = kept_aside
        self.bracket = config.bracket()
        self.schedule = config.schedule() if self.bracket is None else None
        self.implied: dict[int, Pairing] = {}
        """A Swiss's or knockout's pairings by game number, as the stored games imply them."""
        if self.bracket is not None:
            rows = (row for _, row in store.rows() if row is not None)
            self.implied = _implied_pairings(self.bracket, rows)
        self.pgn_path = config.output / PGN
        self._by_digest: dict[int, int] | None = None
        self.good: dict[int, int] = {}
        """Indices of the true games in the store, with the :func:`_digest` of their PGN."""
        self._blocks: Counter[int] = Counter()
        """The hashes of the true games' texts as the PGN file holds them."""

    def run(self, *, store_existed: bool) -> list[str]:
        """Check, repair, and say what was repaired (one line each)."""
        config_json = self.config.to_json()
        has_config = self.store.check_config(config_json)
        bad = self._judge_rows()
        if not bad and self._pgn_is_the_store():
            pgn = _Pgn(seen=set(self.good))
        else:
            pgn = self._judge_pgn()
        if pgn.foreign and not pgn.fitting and not self.good:
            raise StoreError(
                f"{self.pgn_path} holds no game of this tournament ({pgn.foreign[0]}); use"
                f" another output directory, or move {PGN} away to start the tournament afresh"
            )
        notes: list[str] = []
        if bad or pgn.missing_from_store:
            if self.read_only:
                first = next(iter(bad.items()), None)
                what = (
                    f"game {first[0] + 1} in {DATABASE} is damaged ({first[1]})"
                    if first is not None
                    else f"{len(pgn.missing_from_store)} games of {PGN} are not in {DATABASE}"
                )
                raise StoreError(
                    f"{what}; make {self.config.output} writable and run again to repair it"
                )
            notes += self._repair_store(bad, pgn, store_existed)
        if self.read_only:
            return notes
        if self.good and not has_config:
            self.store.save_config(config_json)  # the store holds games of these settings
        for lost in self.store.abandon_unfinished(UNFINISHED):
            notes.append(
                f"game {lost.index + 1}: attempt {lost.number} (started {lost.started_at}) was"
                f" abandoned: {UNFINISHED}; it is played again as attempt {lost.number + 1}"
            )
        if pgn.torn or pgn.damaged or pgn.duplicates or set(self.good) - pgn.seen:
            notes += self._rewrite_pgn(pgn)
        return notes

    # --- judging --------------------------------------------------------------------

    def _judge_rows(self) -> dict[int, str]:
        """Judge every row; fills :attr:`good` and returns the damaged rows with why."""
        bad: dict[int, str] = {}
        for index, row in self.store.rows():
            if row is None:
                bad[index] = "a column holds a value of the wrong type"
                continue
            problem, digest = self._row_problem(row)
            if problem is None:
                self.good[index] = digest
                self._blocks[hash(next(pgn_blocks([row.pgn])).encode())] += 1
            else:
                bad[index] = problem
        return bad

    def _pgn_is_the_store(self) -> bool:
        """Whether the PGN file holds exactly the store's games, each once and whole, in any
        order: then it needs no judging of its own (found by hashing its bytes, game by game)."""
        found: Counter[int] = Counter()
        for block in _raw_games(self.pgn_path):
            found[hash(block)] += 1
        return found == self._blocks

    def _row_problem(self, row: GameRecord) -> tuple[str | None, int]:
        """Why ``row`` is not a true game of the tournament (``None`` if it is), and its digest."""
        pairing = self._pairing(row.index)
        if pairing is None:
            return f"the schedule has no game {row.index + 1}", 0
        if row.players != pairing.players:
            return f"its players are {' - '.join(row.players)}", 0
        entries = list(read_games(row.pgn))
        if len(entries) != 1 or isinstance(entries[0], PgnError):
            return "its PGN text is not one readable game", 0
        record = entries[0]
        problem = self._record_problem(pairing, record)
        if problem is None:
            columns = (row.result, row.places, row.termination, row.plies)
            places = result_places(record.result, len(pairing.players))
            recorded = (record.result, places, record.tags.get("Termination"), len(record.turns))
            scores = tagged_scores(record.tags)
            if columns != recorded or (scores is not None and scores != row.scores):
                problem = "its result columns disagree with its PGN text"
        return problem, _digest(record)

    def _record_problem(self, pairing: Pairing, record: PgnRecord) -> str | None:
        """Why ``record`` is not the game of ``pairing`` as the rules play it, or ``None``."""
        return self._tags_problem(pairing, record) or self._rules_problem(record)

    def _tags_problem(self, pairing: Pairing, record: PgnRecord) -> str | None:
        """Why ``record``'s tags are not those of the game of ``pairing``, or ``None``."""
        tags = record.tags
        players = seat_players(tags)
        if players != pairing.players:
            return f"its players are {' - '.join(players)}, not {' - '.join(pairing.players)}"
        game = tags.get("Game", tags.get("Variant", "ivy"))
        if game.lower() != self.config.game.lower():
            return f"it is a game of {game}, not {self.config.game}"
        expected = {
            "Round": str(pairing.round),
            "Event": self.config.event,
            "TimeControl": self.config.tc.pgn_tag,
        }
        for name, value in expected.items():
            if tags.get(name) != value:
                return f"its {name} is {tags.get(name)!r}, not {value!r}"
        number = tags.get(NUMBER_TAG)
        if number is not None and number != str(pairing.index + 1):
            return f"its {NUMBER_TAG} is {number!r}, not {pairing.index + 1}"
        attempt = tagged_attempt(tags)
        if attempt is None:
            return f"its {ATTEMPT_TAG} is {tags[ATTEMPT_TAG]!r}, not a whole number from 1"
        seed = tags.get("Seed")
        chosen = self.config.seed  # without one, every attempt had a secret seed of its own
        if (
            seed is not None
            and chosen is not None
            and seed != str(game_seed(chosen, pairing.index, attempt))
        ):
            which = f"game {pairing.index + 1}" + (f" (attempt {attempt})" if attempt > 1 else "")
            return f"its Seed is {seed!r}, not the seed of {which}"
        return None

    def _rules_problem(self, record: PgnRecord) -> str | None:
        """Why ``record`` does not replay to its result under the rules, or ``None``."""
        try:
            report = verify(record)
        except RecordError as error:
            return str(error)
        return None if report.valid else report.reason

    def _judge_pgn(self) -> _Pgn:
        """Judge every game of the PGN file against the schedule, the rules and the store."""
        pgn = _Pgn()
        if self.bracket is not None:  # the PGN's games may pair rounds the store has lost
            rows = [row for _, row in self.store.rows() if row is not None]
            self.implied = _implied_pairings(self.bracket, [*rows, *self._pgn_results()])
        last: tuple[str, bool] | None = None  # the last game's problem, and if it is foreign
        for number, entry in enumerate(_read_pgn(self.pgn_path), start=1):
            pgn.games += 1
            if last is not None:
                _note_problem(pgn, *last)
            last = self._pgn_problem(number, entry)
            if last is None:
                index = self._index_of(entry) if isinstance(entry, PgnRecord) else None
                assert isinstance(entry, PgnRecord) and index is not None
                pgn.fitting += 1
                self._take(pgn, index, entry, number)
        # Half a game at the very end is what a kill during an append leaves.
        pgn.torn = not _ends_cleanly(self.pgn_path)
        if last is not None and not pgn.torn:
            _note_problem(pgn, *last)
        return pgn

    def _pgn_problem(self, number: int, entry: PgnRecord | PgnError) -> tuple[str, bool] | None:
        """Why game ``number`` of the PGN is not a true game of the tournament (and whether
        because it is not one of its games at all), or ``None`` when it is."""
        if isinstance(entry, PgnError):
            return f"game {number}: {entry.reason}", False
        index = self._index_of(entry)
        pairing = None if index is None else self._pairing(index)
        if pairing is None:
            if NUMBER_TAG not in entry.tags:
                return f"game {number} has no {NUMBER_TAG} tag and is not in {DATABASE}", True
            return f"game {number} is not in the schedule", True
        if (problem := self._tags_problem(pairing, entry)) is not None:
            return f"game {number}: {problem}", True
        if self.good.get(pairing.index) == _digest(entry):
            return None  # the very game the store holds, judged already
        if (problem := self._rules_problem(entry)) is not None:
            return f"game {number}: {problem}", False
        return None

    def _take(self, pgn: _Pgn, index: int, record: PgnRecord, number: int) -> None:
        """Note a true game of the PGN: seen in the store, a duplicate, or one to add."""
        digest = _digest(record)
        known = self.good.get(index)
        if known is None and index in pgn.missing_from_store:
            known = pgn.missing_from_store[index][1]
        if known is None:
            pgn.missing_from_store[index] = (record, digest)
        elif known != digest:
            raise StoreError(
                f"game {index + 1} is recorded differently in {DATABASE} and in {PGN}"
                f" (its game {number}), and both are valid; keep one: move {PGN} away to keep"
                f" the store's, or move {DATABASE} away to rebuild it from {PGN}"
            )
        elif index in pgn.seen:
            pgn.duplicates += 1
        pgn.seen.add(index)

    def _index_of(self, record: PgnRecord) -> int | None:
        """The pairing index of a PGN game: from its :data:`NUMBER_TAG`, or for a game
        written before games were numbered, from the store's game it is a copy of."""
        number = record.tags.get(NUMBER_TAG)
        if number is not None:
            return int(number) - 1 if number.isdigit() and number != "0" else None
        if self._by_digest is None:
            self._by_digest = {digest: index for index, digest in self.good.items()}
        return self._by_digest.get(_digest(record))

    def _pgn_results(self) -> Iterator[_Result]:
        """The number, players and places of each finished game of the PGN file that has
        them (judged later)."""
        for entry in _read_pgn(self.pgn_path):
            if isinstance(entry, PgnError) or (index := self._index_of(entry)) is None:
                continue
            players = seat_players(entry.tags)
            places = result_places(entry.result, len(players))
            if places is not None:
                yield _Result(index, players, places)

    def _pairing(self, index: int) -> Pairing | None:
        if self.schedule is None:
            return self.implied.get(index)
        return self.schedule[index] if 0 <= index < len(self.schedule) else None

    # --- repairing ------------------------------------------------------------------

    def _repair_store(self, bad: dict[int, str], pgn: _Pgn, store_existed: bool) -> list[str]:
        """Drop damaged rows, add the PGN's true games the store lacks; say so."""
        notes = []
        adding = pgn.missing_from_store
        if bad:
            aside = self.kept_aside
            if aside is None:
                aside = damaged_name(self.store.path)
                self.store.backup(aside)
            restored = sum(index in adding for index in bad)
            index, why = next(iter(bad.items()))
            notes.append(
                f"{_games(len(bad))} in {DATABASE} damaged (game {index + 1}: {why}):"
                f" {restored} restored from {PGN}, {len(bad) - restored} to be played again;"
                f" the old store is kept as {aside.name}"
            )
        added = len([index for index in adding if index not in bad])
        if added:
            if not store_existed and self.kept_aside is None:
                notes.append(f"{DATABASE} was missing: rebuilt it from {_games(added)} of {PGN}")
            else:
                notes.append(f"added {_games(added)} of {PGN} that {DATABASE} lacked")
        self.store.replace_games(
            (stored_game(index, record) for index, (record, _) in sorted(adding.items())),
            remove=sorted(bad),
        )
        for index, (_, digest) in adding.items():
            self.good[index] = digest
        return notes

    def _rewrite_pgn(self, pgn: _Pgn) -> list[str]:
        """Rewrite the PGN from the store, keeping a copy first when it held damaged games."""
        notes = []
        if pgn.damaged:
            aside = damaged_name(self.pgn_path)
            _keep_copy(self.pgn_path, aside)
            notes.append(
                f"{PGN} held {_games(len(pgn.damaged))} damaged or not of this tournament"
                f" ({pgn.damaged[0]}): kept the old file as {aside.name} and rewrote {PGN}"
                f" from {DATABASE}"
            )
        self.store.sync_pgn(self.pgn_path)
        return notes


def _note_problem(pgn: _Pgn, problem: str, foreign: bool) -> None:
    """Count a game of the PGN that is not a true game of the tournament."""
    pgn.damaged.append(problem)
    if foreign:
        pgn.foreign.append(problem)


def _games(count: int) -> str:
    """``1 game``, ``2 games``."""
    return f"{count} game{'' if count == 1 else 's'}"


def stored_game(index: int, record: PgnRecord) -> GameRecord:
    """The store's row for a true game read from the PGN (see the module docstring); also
    what ``referee match --recover`` counts of a game it finds in its PGN."""
    last = record.turns[-1].comment if record.turns else record.comment
    players = seat_players(record.tags)
    places = result_places(record.result, len(players))
    assert places is not None  # a true game of the tournament is finished
    scores = tagged_scores(record.tags)
    if scores is None:
        scores = DUEL_SCORES.get(places, (0.0,) * len(places))
    return GameRecord(
        index=index,
        players=players,
        result=record.result,
        places=places,
        scores=scores,
        termination=record.tags.get("Termination", "normal"),
        reason=_ANNOTATION.sub("", last or ""),
        plies=len(record.turns),
        pgn=format_game(record),
        finished_at=_date(record),
    )


def pgn_games(path: Path) -> list[GameRecord]:
    """The finished games of the PGN file at ``path`` that carry a ``GameNumber`` tag, as
    the store keeps them, the first of each number; unreadable games are skipped. (A
    ladder, which has no schedule to check games against, rebuilds a damaged store from
    them: :mod:`tournaments.ladder.ladder`.)"""
    found: dict[int, GameRecord] = {}
    for record in _read_pgn(path):
        if isinstance(record, PgnError):
            continue
        number = record.tags.get("GameNumber", "")
        players = seat_players(record.tags)
        if not number.isdigit() or int(number) < 1 or not players:
            continue
        if result_places(record.result, len(players)) is None:
            continue
        found.setdefault(int(number) - 1, stored_game(int(number) - 1, record))
    return [found[index] for index in sorted(found)]


def _date(record: PgnRecord) -> str:
    """When a game read back from the PGN was played: its ``Date`` tag as ISO 8601."""
    date = record.tags.get("Date", "")
    return date.replace(".", "-") if re.fullmatch(r"\d{4}\.\d\d\.\d\d", date) else ""


def _digest(record: PgnRecord) -> int:
    """A fingerprint of a game as it reads back: the same game gives the same one (within
    one process), whatever the spacing of its text."""
    turns = tuple((turn.token, turn.comment) for turn in record.turns)
    return hash((tuple(record.tags.items()), turns, record.result, record.comment))


def _raw_games(path: Path) -> Iterator[bytes]:
    """The games of a PGN file as written, one at a time: each starts with an ``[Event``
    line after a blank line (or at the start), as :func:`~tournaments.store.append_pgn`
    writes them; whatever else the file holds comes along inside some game's bytes."""
    if not path.exists():
        return
    game = bytearray()
    after_blank = True
    try:
        with open(path, "rb") as file:
            for line in file:
                if after_blank and line.startswith(b"[Event ") and game:
                    yield bytes(game)
                    game.clear()
                game += line
                after_blank = line == b"\n"
    except OSError as error:
        raise RefereeFault(f"cannot read {path}: {error.strerror or error}") from None
    if game:
        yield bytes(game)


def _read_pgn(path: Path) -> Iterator[PgnRecord | PgnError]:
    """The games of the PGN file at ``path``, one at a time (none when it does not exist)."""
    return iter_pgn_file(path) if path.exists() else iter(())


def _ends_cleanly(path: Path) -> bool:
    """Whether the file is missing, empty, or ends as every appended game does: a blank line."""
    try:
        with open(path, "rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - 2))
            return size == 0 or file.read() == b"\n\n"
    except FileNotFoundError:
        return True
    except OSError as error:
        raise RefereeFault(f"cannot read {path}: {error.strerror or error}") from None


def _keep_copy(path: Path, copy: Path) -> None:
    """Keep the file at ``path`` as ``copy`` too (a hard link where possible)."""
    try:
        try:
            os.link(path, copy)
        except OSError:
            shutil.copy2(path, copy)
    except OSError as error:
        raise RefereeFault(f"cannot keep a copy of {path}: {error.strerror or error}") from None


@dataclass(frozen=True, slots=True)
class _Result:
    """A finished game as a Swiss or knockout pairs from it (:class:`Finished`)."""

    index: int
    players: tuple[str, ...]
    places: tuple[int, ...]


def _implied_pairings(bracket: Swiss | Knockout, games: Iterable[Finished]) -> dict[int, Pairing]:
    """The pairings, by game number, that ``games`` let a Swiss or knockout make: round 1's,
    then those the games that fit them pair, again and again; a game that fits no pairing
    (or one that an earlier game of the same number took) pairs nothing."""
    waiting: dict[int, list[Finished]] = {}
    for game in games:
        waiting.setdefault(game.index, []).append(game)
    accepted: list[Finished] = []
    while True:
        if isinstance(bracket, Swiss):
            due = [p for round_ in bracket.schedule(accepted) for p in round_.pairings]
        else:
            due = [p for match in bracket.matches(accepted) for p in match.games]
        found = []
        for pairing in due:
            fits = (
                game
                for game in waiting.pop(pairing.index, ())
                if tuple(game.players) == pairing.players and len(game.places) == 2
            )
            if (fit := next(fits, None)) is not None:
                found.append(fit)
        if not found:
            return {pairing.index: pairing for pairing in due}
        accepted += found
