"""Playing a tournament's games on a Dask cluster (``referee tournament … --cluster ADDRESS``).

:func:`cluster_pool` is a :data:`~tournaments.workers.PoolFactory`: the runner stays
the coordinator (the store, the PGN, the logs, the site, the schedule are its
alone) and hands each game to an existing `Dask distributed
<https://distributed.dask.org>`_ cluster as one task. The task, in a Dask worker
thread, hands the game to its worker process's referee (:class:`_Referee`: one trio
loop in a thread of its own), which plays it with :func:`~tournaments.workers.play_job`
on the bots that Dask thread kept from its last game of the run (found on that
worker's machine, started when missing) and returns the
:class:`~tournaments.workers.GameDone` — plain data — to the coordinator, which saves
it as it saves a local game. The start-up check is a task too, with bots of its own.
docs/cluster.md says how to deploy it.

**What plays at once.** The pool has one slot per thread of the cluster's workers
when it connects (``dask worker --nthreads``): a game holds one worker thread from
its first move to its last, so more would only wait in the scheduler's queue, and
fewer would leave threads idle. The run's ``concurrency`` (a guess from the
coordinator's own CPUs) does not apply.

**Exactly once, never the same deal twice.** Each attempt at a game is a task with a
key of its own (``game-7-<run>-2``: game number, the run's random token, attempt).
When a worker dies while it plays a game, the scheduler would run the task again on
another worker, from its start and with its seed: the players would see the same deal
again. So the task first marks, on the scheduler, that it started (a Dask ``Event``
named after its key); run again, it finds the mark and plays nothing, raising
:class:`~tournaments.workers.GameLost`, and a task that kills workers before its mark
fails with ``KilledWorker``, which is lost the same way. The runner then plays the game
again as its next attempt, with a fresh seed (and stops the run when one game keeps
being lost). The coordinator waits for the one result of each task, so a game is never
lost nor saved twice. A bot's process dies with the thread that started it
(``PR_SET_PDEATHSIG``, bwrap's ``--die-with-parent``): the referee's thread, which lives
as long as the worker process, so a dead worker leaves no bot behind (and no idle
Dask thread ending could kill a kept bot).

**Stopping.** When the coordinator stops (Ctrl-C, a fault, ``kill -9``), it cancels its
tasks or the scheduler drops them with its connection; each game notices within
:data:`RELEASE_POLL` seconds that it is no longer wanted, stops, and its bots are
closed. Dask itself never interrupts a running task. At its end a run has every worker
close the bots it keeps for it; a worker closes bots that had no game for
:data:`IDLE_CLOSE` seconds by itself (a coordinator that died), and a Dask thread's bots
of another run when a game of a new run comes to it.

**On the workers** a bot's stderr is not logged to files (the coordinator's
``logs/run-N/`` may not exist there), and no ``bots.pids`` ledger is written: no bot
outlives its worker process. The bots' ``log`` messages come back with the game, as
locally.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

import trio

from referee.errors import RefereeError, RefereeFault
from referee.match import BotPlayer
from referee.preflight import PreflightError
from referee.sandbox import SandboxError, SandboxUnavailable, sandbox_warning
from tournaments.workers import (
    GameDone,
    GameJob,
    GameLost,
    Pool,
    PoolFactory,
    Warn,
    Work,
    check_players,
    close_all,
    play_job,
)

if TYPE_CHECKING:
    from distributed import Client, Future

__all__ = [
    "CONNECT_TIMEOUT",
    "INSTALL_HINT",
    "ClusterError",
    "cluster_pool",
    "require_distributed",
    "scheduler_address",
]

CONNECT_TIMEOUT = 5.0
"""Seconds to reach the scheduler, and then to find at least one worker there; and for it
to answer while a game is waited for."""

SCHEDULER_CHECK = 30.0
"""Seconds a game is waited for before the scheduler is asked whether it is still there
(and again every as many seconds)."""

RELEASE_POLL = 0.25
"""Seconds between a task's checks that the coordinator still wants its game."""

IDLE_CLOSE = 30.0
"""Seconds a worker keeps a Dask thread's bots without a game (its coordinator may be gone)."""

IDLE_POLL = 1.0
"""Seconds between a worker's looks for bots idle that long."""

CLOSE_GRACE = 5.0
"""Seconds the coordinator gives the scheduler to hear that it cancels a game or leaves."""

INSTALL_HINT = "pip install 'ivy-referee[cluster]'"
"""What installs Dask distributed beside the referee."""

logger = logging.getLogger(__name__)

T = TypeVar("T")

"""Where the pool reports, one line each, what the run should know (a worker without a
sandbox)."""


class ClusterError(RefereeFault):
    """The Dask cluster failed the referee: Dask is not installed, the scheduler cannot be
    reached or has no workers, or the connection to it was lost. No bot is to blame: the
    game is not recorded, and the next run plays it."""


def require_distributed() -> None:
    """Raise :class:`ClusterError` when Dask distributed cannot be imported."""
    try:
        import distributed  # noqa: F401
    except ImportError as error:
        raise ClusterError(
            f"playing on a cluster needs Dask distributed ({error}): {INSTALL_HINT}"
        ) from None


def cluster_pool(address: str, *, warn: Warn | None = None) -> PoolFactory:
    """A pool factory playing the games on the Dask cluster whose scheduler is at
    ``address`` (``tcp://host:8786``, or ``host:8786``); see the module docstring.
    ``warn`` gets one line for each machine whose bots would run without a sandbox
    (``sandbox = "auto"`` there; default: the ``logging`` module)."""
    address = scheduler_address(address)

    @contextlib.asynccontextmanager
    async def open_pool(work: Work, concurrency: int) -> AsyncIterator[Pool]:
        # ``concurrency`` is the coordinator's guess: the cluster's threads decide instead.
        with _quiet_dask():
            client = await trio.to_thread.run_sync(_connect, address, abandon_on_cancel=True)
            run = uuid.uuid4().hex  # makes this run's task keys its own
            try:
                threads = await trio.to_thread.run_sync(client.nthreads, abandon_on_cancel=True)
                yield _ClusterPool(
                    client, address, _for_workers(work), threads, run, warn or logger.warning
                )
            finally:
                # Leaving releases every task of this run (their games stop on the workers),
                # after the workers have closed the bots they keep for it.
                with trio.move_on_after(CLOSE_GRACE, shield=True):
                    await trio.to_thread.run_sync(
                        functools.partial(_close_everywhere, client, run),
                        abandon_on_cancel=True,
                    )
                with trio.move_on_after(CLOSE_GRACE, shield=True):
                    await trio.to_thread.run_sync(
                        functools.partial(client.close, timeout=CLOSE_GRACE),
                        abandon_on_cancel=True,
                    )

    return open_pool


def _close_everywhere(client: Client, run: str) -> None:
    """Have every worker close the bots it keeps for ``run`` (blocking)."""
    # Whatever fails here (a worker or the scheduler gone) must not hide how the run
    # ended: a worker not told closes them by itself after IDLE_CLOSE seconds.
    if client.status != "running":
        return  # the scheduler is gone: nothing would reach the workers
    with contextlib.suppress(Exception):
        client.run(_close_run, run)


def scheduler_address(text: str) -> str:
    """``text`` as Dask's client takes it: ``host:port`` is ``tcp://host:port`` (Dask's own
    commands read it so; its client does not)."""
    return text if "://" in text else f"tcp://{text}"


def _connect(address: str) -> Client:
    """A client of the scheduler at ``address`` that has at least one worker, else a
    :class:`ClusterError` (blocking: run in a thread)."""
    require_distributed()
    from distributed import Client

    try:
        # A client that fails to connect is left half-made, and complains (a traceback on
        # stderr) when it is collected: reach the scheduler once before making one.
        asyncio.run(_reach(address))
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except Exception as error:  # whatever the address or the network: one line
        why = _one_line(error)
        if isinstance(error, TimeoutError):
            why = f"no answer to Dask's handshake within {2 * CONNECT_TIMEOUT:g} s"
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {why}") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError):
        client.close(timeout=CLOSE_GRACE)
        raise ClusterError(
            f"the Dask scheduler at {address} has no workers (waited {CONNECT_TIMEOUT:g} s):"
            f" start `dask worker {address}` where the games are to be played"
        ) from None
    return client


async def _reach(address: str) -> None:
    """Connect to ``address`` as Dask's client does (its TLS settings, its handshake), then
    leave; raises what Dask raises."""
    from distributed.comm import connect
    from distributed.security import Security

    arguments = Security().get_connection_args("client")
    reaching = connect(address, timeout=CONNECT_TIMEOUT, **arguments)
    # Dask's handshake has no deadline of its own: a server that is not Dask may never answer.
    comm = await asyncio.wait_for(reaching, 2 * CONNECT_TIMEOUT)
    await comm.close()


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Keep Dask's own log lines (a lost connection's tracebacks) off the coordinator's
    stderr while the pool is open: what they mean reaches the user as one
    :class:`ClusterError` line."""
    # Each of Dask's loggers (``distributed.client`` …) has a level of its own from Dask's
    # configuration: the parent's level alone would not silence them.
    names = ["distributed"] + [
        name for name in logging.root.manager.loggerDict if name.startswith("distributed.")
    ]
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for dask_logger in loggers:
        dask_logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for dask_logger, level in zip(loggers, levels, strict=True):
            dask_logger.setLevel(level)


def _for_workers(work: Work) -> Work:
    """The run's work as a worker plays it: no ``bots.pids`` ledger and no stderr logs,
    since the coordinator's output directory is not on the workers' machines."""
    match = dataclasses.replace(
        work.match, sandbox=dataclasses.replace(work.match.sandbox, ledger=None)
    )
    return dataclasses.replace(work, match=match, log_dir=None)


class _ClusterPool:
    """The games of one run on one Dask client: one slot per worker thread."""

    def __init__(
        self,
        client: Client,
        address: str,
        work: Work,
        threads: Mapping[str, int],
        token: str,
        warn: Warn,
    ) -> None:
        from distributed.comm import get_address_host

        self.client = client
        self.address = address
        self.work = work
        self.slots = max(1, sum(threads.values()))
        self.checkers = tuple({get_address_host(worker): worker for worker in threads}.values())
        """One worker of each machine of the cluster: where the bots are checked."""
        self.token = token
        """Makes this run's task keys its own (two runs never share a task), and names the
        bots the workers keep for it."""
        self.warn = warn

    async def check(self, names: Sequence[str], start: str | None) -> None:
        """The preflight, on one worker of each machine of the cluster: its sandbox is
        checked and the bots must start there, where the games are played."""
        futures = [
            (
                worker,
                self.client.submit(
                    _check_task,
                    self.work,
                    tuple(names),
                    start,
                    key=f"check-{number}-{self.token}",
                    workers=[worker],
                    allow_other_workers=True,  # if that worker dies, another one checks
                    pure=False,
                ),
            )
            for number, worker in enumerate(self.checkers, start=1)
        ]
        for worker, future in futures:
            try:
                warning = await self._outcome(future, "the start-up check")
            except (PreflightError, SandboxUnavailable, SandboxError) as error:
                raise type(error)(f"on the Dask worker {worker}: {error}") from None
            if warning is not None:
                self.warn(f"on the Dask worker {worker}: {warning}")

    async def play(self, slot: int, job: GameJob) -> GameDone:
        """Play ``job`` as a task (of the job's attempt: never twice, see the module);
        raises :class:`~tournaments.workers.GameLost` when a worker died playing it."""
        from distributed.scheduler import KilledWorker

        number = job.index + 1
        key = f"game-{number}-{self.token}-{job.attempt}"
        future = self.client.submit(
            _play_task, self.work, job, self.token, _started(key), key=key, pure=False
        )
        try:
            return await self._outcome(future, f"game {number}")
        except KilledWorker as error:
            deaths = getattr(error, "allowed_failures", 0) + 1
            raise GameLost(f"{_workers(deaths)} died", " (see the workers' logs)") from None
        finally:
            with trio.move_on_after(CLOSE_GRACE, shield=True):
                await trio.to_thread.run_sync(self._forget, key, abandon_on_cancel=True)

    def _forget(self, key: str) -> None:
        """Drop a task's start mark from the scheduler once its outcome is in (or given up).
        Not before: a worker lost after the game ended, its result with it, would have the
        scheduler compute the task again, which must then find the mark."""
        from distributed import Event

        with contextlib.suppress(Exception):  # a scheduler gone: the run stops anyway
            Event(_started(key), client=self.client).clear()

    async def _outcome(self, future: Future[T], what: str) -> T:
        """The result of ``future``, waited for without a thread; cancelled, it cancels the
        task (which then stops its game on the worker)."""
        finished = trio.Event()
        token = trio.lowlevel.current_trio_token()

        def wake(_: object) -> None:  # in a thread of the client's
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(finished.set)

        future.add_done_callback(wake)
        try:
            while not finished.is_set():
                with trio.move_on_after(SCHEDULER_CHECK):
                    await finished.wait()
                if not finished.is_set():
                    await self._check_scheduler(what)
            # Done: this only fetches the result (or its exception) from the worker.
            return await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except concurrent.futures.CancelledError as error:  # Dask's, not trio's
            raise ClusterError(
                f"the Dask scheduler at {self.address} dropped {what} ({_one_line(error)});"
                " it was not recorded"
            ) from None
        except ModuleNotFoundError as error:
            raise ClusterError(
                f"a Dask worker of {self.address} cannot run {what}: {_one_line(error)}"
                " (install ivy-referee on every worker)"
            ) from None
        finally:
            if not future.done():
                with trio.move_on_after(CLOSE_GRACE, shield=True):
                    await trio.to_thread.run_sync(future.cancel, abandon_on_cancel=True)

    async def _check_scheduler(self, what: str) -> None:
        """Raise :class:`ClusterError` when the scheduler does not answer within
        :data:`CONNECT_TIMEOUT` seconds (stopped, or cut off): Dask's client would wait
        for it for ever."""
        ask = functools.partial(self.client.scheduler_info, n_workers=0)
        try:
            with trio.move_on_after(CONNECT_TIMEOUT) as waiting:
                await trio.to_thread.run_sync(ask, abandon_on_cancel=True)
        except Exception as error:  # whatever Dask raises for a lost connection
            raise ClusterError(
                f"the Dask scheduler at {self.address} cannot be reached"
                f" ({_one_line(error)}) while it played {what}"
            ) from None
        if waiting.cancelled_caught:
            raise ClusterError(
                f"the Dask scheduler at {self.address} did not answer for"
                f" {CONNECT_TIMEOUT:g} s while it played {what}"
            )


# --- on a Dask worker --------------------------------------------------------------------


Slot = tuple[str, int]
"""Whose bots a worker keeps: a run's token and a Dask worker thread's ident."""


def _started(key: str) -> str:
    """The name of the scheduler's ``Event`` marking that the task ``key`` started."""
    return f"started-{key}"


def _play_task(work: Work, job: GameJob, run: str, started: str) -> GameDone:
    """A game, as a Dask task: played by this worker process's :class:`_Referee`, on the
    bots this Dask thread kept from its last game of the same run, once the ``started``
    mark is set. A task that finds the mark set already ran on a worker that died:
    its game's first moves were seen, so it is lost (:class:`GameLost`), not played
    again under the same seed."""
    from distributed import Event

    mark = Event(started)
    if mark.is_set():
        raise GameLost("a Dask worker died", " (see the workers' logs)")
    mark.set()
    slot = (run, threading.get_ident())
    wanted = _task_wanted()
    return _sent_back(lambda: _referee().play(work, job, slot, wanted))


def _close_run(run: str) -> None:
    """Close the bots this worker process keeps for ``run`` (the coordinator's last call,
    through ``Client.run``)."""
    referee = _REFEREE
    if referee is not None:
        referee.close_run(run)


def _check_task(work: Work, names: tuple[str, ...], start: str | None) -> str | None:
    """The sandbox check (:func:`~referee.sandbox.sandbox_warning`: an error, or the
    warning it returns) and the preflight, as a Dask task, in a trio loop of its own (every
    bot reaped before it returns): as many bots at once as the worker plays games."""
    from distributed import get_worker

    warning = sandbox_warning(work.match.sandbox)
    at_once = work.bots_at_once(get_worker().state.nthreads)
    wanted = _task_wanted()

    async def check() -> None:
        with trio.CancelScope() as scope:
            # A system task: no nursery wraps the check's own error in a group.
            trio.lowlevel.spawn_system_task(_cancel_when_unwanted, wanted, scope, trio.Event())
            await check_players(work, names, start, at_once=at_once)
            return
        raise _Unwanted("the start-up check")

    _sent_back(lambda: trio.run(check))
    return warning


class _Unwanted(Exception):
    """The coordinator no longer wants this task's outcome (nobody receives this)."""


def _task_wanted() -> Callable[[], bool]:
    """Whether the coordinator still wants the outcome of the task this thread runs."""
    from distributed import get_worker

    worker = get_worker()
    key = worker.get_current_task()

    def wanted() -> bool:
        # Read from another thread than the worker's event loop, which changes it: a
        # lookup is atomic.
        task = worker.state.tasks.get(key)
        return task is not None and task.state != "cancelled"

    return wanted


def _sent_back(function: Callable[[], T]) -> T:
    """``function()``; a referee error it raises goes back to the coordinator as its type and
    message, without what it was raised from (which may not pickle)."""
    try:
        return function()
    except RefereeError as error:
        error.__cause__ = error.__context__ = None
        raise


async def _cancel_when_unwanted(
    wanted: Callable[[], bool], scope: trio.CancelScope, over: trio.Event
) -> None:
    """Cancel ``scope`` once the task is no longer wanted; return when ``over`` is set."""
    while wanted():
        with trio.move_on_after(RELEASE_POLL):
            await over.wait()
        if over.is_set():
            return
    scope.cancel()


class _Referee:
    """The referee of one Dask worker process: a trio loop in a thread of its own, which
    plays every game of the process and keeps each Dask thread's bots between the games
    of a run (as a local worker process keeps its own).

    A bot dies with the *thread* that started it (``PR_SET_PDEATHSIG``, bwrap's
    ``--die-with-parent``): started from this thread, which ends only with the process,
    a bot lives as long as it is needed and dies with its worker, however that dies. Bots
    are closed when their run's coordinator says it is done, when a game of another run
    comes to their Dask thread, when their game is cancelled, and after
    :data:`IDLE_CLOSE` seconds without a game (a coordinator that died).
    """

    def __init__(self) -> None:
        self._bots: dict[Slot, dict[str, BotPlayer]] = {}
        self._idle_since: dict[Slot, float] = {}
        """When each slot's bots finished their last game (trio's clock), while idle."""
        self._token: trio.lowlevel.TrioToken
        self._nursery: trio.Nursery
        """Where the bots' processes run: the loop's own, as long as the process."""
        ready = threading.Event()
        thread = threading.Thread(
            target=trio.run, args=(self._serve, ready), name="referee-games", daemon=True
        )
        thread.start()
        ready.wait()

    async def _serve(self, ready: threading.Event) -> None:
        self._token = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            ready.set()
            while True:
                await trio.sleep(IDLE_POLL)
                now = trio.current_time()
                await self._close(
                    [slot for slot, since in self._idle_since.items() if now - since >= IDLE_CLOSE]
                )

    def play(self, work: Work, job: GameJob, slot: Slot, wanted: Callable[[], bool]) -> GameDone:
        """Play ``job`` on ``slot``'s bots (blocking: from a Dask worker thread)."""
        return trio.from_thread.run(self._play, work, job, slot, wanted, trio_token=self._token)

    def close_run(self, run: str) -> None:
        """Close every bot kept for ``run`` (blocking)."""
        trio.from_thread.run(self._close_run, run, trio_token=self._token)

    async def _close_run(self, run: str) -> None:
        await self._close([slot for slot in self._bots if slot[0] == run])

    async def _play(
        self, work: Work, job: GameJob, slot: Slot, wanted: Callable[[], bool]
    ) -> GameDone:
        # This Dask thread's bots of another run are not needed any more.
        await self._close([other for other in self._bots if other[1] == slot[1] and other != slot])
        bots = self._bots.setdefault(slot, {})
        self._idle_since.pop(slot, None)
        over = trio.Event()
        with trio.CancelScope() as scope:
            self._nursery.start_soon(_cancel_when_unwanted, wanted, scope, over)
            try:
                return await play_job(
                    work, job, bots, lambda name: work.player(name, self._nursery, None)
                )
            finally:
                over.set()
                self._idle_since[slot] = trio.current_time()
        await self._close([slot])  # cancelled in the middle of the game
        raise _Unwanted(f"game {job.index + 1}")

    async def _close(self, slots: Sequence[Slot]) -> None:
        """Tell the bots of ``slots`` to quit and wait until they are gone, all at once."""
        bots = [bot for slot in slots for bot in self._bots.pop(slot, {}).values()]
        for slot in slots:
            self._idle_since.pop(slot, None)
        with trio.CancelScope(shield=True):
            await close_all(bots)


_REFEREE: _Referee | None = None
"""This worker process's referee, made by its first game."""

_REFEREE_MADE = threading.Lock()


def _referee() -> _Referee:
    """This worker process's :class:`_Referee` (made once, whichever thread asks first)."""
    global _REFEREE
    with _REFEREE_MADE:
        if _REFEREE is None:
            _REFEREE = _Referee()
        return _REFEREE


def _workers(count: int) -> str:
    return f"{count} Dask worker{'s' * (count != 1)}"


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__
