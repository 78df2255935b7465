"""Bot processes: start a bot in its sandbox, move bytes to and from it, always clean it up.

This is the only place where the referee starts operating-system processes for bots,
and it starts them only through :mod:`referee.sandbox`. It knows nothing about the
protocol: it moves bytes and leaves framing, decoding and deadlines to its callers (the
match runner wraps every call in :func:`trio.fail_after` or :func:`trio.move_on_after`).

**Starting.** A bot is started from the thread that runs the trio event loop, never from a
worker thread: ``PR_SET_PDEATHSIG`` (what ties a sandbox, or an unsandboxed bot, to the
referee's life) fires when the *thread* that forked the child ends, and trio's worker
threads end after a few idle seconds — a bot started from one would be killed mid-match.
Its pipes are wrapped as :class:`trio.lowlevel.FdStream`; its exit is awaited on a pidfd.

**Sandboxed** (the default where bubblewrap works, see :mod:`referee.sandbox`), a bot runs
in a PID namespace of its own: stopping it ends every process it started, wherever they
went (``setsid``, double forks). Stopping closes its stdin, waits for bwrap to have named
the sandbox's first process (its ``child-pid``, reported as soon as that process exists),
sends ``SIGTERM`` to the bot, waits a grace period for it to exit, then ``SIGKILL``\\s the
sandbox's first process — which ends the namespace — and bwrap's process group, reaps
bwrap, and waits for that first process to end (the kernel ends it last) and for the
sandbox's stderr to reach end of file, which every process of the sandbox held. bwrap is
never killed before it named that process: between making it and letting it go on, bwrap
is all that process waits for, and killed then, bwrap would leave it waiting for ever
(bwrap's ``--die-with-parent`` only takes hold later in that process).

**Unsandboxed** (``--sandbox off``), a bot runs in a session of its own, so its process id
is also the id of its process group: stopping closes its stdin, ``SIGTERM``\\s the group,
waits the grace period, ``SIGKILL``\\s the group and reaps the bot. A child that leaves the
group (``setsid``) escapes this; the sandbox exists for that.

**Ctrl-C.** Unless ``trio.run`` keeps it to checkpoints (the ``referee`` command does), trio
raises ``KeyboardInterrupt`` wherever a task runs when SIGINT comes, and cancel shields do
not stop it. Starting a bot until it is in the care of the code that stops it, and stopping
it until it is reaped, are protected from it (:func:`trio.lowlevel.enable_ki_protection`):
Ctrl-C is raised after, never half-way.

**Whose fault.** A bot that cannot start because of its command (a missing program, a bad
``dir``) is a :class:`~referee.errors.BotCrashed` ("cannot start …"). When the referee's
own resources fail (file descriptors, memory, processes, disk) or its sandbox cannot be
set up, it is a :class:`~referee.errors.RefereeFault`: never a bot's loss.

A bot's stderr is drained by a task of its own into a size-capped log file, keeping its
last lines in memory for error messages. With a ``ledger`` (a tournament's), each started
sandbox is noted so that :func:`stop_leftovers` can stop whatever a killed run left.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from types import MappingProxyType, TracebackType
from typing import BinaryIO

import trio

from referee import cgroups
from referee.errors import BotCrashed, RefereeError, RefereeFault
from referee.sandbox import (
    CPU_POOL,
    LIMIT_KEYS,
    UID_POOL,
    Limits,
    SandboxError,
    SandboxPolicy,
    SandboxUnavailable,
    bwrap_command,
    check_cpus,
    check_env_name,
    check_limits,
    clean_environment,
    find_tools,
    is_root,
    make_plan,
    parse_cpus,
    parse_limit,
    parse_switch,
    seccomp_fd,
    use_sandbox,
)

DEFAULT_GRACE = 0.5
"""Seconds a bot gets to exit after ``SIGTERM`` before it is killed."""

DEFAULT_STDERR_LIMIT = 1 << 20
"""Bytes of a bot's stderr written to its log file before the rest is dropped."""

STDERR_TAIL_LINES = 20
"""How many of a bot's last stderr lines are kept in memory."""

_READ_SIZE = 65536
_TAIL_LINE_CHARS = 1000
_STDERR_LINGER = 0.25
"""Seconds :meth:`BotProcess.stop` waits for the last stderr bytes of an unsandboxed bot."""

_SANDBOX_END_WAIT = 10.0
"""A hang guard: how long :meth:`BotProcess.stop` waits for a killed sandbox to be gone."""

_GROUP_REMOVE_WAIT = 10.0
"""A hang guard: how long :meth:`BotProcess.stop` waits for a killed group to empty."""

SANDBOX_TASKS = 2
"""The processes of a sandbox that are not the bot's (bwrap and the sandbox's first
process): a group's process limit is the bot's ``processes`` plus these."""

_SETUP_VERDICT_WAIT = 2.0
"""A hang guard: after a silent bot's output ends, how long to wait for bwrap to say
whether the bot ever started (it exits at once when the sandbox could not be set up)."""


class BotCommandError(RefereeError, ValueError):
    """A bot command line cannot be understood."""


# --- commands ----------------------------------------------------------------

_KEYS = ("name", "cmd", "dir", "env", *LIMIT_KEYS, "network", "cpus")
_BARE_PYTHON = frozenset({"python", "python3"})
_INTERPRETER = re.compile(r"(python|pypy)[\d.]*|node|deno|ruby|perl|java|bash|sh")
_OPTIONS_WITH_VALUE = frozenset({"-X", "-W"})


@dataclass(frozen=True)
class BotCommand:
    """How to start a bot: its argv, and optionally a name, a directory, the environment
    variables it declares, and its own sandbox settings.

    ``limits`` overrides the run's default limits (keys of
    :data:`~referee.sandbox.LIMIT_KEYS`, ``None`` for unlimited); ``network`` lets it use
    the network; ``cpus`` pins it to these CPUs. The bot's environment is a short fixed
    list plus ``env`` (:func:`~referee.clean_environment`), never the referee's.
    """

    argv: tuple[str, ...]
    name: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    limits: Mapping[str, int | None] = field(default_factory=dict, hash=False)
    network: bool = False
    cpus: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        argv = tuple(self.argv)
        if not argv or not argv[0]:
            raise BotCommandError("empty bot command")
        texts = [*argv, self.name or "", self.cwd or "", *self.env.keys(), *self.env.values()]
        if any("\0" in text for text in texts):
            raise BotCommandError("a bot command may not hold a NUL character")
        try:
            for variable in self.env:
                check_env_name(variable)
            for key, value in self.limits.items():
                if key not in LIMIT_KEYS:
                    raise SandboxError(f"unknown limit {key!r} (known: {', '.join(LIMIT_KEYS)})")
                Limits(**{key: value})  # checks the value
            if self.cpus is not None:
                object.__setattr__(self, "cpus", parse_cpus(self.cpus))
        except SandboxError as error:
            raise BotCommandError(str(error)) from None
        object.__setattr__(self, "argv", argv)
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "limits", MappingProxyType(dict(self.limits)))

    def __reduce__(self) -> tuple[type[BotCommand], tuple[object, ...]]:
        # Pickled to reach a worker process; its read-only views of mappings cannot be.
        fields = (self.argv, self.name, self.cwd, dict(self.env), dict(self.limits))
        return (BotCommand, (*fields, self.network, self.cpus))

    def resolved_argv(self) -> tuple[str, ...]:
        """The argv to run: a bare ``python`` or ``python3`` is the referee's own
        interpreter, so ``python -m bots.random`` works wherever the referee does
        (in a virtual environment, or where only ``python3`` is on the PATH)."""
        if self.argv[0] in _BARE_PYTHON:
            return (sys.executable, *self.argv[1:])
        return self.argv

    @classmethod
    def parse(cls, text: str) -> BotCommand:
        """Read a bot command as a user writes it.

        Either a plain command line, split like a shell would
        (``python -m bots.random --seed 3``), or keyed fields
        (``name=alice cmd='python -m bots.random' dir=/tmp env=K=V env=K2=V2``),
        where ``cmd`` is required and ``env`` may repeat. The sandbox settings of a
        player are keys too: ``memory=512M``, ``processes=64``, ``file_size=16M``,
        ``open_files=256`` (each also ``unlimited``), ``network=yes``, ``cpus=0,2-3``.
        """
        tokens = _split(text, text)
        if not tokens:
            raise BotCommandError("empty bot command")
        key, sep, _ = tokens[0].partition("=")
        if sep and key in _KEYS:
            return cls._parse_keyed(text, tokens)
        return cls(tuple(tokens))

    @classmethod
    def _parse_keyed(cls, text: str, tokens: list[str]) -> BotCommand:
        """Read the ``name=… cmd=… dir=… env=K=V`` form, already split."""
        fields: dict[str, str] = {}
        env: dict[str, str] = {}
        expected = ", ".join(f"{key}=" for key in _KEYS[:-1]) + f" or {_KEYS[-1]}="
        for token in tokens:
            key, sep, value = token.partition("=")
            if not sep or key not in _KEYS:
                raise BotCommandError(
                    f"bad bot command {text!r}: expected {expected}, got {token!r}"
                )
            if key == "env":
                variable, sep, setting = value.partition("=")
                if not sep or not variable:
                    raise BotCommandError(f"bad bot command {text!r}: env needs K=V, got {token!r}")
                env[variable] = setting
                continue
            if key in fields:
                raise BotCommandError(f"bad bot command {text!r}: {key}= given twice")
            if not value:
                raise BotCommandError(f"bad bot command {text!r}: {key}= is empty")
            fields[key] = value
        if "cmd" not in fields:
            raise BotCommandError(f"bad bot command {text!r}: cmd= is missing")
        argv = _split(fields["cmd"], text)
        if not argv:
            raise BotCommandError(f"bad bot command {text!r}: cmd= is empty")
        try:
            limits = {key: parse_limit(key, fields[key]) for key in LIMIT_KEYS if key in fields}
            network = parse_switch(fields.get("network", "no"))
            cpus = parse_cpus(fields["cpus"]) if "cpus" in fields else None
        except SandboxError as error:
            raise BotCommandError(f"bad bot command {text!r}: {error}") from None
        return cls(
            tuple(argv),
            name=fields.get("name"),
            cwd=fields.get("dir"),
            env=env,
            limits=limits,
            network=network,
            cpus=cpus,
        )

    @property
    def display_name(self) -> str:
        """A short name for logs and records: the given name, else the module
        (``bots.random``) or script stem (``greedy``) the command runs."""
        if self.name:
            return self.name
        program = PurePath(self.argv[0]).name
        if not _INTERPRETER.fullmatch(program):
            return PurePath(program).stem
        args = iter(self.argv[1:])
        for arg in args:
            if arg == "-m":
                return next(args, program)
            if arg == "-jar":
                return PurePath(next(args, program)).stem
            if arg == "-c":
                return program
            if arg in _OPTIONS_WITH_VALUE:
                next(args, None)
            elif not arg.startswith("-"):
                return PurePath(arg).stem
        return program

    def __str__(self) -> str:
        return shlex.join(self.argv)


def _split(command_line: str, text: str) -> list[str]:
    """Split ``command_line`` like a shell; ``text`` is what the user wrote."""
    try:
        return shlex.split(command_line)
    except ValueError as exc:
        raise BotCommandError(f"bad bot command {text!r}: {str(exc).lower()}") from None


# --- stderr ------------------------------------------------------------------


class _StderrSink:
    """Where a bot's stderr goes: a log file capped at ``limit`` bytes (then one
    truncation note, then nothing), and the last lines kept in memory."""

    def __init__(self, log: BinaryIO | None, limit: int) -> None:
        self._log = log
        self.error: OSError | None = None
        """Why writing the log failed (it is then no longer written)."""
        self._room = limit
        self._limit = limit
        self._lines: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._partial = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Take the next bytes the bot wrote to stderr."""
        self.total += len(data)
        self._write_log(data)
        *complete, rest = data.split(b"\n")
        if len(complete) > STDERR_TAIL_LINES:
            # Older lines would fall out of the deque anyway; only the first
            # piece continues the pending partial line.
            self._partial.clear()
            complete = complete[-STDERR_TAIL_LINES:]
        for piece in complete:
            self._extend_partial(piece)
            self._lines.append(_decode_line(self._partial))
            self._partial.clear()
        self._extend_partial(rest)

    def tail(self, n: int) -> list[str]:
        """The last ``n`` lines (at most :data:`STDERR_TAIL_LINES`), the
        unfinished last line included."""
        lines = list(self._lines)
        if self._partial:
            lines.append(_decode_line(self._partial))
        n = min(n, STDERR_TAIL_LINES)
        return lines[-n:] if n > 0 else []

    def _write_log(self, data: bytes) -> None:
        if self._log is None or self._room < 0:
            return
        try:
            self._write_capped(data)
        except OSError as error:
            self.error, self._log = error, None

    def _write_capped(self, data: bytes) -> None:
        assert self._log is not None
        if len(data) <= self._room:
            self._log.write(data)
            self._room -= len(data)
            return
        self._log.write(data[: self._room])
        self._log.write(f"\n[referee: stderr truncated after {self._limit} bytes]\n".encode())
        self._room = -1

    def _extend_partial(self, piece: bytes) -> None:
        room = _TAIL_LINE_CHARS - len(self._partial)
        if room > 0:
            self._partial += piece[:room]


def _decode_line(raw: bytes | bytearray) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")


@contextlib.contextmanager
def _stderr_log(path: Path | None) -> Iterator[BinaryIO | None]:
    """Open (and create the directory of) a bot's stderr log, if it has one."""
    if path is None:
        yield None
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        log = open(path, "wb", buffering=0)  # noqa: SIM115 (closed below)
    except OSError as error:
        raise _referee_fault(f"cannot open the bot log {path}", error) from None
    with log:
        yield log


# --- processes ---------------------------------------------------------------


class BotProcess:
    """A running bot, as :func:`open_bot` hands it out: bytes in, bytes out, and
    a way to stop it. All waiting is cancellable; deadlines are the caller's."""

    def __init__(
        self,
        command: BotCommand,
        popen: subprocess.Popen[bytes],
        pipes: _Pipes,
        sink: _StderrSink,
        *,
        sandboxed: bool,
        ledger: Path | None,
        cpus: tuple[int, ...] | None = None,
        group: cgroups.Group | None = None,
    ) -> None:
        self.command = command
        self.sandboxed = sandboxed
        self.group = group
        """The bot's control group (its whole process tree), ``None`` where there are none."""
        """Whether the bot runs in a sandbox (else in a session of its own)."""
        self.cpus = cpus
        """The CPUs the bot, with all it starts, is pinned to (``None``: not pinned)."""
        self._popen = popen
        self._pidfd = os.pidfd_open(popen.pid)
        self._stdin = trio.lowlevel.FdStream(pipes.take("stdin"))
        self._stdout = trio.lowlevel.FdStream(pipes.take("stdout"))
        self._stderr = trio.lowlevel.FdStream(pipes.take("stderr"))
        self._status = pipes.take("status") if sandboxed else None
        if self._status is not None:
            os.set_blocking(self._status, False)
        self._status_buffer = bytearray()
        self._sink = sink
        self._ledger = ledger
        self._reaping = trio.Lock()
        self._stderr_closed = trio.Event()
        self._drain_scope = trio.CancelScope(shield=True)
        self._init_known = False
        self._init_pidfd: int | None = None
        self._init_pid = 0
        self._fault: RefereeFault | None = None
        self._exit_code: int | None = None
        self._heard = False
        self._stopping = False
        self._stopped = False
        self._breach: cgroups.Breach | None = None

    def __repr__(self) -> str:
        return f"<BotProcess {self.name!r} pid {self.pid}>"

    @property
    def name(self) -> str:
        """The bot's display name (see :attr:`BotCommand.display_name`)."""
        return self.command.display_name

    @property
    def pid(self) -> int:
        """The process the referee started: bwrap when sandboxed, else the bot itself
        (whose id is also its process group's)."""
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """The bot's exit status (``-N`` when killed by signal N), ``None`` while it runs.

        A sandboxed bot's status comes from bwrap, which reports death by signal N as
        128 + N, as shells do; it is read back as ``-N``.
        """
        code = self._popen.returncode
        if code is not None and self.sandboxed and self._exit_code is not None:
            code = self._exit_code
            if 128 < code < 128 + signal.NSIG:
                return 128 - code
        return code

    def exit_description(self) -> str | None:
        """How the bot ended, for messages: ``"exit code 3"``,
        ``"killed by signal 9 (SIGKILL)"``, or ``None`` while it runs."""
        code = self.returncode
        if code is None:
            return None
        if code >= 0:
            return f"exit code {code}"
        try:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"killed by signal {-code}"

    def cpu_time(self) -> float | None:
        """Seconds of CPU the bot's whole process tree has used so far (its group's; the
        sandbox's own processes included, which use next to none), ``None`` without a group."""
        if self.group is None:
            return None
        try:
            return self.group.cpu_time()
        except OSError as error:
            raise _referee_fault(f"cannot read the CPU time of bot {self.name!r}", error) from None

    def limit_breach(self) -> cgroups.Breach | None:
        """The limit the bot's whole tree hit (memory: an out-of-memory kill; processes: a
        refused fork), ``None`` when none was or it has no group."""
        if self.group is None or self._stopped:
            return self._breach
        try:
            return self.group.breach()
        except OSError:
            return None

    def stderr_tail(self, n: int = STDERR_TAIL_LINES) -> list[str]:
        """The last ``n`` lines the bot wrote to stderr (at most
        :data:`STDERR_TAIL_LINES`). Complete once :meth:`stop` has returned."""
        return self._sink.tail(n)

    @property
    def stderr_bytes(self) -> int:
        """How many bytes the bot has written to stderr so far, logged or not."""
        return self._sink.total

    @property
    def stderr_closed(self) -> bool:
        """Whether the bot's stderr reached end of file: every process that held it —
        for a sandbox, every process in it — is gone."""
        return self._stderr_closed.is_set()

    async def send_all(self, data: bytes) -> None:
        """Write ``data`` to the bot's stdin; raises :class:`BotCrashed` when the
        bot closed it or has been stopped. Blocks while the bot does not read."""
        self._check_fault()
        try:
            await self._stdin.send_all(data)
        except trio.BrokenResourceError:
            await self._check_setup()
            raise BotCrashed(f"{self._who()} closed its stdin") from None
        except trio.ClosedResourceError:
            raise BotCrashed(f"{self._who()} has been stopped") from None

    async def send_nowait(self, data: bytes) -> int:
        """Write what of ``data`` the bot's stdin takes now, without waiting; → how many
        bytes that was (the rest is for :meth:`send_all`). Raises :class:`BotCrashed`
        like :meth:`send_all`. Not a checkpoint: the match runner writes a request this
        way, then waits for the reply, so one pass of the scheduler serves both."""
        self._check_fault()
        try:
            return os.write(self._stdin.fileno(), data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            if exc.errno == errno.EBADF:  # our end is closed: stopped
                raise BotCrashed(f"{self._who()} has been stopped") from None
            await self._check_setup()
            raise BotCrashed(f"{self._who()} closed its stdin") from None

    async def receive_some(self, max_bytes: int = _READ_SIZE) -> bytes:
        """Read what the bot wrote to stdout, at most ``max_bytes``; ``b""`` once
        it closed its stdout (usually by exiting).

        A checkpoint, as trio's own streams are, but it reads before it lets others run,
        so that a reply not there yet costs one pass of the scheduler (the wait), not two.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        data = await self.receive_nowait(max_bytes)
        if data is not None:
            # Output that is always there must not keep the others (and deadlines) waiting.
            await trio.lowlevel.cancel_shielded_checkpoint()
            return data
        while True:
            try:
                await trio.lowlevel.wait_readable(self._stdout.fileno())
            except trio.ClosedResourceError:
                raise BotCrashed(f"{self._who()} has been stopped") from None
            data = await self.receive_nowait(max_bytes)
            if data is not None:
                return data

    async def receive_nowait(self, max_bytes: int = _READ_SIZE) -> bytes | None:
        """Like :meth:`receive_some`, but without waiting: ``None`` when the bot wrote
        nothing that was not read yet. The match runner judges with it what a bot wrote
        before it writes to the bot again (see ``referee.match._Link.drain``); not while
        a :meth:`receive_some` is waiting."""
        self._check_fault()
        try:
            data = os.read(self._stdout.fileno(), max_bytes)
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno == errno.EBADF:  # our end is closed: stopped
                raise BotCrashed(f"{self._who()} has been stopped") from None
            raise BotCrashed(f"{self._who()}: reading its stdout failed: {exc}") from None
        return await self._took(data)

    async def _took(self, data: bytes) -> bytes:
        """``data`` read from the bot's stdout; at its end (``b""``), first check that the
        sandbox was set up, so that bwrap's own failure is not taken for the bot's."""
        if data:
            self._heard = True
        else:
            await self._check_setup()
        return data

    async def wait(self) -> int:
        """Wait for the bot to exit by itself and return its exit status."""
        await self._reap()
        code = self.returncode
        assert code is not None
        return code

    @trio.lowlevel.enable_ki_protection
    async def stop(self, grace: float = DEFAULT_GRACE) -> None:
        """End the bot and everything it started, and reap it.

        Closes its stdin, sends ``SIGTERM`` to the bot, gives it ``grace`` seconds to
        exit, then ``SIGKILL``\\s everything it started (always: its children may outlive
        it) and reaps it. Calling it again once it has returned does nothing; if it was
        cancelled half-way, calling it again does the whole job.

        Ctrl-C does not cut it short: trio holds ``KeyboardInterrupt`` back from it (it
        is protected), except in trio's main task, which trio interrupts at any
        checkpoint; there the stop is done all the same and ``KeyboardInterrupt``
        raised once it is.
        """
        interrupted: KeyboardInterrupt | None = None
        try:
            while not self._stopped:
                try:
                    await self._stop(grace)
                except KeyboardInterrupt as exc:
                    interrupted = exc
        finally:
            if interrupted is not None:
                raise interrupted

    async def _stop(self, grace: float) -> None:
        """One attempt at :meth:`stop` (each step can be done again)."""
        self._stopping = True
        await self._stdin.aclose()
        # bwrap is not killed before it named the sandbox's first process (it does so
        # at once): killed between making that process and telling it to go on, it
        # would leave it waiting for ever, unnamed (see _kill).
        await self._learn_init()
        self._terminate()
        with trio.move_on_after(grace):
            await self._reap()
        self._kill()
        await self._reap()
        if self.sandboxed:
            with trio.move_on_after(_SANDBOX_END_WAIT):
                if self._init_pidfd is not None:
                    # The sandbox's first process ends last: its PID namespace is gone.
                    await trio.lowlevel.wait_readable(self._init_pidfd)
                # Every process of the sandbox held its stderr.
                await self._stderr_closed.wait()
        else:
            with trio.move_on_after(_STDERR_LINGER):
                await self._stderr_closed.wait()
        await self._remove_group()
        self._stopped = True

    async def _remove_group(self) -> None:
        """Kill what is left in the bot's group and remove it once empty (the kernel ends
        killed processes a moment later; their group cannot go before)."""
        group = self.group
        if group is None:
            return
        self._breach = self.limit_breach()  # what the group said, kept past its end
        with contextlib.suppress(OSError):
            _STOPPED_CPU.append(group.cpu_time())
        with trio.move_on_after(_GROUP_REMOVE_WAIT):
            while True:
                try:
                    group.kill()
                    if group.remove():
                        return
                except (OSError, cgroups.GroupFault) as error:
                    if self._fault is None:
                        what = f"cannot remove the control group of bot {self.name!r}"
                        self._fault = RefereeFault(f"{what}: {error}")
                    return
                await trio.sleep(0.001)

    # --- inside ---------------------------------------------------------------------

    async def _reap(self) -> None:
        """Wait until the process the referee started has exited, and reap it."""
        async with self._reaping:
            if self._popen.returncode is not None:
                return
            await trio.lowlevel.wait_readable(self._pidfd)
            # bwrap wrote the bot's exit code just before exiting; read while it is
            # not reaped, so that its pid is still its own (see _adopt_init).
            self._read_status()
            self._popen.wait()  # it has exited: this only reaps it

    async def _learn_init(self) -> None:
        """Wait for bwrap to name the sandbox's first process (it does so as soon as it
        has made it), so that :meth:`stop` can tell when the whole sandbox is gone."""
        if self._status is None:
            return
        with trio.move_on_after(_SANDBOX_END_WAIT):
            while not self._read_status() and not self._init_known:
                await trio.lowlevel.wait_readable(self._status)

    def _read_status(self) -> bool:
        """Take in what bwrap reported so far: the sandbox's first process at the start,
        the bot's exit code at the end (one JSON object a line). Whether it is done."""
        if self._status is None:
            return True
        ended = False
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._status, _READ_SIZE):
                self._status_buffer += chunk
            ended = True
        while (end := self._status_buffer.find(b"\n")) >= 0:
            line = bytes(self._status_buffer[:end])
            del self._status_buffer[: end + 1]
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if not isinstance(report, dict):
                continue
            if isinstance(report.get("child-pid"), int) and not self._init_known:
                self._init_known = True
                self._adopt_init(report["child-pid"])
            if isinstance(report.get("exit-code"), int):
                self._exit_code = report["exit-code"]
        return ended

    def _adopt_init(self, pid: int) -> None:
        """Hold a pidfd on the sandbox's first process, once sure it is bwrap's child
        (which only holds while bwrap is not reaped: then no process can have its pid)."""
        if self._popen.returncode is not None:
            return
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return  # already gone
        if _parent_of(pid) != self._popen.pid:
            os.close(pidfd)  # gone, and its pid taken by another process
            return
        self._init_pidfd, self._init_pid = pidfd, pid
        try:
            _note(self._ledger, pid, "sandbox")
        except RefereeFault as fault:
            self._fault = fault

    def _terminate(self) -> None:
        """Ask the bot to end: ``SIGTERM`` to its group, or to the processes its
        sandbox's first process holds (the bot, and any orphans it left)."""
        if not self.sandboxed:
            self._signal_group(signal.SIGTERM)
        elif self._init_pidfd is not None:
            for pidfd in _children(self._init_pid):
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(pidfd, signal.SIGTERM)
                os.close(pidfd)

    def _kill(self) -> None:
        """Kill everything: the bot's control group, if it has one (every process of
        the bot, wherever it went); the sandbox's first process (the kernel then kills
        every process of its PID namespace) and bwrap; or the bot's process group."""
        if self.group is not None:
            with contextlib.suppress(OSError):
                self.group.kill()
        if not self.sandboxed:
            # Even once the leader is reaped, its pid stays reserved as the group id
            # while any member lives; with none left, killpg finds no group.
            self._signal_group(signal.SIGKILL)
            return
        if self._init_pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._init_pidfd, signal.SIGKILL)
        if self._popen.returncode is None:
            # bwrap leads a process group of its own, which also holds the sandbox's
            # first process until that starts its own session, late in its set-up: so
            # that process dies too even when bwrap has not named it (the hang guard of
            # _learn_init ran out). Not reaped, bwrap's pid, the group's id, is its own.
            self._signal_group(signal.SIGKILL)

    def _signal_group(self, signum: signal.Signals) -> None:
        # ProcessLookupError: the group is gone. PermissionError: macOS says so
        # for a group of zombies.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signum)

    def _who(self) -> str:
        return f"bot {self.name!r} (pid {self.pid})"

    def _check_fault(self) -> None:
        """Raise the :class:`RefereeFault` met on this bot's behalf (writing its log or
        the ledger failed: a full disk), so that its game is stopped, not scored."""
        if self._fault is None and self._sink.error is not None:
            what = f"cannot write the stderr log of bot {self.name!r}"
            self._fault = _referee_fault(what, self._sink.error)
        if self._fault is not None:
            raise self._fault

    async def _check_setup(self) -> None:
        """At the end of a silent bot's output: raise :class:`RefereeFault` if it never
        ran because bwrap could not set its sandbox up (bwrap then reports no exit code;
        a bot cannot fake that: the report comes from bwrap's own pipe)."""
        if not self.sandboxed or self._heard or self._stopping:
            return
        with trio.move_on_after(_SETUP_VERDICT_WAIT):
            await self._reap()
        if self._popen.returncode is None or self._exit_code is not None:
            return
        with trio.move_on_after(_STDERR_LINGER):
            await self._stderr_closed.wait()
        said = " | ".join(line for line in self._sink.tail(3) if line.strip())
        raise RefereeFault(
            f"the sandbox of bot {self.name!r} could not be set up"
            f" ({said or self.exit_description()}): fix the system or run with --sandbox off"
        )

    @trio.lowlevel.enable_ki_protection
    async def _drain_stderr(self) -> None:
        """Read the bot's stderr until it closes, so the bot never blocks on it.

        Shielded, and protected from Ctrl-C: it goes on through a cancellation of the
        bot's block, so that the stop that follows still gets the bot's last words and
        sees its stderr end; :func:`open_bot` cancels it once the bot has been stopped."""
        with (
            self._drain_scope,
            contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
        ):
            while chunk := await self._stderr.receive_some(_READ_SIZE):
                self._sink.feed(chunk)
            self._stderr_closed.set()

    def _close(self) -> None:
        """Close the referee's ends of everything (no checkpoint: nothing cuts it short)."""
        for stream in (self._stdin, self._stdout, self._stderr):
            stream.close()
        for fd in (self._pidfd, self._init_pidfd, self._status):
            if fd is not None:
                trio.lowlevel.notify_closing(fd)
                os.close(fd)
        self._init_pidfd = self._status = None


_STOPPED_CPU: list[float] = []
"""The CPU seconds of each bot this process stopped, by its group."""


def stopped_bots_cpu_time() -> float:
    """CPU seconds used by the bots this process has stopped, by their control groups."""
    return sum(_STOPPED_CPU)


def _parent_of(pid: int) -> int | None:
    """The parent of ``pid`` per /proc (``None`` when it is gone)."""
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def _children(parent: int) -> list[int]:
    """pidfds of the children of ``parent`` (a process the caller holds a pidfd on)."""
    try:
        text = Path(f"/proc/{parent}/task/{parent}/children").read_text()
    except OSError:
        return []
    pidfds = []
    for pid in map(int, text.split()):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            continue
        if _parent_of(pid) == parent:
            pidfds.append(pidfd)
        else:
            os.close(pidfd)
    return pidfds


# --- starting ------------------------------------------------------------------------


_REFEREE_ERRNOS = {
    errno.EMFILE: "raise the limit of open files (ulimit -n) or play fewer games at once",
    errno.ENFILE: "the system is out of file handles: play fewer games at once",
    errno.ENOMEM: "the referee's machine is out of memory: play fewer games at once",
    errno.EAGAIN: "too many processes (ulimit -u): play fewer games at once",
    errno.ENOSPC: "the disk is full: free some space and run it again",
    errno.EDQUOT: "the disk quota is used up: free some space and run it again",
    errno.ENOBUFS: "the system is out of buffers: play fewer games at once",
}
"""What the referee's own resources failing means, and what to do about it."""


def _referee_fault(what: str, error: OSError) -> RefereeFault:
    reason = error.strerror or str(error)
    advice = _REFEREE_ERRNOS.get(error.errno or 0)
    return RefereeFault(f"{what}: {reason}" + (f" ({advice})" if advice else ""))


class _Pipes:
    """The pipes of a bot being started: the referee's ends are handed over one by one
    (:meth:`take`); whatever is left — the bot's ends, once it started — is closed."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._ours: dict[str, int] = {}
        self.theirs: dict[str, int] = {}
        try:
            for name in names:
                read, write = (_above_stdio(fd) for fd in os.pipe2(os.O_CLOEXEC))
                ours, theirs = (write, read) if name == "stdin" else (read, write)
                self._ours[name], self.theirs[name] = ours, theirs
        except OSError:
            self.close()
            raise

    def take(self, name: str) -> int:
        return self._ours.pop(name)

    def close_theirs(self) -> None:
        for fd in self.theirs.values():
            os.close(fd)
        self.theirs.clear()

    def close(self) -> None:
        self.close_theirs()
        for fd in self._ours.values():
            os.close(fd)
        self._ours.clear()


def _above_stdio(fd: int) -> int:
    """``fd``, moved above 0–2 if it is one of them (the referee may run with a standard
    stream closed), so that handing it to a child cannot clash with the child's own."""
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved


def _start(
    command: BotCommand,
    policy: SandboxPolicy,
    sink: _StderrSink,
    leases: contextlib.ExitStack,
    successor_of: tuple[int, ...] | None,
) -> BotProcess:
    """Start ``command`` (from this thread, the event loop's: see the module docstring)."""
    sandboxed = use_sandbox(policy.mode)
    argv = command.resolved_argv()
    cwd = os.path.abspath(command.cwd or os.getcwd())
    env = clean_environment(command.env, sandboxed=sandboxed, base=os.environ)
    argv = (_locate(command, argv[0], cwd, env["PATH"]), *argv[1:])
    limits = policy.limits.merged(command.limits)
    try:
        if command.cpus is not None:
            check_cpus(command.cpus)
        if sandboxed:
            check_limits(limits)
    except SandboxError as error:
        raise BotCrashed(f"cannot start {command.argv[0]!r}: {error}") from None
    cpus = None
    if policy.affinity or command.cpus is not None:
        cpus = leases.enter_context(CPU_POOL.lease(command.cpus or successor_of))
    group = _new_group(command, limits, sandboxed, leases)
    if group is not None:
        # The group limits the whole tree: no per-process limit may stop it first.
        limits = dataclasses.replace(limits, memory=None, processes=None)
    joins = group.join_paths() if group is not None else ()
    names = ("stdin", "stdout", "stderr", "status")
    try:
        pipes = _Pipes(names if sandboxed else names[:3])
    except OSError as error:
        raise _referee_fault(f"cannot start bot {command.display_name!r}", error) from None
    try:
        if sandboxed:
            uid = _seat_user(leases) if is_root() else None
            popen = _popen_sandboxed(
                command, policy, limits, argv, cwd, env, uid, pipes, cpus, joins
            )
        else:
            popen = _popen_plain(command, argv, cwd, env, pipes, cpus, joins)
        pipes.close_theirs()
        try:
            _note(policy.ledger, popen.pid, "sandbox" if sandboxed else "group")
            return BotProcess(
                command,
                popen,
                pipes,
                sink,
                sandboxed=sandboxed,
                ledger=policy.ledger,
                cpus=cpus,
                group=group,
            )
        except OSError as error:
            _kill_unwatched(popen)
            raise _referee_fault(f"cannot watch bot {command.display_name!r}", error) from None
        except RefereeFault:
            _kill_unwatched(popen)
            raise
    finally:
        pipes.close()


def _new_group(
    command: BotCommand, limits: Limits, sandboxed: bool, leases: contextlib.ExitStack
) -> cgroups.Group | None:
    """A control group of its own for the bot, where groups can be had (removed when
    ``leases`` closes, if the bot's stop did not: it was never started)."""
    if cgroups.group_problem() is not None:
        return None
    processes = limits.processes
    if processes is not None and sandboxed:
        processes += SANDBOX_TASKS
    try:
        group = cgroups.new_group(limits.memory, processes)
    except (cgroups.GroupFault, cgroups.GroupUnavailable) as error:
        raise RefereeFault(f"cannot start bot {command.display_name!r}: {error}") from None
    leases.callback(_discard_group, group)
    return group


def _discard_group(group: cgroups.Group) -> None:
    """Remove ``group`` if it is still there (its bot never ran, or its stop was cut
    short): kill what is in it first; a group that does not empty at once is left for
    the next run's sweep."""
    with contextlib.suppress(OSError, cgroups.GroupFault):
        if group.remove():
            return
        group.kill()
        group.remove()


def _seat_user(leases: contextlib.ExitStack) -> int:
    """A user of its own for a sandbox, held until ``leases`` closes."""
    try:
        return leases.enter_context(UID_POOL.lease())
    except SandboxUnavailable as error:
        raise RefereeFault(f"cannot start a sandbox: {error}") from None


def _popen_sandboxed(
    command: BotCommand,
    policy: SandboxPolicy,
    limits: Limits,
    argv: tuple[str, ...],
    cwd: str,
    env: Mapping[str, str],
    uid: int | None,
    pipes: _Pipes,
    cpus: tuple[int, ...] | None,
    joins: tuple[str, ...],
) -> subprocess.Popen[bytes]:
    tools = find_tools()
    assert tools is not None, "use_sandbox said the sandbox works"
    theirs = pipes.theirs
    try:
        with seccomp_fd() as seccomp:
            fds = (theirs["stdin"], theirs["stdout"], theirs["status"], seccomp)
            try:
                plan = make_plan(
                    argv,
                    cwd=cwd,
                    copy=command.cwd is not None,
                    env=env,
                    limits=limits,
                    network=command.network,
                    hide=policy.hide,
                    uid=uid,
                    fds=fds,
                )
            except SandboxError as error:  # its dir cannot be copied: the player's to fix
                raise BotCrashed(f"cannot start {command.argv[0]!r}: {error}") from None
            return _popen(
                bwrap_command(plan, tools),
                stdin=subprocess.DEVNULL,
                stdout=theirs["stderr"],
                stderr=theirs["stderr"],
                pass_fds=fds,
                cwd=None,
                env={},
                cpus=cpus,
                joins=joins,
            )
    except OSError as error:
        raise _referee_fault(
            f"cannot start the sandbox of bot {command.display_name!r}", error
        ) from None


def _popen_plain(
    command: BotCommand,
    argv: tuple[str, ...],
    cwd: str,
    env: Mapping[str, str],
    pipes: _Pipes,
    cpus: tuple[int, ...] | None,
    joins: tuple[str, ...],
) -> subprocess.Popen[bytes]:
    theirs = pipes.theirs
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    # Killed with the referee (PR_SET_PDEATHSIG; this thread lives as long as it does).
    prefix = (setpriv, "--pdeathsig", "KILL", "--") if setpriv else ()
    try:
        return _popen(
            [*prefix, *argv],
            stdin=theirs["stdin"],
            stdout=theirs["stdout"],
            stderr=theirs["stderr"],
            pass_fds=(),
            cwd=cwd,
            env=env,
            cpus=cpus,
            joins=joins,
        )
    except OSError as error:
        if error.errno in _REFEREE_ERRNOS:
            raise _referee_fault(f"cannot start bot {command.display_name!r}", error) from None
        reason = error.strerror or str(error)
        if error.filename == cwd:
            reason = f"{reason} (directory {cwd!r})"
        raise BotCrashed(f"cannot start {command.argv[0]!r}: {reason}") from None


def _popen(
    args: list[str],
    *,
    stdin: int,
    stdout: int,
    stderr: int,
    pass_fds: tuple[int, ...],
    cwd: str | None,
    env: Mapping[str, str],
    cpus: tuple[int, ...] | None,
    joins: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """Popen in a session of its own; with ``cpus``, pinned to them (the affinity is
    inherited from this thread, set for the moment of the fork); with ``joins`` (a control
    group's ``cgroup.procs`` files), in that group before it runs: a shell writes ``0``
    (itself) to each, closes them and becomes the command (see :func:`_joined`)."""
    if joins:
        args = _joined(args, joins, keep_pwd="PWD" in env)
    saved = os.sched_getaffinity(0) if cpus is not None else None
    if cpus is not None:
        os.sched_setaffinity(0, cpus)
    try:
        return subprocess.Popen(
            args,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pass_fds=pass_fds,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    finally:
        if saved is not None:
            os.sched_setaffinity(0, saved)


JOIN_FAILED = 125
"""The exit status of a bot whose first process could not join its control group (it
then never runs)."""


def _joined(args: list[str], paths: tuple[str, ...], *, keep_pwd: bool) -> list[str]:
    """``args`` started by a shell that first joins the group whose ``cgroup.procs`` files
    are ``paths``. A shell, not a ``preexec_fn``: the referee's fork stays a ``vfork`` and
    it does not wait for the join, which on cgroup v1 can take the kernel milliseconds (the
    first move of a process waits for an RCU grace period); the bot's start waits instead.
    ``dash`` where there is one: it adds nothing to the environment it passes on but
    ``PWD``, unset again unless the bot's environment has it (bash adds ``SHLVL`` and
    ``_``, which no ``unset`` removes)."""
    writes = " && ".join(f"echo 0 > {shlex.quote(path)}" for path in paths)
    unset = "" if keep_pwd else "unset PWD; "
    shell = shutil.which("dash") or shutil.which("sh") or "/bin/sh"
    script = f'{writes} || exit {JOIN_FAILED}; {unset}exec "$@"'
    return [shell, "-c", script, "referee-join", *args]


def _kill_unwatched(popen: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(popen.pid, signal.SIGKILL)
    popen.kill()
    popen.wait()


def _locate(command: BotCommand, program: str, cwd: str, path: str) -> str:
    """The program to run — found on ``path`` unless it holds a ``/`` — or
    :class:`BotCrashed` saying why it cannot be started."""

    def cannot(code: int, extra: str = "") -> BotCrashed:
        return BotCrashed(f"cannot start {command.argv[0]!r}: {os.strerror(code)}{extra}")

    if not os.path.isdir(cwd):
        raise cannot(
            errno.ENOTDIR if os.path.exists(cwd) else errno.ENOENT, f" (directory {cwd!r})"
        )
    if "/" in program:
        target = os.path.join(cwd, program)
        if not os.path.isfile(target):
            raise cannot(errno.ENOENT)
        if not os.access(target, os.X_OK):
            raise cannot(errno.EACCES)
        found = program
    else:
        located = shutil.which(program, path=path)
        if located is None:
            raise cannot(errno.ENOENT)
        found = os.path.abspath(located)
    if "=" in found:
        # env -i would read it as a variable.
        raise BotCrashed(f"cannot start {command.argv[0]!r}: its path may not hold '='")
    return found


def open_bot(
    command: BotCommand,
    *,
    sandbox: SandboxPolicy | None = None,
    stderr_path: Path | None = None,
    stderr_limit: int = DEFAULT_STDERR_LIMIT,
    successor_of: tuple[int, ...] | None = None,
) -> contextlib.AbstractAsyncContextManager[BotProcess]:
    """Start a bot and yield it as a :class:`BotProcess`; stop it on the way out.

    It runs as ``sandbox`` says (default: :class:`~referee.sandbox.SandboxPolicy`,
    sandboxed where bubblewrap works). Its stderr goes to ``stderr_path`` (overwritten),
    capped at ``stderr_limit`` bytes. Pinned to CPUs (``sandbox.affinity``, without
    CPUs of its player's own), a bot that replaces another is given ``successor_of``, the
    CPUs of the bot it replaces (:attr:`BotProcess.cpus`), rather than the least used
    ones: while the old one is still being stopped, those would be its opponent's.

    On leaving the block — normally, by an exception or by cancellation —
    :meth:`BotProcess.stop` runs shielded from cancellation, so
    everything the bot started is killed and the bot reaped before this returns. Raises
    :class:`BotCrashed` when the command cannot be started, and
    :class:`~referee.errors.RefereeFault` when the referee's own resources fail.

    Entering and leaving the block are protected from Ctrl-C (see this module's notes): a bot
    is never started without being stopped, nor left half stopped.
    """
    policy = sandbox or SandboxPolicy()
    return _Guarded(_bot_block(command, policy, stderr_path, stderr_limit, successor_of))


class _Guarded:
    """An async context manager whose entry and exit Ctrl-C cannot cut in half.

    trio raises ``KeyboardInterrupt`` at whatever line of a task runs when SIGINT comes
    (cancel shields do not stop it), unless the code is protected
    (:func:`trio.lowlevel.enable_ki_protection`; trio then raises it in its main task).
    Raised between starting a bot and taking charge of it, or half-way through stopping
    it, it would leave bwrap or the sandbox behind, unwatched. So :func:`open_bot`'s
    entry and exit, and all they call, are protected; the block itself is not.
    """

    def __init__(self, block: contextlib.AbstractAsyncContextManager[BotProcess]) -> None:
        self._block = block

    @trio.lowlevel.enable_ki_protection
    async def __aenter__(self) -> BotProcess:
        return await self._block.__aenter__()

    @trio.lowlevel.enable_ki_protection
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        return await self._block.__aexit__(exc_type, exc, traceback)


@contextlib.asynccontextmanager
async def _bot_block(
    command: BotCommand,
    policy: SandboxPolicy,
    stderr_path: Path | None,
    stderr_limit: int,
    successor_of: tuple[int, ...] | None,
) -> AsyncIterator[BotProcess]:
    """:func:`open_bot`, unguarded."""
    with _stderr_log(stderr_path) as log, contextlib.ExitStack() as leases:
        bot = _start(command, policy, _StderrSink(log, stderr_limit), leases, successor_of)
        body_error: BaseException | None = None
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot._drain_stderr)
                try:
                    await bot._learn_init()
                    yield bot
                except trio.Cancelled:
                    raise
                except BaseException as exc:
                    # Re-raised below, outside the nursery, so that callers see
                    # their own exception rather than an ExceptionGroup.
                    body_error = exc
                finally:
                    try:
                        with trio.CancelScope(shield=True):
                            await bot.stop()
                    finally:  # even when Ctrl-C comes out of the stop (trio's main task)
                        bot._drain_scope.cancel()
                        nursery.cancel_scope.cancel()
        finally:
            bot._close()
        if body_error is not None:
            raise body_error


# --- leftovers of a killed run ---------------------------------------------------------


def _note(ledger: Path | None, pid: int, kind: str) -> None:
    """Note in ``ledger`` that ``pid`` (a ``sandbox`` process, or a bot leading its
    ``group``) was started, with what identifies it across pid reuse."""
    if ledger is None:
        return
    started = _start_time(pid)
    if started is None:
        return
    try:
        with open(ledger, "a", encoding="ascii") as file:
            file.write(f"{_boot_id()} {pid} {started} {kind}\n")
    except OSError as error:
        raise _referee_fault(f"cannot write {ledger}", error) from None


def stop_leftovers(ledger: Path) -> int:
    """Kill the processes noted in ``ledger`` by an earlier run that still live (the same
    boot, pid and start time), then empty it; returns how many were killed.

    A sandbox's processes are killed (which ends its PID namespace); an unsandboxed bot
    whose leader still lives, with its whole process group.
    """
    try:
        lines = ledger.read_text(encoding="ascii", errors="replace").splitlines()
    except FileNotFoundError:
        return 0
    except OSError as error:
        raise _referee_fault(f"cannot read {ledger}", error) from None
    boot = _boot_id()
    killed = 0
    for line in lines:
        parts = line.split()
        if len(parts) != 4 or parts[0] != boot or not parts[1].isdigit():
            continue
        pid, started, kind = int(parts[1]), parts[2], parts[3]
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            if str(_start_time(pid)) != started or _state(pid) in ("Z", "X", None):
                continue  # that pid now belongs to another process, or it has ended
            if kind == "group":
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            killed += 1
        finally:
            os.close(pidfd)
    try:
        ledger.write_text("", encoding="ascii")
    except OSError as error:
        raise _referee_fault(f"cannot write {ledger}", error) from None
    return killed


def _start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``None`` when it is gone)."""
    fields = _stat(pid)
    return None if fields is None else int(fields[19])


def _state(pid: int) -> str | None:
    """The state letter of ``pid`` (``Z`` for a zombie; ``None`` when it is gone)."""
    fields = _stat(pid)
    return None if fields is None else fields[0]


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (``None`` when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"
