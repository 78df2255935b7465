"""Where a tournament's games are played: pools of workers, and the worker process.

The runner (:mod:`tournaments.runner`) is the coordinator: it keeps the results
store, the PGN, the logs, the site, the progress display and the schedule, and
hands each game to a :class:`Pool` as a :class:`GameJob`. A pool plays it on
bots it keeps between games and gives back a :class:`GameDone`: plain data (the
numbered PGN text, the outcome, the logs, the game's page) that the coordinator
only has to save. Three pools play games:

- :func:`process_pool` (``referee tournament``'s): ``concurrency`` worker
  processes, ``python -m tournaments.workers``, each running its games in a trio
  loop of its own, so the referee's work spreads over the machine's cores. A
  worker that dies (``kill -9``, a crash) or falls silent is replaced, and its game
  is lost (:class:`GameLost`): the coordinator plays it again as a new attempt, with a
  fresh seed; when the coordinator dies, each worker reads the end of its input, stops
  its game and its bots, and exits.
- :func:`task_pool`: the games in the coordinator's own trio loop, with players
  made by the caller (``referee serve``'s remote bots live in its process).
- :func:`tournaments.cluster.cluster_pool`: the games on a Dask cluster, each worker
  process playing them with :func:`play_job` and checking bots with
  :func:`check_players`.

Only the coordinator writes the tournament's files, so a game is recorded once,
whichever worker played it and however many workers died trying.

**What is played again, and what is not.** A game is played again only when the
referee lost it: its worker process or Dask worker died or fell silent (:class:`GameLost`),
or the run itself stopped or was killed before the game was recorded. Nothing a seat
does in the game is one of those: a bot that crashes, hangs, floods or breaks the
protocol loses the game (:func:`~referee.driver.drive`), and a failure in the referee's
own code or resources stops the run rather than retrying. A sandboxed bot cannot reach
the worker's process (its own PID namespace and user); an unsandboxed bot runs as the
referee's user and can signal it (docs/security.md says so), but even then the game
comes back as a new attempt with a fresh seed, recorded as such.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import trio

from referee.errors import RefereeError, RefereeFault, describe_failure, own_failure
from referee.match import BotPlayer, MatchConfig, play_game
from referee.pgn import GameRecord, format_game
from referee.preflight import preflight
from referee.process import BotCommand
from referee.sandbox import CPU_POOL
from tournaments.recovery import numbered
from tournaments.site import game_page_text
from tournaments.store import GameRecord as StoredGame
from tournaments.store import timestamp

__all__ = [
    "GameDone",
    "GameJob",
    "GameLost",
    "MakePlayer",
    "Pool",
    "PoolFactory",
    "Warn",
    "Work",
    "check_players",
    "close_all",
    "play_job",
    "process_pool",
    "task_pool",
]

logger = logging.getLogger(__name__)

WORKER_EXIT_GRACE = 10.0
"""Seconds a worker process has to stop its bots and exit once told to, before it is killed."""

WORKER_HEARTBEAT = 2.0
"""Seconds between two signs of life a worker process sends while it plays a game."""

WORKER_SILENCE = 30.0
"""Seconds without a word from a worker process after which it is taken for dead (stopped,
hung): it is killed and its game lost (:class:`GameLost`)."""

WORKER_LOG = "worker.log"
"""The worker process's own stderr, beside its bots' logs (a crash's traceback lands here)."""


@dataclass(frozen=True, slots=True)
class GameJob:
    """One attempt at a game for a worker to play: pairing ``index`` (game number
    ``index + 1``), its players in seat order, its round, its seed (that of ``attempt``,
    counted from 1: :meth:`~tournaments.config.TournamentConfig.game_seed`) and its
    opening."""

    index: int
    players: tuple[str, ...]
    round: str
    seed: int
    opening: str | None = None
    attempt: int = 1


class GameLost(RefereeError):
    """An attempt at a game was lost through no seat's doing: the worker process or Dask
    worker playing it died, or fell silent and was killed. The coordinator notes it as
    abandoned with ``cause`` (one line: ``worker process 2 was killed by SIGKILL``) and
    plays the game again as its next attempt; ``hint`` (``" (see …/worker.log)"``) is
    where to look when that keeps happening."""

    def __init__(self, cause: str, hint: str = "") -> None:
        super().__init__(cause, hint)
        self.cause = cause
        self.hint = hint

    def __str__(self) -> str:
        return self.cause


@dataclass(frozen=True, slots=True)
class GameDone:
    """A game a worker played, ready to be saved: the game as the store keeps it (its
    numbered PGN text included), the bots' log lines and the game's HTML page; for a
    match's work (:attr:`Work.for_match`), no page (``""``) but the game's own record."""

    game: StoredGame
    logs: tuple[str, ...]
    page: str
    record: GameRecord | None = None


Warn = Callable[[str], None]
"""Where a run reports, one line each, what it repaired or changed (a worker that died, a
capped concurrency)."""

Watch = Callable[[int, GameRecord], None]
"""Told, before each request of a game and once more at its end, of pairing ``index``'s
game so far (``play_game``'s ``watch``)."""

MakePlayer = Callable[[str, trio.Nursery, Path | None], BotPlayer]
"""Makes the player called ``name``, its processes run in ``nursery``, its bots' stderr
logged under the given folder (none when ``None``)."""


@dataclass(frozen=True, slots=True)
class Work:
    """Everything a worker needs to play a tournament's games (it is pickled to reach
    one): the match settings (their sandbox the one the bots run in: it hides the
    openings and every other player's folder), each player's command, the seats of a
    game, where bots' stderr is logged (each worker in a folder of its own below it), and
    whether the games are a ``referee match``'s (``for_match``): then no game gets an HTML
    page (a match has no site, and a page costs about as much as a quick game) and each
    :class:`GameDone` carries the game's own record (a match's PGN has no ``GameNumber``,
    and reading the text back would cost more than the game)."""

    match: MatchConfig
    commands: Mapping[str, BotCommand]
    seats: int = 2
    log_dir: Path | None = None
    for_match: bool = False

    def player(self, name: str, nursery: trio.Nursery, log_dir: Path | None) -> BotPlayer:
        """The bot of player ``name``, as this tournament runs it."""
        return BotPlayer(
            self.commands[name],
            name,
            nursery,
            max_line_bytes=self.match.max_line_bytes,
            log_dir=log_dir,
            sandbox=self.match.sandbox,
        )

    def bots_at_once(self, slots: int) -> int:
        """How many bots the preflight may run at once where ``slots`` games are played:
        as many as those games seat (at least two each)."""
        return max(2, self.seats) * slots

    def worker_logs(self, number: int) -> Path | None:
        """The folder of worker ``number``'s logs (counted from 1)."""
        return None if self.log_dir is None else self.log_dir / f"worker-{number}"


class Pool(Protocol):
    """What plays a run's games: ``slots`` of them at once."""

    @property
    def slots(self) -> int:
        """How many games it plays at once (the coordinator runs one task per slot)."""
        ...

    async def check(self, names: Sequence[str], start: str | None) -> None:
        """Start every player's bot once where the games will run (the preflight);
        raises :class:`~referee.preflight.PreflightError`."""
        ...

    async def play(self, slot: int, job: GameJob) -> GameDone:
        """Play ``job`` in ``slot`` (each slot plays one game at a time) and return it.

        Returns the game, or raises :class:`GameLost` when the worker playing it died
        (the caller then plays the game again as a new attempt, a new job with a fresh
        seed: a pool never plays one job twice, since its first moves were seen). Raises
        :class:`~referee.errors.RefereeFault` when the referee's own resources fail.
        When cancelled, the game is dropped.
        """
        ...


PoolFactory = Callable[[Work, int], AbstractAsyncContextManager[Pool]]
"""Opens a pool for a run's :class:`Work` playing at most the given number of games at once."""


# --- one game ---------------------------------------------------------------------------


async def play_job(
    work: Work,
    job: GameJob,
    bots: dict[str, BotPlayer],
    make: Callable[[str], BotPlayer],
    watch: Watch | None = None,
) -> GameDone:
    """Play ``job`` on the running ``bots`` (made with ``make`` when missing; those not
    in this game are closed), and make it ready to save; ``watch`` is told of the game
    turn by turn.

    A failure of the referee's own resources raises :class:`RefereeFault` saying the
    game was not recorded.
    """
    await close_all(bot for name, bot in bots.items() if name not in job.players)
    for name in job.players:
        if name not in bots:
            bots[name] = make(name)
    try:
        result = await play_game(
            [bots[name] for name in job.players],
            work.match,
            round_=job.round,
            seed=job.seed,
            start=job.opening,
            watch=None if watch is None else functools.partial(watch, job.index),
        )
    except BaseException as error:
        fault = own_failure(error)
        if fault is None:
            raise
        raise RefereeFault(
            f"{describe_failure(fault)}; game {job.index + 1}, which it interrupted,"
            " was not recorded"
        ) from None
    record = numbered(result.record, job.index, job.attempt)
    text = format_game(record)
    ending = result.ending
    game = StoredGame(
        index=job.index,
        players=job.players,
        result=ending.result,
        places=tuple(ending.places),
        scores=tuple(ending.scores),
        termination=ending.termination,
        reason=ending.reason,
        plies=len(result.record.turns),
        pgn=text,
        finished_at=timestamp(),
    )
    if work.for_match:
        return GameDone(game=game, logs=tuple(result.logs), page="", record=result.record)
    page = game_page_text(job.index, text, record)
    return GameDone(game=game, logs=tuple(result.logs), page=page)


async def check_players(
    work: Work,
    names: Sequence[str],
    start: str | None,
    *,
    at_once: int | None = None,
    make: MakePlayer | None = None,
) -> None:
    """The preflight (:func:`~referee.preflight.preflight`) of ``names``' bots, made by
    ``make`` (default: :meth:`Work.player`), their stderr not logged."""
    made = make or work.player
    await preflight(
        names,
        lambda name, nursery: made(name, nursery, None),
        work.match,
        start=start,
        at_once=at_once,
    )


async def close_all(bots: Iterable[BotPlayer]) -> None:
    """Tell these bots to quit and wait until they are gone, all at once."""
    async with trio.open_nursery() as nursery:
        for bot in bots:
            nursery.start_soon(bot.close)


# --- in the coordinator's own loop -----------------------------------------------------


def task_pool(make_player: MakePlayer | None = None, watch: Watch | None = None) -> PoolFactory:
    """A pool playing the games as tasks of the coordinator's own trio loop, with
    players made by ``make_player`` (default: :meth:`Work.player`), each game watched
    turn by turn by ``watch`` (when given)."""

    @contextlib.asynccontextmanager
    async def open_pool(work: Work, slots: int) -> AsyncIterator[Pool]:
        make = make_player or work.player
        async with trio.open_nursery() as nursery:
            pool = _TaskPool(work, slots, nursery, make, watch)
            yield pool
            await close_all(bot for bots in pool.bots for bot in bots.values())

    return open_pool


class _TaskPool:
    def __init__(
        self,
        work: Work,
        slots: int,
        nursery: trio.Nursery,
        make: MakePlayer,
        watch: Watch | None,
    ) -> None:
        self.work = work
        self._watch = watch
        self.slots = slots
        self.bots: list[dict[str, BotPlayer]] = [{} for _ in range(slots)]
        self._nursery = nursery
        self._make = make

    async def check(self, names: Sequence[str], start: str | None) -> None:
        at_once = self.work.bots_at_once(self.slots)
        await check_players(self.work, names, start, at_once=at_once, make=self._make)

    async def play(self, slot: int, job: GameJob) -> GameDone:
        logs = self.work.worker_logs(slot + 1)
        return await play_job(
            self.work,
            job,
            self.bots[slot],
            lambda name: self._make(name, self._nursery, logs),
            self._watch,
        )


# --- in worker processes ---------------------------------------------------------------


@contextlib.asynccontextmanager
async def process_pool(work: Work, slots: int) -> AsyncIterator[Pool]:
    """A pool of ``slots`` worker processes, each playing one game at a time on bots it
    keeps between games; every worker is stopped (and its bots with it) when it closes.
    A worker that dies playing a game is started again for the next one, and the game
    raises :class:`GameLost`."""
    pool = _ProcessPool(work, slots)
    try:
        yield pool
    finally:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for worker in pool.workers:
                    nursery.start_soon(worker.stop)


class _ProcessPool:
    def __init__(self, work: Work, slots: int) -> None:
        self.work = work
        self.slots = slots
        shares = cpu_shares(sorted(os.sched_getaffinity(0)), slots, work.seats)
        self.workers = [
            _WorkerProcess(work, number, share) for number, share in enumerate(shares, start=1)
        ]

    async def check(self, names: Sequence[str], start: str | None) -> None:
        # Here: a bot that starts for the coordinator starts for its workers (same machine).
        await check_players(self.work, names, start, at_once=self.work.bots_at_once(self.slots))

    async def play(self, slot: int, job: GameJob) -> GameDone:
        return await self.workers[slot].play(job)


def cpu_shares(cpus: Sequence[int], workers: int, seats: int) -> list[tuple[int, ...]]:
    """Each worker process's share of ``cpus``, the CPUs it pins its bots to (with
    ``affinity``, :class:`~referee.sandbox.SandboxPolicy`): an equal slice each when there
    are enough CPUs for every seat of every game at once, else ``seats`` CPUs each, taken
    in turn round the list (so bots share CPUs as evenly as they can)."""
    count = len(cpus)
    if count >= workers * seats:
        return [
            tuple(cpus[k * count // workers : (k + 1) * count // workers]) for k in range(workers)
        ]
    return [
        tuple(dict.fromkeys(cpus[(k * seats + seat) % count] for seat in range(seats)))
        for k in range(workers)
    ]


@dataclass(frozen=True, slots=True)
class _Setup:
    """The first message to a worker process: the run's work, its number, and its share
    of the CPUs (:func:`cpu_shares`)."""

    work: Work
    number: int
    cpus: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Stop:
    """No more games: close the bots and exit."""


@dataclass(frozen=True, slots=True)
class _Alive:
    """A worker process is playing a game still (every :data:`WORKER_HEARTBEAT` seconds)."""


_SILENT = object()
"""What :func:`_reply` gives for a worker that said nothing for :data:`WORKER_SILENCE` s."""


async def _reply(frames: _Frames) -> object | None:
    """A worker's answer to a game (``None`` at the end of its output), past its signs of
    life; :data:`_SILENT` when it falls silent for :data:`WORKER_SILENCE` seconds."""
    while True:
        with trio.move_on_after(WORKER_SILENCE):
            message = await frames.receive()
            if not isinstance(message, _Alive):
                return message
            continue
        return _SILENT


@dataclass(frozen=True, slots=True)
class _Failure:
    """A failure of the referee's own resources in the worker (a :class:`RefereeFault`)."""

    message: str


_HEADER = struct.Struct("!Q")
"""Each message between the coordinator and a worker is its pickle's length, then the pickle.
The channel joins two processes of this program only: bots never see it."""


def _frame(message: object) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


class _Cut(Exception):
    """The other process's output ended in the middle of a message."""


class _Frames:
    """Reads the messages of :func:`_frame` from a stream."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self._stream = stream
        self._buffer = bytearray()

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def receive(self) -> object | None:
        """The next message, or ``None`` when the stream ends between messages; raises
        :class:`_Cut` when it ends inside one."""
        await self._fill(_HEADER.size)
        if not self._buffer:
            return None
        (size,) = _HEADER.unpack_from(self._buffer)
        await self._fill(_HEADER.size + size)
        data = bytes(self._buffer[_HEADER.size : _HEADER.size + size])
        del self._buffer[: _HEADER.size + size]
        return pickle.loads(data)

    async def _fill(self, size: int) -> None:
        while len(self._buffer) < size:
            chunk = await self._stream.receive_some(max(65536, size - len(self._buffer)))
            if not chunk:
                if self._buffer:
                    raise _Cut(f"{len(self._buffer)} bytes of a message, then the end")
                return
            self._buffer += chunk


class _WorkerProcess:
    """One worker process of a :func:`process_pool`, started when first needed and
    started again when it dies."""

    def __init__(self, work: Work, number: int, cpus: tuple[int, ...]) -> None:
        self.work = work
        self.number = number
        self.cpus = cpus
        self._process: trio.Process | None = None
        self._frames: _Frames | None = None
        self._busy = False
        """Whether it is playing a game (then it is not told to stop: its input is closed)."""

    @property
    def log_path(self) -> Path | None:
        logs = self.work.worker_logs(self.number)
        return None if logs is None else logs / WORKER_LOG

    async def play(self, job: GameJob) -> GameDone:
        process, frames = self._process, self._frames
        if process is None or frames is None:
            process, frames = await self._start()
        assert process.stdin is not None
        self._busy = True
        try:
            await process.stdin.send_all(_frame(job))
            reply = await _reply(frames)
        except (trio.BrokenResourceError, trio.ClosedResourceError, _Cut):
            reply = None
        if reply is None or reply is _SILENT:
            if reply is _SILENT:
                process.kill()
            how = await self._buried(silent=reply is _SILENT)
            where = f" (see {self.log_path})" if self.log_path is not None else ""
            raise GameLost(f"worker process {self.number} {how}", where)
        self._busy = False
        if isinstance(reply, _Failure):
            raise RefereeFault(reply.message)
        if not isinstance(reply, GameDone) or reply.game.index != job.index:
            raise RefereeFault(f"worker process {self.number} answered {reply!r:.80}")
        return reply

    async def _start(self) -> tuple[trio.Process, _Frames]:
        """Start the worker process and send it the work."""
        path = self.log_path
        log = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            log = open(path, "ab")  # noqa: SIM115 (the child keeps its own copy)
        # Its messages come on a pipe of their own: whatever it (or a library, or Python's
        # start-up) writes to its stdout goes to the log, and can never pass for a message.
        reading, writing = os.pipe()
        sink = log if log is not None else subprocess.DEVNULL
        try:
            process = await trio.lowlevel.open_process(
                # -P: nothing in the current directory (the bots' folder, perhaps) can
                # stand in for a module the worker imports.
                [sys.executable, "-P", "-m", "tournaments.workers", str(writing)],
                stdin=subprocess.PIPE,
                stdout=sink,
                stderr=sink,
                pass_fds=(writing,),
                start_new_session=True,  # Ctrl-C reaches the coordinator, which stops us
                env=_worker_environment(),
            )
        except BaseException:
            os.close(reading)
            raise
        finally:
            os.close(writing)
            if log is not None:
                log.close()
        assert process.stdin is not None
        frames = _Frames(trio.lowlevel.FdStream(reading))
        self._process, self._frames = process, frames
        with contextlib.suppress(trio.BrokenResourceError):  # if it died at once, the game sees
            await process.stdin.send_all(_frame(_Setup(self.work, self.number, self.cpus)))
        return process, frames

    async def _buried(self, *, silent: bool = False) -> str:
        """Wait for the dead (or dying, or ``silent`` and killed) worker process to be
        gone; → how it ended."""
        process, frames = self._process, self._frames
        self._process = self._frames = None
        self._busy = False
        if process is None or frames is None:
            return "was not running"
        with trio.CancelScope(shield=True):  # a stop now must not leave it unreaped
            await _reap(process, frames)
        code = process.returncode
        if silent:
            return f"said nothing for {WORKER_SILENCE:g} s and was killed"
        if code is not None and code < 0:
            return f"was killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"

    async def stop(self) -> None:
        """Tell the worker to stop (if it is between games), close its input, and wait for
        it to exit (it is killed after :data:`WORKER_EXIT_GRACE` seconds)."""
        process, frames = self._process, self._frames
        self._process = self._frames = None
        if process is None or frames is None:
            return
        assert process.stdin is not None
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            if not self._busy:  # in a game, the end of its input stops it at once
                with trio.move_on_after(WORKER_EXIT_GRACE):
                    await process.stdin.send_all(_frame(_Stop()))
            await process.stdin.aclose()
        await _reap(process, frames)


async def _reap(process: trio.Process, frames: _Frames) -> None:
    """Wait for ``process`` to exit, killing it after :data:`WORKER_EXIT_GRACE` seconds, and
    close the pipes to and from it."""
    with trio.move_on_after(WORKER_EXIT_GRACE):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
    if process.stdin is not None:
        await process.stdin.aclose()
    await frames.aclose()


def _worker_environment() -> dict[str, str]:
    """This environment, with this package importable wherever the coordinator was started
    (a checkout run without installing it, as the benchmarks do)."""
    root = str(Path(__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root if not path else f"{root}{os.pathsep}{path}"}


def main() -> None:
    """A worker process: ``python -m tournaments.workers FD``, started by
    :func:`process_pool`; it reads the coordinator's messages on its stdin and writes its
    own to the file descriptor ``FD``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator stops us when it stops
    trio.run(_serve, 0, int(sys.argv[1]))


async def _serve(input_fd: int, output_fd: int) -> None:
    """Play the games the coordinator sends, one at a time, until told to stop; at the end of
    the input (the coordinator stopped or died) stop at once, bots and all."""
    frames = _Frames(trio.lowlevel.FdStream(input_fd))
    output = trio.lowlevel.FdStream(output_fd)
    setup = await frames.receive()
    if not isinstance(setup, _Setup):
        return
    work, logs = setup.work, setup.work.worker_logs(setup.number)
    CPU_POOL.confine(setup.cpus)
    bots: dict[str, BotPlayer] = {}
    writing = trio.Lock()

    async def send(message: object) -> None:
        async with writing:
            await output.send_all(_frame(message))

    async def heartbeat(task_status: trio.TaskStatus[trio.CancelScope]) -> None:
        with trio.CancelScope() as scope:
            task_status.started(scope)
            while True:
                await trio.sleep(WORKER_HEARTBEAT)
                with trio.CancelScope(shield=True):  # never half a message on the channel
                    try:
                        await send(_Alive())
                    except trio.BrokenResourceError:
                        return  # the coordinator is gone: the end of the input stops us

    async with trio.open_nursery() as nursery:
        sender, receiver = trio.open_memory_channel[GameJob | _Stop](0)
        nursery.start_soon(_read_jobs, frames, sender, nursery.cancel_scope)
        async for job in receiver:
            if isinstance(job, _Stop):
                break
            reply: GameDone | _Failure
            beating = await nursery.start(heartbeat)
            try:
                reply = await play_job(
                    work, job, bots, lambda name: work.player(name, nursery, logs)
                )
            except RefereeFault as fault:
                reply = _Failure(str(fault))
            finally:
                beating.cancel()
            try:
                await send(reply)
            except trio.BrokenResourceError:
                break  # the coordinator is gone
        await close_all(bots.values())
        nursery.cancel_scope.cancel()


async def _read_jobs(
    frames: _Frames, jobs: trio.MemorySendChannel[GameJob | _Stop], scope: trio.CancelScope
) -> None:
    """Pass the coordinator's messages on; at the end of its input, cancel everything."""
    async with jobs:
        while (message := await frames.receive()) is not None:
            if not isinstance(message, GameJob | _Stop):
                break
            await jobs.send(message)
            if isinstance(message, _Stop):
                return  # the bots are closed gracefully: do not cancel that
    scope.cancel()


if __name__ == "__main__":
    # Run as the module itself, not as ``__main__``: the messages pickle its classes by name.
    from tournaments.workers import main as worker_main

    worker_main()
