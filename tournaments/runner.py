"""Running a tournament: several games at once, results that survive anything, resumable.

:func:`run_tournament` plays the schedule of a :class:`~tournaments.config.TournamentConfig`
as the coordinator: it hands each unplayed game, with its seed
(:meth:`~tournaments.config.TournamentConfig.game_seed` of the game and the attempt), to a pool
(:mod:`tournaments.workers`: ``concurrency`` worker processes by default, each
playing one game at a time on bot processes it keeps between games; or a Dask
cluster, :mod:`tournaments.cluster`), and records each game that comes back. Only
the coordinator writes the output directory, which holds:

``results.sqlite``
    The results store (:mod:`tournaments.store`): the settings and one row per
    finished game, each committed on its own. It is the truth.
``games.pgn``
    Every finished game, numbered by a ``GameNumber`` tag. A game is appended
    right after it is committed; every run first checks the store and this file
    against each other, the schedule and the rules (:mod:`tournaments.recovery`),
    so a kill at any moment (even ``kill -9``) never leaves a duplicate or half a
    game once the tournament is run again, and no true game in either file is lost.
``ratings.json``, ``ratings.csv``
    The rating table (:mod:`tournaments.report`), refreshed after a game unless the
    last refresh is too recent for its cost (:data:`REFRESH_SHARE`), always after the
    last game and when a run is stopped
    (:mod:`tournaments.ratings` says how games of any seat count are rated; solo
    games are ranked by mean score).
``logs/game-0007.log``
    The ``log`` messages bots sent during game 7 (numbered from 1), if any.
``logs/run-2/worker-1/<bot>-<n>.stderr.log``
    The stderr of each bot process, per run of the command and per worker process
    (whose own stderr is ``logs/run-2/worker-1/worker.log``).
``bots.pids``
    Each bot sandbox (or unsandboxed bot) started by the current run; the next run
    first stops those still alive (:func:`~referee.process.stop_leftovers`).

A run holds an exclusive lock (``flock``) on the output directory itself, so two
runs never play the same games, and deleting a file cannot break the lock.

Running the same tournament again resumes it: the settings must match the
stored ones (:meth:`TournamentConfig.to_json`), games already recorded are
skipped, and a finished tournament just returns its ratings (also from a
read-only directory, where nothing is written). Before the first game of a run,
every player's bot is started once and must answer a handshake
(:func:`~referee.preflight.preflight`); the settings are saved only after that.

Games at once are capped by the machine's limits (:func:`concurrency_limit`). A
failure of the referee's own resources during a game (file descriptors, memory,
processes, disk) is never recorded as a bot's loss: the run stops with
:class:`~referee.errors.RefereeFault`, the game is not recorded, and the next run
plays it.

**Attempts.** Each time a game is handed to the pool is an *attempt*, noted in the
store (:meth:`~tournaments.store.ResultStore.start_attempt`) before it is played and
given the seed of that attempt, so no attempt ever replays a deal an earlier one dealt.
A game whose worker died (:class:`~tournaments.workers.GameLost`) is noted as abandoned
with the cause, reported in one line, and played again at once as the next attempt
(:data:`LOST_ATTEMPTS` lost in a row stop the run); an attempt a stopped or failed run
leaves is noted with why, and one a killed run leaves is noted at the next start
(:mod:`tournaments.recovery`). A record of attempt 2 or later carries ``[Attempt "N"]``.
What a seat does never makes its game be played again: its faults are its losses.

Ctrl-C or SIGTERM stops a run cleanly: games in progress are dropped, every bot
process is reaped, every finished game is kept, and :class:`TournamentStopped` says
how far it got.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import math
import os
import resource
import signal
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import trio

from referee.errors import (
    RecordError,
    RefereeError,
    RefereeFault,
    describe_failure,
    is_own_failure,
    leaves,
    own_failure,
)
from referee.pgn import (
    PgnError,
    iter_pgn_headers,
    result_places,
    seat_players,
    tagged_scores,
)
from referee.process import stop_leftovers
from referee.untrusted import clip, printable
from tournaments.config import TournamentConfig
from tournaments.knockout import Knockout
from tournaments.pairings import Pairing
from tournaments.progress import Progress
from tournaments.ratings import (
    Kind,
    Method,
    Played,
    RatingError,
    RatingTable,
    TableResult,
    rate,
)
from tournaments.recovery import open_records
from tournaments.report import Outcome, to_csv, to_json
from tournaments.site import complete_site, update_site
from tournaments.store import DATABASE, PGN, ResultStore, append_pgn
from tournaments.swiss import Finished, Swiss
from tournaments.workers import (
    GameDone,
    GameJob,
    GameLost,
    Pool,
    PoolFactory,
    Warn,
    Work,
    process_pool,
)

RATINGS_JSON = "ratings.json"
RATINGS_CSV = "ratings.csv"
LOGS = "logs"
BOT_PIDS = "bots.pids"
"""The names of the other files in a tournament's output directory (see the module docstring);
:data:`~tournaments.store.DATABASE` and :data:`~tournaments.store.PGN` are the store's."""

__all__ = [
    "DATABASE",
    "PGN",
    "RATINGS_CSV",
    "RATINGS_JSON",
    "PgnRatings",
    "TournamentError",
    "TournamentStopped",
    "concurrency_limit",
    "outcome_of",
    "ratings_for_pgn",
    "run_tournament",
]

SITE_TICK = 5.0
"""The most seconds between two writes of the site's index during a run (it reads every
stored game, so it is not rewritten after each one); the last game always writes it."""

REFRESH_SHARE = 0.05
"""The most of a run's time the ratings, and the site's index, may each spend being
refreshed: in a long run, once their cost grows, they are refreshed less often."""

PROGRESS_TICK = 0.5
"""Seconds between redraws of the live display's clocks."""

FILES_PER_SEAT = 8
"""File descriptors one seat of a game may hold at once: its bot's three pipes and log,
the pipes of a bot being started, and the sandbox's own."""

FILES_RESERVED = 32
"""File descriptors the referee keeps for itself (the store, the PGN, the event loop)."""

LOST_ATTEMPTS = 3
"""How many attempts at one game a run may lose in a row (its workers died) before it
stops: a game that kills every worker it is given points at the referee, not bad luck."""

PROCESSES_PER_SEAT = 4
"""Processes one seat of a game may take under a process-count limit (its bot, its sandbox)."""

logger = logging.getLogger(__name__)


class TournamentError(RefereeError):
    """A tournament cannot run: another run of it is going on, or its directory is unusable."""


class TournamentStopped(TournamentError):
    """A run was stopped (Ctrl-C, SIGTERM) before the tournament was over; its games are kept.

    ``signum`` is the signal that stopped it (``SIGINT`` for Ctrl-C).
    """

    def __init__(self, message: str, *, signum: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.signum = signum


async def run_tournament(
    config: TournamentConfig,
    *,
    progress: Progress | None = None,
    warn: Warn | None = None,
    pool: PoolFactory | None = None,
) -> RatingTable:
    """Play (or resume) the tournament and return its ratings.

    ``progress`` hears about every game (see :class:`~tournaments.progress.Progress`);
    :meth:`~tournaments.progress.Progress.close` is called before this returns
    or raises. ``warn`` gets one line for each repair of the records and for a
    concurrency capped by the machine's limits (default: the ``logging`` module).
    Raises :class:`~tournaments.store.StoreError` when the output directory
    holds another tournament or records it cannot repair, :class:`TournamentError`
    when it is being run already or cannot be used,
    :class:`~referee.preflight.PreflightError` when a bot fails the start-up check,
    :class:`~referee.errors.RefereeFault` when the referee's own resources fail,
    and :class:`TournamentStopped` after Ctrl-C or SIGTERM. ``pool`` opens what plays
    the games (:mod:`tournaments.workers`; default: ``concurrency`` worker processes, or
    the Dask cluster of ``config.cluster``); without it, remote players are refused
    (:class:`~tournaments.config.ConfigError`).
    """
    progress = progress or Progress()
    warn = warn or logger.warning
    try:
        if pool is None:
            pool = _default_pool(config, warn)
        with _locked(config.output) as writable:
            store, notes = open_records(config, read_only=not writable)
            with store:
                for note in notes:
                    warn(note)
                run = _Run(config, store, progress, warn, pool)
                if not writable:
                    return run.show()
                stop_leftovers(config.output / BOT_PIDS)  # what a killed run left running
                return await run.play()
    finally:
        progress.close()


def _default_pool(config: TournamentConfig, warn: Warn) -> PoolFactory:
    """The pool of ``referee tournament``: the Dask cluster of ``config.cluster``, or
    worker processes on this machine. Neither plays remote players (``referee serve``'s
    pool does): a tournament with some is refused here."""
    config.check_local()
    if config.cluster is None:
        return process_pool
    from tournaments.cluster import cluster_pool  # Dask is imported for a cluster only

    return cluster_pool(config.cluster, warn=warn)


@contextlib.contextmanager
def _locked(output: Path) -> Iterator[bool]:
    """Hold an exclusive lock on the output directory (created if needed); yields whether
    it is writable. The system releases the lock when the process dies."""
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        if not output.is_dir():
            raise TournamentError(
                f"cannot create the output directory {output}: {error.strerror or error}"
            ) from None
    try:
        descriptor = os.open(output, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise TournamentError(
            f"cannot open the output directory {output}: {error.strerror or error}"
        ) from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TournamentError(
                f"the tournament in {output} is being run by another process"
            ) from None
        writable = os.access(output, os.W_OK)
        if not writable and not (output / DATABASE).exists():
            raise TournamentError(f"cannot run a tournament in {output}: it is read-only")
        yield writable
    finally:
        os.close(descriptor)


def concurrency_limit(seats: int = 2) -> tuple[int, str]:
    """The most games of ``seats`` seats this process can play at once, and which limit
    says so.

    Each seat of a game may hold :data:`FILES_PER_SEAT` file descriptors beyond
    the :data:`FILES_RESERVED` the referee keeps (``RLIMIT_NOFILE``, ``ulimit
    -n``), and start :data:`PROCESSES_PER_SEAT` processes (``RLIMIT_NPROC``,
    ``ulimit -u``).
    """
    limits: list[tuple[int, str]] = []
    per_game = FILES_PER_SEAT * seats
    files, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if files != resource.RLIM_INFINITY:
        games = max(1, (files - FILES_RESERVED) // per_game)
        limits.append((games, f"open files limit {files}, up to {per_game} per game"))
    processes, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if processes != resource.RLIM_INFINITY:
        games = max(1, processes // (PROCESSES_PER_SEAT * seats))
        limits.append(
            (games, f"process limit {processes}, up to {PROCESSES_PER_SEAT * seats} per game")
        )
    return min(limits, default=(2**31, "no limit"))


class _Run:
    """One run of a tournament: the games left to play and the workers playing them."""

    def __init__(
        self,
        config: TournamentConfig,
        store: ResultStore,
        progress: Progress,
        warn: Warn,
        pool: PoolFactory,
    ) -> None:
        self.config = config
        self.store = store
        self.progress = progress
        self.warn = warn
        self.open_pool = pool
        self.bracket = config.bracket()
        done = store.done_indices()
        self.finished = len(done)
        self._window: list[Pairing] = []
        if self.bracket is None:
            schedule = config.schedule()
            self.total = len(schedule)
            self._first = schedule[0]
            # Lazily: a schedule of a trillion games must not be listed.
            self._unplayed: Iterator[Pairing] = (p for p in schedule if p.index not in done)
        else:
            # Every game number the format may use: an upper bound (a knockout's unneeded
            # tie-breaks, and the games of its byes, are never played).
            self.total = self.bracket.length
            self._first = self.bracket.pending(())[0]
            self._unplayed = iter(())
        self.played: list[Finished] = (
            []  # a round-robin's schedule needs no results (nor every stored record read)
            if self.bracket is None
            else [
                _Finished(game.index, game.players, game.places) for game in store.games(pgn=False)
            ]
        )
        """A Swiss's or knockout's finished games (the store's, then this run's), which pair
        the next rounds."""
        self._bracket_cache: tuple[int, list[Pairing], bool] | None = None
        self._running: set[int] = set()
        """The games being played now (a Swiss or knockout: none is offered twice)."""
        self._game_over = trio.Event()
        """Set (and replaced) whenever a game is saved: a worker waiting for the next round
        looks again."""
        self.results: dict[int, Played] = {
            game.index: TableResult(game.players, game.places, game.scores)
            for game in store.games(pgn=False)
        }
        """The finished games by number: rated in that order (the store's), so that the
        OpenSkill ratings, which follow the order of the games, are those a rebuild from
        the store gives."""
        seats = config.seats
        # Two seats: as the games say (Ivy's 1/½/0, or points).
        self.kind: Kind | None = "solo" if seats == 1 else None if seats == 2 else "tables"
        self.logs = config.output / LOGS
        match = config.match_config()
        commands = config.commands
        # No bot sees the openings, nor another player's dir (its own stays its own).
        sandbox = match.sandbox.hiding(
            config.openings_file, *(command.cwd for command in commands.values())
        )
        self.work = Work(
            match=dataclasses.replace(
                match, sandbox=dataclasses.replace(sandbox, ledger=config.output / BOT_PIDS)
            ),
            commands=commands,
            seats=config.seats,
            log_dir=_next_run_directory(self.logs),
        )
        self.playing = False
        """Whether the games have begun (the bots passed the preflight)."""
        self._standings = self.standings()
        """The ratings as last computed: after each game while that is cheap (see
        :class:`_Pace`), and always after the last."""
        self._rated = len(self.results)
        """How many games :attr:`_standings` counts."""
        self._ratings_pace = _Pace(least=0.0)
        self._site_pace = _Pace(least=SITE_TICK)

    def _rate(self) -> None:
        """Bring :attr:`_standings` up to date."""
        self._standings, self._rated = self.standings(), len(self.results)

    def standings(self) -> RatingTable:
        """The ratings from the games finished so far (every player listed)."""
        ordered = [self.results[index] for index in sorted(self.results)]
        return rate(ordered, players=self.config.names, kind=self.kind)

    def complete(self) -> bool:
        """Whether every game is played: the whole schedule, or the Swiss or knockout's
        last round."""
        if self.bracket is None:
            return self.finished >= self.total
        return self._bracket_now()[1]

    def _bracket_now(self) -> tuple[list[Pairing], bool]:
        """A Swiss's or knockout's games paired now and whether it is over, from the games
        played so far: computed once for each number of them (pairing a round from all
        the results is dear, and the workers ask for every game they take)."""
        played = len(self.played)
        if self._bracket_cache is None or self._bracket_cache[0] != played:
            bracket = self.bracket
            assert bracket is not None
            over = (
                bracket.finished(self.played)
                if isinstance(bracket, Swiss)
                else bracket.winner(self.played) is not None
            )
            self._bracket_cache = (played, bracket.pending(self.played), over)
        return self._bracket_cache[1], self._bracket_cache[2]

    def site_total(self) -> int:
        """The games the site says the tournament holds: the schedule's, or for a finished
        Swiss or knockout those played (while it runs, :attr:`total`, an upper bound)."""
        return self.finished if self.bracket is not None and self.complete() else self.total

    def outcome(self) -> Outcome:
        """What the format adds to the ratings: a Swiss's standings, a knockout's bracket."""
        if isinstance(self.bracket, Swiss):
            return self.bracket.standings(self.played)
        if isinstance(self.bracket, Knockout):
            return self.bracket.matches(self.played)
        return None

    def show(self) -> RatingTable:
        """The ratings of a finished tournament, writing nothing (a read-only directory)."""
        if not self.complete():
            raise TournamentError(
                f"the tournament in {self.config.output} has {self.finished} of {self.total}"
                " games played and its directory is read-only: make it writable to resume it"
            )
        table = self._standings
        self.progress.begin(
            event=self.config.event, total=self.total, done=self.finished, standings=table
        )
        return table

    async def play(self) -> RatingTable:
        """Play every game not yet recorded; write and return the ratings."""
        self.progress.begin(
            event=self.config.event,
            total=self.total,
            done=self.finished,
            standings=self._standings,
        )
        try:
            complete_site(
                self.config.output,
                self.store,
                total=self.site_total(),
                standings=self._standings,
            )
        except OSError as error:
            raise RefereeFault(
                f"{describe_failure(error)}; the site is rebuilt at the next run"
            ) from None
        if not self.complete():
            await self._play_pending()
        table = self._standings  # the last game refreshed them
        _write_ratings(self.config.output, table, self.outcome())
        return table

    async def _play_pending(self) -> None:
        """Open the pool, check the bots, then give the pool's slots games (with a SIGTERM
        watcher) until the games run out or a stop; any stop or failure ends as one
        :class:`RefereeError`."""
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_stop_on_sigterm)
                async with self.open_pool(self.work, self._workers()) as pool:
                    await pool.check(self.config.names, self._first.opening)
                    self.store.save_config(self.config.to_json())
                    self.playing = True
                    nursery.start_soon(self._tick)
                    await self._play_and_save(pool)
                nursery.cancel_scope.cancel()
        except BaseException as error:  # every ending is sorted out here
            raise self._why_stopped(error) from None

    def _workers(self) -> int:
        """How many games to play at once: as asked, within the machine's limits (a
        cluster's pool plays as many as the cluster has threads)."""
        if self.config.cluster is not None:
            return max(1, self.total - self.finished)
        limit, why = concurrency_limit(self.config.seats)
        wanted = self.config.concurrency
        if wanted > limit:
            self.warn(
                f"concurrency {wanted} is more than this machine allows ({why}):"
                f" playing {limit} game{'' if limit == 1 else 's'} at once"
            )
        return max(1, min(wanted, limit, self.total - self.finished))

    def _why_stopped(self, error: BaseException) -> BaseException:
        """The one exception a run that ended with ``error`` raises.

        Ctrl-C and SIGTERM become :class:`TournamentStopped`; a failure of the
        referee's own resources a :class:`RefereeFault` saying how to resume; a
        :class:`RefereeError` itself. Anything else (a cancellation from outside,
        a bug) goes on as it came.
        """
        found = leaves(error)
        played = (
            f"{self.finished} of {self.total} games played; they are kept in {self.config.output}"
        )
        signums = [
            signal.SIGINT if isinstance(leaf, KeyboardInterrupt) else leaf.signum
            for leaf in found
            if isinstance(leaf, KeyboardInterrupt | TournamentStopped)
        ]
        if signums:
            signum = min(signums)  # Ctrl-C (SIGINT, 2) before SIGTERM (15)
            how = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
            if self.complete():
                return TournamentStopped(
                    f"stopped by {how} once every game was played ({self.finished}, kept in"
                    f" {self.config.output}): run the same tournament again to show its results",
                    signum=signum,
                )
            return TournamentStopped(
                f"stopped by {how} with {played}: run the same tournament again to resume",
                signum=signum,
            )
        fault = next((leaf for leaf in found if is_own_failure(leaf)), None)
        if fault is not None:
            if not self.playing:
                return RefereeFault(f"{describe_failure(fault)} (before any game of this run)")
            return RefereeFault(
                f"{describe_failure(fault)}; the run stopped with {played}:"
                " run the same command again to resume once that is fixed"
            )
        mistake = next((leaf for leaf in found if isinstance(leaf, RefereeError)), None)
        return mistake if mistake is not None else error

    async def _tick(self) -> None:
        """Let the progress display move its clocks between games."""
        while True:
            self.progress.refresh()
            await trio.sleep(PROGRESS_TICK)

    async def _play_and_save(self, pool: Pool) -> None:
        """Give each of the pool's slots games until none are left, and save each game as
        it comes back.

        One task saves, so saves never interleave, and a slot hands its game over and
        takes its next one at once: its worker plays while the game before is saved (but
        no slot starts a game while as many games as there are slots wait to be saved).
        A game handed over but not saved when the run stops is saved before this returns,
        however it stops (the saves are synchronous), and then the ratings are brought up
        to date, unless saving itself failed.
        """
        finished, to_save = trio.open_memory_channel[tuple[Pairing, GameDone]](math.inf)
        failed = False

        @trio.lowlevel.enable_ki_protection  # Ctrl-C never falls between taking and saving
        async def saver() -> None:
            nonlocal failed
            async for pairing, done in to_save:
                try:
                    self._save(pairing, done)
                except BaseException:
                    failed = True
                    raise

        try:
            async with trio.open_nursery() as games:
                games.start_soon(saver)
                async with finished, trio.open_nursery() as slots:
                    for slot in range(pool.slots):
                        slots.start_soon(self._worker, pool, slot, finished)
        finally:
            if not failed:
                self._save_waiting(to_save)

    @trio.lowlevel.enable_ki_protection
    def _save_waiting(self, to_save: trio.MemoryReceiveChannel[tuple[Pairing, GameDone]]) -> None:
        """Save the games handed over and not saved yet (the run is stopping), then write
        the ratings if the last saves left them behind."""
        while True:
            try:
                pairing, done = to_save.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            self._save(pairing, done)
        if self._rated < len(self.results):
            self._rate()
            with contextlib.suppress(OSError):  # the next run writes them (it is stopping)
                _write_ratings(self.config.output, self._standings, self.outcome())

    @trio.lowlevel.enable_ki_protection  # Ctrl-C never falls between a game's end and handover
    async def _worker(
        self,
        pool: Pool,
        slot: int,
        finished: trio.MemorySendChannel[tuple[Pairing, GameDone]],
    ) -> None:
        """Have the pool's ``slot`` play games until none are left, handing each to be saved."""
        holding: tuple[str, ...] = ()
        while True:
            while finished.statistics().current_buffer_used >= pool.slots:
                await self._game_over.wait()  # the saves fell behind: let them catch up
            if (pairing := await self._next(holding)) is None:
                return
            holding = pairing.players
            self.progress.game_started(pairing)
            done = await self._attempts(pool, slot, pairing)
            finished.send_nowait((pairing, done))

    async def _attempts(self, pool: Pool, slot: int, pairing: Pairing) -> GameDone:
        """Play ``pairing``'s game in the pool's ``slot``, as many attempts as it takes (see
        the module): each noted in the store before it is played, with a seed of its own,
        and each one lost or left by a stop noted with why."""
        index, lost = pairing.index, []
        attempt = self.store.start_attempt(index)
        while True:
            job = GameJob(
                index=index,
                players=pairing.players,
                round=str(pairing.round),
                seed=self.config.game_seed(index, attempt),
                opening=pairing.opening,
                attempt=attempt,
            )
            try:
                return await pool.play(slot, job)
            except GameLost as loss:
                self.store.abandon_attempt(index, attempt, loss.cause)
                lost.append(loss.cause)
                if len(lost) >= LOST_ATTEMPTS:
                    raise RefereeFault(
                        f"game {index + 1} was lost {len(lost)} times in a row"
                        f" ({'; '.join(lost)}){loss.hint}; it was not recorded"
                    ) from None
                attempt = self.store.start_attempt(index)
                self.warn(
                    f"{loss.cause} while playing game {index + 1}: attempt {attempt - 1}"
                    f" abandoned, playing it again as attempt {attempt}"
                )
            except BaseException as error:
                with contextlib.suppress(RefereeFault):  # else the next start notes it
                    self.store.abandon_attempt(index, attempt, _abandoned(error))
                raise

    async def _next(self, holding: tuple[str, ...]) -> Pairing | None:
        """The next game for a worker (``None`` when none are left). In a Swiss or knockout,
        a worker that finds no game to play while others are still being played waits
        until one of them is saved, since it may pair the next round."""
        await trio.lowlevel.checkpoint_if_cancelled()  # a stopping run starts no game
        while (pairing := self._take(holding)) is None and self._running:
            await self._game_over.wait()
        return pairing

    def _take(self, holding: tuple[str, ...]) -> Pairing | None:
        """The next game for a worker whose bots are ``holding`` (``None`` when none are left).

        Among the next few unplayed games (as many as there are players) it
        takes the first that needs the most of those bots, so running
        processes are reused rather than restarted.
        """
        window = self._window
        if self.bracket is None:
            window.extend(_take_up_to(self._unplayed, len(self.config.players) - len(window)))
        else:  # the games paired now, from the results (the truth), not being played
            pending, _ = self._bracket_now()
            window[:] = [p for p in pending if p.index not in self._running]
        if not window:
            return None
        held = set(holding)

        def reuse(place: int) -> tuple[int, int]:
            pairing = window[place]
            return len(set(pairing.players) & held), -place

        pairing = window.pop(max(range(len(window)), key=reuse))
        if self.bracket is not None:
            self._running.add(pairing.index)
        return pairing

    @trio.lowlevel.enable_ki_protection  # Ctrl-C waits until the game is wholly saved
    def _save(self, pairing: Pairing, done: GameDone) -> None:
        """Record a finished game, then append it to the PGN file and refresh the ratings.

        The writes are short and synchronous (one transaction, one append,
        two small files), with no checkpoint in between, so a game that has
        ended is kept whole even when the run is being stopped, and saves of
        concurrent games never interleave. A write that fails raises
        :class:`RefereeFault`: the game is then wholly in the store or not at all.
        """
        output = self.config.output
        try:  # the log first: a kill after the game is stored must not lose its evidence
            if done.logs:
                self.logs.mkdir(parents=True, exist_ok=True)
                _write_atomically(
                    self.logs / f"game-{pairing.index + 1:04d}.log", "\n".join(done.logs) + "\n"
                )
        except (OSError, RefereeFault) as error:
            raise RefereeFault(
                f"{describe_failure(error)}; game {pairing.index + 1} is not recorded and is played"
                " again at the next run"
            ) from None
        game = done.game
        recorded = self.store.add(game)
        self.results[game.index] = TableResult(game.players, game.places, game.scores)
        if self.bracket is not None:
            self.played.append(_Finished(game.index, game.players, game.places))
        self.finished += 1
        self._running.discard(pairing.index)
        self._game_over.set()
        self._game_over = trio.Event()
        last = self.complete()
        index_page = last or self._site_pace.due()
        try:
            if recorded:
                append_pgn(output / PGN, game.pgn)
            if last or index_page or self._ratings_pace.due():
                with self._ratings_pace.timing():
                    self._rate()
                    _write_ratings(output, self._standings, self.outcome())
            with self._site_pace.timing(index_page):
                update_site(
                    output,
                    self.store,
                    pairing.index,
                    page=done.page,
                    total=self.site_total(),
                    standings=self._standings,
                    index_page=index_page,
                )
        except (OSError, RefereeFault) as error:
            raise RefereeFault(
                f"{describe_failure(error)}; game {pairing.index + 1} is recorded in {DATABASE},"
                " and the next run rewrites the files made from it"
            ) from None
        self.progress.game_finished(pairing, done, self._standings)


@dataclass(slots=True)
class _Pace:
    """When to redo a refresh that reads every game so far (the ratings, the site's
    index): at most every ``least`` seconds, and no more often than keeps it within
    :data:`REFRESH_SHARE` of the time, so that its cost, which grows with the games,
    never slows a long run down (trio's clock)."""

    least: float
    at: float = -math.inf
    cost: float = 0.0

    def due(self) -> bool:
        return trio.current_time() >= self.at + max(self.least, self.cost / REFRESH_SHARE)

    @contextlib.contextmanager
    def timing(self, doing: bool = True) -> Iterator[None]:
        """Time the refresh done inside (when ``doing``)."""
        started = trio.current_time()
        yield
        if doing:
            self.at = trio.current_time()
            self.cost = self.at - started


@dataclass(frozen=True, slots=True)
class _Finished:
    """A finished game, as a Swiss or knockout pairs the next rounds from it
    (:class:`~tournaments.swiss.Finished`)."""

    index: int
    players: tuple[str, ...]
    places: tuple[int, ...]


def outcome_of(config: TournamentConfig) -> Outcome:
    """The Swiss standings or knockout bracket of the tournament stored in ``config.output``
    (``None`` for another format), from its results store."""
    bracket = config.bracket()
    if bracket is None:
        return None
    with ResultStore.open(config.output / DATABASE, read_only=True) as store:
        played = [
            _Finished(game.index, game.players, game.places) for game in store.games(pgn=False)
        ]
    return bracket.standings(played) if isinstance(bracket, Swiss) else bracket.matches(played)


def _abandoned(error: BaseException) -> str:
    """Why an attempt a run stopped in the middle of (with ``error``) was abandoned."""
    fault = own_failure(error)
    if fault is not None:
        return f"the run stopped: {describe_failure(fault)}"
    return "the run stopped before it ended"


def _take_up_to(items: Iterator[Pairing], count: int) -> list[Pairing]:
    """The next ``count`` items (fewer when they run out)."""
    return [item for _, item in zip(range(max(0, count)), items, strict=False)]


async def _stop_on_sigterm() -> None:
    """Turn SIGTERM into :class:`TournamentStopped` (signals are only caught in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            raise TournamentStopped("SIGTERM", signum=signal.SIGTERM)


def _next_run_directory(logs: Path) -> Path:
    """``logs/run-N`` for a number N no earlier run has used."""
    used = [
        int(entry.name.removeprefix("run-"))
        for entry in (logs.iterdir() if logs.is_dir() else ())
        if entry.name.startswith("run-") and entry.name.removeprefix("run-").isdigit()
    ]
    return logs / f"run-{max(used, default=0) + 1}"


def _write_ratings(output: Path, table: RatingTable, outcome: Outcome = None) -> None:
    """Write ``ratings.json`` (with a Swiss's or knockout's ``outcome``) and ``ratings.csv``
    into ``output``, each atomically."""
    _write_atomically(output / RATINGS_JSON, to_json(table, outcome) + "\n")
    _write_atomically(output / RATINGS_CSV, to_csv(table))


def _write_atomically(path: Path, text: str) -> None:
    """Replace the file at ``path`` with ``text``: a reader sees the old file or the new one."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise


# --- ratings of a PGN file -----------------------------------------------------------


PGN_WARNINGS_SHOWN = 10
"""How many skipped games of a PGN file :func:`ratings_for_pgn` names one by one."""


@dataclass(frozen=True, slots=True)
class PgnRatings:
    """The ratings of the games in a PGN file: the table, how many games were rated,
    and what was left out (broken games, games without players, unfinished games)."""

    table: RatingTable
    games: int
    warnings: tuple[str, ...]


def ratings_for_pgn(
    path: str | os.PathLike[str],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    method: Method = "plackett-luce",
) -> PgnRatings:
    """Rate the finished games of the PGN file at ``path`` by their tags, of any seat count.

    Only the tags are read (:func:`~referee.pgn.iter_pgn_headers`), in one pass
    whose memory does not grow with the file, so every game with readable tags
    counts whatever its movetext holds, as in Ordo. A game's players are its
    ``Seat1`` … ``SeatN`` tags, or else its ``White`` and ``Black``
    (:func:`~referee.pgn.seat_players`); its places come from its ``Result``
    (``1-0``, ``1/2-1/2``, ``2-1-3``, a solo game's score: see
    :func:`~referee.pgn.result_places`), its scores from its ``Scores`` tag
    (``47-38-30``), else, for two seats, 1, ½ or 0, and for a solo game its
    ``Result``. Names are taken as PGN readers give them, made printable. Games
    whose tags cannot be read, that do not name every player, with a Result tag
    that is not a result for their seats, or with a ``Scores`` tag that is not one
    finite number per seat are skipped with a warning (the
    first :data:`PGN_WARNINGS_SHOWN` by number, the others counted); unfinished
    games (``*``, or no Result tag) are left out, counted in one warning.
    ``anchor``/``anchor_elo`` fix one player's rating and ``method`` says how games
    of more than two seats are rated (see :func:`~tournaments.ratings.rate`; the
    OpenSkill ratings take the games in file order). Raises :class:`RecordError` when the file
    cannot be read or holds no game to rate.
    """
    tally = _PgnTally()
    try:
        table = rate(tally.results(path), anchor=anchor, anchor_elo=anchor_elo, method=method)
    except RatingError:
        if tally.rated:
            raise
        table = None  # an unknown anchor among no players at all: say there are none
    if table is None or not tally.rated:
        raise RecordError(f"{os.fspath(path)} holds no finished games to rate")
    return PgnRatings(table, tally.rated, tally.warnings())


def _scores_problem(tags: Mapping[str, str], seats: int) -> str | None:
    """Why a game's ``Scores`` tag cannot be used, or ``None`` (no tag, or a good one)."""
    if "Scores" not in tags:
        return None
    scores = tagged_scores(tags)
    # A score too long for a float is infinite: it would make every mean infinite.
    if scores is None or len(scores) != seats or not all(map(math.isfinite, scores)):
        shown = clip(printable(tags["Scores"]), 40)
        return f"its Scores tag {shown!r} is not one finite number per seat"
    return None


def _pgn_scores(tags: Mapping[str, str], places: tuple[int, ...]) -> tuple[float, ...] | None:
    """A finished game's scores from its tags (see :func:`ratings_for_pgn`), or ``None``;
    its ``Scores`` tag, when it has one, is good (:func:`_scores_problem`)."""
    scores = tagged_scores(tags)
    if scores is not None:
        return scores
    if len(places) == 1:
        return (float(tags["Result"]),)
    if len(places) == 2:
        first, second = places
        return (1.0, 0.0) if first < second else (0.0, 1.0) if second < first else (0.5, 0.5)
    return None


@dataclass(slots=True)
class _PgnTally:
    """What :func:`ratings_for_pgn` counted while it read."""

    rated: int = 0
    unfinished: int = 0
    skipped: int = 0
    named: list[str] = field(default_factory=list)

    def results(self, path: str | os.PathLike[str]) -> list[TableResult]:
        """Every game to rate, counting the others: in the order of their ``GameNumber``
        tags when every one has a distinct one (a tournament's PGN, written in the order
        its games ended, rated as the tournament rates them: by game number), else in the
        file's order. Only OpenSkill's ratings depend on the order."""
        numbered = list(self._results(path))
        numbers = {number for number, _ in numbered}
        if None not in numbers and len(numbers) == len(numbered):
            numbered.sort(key=lambda pair: pair[0] or 0)
        return [result for _, result in numbered]

    def _results(self, path: str | os.PathLike[str]) -> Iterator[tuple[int | None, TableResult]]:
        for entry in iter_pgn_headers(path):
            if isinstance(entry, PgnError):
                self.skip(f"skipped {entry}")
                continue
            tags, number = entry.tags, entry.number
            result = tags.get("Result", "*")
            players = tuple(printable(name) for name in seat_players(tags))
            places = result_places(result, len(players))
            if result == "*":
                self.unfinished += 1
            elif places is None:
                shown = clip(printable(result), 40)
                self.skip(f"skipped game {number}: its Result tag {shown!r} is not a result")
            elif any(name in ("?", "") for name in players):
                every = "both" if len(players) == 2 else "all its"
                self.skip(f"skipped game {number}: it does not name {every} players")
            elif len(set(players)) < len(players):
                twice = next(name for name in players if players.count(name) > 1)
                self.skip(f"skipped game {number}: {clip(twice, 80)} plays against themselves")
            elif (problem := _scores_problem(tags, len(players))) is not None:
                self.skip(f"skipped game {number}: {problem}")
            else:
                self.rated += 1
                game = tags.get("GameNumber", "")
                order = int(game) if game.isdecimal() and len(game) <= 9 else None
                yield order, TableResult(players, places, _pgn_scores(tags, places))

    def skip(self, why: str) -> None:
        self.skipped += 1
        if len(self.named) < PGN_WARNINGS_SHOWN:
            self.named.append(why)

    def warnings(self) -> tuple[str, ...]:
        """The warnings for the user: skipped games, then the unfinished ones."""
        warnings = list(self.named)
        if self.skipped > len(self.named):
            more = self.skipped - len(self.named)
            warnings.append(f"skipped {more} more game{'s' * (more != 1)}")
        if self.unfinished:
            s = "s" * (self.unfinished != 1)
            warnings.append(f"left out {self.unfinished} unfinished game{s} (*)")
        return tuple(warnings)


# Public seams for the ladder (tournaments.ladder), which keeps its folder as a tournament
# keeps its output directory: locked, one logs/run-N per run, small files written whole.
locked_output = _locked
next_run_directory = _next_run_directory
write_atomically = _write_atomically
