"""Bot processes: start a bot, move bytes to and from it, and always clean it up.

This is the only place where the referee touches operating-system processes. It
knows nothing about the protocol: it moves bytes and leaves framing, decoding and
deadlines to its callers (the match runner wraps every call in
:func:`trio.fail_after` or :func:`trio.move_on_after`).

Every bot runs in its own session, so its process id is also the id of a process
group holding everything it forks. Stopping a bot always ends the whole group:
close its stdin, ``SIGTERM`` the group, wait a grace period for the leader,
``SIGKILL`` the group, reap the leader. :func:`open_bot` does this on the way out
whatever happened inside, so no bot outlives its match. A bot's stderr is drained
by a task of its own into a size-capped log file, keeping its last lines in
memory for error messages.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import BinaryIO

import trio

from referee.errors import BotCrashed, RefereeError

DEFAULT_GRACE = 0.5
"""Seconds a bot gets to exit after ``SIGTERM`` before its group is killed."""

DEFAULT_STDERR_LIMIT = 1 << 20
"""Bytes of a bot's stderr written to its log file before the rest is dropped."""

STDERR_TAIL_LINES = 20
"""How many of a bot's last stderr lines are kept in memory."""

_READ_SIZE = 65536
_TAIL_LINE_CHARS = 1000
_STDERR_LINGER = 0.25
"""Seconds :meth:`BotProcess.stop` waits for the last stderr bytes after the kill."""


class BotCommandError(RefereeError, ValueError):
    """A bot command line cannot be understood."""


# --- commands ----------------------------------------------------------------

_KEYS = ("name", "cmd", "dir", "env")
_BARE_PYTHON = frozenset({"python", "python3"})
_INTERPRETER = re.compile(r"(python|pypy)[\d.]*|node|deno|ruby|perl|java|bash|sh")
_OPTIONS_WITH_VALUE = frozenset({"-X", "-W"})


@dataclass(frozen=True)
class BotCommand:
    """How to start a bot: its argv, and optionally a name, a directory and extra
    environment variables (added to the referee's own environment)."""

    argv: tuple[str, ...]
    name: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        argv = tuple(self.argv)
        if not argv or not argv[0]:
            raise BotCommandError("empty bot command")
        object.__setattr__(self, "argv", argv)
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))

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
        where ``cmd`` is required and ``env`` may repeat.
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
        for token in tokens:
            key, sep, value = token.partition("=")
            if not sep or key not in _KEYS:
                raise BotCommandError(
                    f"bad bot command {text!r}: expected name=, cmd=, dir= or env=, got {token!r}"
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
        return cls(tuple(argv), name=fields.get("name"), cwd=fields.get("dir"), env=env)

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
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb", buffering=0) as log:
        yield log


# --- processes ---------------------------------------------------------------


class BotProcess:
    """A running bot, as :func:`open_bot` hands it out: bytes in, bytes out, and
    a way to stop it. All waiting is cancellable; deadlines are the caller's."""

    def __init__(self, command: BotCommand, process: trio.Process, sink: _StderrSink) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        self.command = command
        self._process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._stderr = process.stderr
        self._sink = sink
        self._stderr_closed = trio.Event()
        self._stopped = False

    def __repr__(self) -> str:
        return f"<BotProcess {self.name!r} pid {self.pid}>"

    @property
    def name(self) -> str:
        """The bot's display name (see :attr:`BotCommand.display_name`)."""
        return self.command.display_name

    @property
    def pid(self) -> int:
        """The bot's process id, which is also the id of its process group."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status (``-N`` when killed by signal N), ``None`` while running."""
        return self._process.returncode

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

    def stderr_tail(self, n: int = STDERR_TAIL_LINES) -> list[str]:
        """The last ``n`` lines the bot wrote to stderr (at most
        :data:`STDERR_TAIL_LINES`). Complete once :meth:`stop` has returned."""
        return self._sink.tail(n)

    @property
    def stderr_bytes(self) -> int:
        """How many bytes the bot has written to stderr so far, logged or not."""
        return self._sink.total

    async def send_all(self, data: bytes) -> None:
        """Write ``data`` to the bot's stdin; raises :class:`BotCrashed` when the
        bot closed it or has been stopped. Blocks while the bot does not read."""
        try:
            await self._stdin.send_all(data)
        except trio.BrokenResourceError:
            raise BotCrashed(f"{self._who()} closed its stdin") from None
        except trio.ClosedResourceError:
            raise BotCrashed(f"{self._who()} has been stopped") from None

    async def receive_some(self, max_bytes: int = _READ_SIZE) -> bytes:
        """Read what the bot wrote to stdout, at most ``max_bytes``; ``b""`` once
        it closed its stdout (usually by exiting)."""
        try:
            return await self._stdout.receive_some(max_bytes)
        except trio.BrokenResourceError as exc:
            raise BotCrashed(f"{self._who()}: reading its stdout failed: {exc}") from None

    async def wait(self) -> int:
        """Wait for the bot to exit by itself and return its exit status."""
        return await self._process.wait()

    async def stop(self, grace: float = DEFAULT_GRACE) -> None:
        """End the bot and everything it started, and reap it.

        Closes its stdin, sends ``SIGTERM`` to its process group, gives the leader
        ``grace`` seconds to exit, then sends ``SIGKILL`` to the group (always:
        children the bot forked may outlive it) and reaps the leader. Calling it
        again once it has returned does nothing; if it was cancelled half-way,
        calling it again does the whole job.
        """
        if self._stopped:
            return
        await self._stdin.aclose()
        self._signal_group(signal.SIGTERM)
        with trio.move_on_after(grace):
            await self._process.wait()
        # Even once the leader is reaped, its pid stays reserved as the group id
        # while any member lives; with none left, killpg finds no group.
        self._signal_group(signal.SIGKILL)
        await self._process.wait()
        with trio.move_on_after(_STDERR_LINGER):
            await self._stderr_closed.wait()
        self._stopped = True

    def _signal_group(self, signum: signal.Signals) -> None:
        # ProcessLookupError: the group is gone. PermissionError: macOS says so
        # for a group of zombies.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signum)

    def _who(self) -> str:
        return f"bot {self.name!r} (pid {self.pid})"

    async def _drain_stderr(self) -> None:
        """Read the bot's stderr until it closes, so the bot never blocks on it."""
        try:
            while chunk := await self._stderr.receive_some(_READ_SIZE):
                self._sink.feed(chunk)
        except trio.BrokenResourceError:
            pass
        finally:
            self._stderr_closed.set()

    async def _close_pipes(self) -> None:
        for stream in (self._stdin, self._stdout, self._stderr):
            await stream.aclose()


async def _spawn(command: BotCommand) -> trio.Process:
    """Start ``command`` in a session of its own, with all three streams piped."""
    env = {**os.environ, **command.env} if command.env else None
    try:
        return await trio.lowlevel.open_process(
            command.resolved_argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=command.cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if command.cwd is not None and exc.filename == command.cwd:
            reason = f"{reason} (directory {command.cwd!r})"
        raise BotCrashed(f"cannot start {command.argv[0]!r}: {reason}") from None


@contextlib.asynccontextmanager
async def open_bot(
    command: BotCommand,
    *,
    stderr_path: Path | None = None,
    stderr_limit: int = DEFAULT_STDERR_LIMIT,
) -> AsyncIterator[BotProcess]:
    """Start a bot and yield it as a :class:`BotProcess`; stop it on the way out.

    Its stderr goes to ``stderr_path`` (overwritten), capped at ``stderr_limit``
    bytes. On leaving the block — normally, by an exception or by cancellation —
    :meth:`BotProcess.stop` runs shielded from cancellation, so the bot's whole
    process group is killed and the bot reaped before this returns. Raises
    :class:`BotCrashed` when the command cannot be started.
    """
    with _stderr_log(stderr_path) as log:
        process = await _spawn(command)
        bot = BotProcess(command, process, _StderrSink(log, stderr_limit))
        body_error: BaseException | None = None
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot._drain_stderr)
                try:
                    yield bot
                except trio.Cancelled:
                    raise
                except BaseException as exc:
                    # Re-raised below, outside the nursery, so that callers see
                    # their own exception rather than an ExceptionGroup.
                    body_error = exc
                finally:
                    with trio.CancelScope(shield=True):
                        await bot.stop()
                    nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await bot._close_pipes()
        if body_error is not None:
            raise body_error
