"""Running games between bot processes (the trio layer).

This module only moves messages and keeps time: the judgement is the sans-I/O
:class:`~referee.session.GameSession`, the framing the sans-I/O
:class:`~protocol.connection.BotConnection`, the processes
:func:`~referee.process.open_bot`.

- :class:`BotPlayer` is one bot of a match or tournament. Its process runs as a
  task in the caller's nursery, is reused from game to game (as UCI engines are)
  and is replaced by a fresh one after a game in which it misbehaved.
- :class:`BotSeat` puts a :class:`BotPlayer` in one seat of one game, for the
  game driver (:func:`referee.driver.drive`, which runs every game's loop).
- :func:`play_game` plays one game between players and returns its
  :class:`GameResult`; a bot fault is a lost game, never an exception.
- :func:`run_match` plays a series between N bots with seats rotated.

What a bot writes is judged before it is written to again (docs/protocol.md,
"When a line counts"): its output is read while its reply is awaited, and what
it wrote meanwhile is drained, without waiting, before each message it gets. So
a reply before its request (even one only begun before it: the connection knows
which bytes arrived first), or a second reply, is a violation in the game it was
written in; one read once that game is decided changes nothing in it, but the
process is replaced before its next game. A drain reads at most
:data:`DRAIN_LIMIT` bytes; more waiting is a ``flood``. A bot that is not asked
costs the referee nothing, however much it writes. A process that did not take a
message whole is never written to again, nor reused.
"""

from __future__ import annotations

import math
import os
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

import msgspec
import trio

from protocol.connection import END_OF_STREAM, NEED_DATA, BotConnection, Phase
from protocol.messages import (
    DEFAULT_MAX_LINE_BYTES,
    MAX_QUOTE_CHARS,
    ErrorMessage,
    Log,
    ProtocolViolation,
    Quit,
    Ready,
    RefereeMessage,
    TurnReply,
)
from referee.cgroups import Breach
from referee.clock import DEFAULT_TIME_CONTROL, Allowances, Spent, TimeControl
from referee.driver import drive
from referee.errors import (
    BotCrashed,
    BotFault,
    BotOverLimit,
    BotTimeout,
    RefereeFault,
    SettingsError,
)
from referee.games import DEFAULT_GAME, game_seed, get_entry, get_game
from referee.games.base import GameSettings
from referee.pgn import (
    ATTEMPT_TAG,
    GameRecord,
    PgnError,
    append_game,
    iter_pgn_file,
    iter_pgn_headers,
    result_places,
    seat_players,
)
from referee.process import BotCommand, BotProcess, open_bot
from referee.sandbox import SandboxPolicy
from referee.session import Ending, GameSession, Request, check_players
from referee.tally import Tally

if TYPE_CHECKING:
    from tournaments.store import GameRecord as StoredGame

GOODBYE_TIMEOUT = 0.5
"""How long writing a goodbye (error, game_over, quit) to a bot may take."""

QUIT_GRACE = 1.0
"""How long a bot told to quit may take to exit before it is stopped."""

FAULT_GRACE = 0.5
"""How long a bot replaced after a fault may take to exit by itself before it is stopped.

It has been sent its ``error`` (when it can be told), ``game_over`` and ``quit``:
this is its moment to read them. The replacement runs in the background, so
the next game does not wait for it.
"""

EXIT_WAIT = 0.25
"""After a bot's stdout ends: how long to wait for its exit status."""

DRAIN_LIMIT = 2 << 20
"""The most bytes one drain reads: more than any pipe holds (1 MiB at most on Linux),
so everything a bot wrote before the drain began is judged, however fast it writes."""

MAX_LOG_MESSAGES = 200
"""Bot ``log`` messages kept per bot per game; later ones are counted, not kept."""

GAME_LOG_LIMIT = 256 << 10
"""Bytes of a game's log file (``game-NNNN.log``) given to the entries about one bot:
its ``ready``, log messages, offending lines and faults. Later entries are dropped, and
the log says how many bytes were."""

MAX_LOGGED_LINE_BYTES = 4096
"""Bytes of an offending line that the game's log quotes (it says how many more it had)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchConfig:
    """Settings shared by every game of a match or tournament.

    ``control`` is the time control the bots play under, ``allowances`` the
    referee's start-up allowance and margin. ``options`` are the game's own rule
    settings; they are checked on construction (``Game.check_options``, raising
    :class:`~referee.errors.SettingsError`) and kept as the game completes them,
    defaults included.
    """

    game: str = DEFAULT_GAME
    control: TimeControl = field(default_factory=lambda: TimeControl.parse(DEFAULT_TIME_CONTROL))
    allowances: Allowances = field(default_factory=Allowances)
    options: Mapping[str, Any] = field(default_factory=dict)
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    log_dir: Path | None = None
    event: str = "?"
    site: str = "?"
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)

    def __post_init__(self) -> None:
        checked = get_game(self.game).check_options(self.options)
        object.__setattr__(self, "options", checked)


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game: its record and how it ended."""

    record: GameRecord
    ending: Ending
    players: tuple[str, ...]
    logs: tuple[str, ...] = ()

    @property
    def result(self) -> str:
        return self.ending.result


# --- one bot --------------------------------------------------------------------


class BotStream(Protocol):
    """What :class:`_Link` drives: a bot's bytes in and out, as a
    :class:`~referee.process.BotProcess` gives them (the match server's remote sessions,
    :mod:`referee.server.remote`, give them the same way over the network).

    ``receive_some`` waits for output (``b""`` at its end), ``receive_nowait`` returns
    ``None`` when nothing is waiting; both raise :class:`~referee.errors.BotCrashed` once
    the bot is gone. ``send_nowait`` writes what can be written now and returns how many
    bytes that was; ``send_all`` waits until all is written. ``wait`` waits for the bot to
    end; ``exit_description`` says how it ended (``None`` while it runs).
    """

    @property
    def cpus(self) -> tuple[int, ...] | None: ...

    async def receive_some(self, max_bytes: int = ...) -> bytes: ...

    async def receive_nowait(self, max_bytes: int = ...) -> bytes | None: ...

    async def send_nowait(self, data: bytes) -> int: ...

    async def send_all(self, data: bytes) -> None: ...

    async def wait(self) -> int: ...

    def exit_description(self) -> str | None: ...

    def stderr_tail(self, n: int = ...) -> list[str]: ...

    def cpu_time(self) -> float | None: ...

    def limit_breach(self) -> Breach | None: ...


class _Link:
    """A running bot process with its protocol connection.

    The bot's output is read while the referee waits for its reply, and drained
    (without waiting) right before anything is written to it, and before a game
    it played ends: so every line is judged by the session's state before the
    next message the bot gets, and a line written before a request is never
    taken for its reply. A fault found that way (a violation, the end of its
    output) is kept in :attr:`fault` until the game charges it, or the process
    is replaced.
    """

    def __init__(self, process: BotStream, max_line_bytes: int) -> None:
        self.process = process
        self.connection = BotConnection(max_line_bytes=max_line_bytes)
        self.logs: list[str] = []
        self.dropped_logs = 0
        self.fault: BotFault | None = None
        self._told = False
        self._cut = False  # a write to it failed or stopped half-way: write no more
        self._ended = False  # its output ended (after quit: without a fault)

    @property
    def next_id(self) -> int:
        """The id for the next message to this bot that carries one (1, 2, 3, … per process)."""
        return self.connection.next_id

    @property
    def broken(self) -> bool:
        """Whether the bot faulted (a write to it that failed or stopped half-way is a
        fault too): it must not play another game in this process."""
        return self.fault is not None

    # --- reading ----------------------------------------------------------------

    async def drain(self) -> None:
        """Judge what the bot wrote and nobody read yet, without waiting for more.

        Reads at most :data:`DRAIN_LIMIT` bytes, more than a pipe holds, so that
        everything written before this call is judged even while the bot goes on
        writing; more still waiting after that is a ``flood`` violation: a bot
        that writes faster than the referee reads cannot hold a reply back behind
        its output, nor the referee in this loop. A reply found now answers a
        request that was cancelled (the game ended while it was pending) and is
        dropped.
        """
        data: bytes | None = None  # first, the lines already read but not judged
        budget = DRAIN_LIMIT
        while self.fault is None and not self._ended:
            if await self._judge(data) is not None:
                data = None  # a reply to a cancelled request, dropped: on with the rest
                continue
            try:
                data = await self.process.receive_nowait()
            except BotCrashed as crash:
                self.fault = await self._crashed(str(crash))
                return
            if data is None:
                return
            if data and budget <= 0:
                self.fault = ProtocolViolation(
                    "flood", f"more than {DRAIN_LIMIT} bytes of output were waiting to be read"
                )
                return
            budget -= len(data)

    async def _read_reply(self) -> Ready | TurnReply:
        """Read until the reply to the pending request; raises the bot's fault instead.

        Only for :meth:`ask`, after :meth:`drain` judged every complete line read so far."""
        while True:
            try:
                data = await self.process.receive_some()
            except BotCrashed as crash:
                self.fault = await self._crashed(str(crash))
                raise self.fault from None
            reply = await self._judge(data)
            if self.fault is not None:
                raise self.fault
            if reply is not None:
                return reply

    async def _judge(self, data: bytes | None) -> Ready | TurnReply | None:
        """Feed ``data`` (``b""`` at the end of the output, ``None`` for nothing new) and
        judge the complete lines: logs are kept, a fault goes to :attr:`fault`; → the
        reply found, if one was (the lines after it wait for the next call)."""
        connection = self.connection
        try:
            if data is not None:
                connection.receive_data(data)
            while (event := connection.next_event()) is not NEED_DATA:
                if event is END_OF_STREAM:
                    self._ended = True
                    if connection.phase is not Phase.CLOSED:
                        self.fault = await self._crashed("closed its stdout")
                    return None
                if not isinstance(event, Log):
                    return event
                self._keep_log(event.message)
        except ProtocolViolation as violation:
            self.fault = violation
        return None

    def _keep_log(self, text: str) -> None:
        if len(self.logs) < MAX_LOG_MESSAGES:
            self.logs.append(text)
        else:
            self.dropped_logs += 1

    def take_logs(self) -> tuple[list[str], int]:
        """The log messages read so far and how many more were dropped; starts afresh."""
        kept, dropped = self.logs, self.dropped_logs
        self.logs, self.dropped_logs = [], 0
        return kept, dropped

    async def _crashed(self, what: str) -> BotCrashed:
        """A :class:`BotCrashed` naming the exit status and the end of stderr; a
        :class:`BotOverLimit` when its control group hit a limit first."""
        with trio.move_on_after(EXIT_WAIT):
            await self.process.wait()
        status = self.process.exit_description()
        breach = self.process.limit_breach()
        if breach is not None:
            return BotOverLimit(breach.limit, f"{breach.detail} ({status or what})")
        detail = f"exited ({status})" if status else what
        tail = " | ".join(line for line in self.process.stderr_tail(3) if line.strip())
        if len(tail) > MAX_QUOTE_CHARS:  # the reason is sent to every bot of the game
            tail = "…" + tail[-MAX_QUOTE_CHARS:]
        if tail:
            detail += "; stderr ends: " + tail
        return BotCrashed(detail)

    # --- writing ----------------------------------------------------------------

    async def ask(
        self, message: RefereeMessage, budget: float, *, wall_cap: float | None = None
    ) -> tuple[Ready | TurnReply, Spent]:
        """Send a request, wait at most ``budget`` seconds for the reply; → (reply, time).

        The time runs from the moment the request is written until the reply's
        line has been read. With ``wall_cap`` (the ``cpu`` clock), ``budget`` is the CPU
        time the bot's whole tree may use (its control group's) and the reply must come
        within ``wall_cap`` seconds; the CPU time is measured too. Raises
        :class:`BotFault` for a timeout, a crash or a protocol violation, also one the bot
        committed during its game before the request (which is then not sent); the fault
        stays in :attr:`fault`.
        """
        # What it wrote is judged first; a line it started stays unread, and cannot
        # then be the reply (the connection knows it arrived before the request).
        await self.drain()
        if self.fault is not None:
            raise self.fault
        data = self.connection.send(message)
        # ``budget`` for the write, then ``budget`` again from the moment it is done. The
        # pipe nearly always takes the whole request at once: then only the reply waits,
        # under one cancel scope (a scope costs as much as the rest of a turn).
        try:
            sent = await self.process.send_nowait(data)
            if sent < len(data):
                with trio.move_on_after(budget):
                    await self.process.send_all(data[sent:])
                    sent = len(data)
        except BotCrashed as crash:
            self._cut = True
            self.fault = await self._crashed(str(crash))
            raise self.fault from None
        if sent < len(data):
            self._cut = True  # part of the request may be in its input: write no more
            self.fault = BotTimeout(f"did not read its input for {budget:.3f} s")
            raise self.fault
        started = trio.current_time()
        cpu_before = None if wall_cap is None else self.process.cpu_time()
        if wall_cap is None or cpu_before is None:  # the wall clock (a remote bot's too)
            with trio.move_on_after(budget if wall_cap is None else wall_cap):
                reply = await self._read_reply()
                return reply, Spent(trio.current_time() - started)
            self.fault = BotTimeout(f"no reply within {budget:.3f} s")
            raise self.fault
        reply = await self._read_reply_on_cpu(budget, wall_cap, started, cpu_before)
        return reply, Spent(trio.current_time() - started, self._cpu_since(cpu_before))

    def _cpu_since(self, before: float | None) -> float | None:
        """The CPU seconds the bot used since it had used ``before`` (``None``: unknown)."""
        after = None if before is None else self.process.cpu_time()
        return None if after is None or before is None else after - before

    async def _read_reply_on_cpu(
        self, budget: float, wall_cap: float, started: float, cpu_before: float
    ) -> Ready | TurnReply:
        """The reply, under the ``cpu`` clock: the bot's CPU time is looked at whenever
        it could have used up ``budget`` (its CPUs all busy), and the reply must come within
        ``wall_cap`` seconds of wall time."""
        cpus = len(self.process.cpus or os.sched_getaffinity(0))
        deadline = started + wall_cap
        while True:
            used = (self.process.cpu_time() or 0.0) - cpu_before
            now = trio.current_time()
            if used > budget:
                self.fault = BotTimeout(f"used {used:.3f} s of CPU time, {budget:.3f} s allowed")
                raise self.fault
            if now >= deadline:
                self.fault = BotTimeout(
                    f"no reply within {wall_cap:.3f} s of wall time (the cap of the cpu clock)"
                )
                raise self.fault
            with trio.move_on_at(min(deadline, now + max((budget - used) / cpus, 0.001))):
                return await self._read_reply()

    async def goodbye(self, message: RefereeMessage) -> None:
        """Send ``message`` if the bot still listens; never waits long.

        A bot that is gone or does not read is not waited for: a message not
        written whole within :data:`GOODBYE_TIMEOUT` may have left part of a line
        in its input, so nothing more is written to this process and it is never
        used again (:attr:`broken`; the fault is kept, unless it had one). Sending
        what the session does not allow raises :class:`~protocol.LocalProtocolError`:
        that is our bug, and it must not pass unseen.
        """
        data = self.connection.send(message)
        if isinstance(message, ErrorMessage):
            self._told = True
        if self._cut:
            return
        try:
            with trio.move_on_after(GOODBYE_TIMEOUT) as sending:
                await self.process.send_all(data)
        except BotFault as fault:  # it closed its stdin: nothing more reaches it
            self._cut = True
            self.fault = self.fault or fault
            return
        if sending.cancelled_caught:
            self._cut = True
            self.fault = self.fault or BotTimeout(
                f"did not read its {type(message).__struct_config__.tag} message within"
                f" {GOODBYE_TIMEOUT:.3f} s: its input may hold part of a line"
            )

    async def farewell(self, grace: float) -> None:
        """Tell the bot its violation if nobody did, then to quit; give it ``grace`` to exit."""
        if isinstance(self.fault, ProtocolViolation) and not self._told:
            await self.goodbye(self.fault.to_message())
        if self.connection.phase is not Phase.CLOSED:
            await self.goodbye(Quit())
        with trio.move_on_after(grace):
            await self.process.wait()


class BotPlayer:
    """One bot of a match or tournament: its command line and, while it runs, its process.

    The process runs as a task in ``nursery`` so that it can outlive a game and be
    reused. :meth:`link` starts it when needed (and replaces one that faulted);
    :meth:`retire` stops it (the next :meth:`link` starts a fresh one);
    :meth:`close` tells it to quit and stops it.
    """

    def __init__(
        self,
        command: BotCommand,
        name: str,
        nursery: trio.Nursery,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        log_dir: Path | None = None,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        self.command = command
        self.name = name
        self._nursery = nursery
        self._max_line_bytes = max_line_bytes
        self._log_dir = log_dir
        self._sandbox = sandbox
        self._starts = 0
        self._cpus: tuple[int, ...] | None = None  # those of its last process, if pinned
        self._current: _Link | None = None
        self._stop: trio.Event | None = None
        self._stopped: trio.Event | None = None
        self.between_games: list[BotFault] = []
        """Faults its processes committed between games (each cost a process), for the log."""

    async def link(self) -> _Link:
        """The running process (started now if it is not running, or if it faulted)."""
        current = self._current
        if current is not None:
            await current.drain()  # what it wrote since its last game
            if current.fault is not None:
                self.between_games.append(current.fault)
                await self.retire(wait=False)
        if self._current is None:
            self._starts += 1
            stderr_path = None
            if self._log_dir is not None:
                stderr_path = self._stderr_path()
            self._stop, self._stopped = trio.Event(), trio.Event()
            process = await self._nursery.start(
                self._supervise, stderr_path, self._stop, self._stopped
            )
            self._cpus = process.cpus
            self._current = _Link(process, self._max_line_bytes)
        return self._current

    def _stderr_path(self) -> Path:
        """The next ``<bot>-<n>.stderr.log`` not written yet: a match played into the log
        directory of an earlier one numbers its bots' processes on, never overwriting."""
        assert self._log_dir is not None
        while True:  # as many steps as earlier runs left logs of this bot
            path = self._log_dir / f"{_slug(self.name)}-{self._starts}.stderr.log"
            if not path.exists():
                return path
            self._starts += 1

    async def _supervise(
        self,
        stderr_path: Path | None,
        stop: trio.Event,
        stopped: trio.Event,
        task_status: trio.TaskStatus[BotProcess] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            async with open_bot(
                self.command,
                sandbox=self._sandbox,
                stderr_path=stderr_path,
                successor_of=self._cpus,  # a replaced process's CPUs stay its player's
            ) as process:
                task_status.started(process)
                await stop.wait()
        finally:
            stopped.set()

    async def retire(self, *, grace: float = FAULT_GRACE, wait: bool = True) -> None:
        """Stop the process (if any); the next :meth:`link` starts a fresh one.

        The bot is told its violation if nobody told it yet, then to quit, and
        has ``grace`` seconds to exit by itself before it is stopped. With
        ``wait=False`` this happens in the background.
        """
        link, stop, stopped = self._current, self._stop, self._stopped
        self._current = self._stop = self._stopped = None
        if link is None or stop is None or stopped is None:
            return
        if wait:
            await _stop_link(link, stop, stopped, grace)
        else:
            self._nursery.start_soon(_stop_link, link, stop, stopped, grace)

    async def close(self) -> None:
        """Tell the bot to quit, then make sure it is gone."""
        await self.retire(grace=QUIT_GRACE)
        self._cpus = None  # a later start takes the least used CPUs again


async def _stop_link(link: _Link, stop: trio.Event, stopped: trio.Event, grace: float) -> None:
    """Say goodbye to ``link``'s bot, give it ``grace`` to exit, then stop it and wait."""
    await link.farewell(grace)
    stop.set()
    await stopped.wait()


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "bot"


# --- one game -------------------------------------------------------------------


class BotSeat:
    """A :class:`BotPlayer` in one seat of one game (the driver's :class:`~referee.driver.Seat`).

    What it does beyond carrying messages is this module's hardening: the handshake
    starts (or restarts) the process, faults are written to the game's ``journal``
    with the lines that caused them, and after the game the bot's output is judged
    once more, it is sent ``game_over`` and, if it faulted, its process is replaced.
    """

    forgiving = False

    def __init__(
        self, player: BotPlayer, journal: GameJournal, watch: Callable[[], None] | None = None
    ) -> None:
        self.player = player
        self.journal = journal
        self.watch = watch
        """Called before each request to this seat (``play_game``'s ``watch``)."""
        self.link: _Link | None = None

    @property
    def name(self) -> str:
        return self.player.name

    @property
    def next_id(self) -> int:
        return self._linked().next_id

    def _linked(self) -> _Link:
        if self.link is None:
            raise RuntimeError(f"{self.name}'s bot has not started")
        return self.link

    async def start(self, session: GameSession, seat: int) -> None:
        """Start (or reuse) the process and hand it ``new_game`` within the start-up allowance."""
        try:
            link = await self.player.link()
        finally:
            self.journal.between_games(seat, self.player.between_games)
        self.link = link
        message = session.new_game(seat, link.next_id)
        try:
            ready, _ = await link.ask(message, session.allowances.startup)
        except BotFault as fault:
            raise _at_start(fault) from None
        assert isinstance(ready, Ready), "the connection only accepts ready here"
        self.journal.ready(seat, ready)

    async def decide(self, request: Request) -> tuple[TurnReply, float | Spent]:
        if self.watch is not None:
            self.watch()
        # What the bot wrote since its last reply is judged first: a reply before
        # its request, or a second reply, loses this game (and nothing is sent).
        reply, elapsed = await self._linked().ask(
            request.message, request.budget, wall_cap=request.wall_cap
        )
        assert isinstance(reply, TurnReply), "the connection only accepts a turn reply here"
        return reply, elapsed

    async def refused(self, seat: int, error: ErrorMessage) -> None:
        link = self._linked()
        if error.code != "timeout":
            self.journal.bad_line(seat, link.connection.last_reply_line)
        await link.goodbye(error)

    async def forfeited(self, seat: int, fault: BotFault, error: ErrorMessage | None) -> None:
        self.journal.offending(seat, fault)
        if self.link is not None and error is not None:
            await self.link.goodbye(error)

    async def pending_fault(self, seat: int) -> BotFault | None:
        """Judge what the bot wrote since its last reply (its end of output too)."""
        if self.link is None:
            return None
        await self.link.drain()
        return self.link.fault

    async def finish(self, session: GameSession, seat: int) -> None:
        """Judge what the bot wrote since its last reply, send ``game_over``, keep its logs;
        replace its process if it faulted, before or after the game was decided."""
        done = self.link
        if done is None:
            return
        ending = session.ending
        faulty = ending is not None and seat in ending.faulty_seats
        # Lines read from now on are judged, but cannot change the result.
        await done.drain()
        known = done.fault
        if known is not None and not faulty:
            self.journal.after_the_end(seat, known)
            if isinstance(known, ProtocolViolation):
                await done.goodbye(known.to_message())
        # A bot whose process faulted before it was sent ``new_game`` (it exited between
        # games) never joined this game: there is no game to tell it the end of.
        joined = done.connection.phase is not Phase.IDLE
        if ending is not None and joined:
            await done.goodbye(session.game_over(done.next_id))
        if done.fault is not known and done.fault is not None:  # it did not take game_over
            self.journal.after_the_end(seat, done.fault)
        self.journal.logs(seat, done)
        if faulty or done.broken:
            await self.player.retire(wait=False)


def _journal_ending(
    journal: GameJournal, watch: Callable[[], None] | None
) -> Callable[[GameSession], None]:
    def note(session: GameSession) -> None:
        if session.ending is not None:
            journal.ending(session.ending)
        if watch is not None:
            watch()

    return note


def record_date() -> str:
    """Today's date as a record's ``Date`` tag holds it (``2026.12.01``, UTC)."""
    return datetime.now(UTC).strftime("%Y.%m.%d")


async def play_game(
    players: Sequence[BotPlayer],
    config: MatchConfig,
    *,
    round_: str = "?",
    seed: int = 0,
    start: str | None = None,
    watch: Callable[[GameRecord], None] | None = None,
) -> GameResult:
    """Play one game, ``players`` in seat order; bot faults become lost games.

    ``seed`` seeds the game's chance (recorded in the ``Seed`` tag of games that
    have any). The start is judged as a whole: every bot gets its ``new_game``
    and the start-up allowance, and every one that fails it forfeits (all of
    them: an adjudicated game). Every bot that faulted, before or after the game
    was decided, is replaced by a fresh process before its next game. ``watch``,
    when given (the match server's spectators), is called with the record so far
    before each request and once more when the game is decided or stopped; it
    must be quick and must not raise.
    """
    entry = get_entry(config.game)
    session = GameSession(
        entry.rules,
        entry.codec,
        GameSettings(players=len(players), seed=seed, start=start, options=config.options),
        players=[p.name for p in players],
        control=config.control,
        allowances=config.allowances,
        tags={
            "Event": config.event,
            "Site": config.site,
            "Date": record_date(),
            "Round": round_,
        },
        max_line_bytes=config.max_line_bytes,
    )
    journal = GameJournal(session)
    seen = None if watch is None else lambda: watch(session.record())
    ending = await drive(
        session,
        [BotSeat(player, journal, seen) for player in players],
        on_end=_journal_ending(journal, seen),
    )
    assert ending is not None, "bots cannot stop a game"
    return GameResult(
        record=session.record(), ending=ending, players=session.players, logs=journal.lines()
    )


def _at_start(fault: BotFault) -> BotFault:
    """A fault during the handshake, said so."""
    if isinstance(fault, BotTimeout):
        return BotTimeout(f"no ready within the start-up allowance ({fault})")
    return fault


class GameJournal:
    """The game's log: the bots' ``log`` messages and what the record cannot hold.

    Each entry is one line, ``<seat> (<player>): <text>``: what the bots said in
    ``ready`` (name, author, version), their log messages, the full reason of
    the result and every offending line as it arrived (its first
    :data:`MAX_LOGGED_LINE_BYTES` bytes). Text from a bot is written with its line
    breaks, backslashes and other unprintable characters escaped (:func:`_one_line`),
    so no entry spans two lines. The entries about one bot take at most
    :data:`GAME_LOG_LIMIT` bytes; later ones are dropped, and a last entry says how
    many bytes were.
    """

    def __init__(self, session: GameSession) -> None:
        self._session = session
        self._lines: list[str] = []
        self._room = [GAME_LOG_LIMIT] * len(session.players)
        self._dropped = [0] * len(session.players)

    def lines(self) -> tuple[str, ...]:
        """Every entry so far, in order, then a note for each bot whose entries were cut."""
        notes = [
            f"{self._who(seat)}: … {dropped} more bytes of its entries dropped"
            f" (a game's log keeps {GAME_LOG_LIMIT} bytes per bot)"
            for seat, dropped in enumerate(self._dropped)
            if dropped
        ]
        return (*self._lines, *notes)

    def _who(self, seat: int | None) -> str:
        session = self._session
        return "result" if seat is None else f"{session.seat_name(seat)} ({session.players[seat]})"

    def _add(self, seat: int | None, text: str) -> None:
        line = f"{self._who(seat)}: {text}"
        if seat is not None:
            size = len(line.encode("utf-8", "surrogatepass")) + 1  # and its newline
            if self._dropped[seat] or size > self._room[seat]:
                self._dropped[seat] += size
                return
            self._room[seat] -= size
        self._lines.append(line)

    def between_games(self, seat: int, faults: list[BotFault]) -> None:
        """Take the faults ``seat``'s bot committed since its last game."""
        for fault in faults:
            self._add(seat, f"between games (its process was replaced): {_one_line(str(fault))}")
            self.offending(seat, fault)
        faults.clear()

    def ready(self, seat: int, ready: Ready) -> None:
        fields = [f"name {_quoted(ready.name)}"]
        if ready.author is not None:
            fields.append(f"author {_quoted(ready.author)}")
        if ready.version is not None:
            fields.append(f"version {_quoted(ready.version)}")
        self._add(seat, "ready: " + ", ".join(fields))

    def bad_line(self, seat: int, line: bytes) -> None:
        self._add(seat, f"offending line ({len(line)} bytes): {_line_text(line)}")

    def after_the_end(self, seat: int, fault: BotFault) -> None:
        self._add(seat, f"after the game was decided (no change to it): {_one_line(str(fault))}")
        self.offending(seat, fault)

    def offending(self, seat: int, fault: BotFault) -> None:
        """The line of ``fault``, when it is about one."""
        if isinstance(fault, ProtocolViolation) and fault.line is not None:
            self.bad_line(seat, fault.line)

    def ending(self, ending: Ending) -> None:
        self._add(None, f"{ending.result} ({ending.termination}): {_one_line(ending.reason)}")

    def logs(self, seat: int, link: _Link) -> None:
        """Take ``link``'s log messages so far (the next game starts afresh)."""
        kept, dropped = link.take_logs()
        for text in kept:
            self._add(seat, _one_line(text))
        if dropped:
            self._add(seat, f"… {dropped} more log messages not kept")


_MAX_READY_FIELD = 200
"""Characters of a ``ready`` field (name, author, version) kept in the game's log."""


def _quoted(text: str) -> str:
    """A ``ready`` field for the log: cut to :data:`_MAX_READY_FIELD`, quoted and escaped."""
    cut = text[:_MAX_READY_FIELD] + ("…" if len(text) > _MAX_READY_FIELD else "")
    return repr(cut)


def _one_line(text: str) -> str:
    """``text`` with backslashes, line breaks and other unprintable characters escaped
    as Python writes them (``\\\\``, ``\\n``, ``\\x1b``): one line, nothing lost."""
    if text.isprintable() and "\\" not in text:
        return text
    return repr(text)[1:-1]


def _line_text(line: bytes) -> str:
    """A raw line for the log, cut to :data:`MAX_LOGGED_LINE_BYTES` bytes: its text if it
    is UTF-8, else its bytes escaped (``\\xff``)."""
    shown = line[:MAX_LOGGED_LINE_BYTES]
    try:
        text = _one_line(shown.decode("utf-8"))
    except UnicodeDecodeError as error:
        if error.reason == "unexpected end of data" and len(shown) < len(line):
            shown = shown[: error.start]  # the cut split a character
            text = _one_line(shown.decode("utf-8"))
        else:
            text = repr(shown)[2:-1]
    if len(shown) < len(line):
        text += f" … [{len(line) - len(shown)} more bytes not shown]"
    return text


# --- a match --------------------------------------------------------------------


@dataclass(slots=True)
class Standing:
    """One bot's games in a match: how many, its points and its places."""

    name: str
    games: int = 0
    points: float = 0.0
    place_total: int = 0

    @property
    def mean_score(self) -> float:
        """Its mean score a game, in the game's unit (Ivy: 1, ½, 0; Verdant: points)."""
        return self.points / self.games if self.games else 0.0

    @property
    def mean_place(self) -> float:
        """Its mean place (1 is best; a shared place counts as itself: 1, 1, 3)."""
        return self.place_total / self.games if self.games else 0.0


@dataclass(slots=True)
class MatchScore(Tally):
    """The running score of a match between the bots ``names``.

    ``standings`` holds each bot's games, points and places, in the order the bots
    were given. ``wins``, ``draws`` and ``losses`` are the first bot's against the
    second in a two-bot match, by place (as a chess match counts them); they stay
    0 between more bots, or one alone.
    """

    names: tuple[str, ...]
    wins: int = 0
    draws: int = 0
    losses: int = 0
    played: int = 0
    standings: list[Standing] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.standings:
            self.standings = [Standing(name) for name in self.names]

    @property
    def games(self) -> int:
        """Games played (between more than two bots too, unlike wins + draws + losses)."""
        return self.played

    def add(self, result: GameResult) -> None:
        """Count a finished game of this match."""
        self.played += 1
        ending = result.ending
        for standing in self.standings:
            seat = result.players.index(standing.name)
            standing.games += 1
            standing.points += ending.scores[seat]
            standing.place_total += ending.places[seat]
        if len(self.names) == 2:
            mine, theirs = (ending.places[result.players.index(name)] for name in self.names)
            if mine < theirs:
                self.wins += 1
            elif mine > theirs:
                self.losses += 1
            else:
                self.draws += 1


def unique_names(commands: Sequence[BotCommand]) -> list[str]:
    """Display names for ``commands``, made distinct (``random``, ``random-2``)."""
    names: list[str] = []
    for command in commands:
        base = command.display_name
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names


def rotation_games(games: int, seats: int) -> int:
    """``games`` rounded up to whole rotations of ``seats`` bots (a multiple of ``seats``),
    so that each bot sits each seat equally often; one game stays one (a trial game has
    no series to balance)."""
    return games if games == 1 else -(-games // seats) * seats


def seating(index: int, seats: int) -> list[int]:
    """Which bot (by its place in the match) sits in each seat in game ``index`` (from 0).

    Seats rotate one place a game: bot ``b`` sits in seat ``(b - index) mod seats``, so
    over any ``seats`` consecutive games each bot sits each seat once (two bots: colours
    alternate, the first bot starting as seat 0).
    """
    return [(seat + index) % seats for seat in range(seats)]


OpeningsOrder = Literal["sequential", "random"]
"""The order a match plays its openings in: as the file lists them, or shuffled."""

OPENINGS_ORDERS: tuple[OpeningsOrder, ...] = get_args(OpeningsOrder)


@dataclass(frozen=True, slots=True)
class MatchOpenings:
    """The start positions of a match's games (``referee match --openings``).

    Each opening is played with every seating of one rotation: games ``k·seats …
    k·seats + seats - 1`` start from the same opening (two bots: a pair of games, one
    with each colour), so an opening that favours a seat favours every bot alike.
    ``sequential`` takes the openings in the file's order; ``random`` in an order
    shuffled by ``seed``. Past the last opening they start over (``random``: in a new
    order, shuffled by ``seed`` and the pass's number).
    """

    openings: tuple[str, ...]
    order: OpeningsOrder = "sequential"
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.openings:
            raise SettingsError("a match's list of openings is empty")
        if self.order not in OPENINGS_ORDERS:
            raise SettingsError(
                f"openings order is {' or '.join(OPENINGS_ORDERS)}, not {self.order!r}"
            )

    def start(self, index: int, seats: int) -> str:
        """The opening of game ``index`` (from 0) of a match of ``seats`` bots."""
        turn, place = divmod(index // seats, len(self.openings))
        if self.order == "sequential":
            return self.openings[place]
        # A string seed is hashed whole (SHA-512): every pass gets an order of its own.
        shuffled = list(self.openings)
        random.Random(f"openings:{self.seed}:{turn}").shuffle(shuffled)
        return shuffled[place]


_GAME_LOG = re.compile(r"game-(\d+)\.log")
"""A game's log in a match's log directory: ``game-NNNN.log``, NNNN its number."""


def first_game_number(pgn: Path | None, log_dir: Path | None) -> int:
    """The number of a match's first game: one past the games ``pgn`` already holds and
    past the highest ``game-NNNN.log`` already in ``log_dir``.

    A match appended to an earlier one's PGN thus goes on numbering (the ``game N``
    lines, the ``Round`` tags, the game logs) instead of starting again at 1, and never
    overwrites a log, as cutechess-cli's ``-pgnout`` appends to a file.
    """
    last = 0
    if pgn is not None and pgn.exists():
        last = sum(1 for _ in iter_pgn_headers(pgn))  # a broken game is a game too
    if log_dir is not None and log_dir.is_dir():
        for path in log_dir.iterdir():
            if found := _GAME_LOG.fullmatch(path.name):
                last = max(last, int(found[1]))
    return last + 1


class MatchPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a match will play, kept beside its PGN (:func:`plan_path`) so that ``referee
    match --recover`` can finish it after a kill: its first game's number, its number of
    games, the seed that orders its openings, the settings it was started with (a
    recovery must be given the same ones) and the attempts it began at each game (a game
    begun and not recorded is played again as its next attempt, with a seed of its own)."""

    first: int
    games: int
    order_seed: int | None = None
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    begun: dict[int, int] = msgspec.field(default_factory=dict)
    """The attempts begun at each game (by index from 0), as the match begins them."""


def plan_path(pgn: Path) -> Path:
    """Where the :class:`MatchPlan` of the match writing ``pgn`` is kept: ``<pgn>.plan.json``."""
    return pgn.with_name(pgn.name + ".plan.json")


def write_plan(pgn: Path, plan: MatchPlan) -> None:
    """Keep ``plan`` beside ``pgn``, replacing the last match's (atomically)."""
    target = plan_path(pgn)
    spare = target.with_name(target.name + ".new")
    spare.write_bytes(msgspec.json.encode(plan))
    os.replace(spare, target)


def read_plan(pgn: Path) -> MatchPlan:
    """The plan of the last match into ``pgn``; :class:`SettingsError` when there is none
    or it is damaged."""
    path = plan_path(pgn)
    try:
        return msgspec.json.decode(path.read_bytes(), type=MatchPlan)
    except FileNotFoundError:
        raise SettingsError(f"nothing to recover: no match plan {path}") from None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as error:
        raise SettingsError(f"cannot read the match plan {path}: {error}") from None


def recorded_games(
    pgn: Path, names: Sequence[str], first: int, games: int
) -> dict[int, GameResult]:
    """The games of a match (numbered ``first`` to ``first + games - 1``, between the bots
    ``names`` seated as :func:`seating` seats them) that ``pgn`` already holds, by index
    (from 0): a game is the match's when its ``Round`` tag is one of those numbers and its
    seat tags name the bots that number seats; the first such game of a number counts,
    a game without a result (``*``) or that cannot be read does not. Each is read as a
    tournament's recovery reads a game (:func:`tournaments.recovery.stored_game`)."""
    from tournaments.recovery import stored_game

    found: dict[int, GameResult] = {}
    if not pgn.exists():
        return found
    seats = len(names)
    for record in iter_pgn_file(pgn):
        if isinstance(record, PgnError):
            continue
        number = record.tags.get("Round", "")
        index = int(number) - first if number.isdigit() else -1
        if not 0 <= index < games or index in found:
            continue
        players = seat_players(record.tags)
        expected = tuple(names[bot] for bot in seating(index, seats))
        if players != expected or result_places(record.result, seats) is None:
            continue
        found[index] = _result_of(stored_game(index, record), record)
    return found


def _result_of(game: StoredGame, record: GameRecord, logs: tuple[str, ...] = ()) -> GameResult:
    """A game as a tournament stores it, back as a :class:`GameResult` of its ``record``."""
    ending = Ending(
        scores=game.scores, termination=game.termination, reason=game.reason, places=game.places
    )
    return GameResult(record, ending, game.players, logs)


class _Recorder:
    """Takes a match's finished games in index order: saves each (PGN, game log) unless it
    was recovered from the PGN, counts it, reports it; → whether ``stop`` ends the match."""

    def __init__(
        self,
        score: MatchScore,
        first: int,
        pgn: Path | None,
        log_dir: Path | None,
        on_game: Callable[[int, GameResult, MatchScore], Awaitable[None] | None] | None,
        stop: Callable[[MatchScore], bool] | None,
        recorded: Mapping[int, GameResult],
    ) -> None:
        self.score, self.first, self.pgn, self.log_dir = score, first, pgn, log_dir
        self.on_game, self.stop = on_game, stop
        self.waiting: dict[int, GameResult] = dict(recorded)
        self.recovered = set(recorded)
        self.next = 0
        self.finished = False

    async def take(self, index: int, result: GameResult | None = None) -> bool:
        """Game ``index`` finished (``None``: the recovered ones only); count every game
        now in order. A game past the one that stopped the match is dropped."""
        if result is not None:
            self.waiting[index] = result
        while not self.finished and self.next in self.waiting:
            index = self.next
            result = self.waiting.pop(index)
            self.next += 1
            number = self.first + index
            if index not in self.recovered:
                # In a thread: the fsync would hold up the games still being played.
                await trio.to_thread.run_sync(self._save, number, result)
            self.score.add(result)
            if self.on_game is not None:
                maybe = self.on_game(number, result, self.score)
                if maybe is not None:
                    await maybe
            if self.stop is not None and self.stop(self.score):
                self.finished = True
        return self.finished

    def _save(self, number: int, result: GameResult) -> None:
        if self.pgn is not None:
            append_game(self.pgn, result.record)
        if self.log_dir is not None and result.logs:
            log_path = self.log_dir / f"game-{number:04d}.log"
            log_path.write_text("\n".join(result.logs) + "\n", encoding="utf-8")


def _attempted(result: GameResult, attempt: int) -> GameResult:
    """``result`` with its record tagged as attempt ``attempt`` (nothing for a first one)."""
    if attempt == 1:
        return result
    record = result.record
    tags = {**record.tags, ATTEMPT_TAG: str(attempt)}
    record = GameRecord(tags=tags, turns=record.turns, result=record.result, comment=record.comment)
    return replace(result, record=record)


MAX_ATTEMPTS = 3
"""Attempts at one game of a match played on worker processes whose worker keeps dying
before the match stops with an error."""


async def run_match(
    commands: Sequence[BotCommand],
    config: MatchConfig,
    *,
    games: int = 1,
    pgn: Path | None = None,
    seed: int | None = None,
    openings: MatchOpenings | None = None,
    on_game: Callable[[int, GameResult, MatchScore], Awaitable[None] | None] | None = None,
    stop: Callable[[MatchScore], bool] | None = None,
    on_start: Callable[[int, tuple[str, ...], int], None] | None = None,
    warn: Callable[[str], None] | None = None,
    concurrency: int = 1,
    first: int | None = None,
    recorded: Mapping[int, GameResult] | None = None,
    begun: Mapping[int, int] | None = None,
) -> MatchScore:
    """Play ``games`` games between ``commands``, one bot a seat, seats rotated.

    As many seats as bots (the game must allow that many players). With a multiple
    of the number of bots as ``games``, each bot sits each seat equally often
    (:func:`seating`; ``referee match`` rounds the count up to one with
    :func:`rotation_games`, unless it is 1). Each game's chance is seeded with
    :func:`game_seed` of ``seed`` and the game's index (without ``seed``: a secret seed
    per game). With ``openings``, each game starts from :meth:`MatchOpenings.start`.
    Games are numbered from ``first`` (default :func:`first_game_number`): game N has
    ``[Round "N"]`` and ``game-NNNN.log``. Games are taken in number order: each is
    appended to ``pgn`` (and its bot logs written under ``config.log_dir``), counted,
    and ``on_game`` is called with N, then ``stop``, which ends the match early when it
    says so (an SPRT that has decided). ``on_start`` is called with N, the players in
    seat order and the attempt (from 1) as each attempt at a game is begun (in number
    order too, but possibly before games numbered below it finish). ``recorded`` games
    (by index, from :func:`recorded_games`) are taken in their turn without being played
    or saved again; ``begun`` says how many attempts at a game (by index) an earlier run
    of the match began and never recorded: its next attempt is the one after them.
    Attempt A > 1 is seeded with ``game_seed(seed, index, A)`` and its record tagged
    ``[Attempt "A"]``, as a tournament's (docs/records.md, "Attempts"), so no attempt is
    dealt what one before it dealt.

    With ``concurrency`` above 1 the games are played on that many worker processes
    (:func:`tournaments.workers.process_pool`), each keeping its bots between games; a
    game that finishes before one numbered below it waits for it, so the PGN, the
    reports and ``stop`` see the games in the same order as one after another, and
    once ``stop`` says so every worker is stopped and games numbered above the one that
    decided are dropped. A game whose worker died is played again as its next attempt,
    at most :data:`MAX_ATTEMPTS` attempts in this run, and ``warn`` is told so in one
    line. No bot sees
    ``pgn``, the log directory or another bot's ``dir``.
    """
    seats = len(commands)
    check_players(get_game(config.game), seats)
    if games < 1:
        raise SettingsError(f"a match plays at least one game, not {games}")
    if concurrency < 1:
        raise SettingsError(f"a match plays at least one game at once, not {concurrency}")
    names = unique_names(commands)
    score = MatchScore(tuple(names))
    if first is None:
        first = first_game_number(pgn, config.log_dir)
    if config.log_dir is not None:
        config.log_dir.mkdir(parents=True, exist_ok=True)
    if pgn is not None:
        pgn.touch()  # so that the sandbox can hide it from the bots from the start
    hidden = [pgn, config.log_dir] + ([] if pgn is None else [plan_path(pgn)])
    # The outputs, and each player's dir from the other players (never from its own).
    sandbox = config.sandbox.hiding(*hidden, *(c.cwd for c in commands))
    recorder = _Recorder(score, first, pgn, config.log_dir, on_game, stop, recorded or {})
    if await recorder.take(0):
        return score
    to_play = [index for index in range(games) if index not in recorder.waiting]
    to_play = [index for index in to_play if index >= recorder.next]

    def opening(index: int) -> str | None:
        return None if openings is None else openings.start(index, seats)

    def begin(index: int, attempt: int) -> tuple[str, ...]:
        players = tuple(names[bot] for bot in seating(index, seats))
        if on_start is not None:
            on_start(first + index, players, attempt)
        return players

    def next_attempt(index: int) -> int:
        return (begun or {}).get(index, 0) + 1

    if concurrency > 1:
        await _on_workers(
            commands, replace(config, sandbox=sandbox), names, to_play, recorder,
            concurrency=concurrency, seed=seed, opening=opening, begin=begin, warn=warn,
            next_attempt=next_attempt,
        )  # fmt: skip
        return score
    async with trio.open_nursery() as nursery:
        players = [
            BotPlayer(
                command,
                name,
                nursery,
                max_line_bytes=config.max_line_bytes,
                log_dir=config.log_dir,
                sandbox=sandbox,
            )
            for command, name in zip(commands, names, strict=True)
        ]
        try:
            for index in to_play:
                attempt = next_attempt(index)
                begin(index, attempt)
                seated = [players[bot] for bot in seating(index, seats)]
                result = await play_game(
                    seated,
                    config,
                    round_=str(first + index),
                    seed=game_seed(seed, index, attempt),
                    start=opening(index),
                )
                if await recorder.take(index, _attempted(result, attempt)):
                    break
        finally:
            with trio.CancelScope(shield=True):
                for player in players:
                    await player.close()
    return score


async def _on_workers(
    commands: Sequence[BotCommand],
    config: MatchConfig,
    names: Sequence[str],
    to_play: Sequence[int],
    recorder: _Recorder,
    *,
    concurrency: int,
    seed: int | None,
    opening: Callable[[int], str | None],
    begin: Callable[[int, int], tuple[str, ...]],
    warn: Callable[[str], None] | None,
    next_attempt: Callable[[int], int],
) -> None:
    """Play ``to_play`` on ``concurrency`` worker processes; ``recorder`` takes them."""
    from tournaments.workers import GameDone, GameJob, GameLost, Work, process_pool

    seats = len(commands)
    work = Work(
        match=config,
        commands=dict(zip(names, commands, strict=True)),
        seats=seats,
        log_dir=config.log_dir,
        for_match=True,
    )
    queue = iter(to_play)

    def result_of(done: GameDone) -> GameResult:
        if done.record is None:
            raise RefereeFault("a worker sent a game without its record")
        return _result_of(done.game, done.record, done.logs)

    async with process_pool(work, min(concurrency, max(1, len(to_play)))) as pool:
        finished, taken = trio.open_memory_channel[tuple[int, GameResult]](math.inf)

        async def slot(number: int) -> None:
            for index in queue:
                start = next_attempt(index)
                for attempt in range(start, start + MAX_ATTEMPTS):
                    players = begin(index, attempt)
                    job = GameJob(
                        index=index,
                        players=players,
                        round=str(recorder.first + index),
                        seed=game_seed(seed, index, attempt),
                        opening=opening(index),
                        attempt=attempt,
                    )
                    try:
                        done = await pool.play(number, job)
                    except GameLost as lost:
                        if attempt == start + MAX_ATTEMPTS - 1:
                            raise RefereeFault(
                                f"game {recorder.first + index}: {lost}{lost.hint},"
                                f" {MAX_ATTEMPTS} times"
                            ) from None
                        if warn is not None:
                            warn(
                                f"{lost} while playing game {recorder.first + index}: attempt"
                                f" {attempt} abandoned, playing it again as attempt {attempt + 1}"
                                f"{lost.hint}"
                            )
                        continue
                    finished.send_nowait((index, _attempted(result_of(done), attempt)))
                    break

        async with trio.open_nursery() as nursery:

            async def slots() -> None:
                async with finished, trio.open_nursery() as playing:
                    for number in range(pool.slots):
                        playing.start_soon(slot, number)

            nursery.start_soon(slots)
            async for index, result in taken:
                if await recorder.take(index, result):
                    nursery.cancel_scope.cancel()
                    break
