"""Running a tournament: several games at once, results that survive anything, resumable.

:func:`run_tournament` plays the schedule of a :class:`~tournaments.config.TournamentConfig`
with ``concurrency`` worker tasks. Each worker takes the next unplayed game,
plays it with :func:`~referee.match.play_game` on bot processes it keeps between
games (a worker runs at most the two bots of its current game; a bot that
faulted is restarted by ``play_game``), and records the result. The output
directory holds:

``results.sqlite``
    The results store (:mod:`tournaments.store`): the settings and one row per
    finished game, each committed on its own. It is the truth.
``games.pgn``
    Every finished game. A game is appended right after it is committed; a run
    first rewrites the file from the database, so a kill at any moment (even
    ``kill -9``) never leaves a duplicate or half a game once the tournament is
    run again.
``ratings.json``, ``ratings.csv``
    The rating table (:mod:`tournaments.report`), refreshed after every game.
``logs/game-0007.log``
    The ``log`` messages bots sent during game 7 (numbered from 1), if any.
``logs/run-2/worker-1/<bot>-<n>.stderr.log``
    The stderr of each bot process, per run of the command and per worker.
``lock``
    Locked while a run is going on, so two runs never play the same games.

Running the same tournament again resumes it: the settings must match the
stored ones (:meth:`TournamentConfig.to_json`), games already recorded are
skipped, and a finished tournament just returns its ratings. Ctrl-C or SIGTERM
stops a run cleanly: games in progress are dropped, every bot process is reaped,
every finished game is kept, and :class:`TournamentStopped` says how far it got.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import trio

from referee.errors import RecordError, RefereeError
from referee.match import BotPlayer, GameResult, play_game
from referee.pgn import PgnError, format_game, read_pgn_file
from referee.process import BotCommand
from tournaments.config import TournamentConfig
from tournaments.pairings import Pairing
from tournaments.progress import Progress
from tournaments.ratings import RatingTable, rate
from tournaments.report import to_csv, to_json
from tournaments.store import RESULTS, ResultStore, append_pgn

DATABASE = "results.sqlite"
PGN = "games.pgn"
RATINGS_JSON = "ratings.json"
RATINGS_CSV = "ratings.csv"
LOGS = "logs"
LOCK = "lock"
"""The names of the files in a tournament's output directory (see the module docstring)."""

PROGRESS_TICK = 0.5
"""Seconds between redraws of the live display's clocks."""


class TournamentError(RefereeError):
    """A tournament cannot run: another run of it is going on."""


class TournamentStopped(TournamentError):
    """A run was stopped (Ctrl-C, SIGTERM) before the tournament was over; its games are kept."""


async def run_tournament(
    config: TournamentConfig, *, progress: Progress | None = None
) -> RatingTable:
    """Play (or resume) the tournament and return its ratings.

    ``progress`` hears about every game (see :class:`~tournaments.progress.Progress`);
    :meth:`~tournaments.progress.Progress.close` is called before this returns
    or raises. Raises :class:`~tournaments.store.StoreError` when the output
    directory holds another tournament, :class:`TournamentError` when it is
    being run already, and :class:`TournamentStopped` after Ctrl-C or SIGTERM.
    """
    progress = progress or Progress()
    output = config.output
    try:
        output.mkdir(parents=True, exist_ok=True)
        with _exclusive(output), ResultStore.open(output / DATABASE) as store:
            store.check_or_save_config(config.to_json())
            store.sync_pgn(output / PGN)
            return await _Run(config, store, progress).play()
    finally:
        progress.close()


@contextlib.contextmanager
def _exclusive(output: Path) -> Iterator[None]:
    """Hold the output directory's lock (released by the system if the process dies)."""
    with open(output / LOCK, "a") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TournamentError(
                f"the tournament in {output} is being run by another process"
            ) from None
        yield


class _Run:
    """One run of a tournament: the games left to play and the workers playing them."""

    def __init__(self, config: TournamentConfig, store: ResultStore, progress: Progress) -> None:
        self.config = config
        self.store = store
        self.progress = progress
        self.match = config.match_config()
        self.commands: Mapping[str, BotCommand] = {p.name: p.command for p in config.players}
        self.schedule = config.schedule()
        done = store.done_indices()
        self.pending = [pairing for pairing in self.schedule if pairing.index not in done]
        self.results = store.results()
        self.finished = len(done)
        self.logs = config.output / LOGS
        self.run_logs = _next_run_directory(self.logs)

    def standings(self) -> RatingTable:
        """The ratings from the games finished so far (every player listed)."""
        return rate(self.results, players=self.config.names)

    async def play(self) -> RatingTable:
        """Play every game not yet recorded; write and return the ratings."""
        self.progress.begin(
            event=self.config.event,
            total=len(self.schedule),
            done=self.finished,
            standings=self.standings(),
        )
        if self.pending:
            await self._play_pending()
        table = self.standings()
        _write_ratings(self.config.output, table)
        return table

    async def _play_pending(self) -> None:
        """Run the workers (and a SIGTERM watcher) until the games run out or a stop."""
        workers = min(self.config.concurrency, len(self.pending))
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_stop_on_sigterm)
                nursery.start_soon(self._tick)
                async with trio.open_nursery() as games:
                    for number in range(1, workers + 1):
                        games.start_soon(self._worker, number)
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            stop = group.subgroup((KeyboardInterrupt, TournamentStopped))
            if stop is not None:
                why = "by Ctrl-C" if stop.subgroup(KeyboardInterrupt) else "by SIGTERM"
                raise TournamentStopped(
                    f"stopped {why} with {self.finished} of {len(self.schedule)} games played;"
                    f" they are kept in {self.config.output}: run the same tournament again"
                    " to resume"
                ) from None
            leaves = _leaves(group)
            if len(leaves) == 1:
                raise leaves[0] from None
            raise

    async def _tick(self) -> None:
        """Let the progress display move its clocks between games."""
        while True:
            self.progress.refresh()
            await trio.sleep(PROGRESS_TICK)

    async def _worker(self, number: int) -> None:
        """Play games until none are left, keeping bot processes between games."""
        log_dir = self.run_logs / f"worker-{number}"
        bots: dict[str, BotPlayer] = {}
        async with trio.open_nursery() as nursery:
            holding: tuple[str, ...] = ()
            while (pairing := self._take(holding)) is not None:
                holding = (pairing.white, pairing.black)
                await _close_all(bot for name, bot in bots.items() if name not in holding)
                for name in holding:
                    if name not in bots:
                        bots[name] = BotPlayer(self.commands[name], name, nursery, log_dir=log_dir)
                self.progress.game_started(pairing)
                result = await play_game(
                    [bots[name] for name in holding],
                    self.match,
                    round_=str(pairing.round),
                    seed=self.config.seed + pairing.index,
                    start=pairing.opening,
                )
                self._save(pairing, result)
            await _close_all(bots.values())

    def _take(self, holding: tuple[str, ...]) -> Pairing | None:
        """The next game for a worker whose bots are ``holding`` (``None`` when none are left).

        Among the next few unplayed games (as many as there are players) it
        takes the first that needs the most of those bots, so running
        processes are reused rather than restarted.
        """
        if not self.pending:
            return None
        window = self.pending[: len(self.config.players)]
        held = set(holding)

        def reuse(place: int) -> tuple[int, int]:
            pairing = window[place]
            return len({pairing.white, pairing.black} & held), -place

        return self.pending.pop(max(range(len(window)), key=reuse))

    def _save(self, pairing: Pairing, result: GameResult) -> None:
        """Record a finished game, then append it to the PGN file and refresh the ratings.

        The writes are short and synchronous (one transaction, one append,
        two small files), with no checkpoint in between, so a game that has
        ended is kept whole even when the run is being stopped, and saves of
        concurrent games never interleave.
        """
        record = result.record
        ending = result.ending
        text = format_game(record)
        self.results.append((pairing.white, pairing.black, ending.scores[0]))
        standings = self.standings()
        output = self.config.output
        recorded = self.store.record(
            pairing.index,
            white=pairing.white,
            black=pairing.black,
            result=ending.result,
            termination=ending.termination,
            reason=ending.reason,
            plies=len(record.turns),
            pgn=text,
        )
        if recorded:
            append_pgn(output / PGN, text)
        if result.logs:
            self.logs.mkdir(parents=True, exist_ok=True)
            _write_atomically(
                self.logs / f"game-{pairing.index + 1:04d}.log", "\n".join(result.logs) + "\n"
            )
        _write_ratings(output, standings)
        self.finished += 1
        self.progress.game_finished(pairing, result, standings)


async def _close_all(bots: Iterable[BotPlayer]) -> None:
    """Tell these bots to quit and wait until they are gone, all at once."""
    async with trio.open_nursery() as nursery:
        for bot in bots:
            nursery.start_soon(bot.close)


async def _stop_on_sigterm() -> None:
    """Turn SIGTERM into :class:`TournamentStopped` (signals are only caught in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            raise TournamentStopped("SIGTERM")


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``[error]`` for a plain one."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _next_run_directory(logs: Path) -> Path:
    """``logs/run-N`` for a number N no earlier run has used."""
    used = [
        int(entry.name.removeprefix("run-"))
        for entry in (logs.iterdir() if logs.is_dir() else ())
        if entry.name.startswith("run-") and entry.name.removeprefix("run-").isdigit()
    ]
    return logs / f"run-{max(used, default=0) + 1}"


def _write_ratings(output: Path, table: RatingTable) -> None:
    """Write ``ratings.json`` and ``ratings.csv`` into ``output``, each atomically."""
    _write_atomically(output / RATINGS_JSON, to_json(table) + "\n")
    _write_atomically(output / RATINGS_CSV, to_csv(table))


def _write_atomically(path: Path, text: str) -> None:
    """Replace the file at ``path`` with ``text``: a reader sees the old file or the new one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


# --- ratings of a PGN file -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PgnRatings:
    """The ratings of the games in a PGN file: the table, how many games were rated,
    and what was left out (broken games, games without players, unfinished games)."""

    table: RatingTable
    games: int
    warnings: tuple[str, ...]


def ratings_for_pgn(
    path: str | os.PathLike[str], *, anchor: str | None = None, anchor_elo: float = 0.0
) -> PgnRatings:
    """Rate the finished games of the PGN file at ``path`` by their White, Black and Result.

    Broken games and games without two named players are skipped with a
    warning; unfinished games (``*``) are left out, counted in one warning.
    ``anchor``/``anchor_elo`` fix one player's rating (see
    :func:`~tournaments.ratings.rate`). Raises :class:`RecordError` when the
    file cannot be read or holds no game to rate.
    """
    results: list[tuple[str, str, float]] = []
    warnings: list[str] = []
    unfinished = 0
    for number, game in enumerate(read_pgn_file(path), start=1):
        if isinstance(game, PgnError):
            warnings.append(f"skipped {game}")
            continue
        if game.result == "*":
            unfinished += 1
            continue
        white, black = game.tags["White"], game.tags["Black"]
        if "?" in (white, black) or not white.strip() or not black.strip():
            warnings.append(f"skipped game {number}: it does not name both players")
        elif white == black:
            warnings.append(f"skipped game {number}: {white} plays against themselves")
        else:
            results.append((white, black, RESULTS[game.result]))
    if unfinished:
        warnings.append(f"left out {unfinished} unfinished game{'s' * (unfinished != 1)} (*)")
    if not results:
        raise RecordError(f"{os.fspath(path)} holds no finished games to rate")
    table = rate(results, anchor=anchor, anchor_elo=anchor_elo)
    return PgnRatings(table, len(results), tuple(warnings))
