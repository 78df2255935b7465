"""Tests for referee.process: starting, talking to and always stopping bot processes.

The bots are the fake bots in ``tests/fakebots/``, run with this interpreter. Tests
about processes run twice, sandboxed and not (``policy``). Deadlines here are hang
guards only; no test measures how long anything took.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from fakebots import leftover_processes

import referee.process
from referee.errors import BotCrashed, RefereeFault
from referee.process import BotCommand, BotCommandError, BotProcess, open_bot, stop_leftovers
from referee.sandbox import SandboxPolicy, sandbox_problem

FAKEBOTS = Path(__file__).parent / "fakebots"
SHORT_GRACE = 0.2
GUARD = 60
"""Seconds after which a test that waits for a process is stuck: a hang guard."""

needs_sandbox = pytest.mark.skipif(
    sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}"
)


@pytest.fixture(
    params=[pytest.param("on", marks=needs_sandbox), "off"], ids=["sandboxed", "unsandboxed"]
)
def policy(request: pytest.FixtureRequest) -> SandboxPolicy:
    return SandboxPolicy(mode=request.param)


def fakebot(script: str, *args: str) -> BotCommand:
    return BotCommand((sys.executable, "-u", str(FAKEBOTS / script), *args))


def misbehaving(mode: str) -> BotCommand:
    return fakebot("misbehave.py", mode)


class Lines:
    """Reads a bot's stdout one line at a time (the protocol layer's job, in miniature)."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.buffer = bytearray()

    async def line(self) -> bytes | None:
        """The next line without its newline, or ``None`` at end of file."""
        while b"\n" not in self.buffer:
            chunk = await self.bot.receive_some()
            if not chunk:
                return None
            self.buffer += chunk
        line, _, rest = self.buffer.partition(b"\n")
        self.buffer = bytearray(rest)
        return bytes(line)

    async def message(self) -> dict[str, Any]:
        line = await self.line()
        assert line is not None, "bot closed its stdout"
        return json.loads(line)


async def send(bot: BotProcess, message: dict[str, Any]) -> None:
    await bot.send_all(json.dumps(message).encode() + b"\n")


async def handshake(bot: BotProcess, lines: Lines) -> dict[str, Any]:
    await send(bot, {"type": "new_game", "id": 1, "protocol": 1, "game": "ivy", "seat": 0})
    with trio.fail_after(GUARD):
        ready = await lines.message()
    assert ready["type"] == "ready"
    assert ready["id"] == 1
    return ready


async def request_turn(bot: BotProcess, request_id: int = 2) -> None:
    await send(bot, {"type": "turn", "id": request_id, "turn": request_id - 1})


def descendants(pid: int) -> list[int]:
    """The processes descended from ``pid`` (a process this test started), per the
    children lists of /proc: no other process of the machine is looked at."""
    found: list[int] = []
    for task in _tasks(pid):
        try:
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found.append(child)
            found.extend(descendants(child))
    return found


def _tasks(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


@pytest.fixture
def pidfds() -> Iterator[list[int]]:
    """pidfds the test holds (closed at its end)."""
    held: list[int] = []
    yield held
    for pidfd in held:
        os.close(pidfd)


def hold(pids: list[int], held: list[int]) -> list[int]:
    """pidfds on ``pids`` (those still there), added to ``held``."""
    new = []
    for pid in pids:
        try:
            new.append(os.pidfd_open(pid))
        except ProcessLookupError:
            continue
    held.extend(new)
    return new


async def all_gone(pidfds: list[int]) -> None:
    """Wait until every process held by ``pidfds`` has ended (hang guard: GUARD)."""
    with trio.fail_after(GUARD):
        for pidfd in pidfds:
            await trio.lowlevel.wait_readable(pidfd)


async def wait_for_stderr(bot: BotProcess) -> list[str]:
    with trio.fail_after(GUARD):
        while not bot.stderr_tail():
            await trio.sleep(0.01)
    return bot.stderr_tail()


# --- commands ----------------------------------------------------------------


def test_parse_plain_command_line() -> None:
    command = BotCommand.parse("python -m bots.random --seed '3 4'")
    assert command.argv == ("python", "-m", "bots.random", "--seed", "3 4")
    assert command.name is None
    assert command.cwd is None
    assert dict(command.env) == {}
    assert dict(command.limits) == {}
    assert not command.network
    assert command.cpus is None
    assert command.display_name == "bots.random"


def test_parse_keyed_form() -> None:
    command = BotCommand.parse(
        "name=alice cmd='python -m bots.random --seed 3' dir=/tmp env=K=V env=K2=a=b"
    )
    assert command == BotCommand(
        ("python", "-m", "bots.random", "--seed", "3"),
        name="alice",
        cwd="/tmp",
        env={"K": "V", "K2": "a=b"},
    )
    assert command.display_name == "alice"
    assert hash(command) == hash(BotCommand(command.argv, "alice", "/tmp", {"K": "V", "K2": "a=b"}))


def test_parse_sandbox_settings() -> None:
    command = BotCommand.parse(
        "cmd=./bot memory=512M processes=64 file_size=1.5K open_files=unlimited"
        " network=yes cpus=0,2-3"
    )
    assert dict(command.limits) == {
        "memory": 512 << 20,
        "processes": 64,
        "file_size": 1536,
        "open_files": None,
    }
    assert command.network
    assert command.cpus == (0, 2, 3)
    assert not BotCommand.parse("cmd=./bot network=no").network


def test_command_is_immutable() -> None:
    env = {"K": "V"}
    command = BotCommand(("./bot",), env=env)
    env["K"] = "changed"
    assert command.env["K"] == "V"
    with pytest.raises(TypeError):
        command.env["K"] = "W"  # type: ignore[index]
    with pytest.raises(TypeError):
        command.limits["memory"] = 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("python3", "-u", "bots/greedy.py", "--depth", "2"), "greedy"),
        (("python3.11", "-X", "dev", "-m", "bots.random"), "bots.random"),
        (("/usr/bin/python", "-c", "print(1)"), "python"),
        (("./target/release/ivy-bot", "--fast"), "ivy-bot"),
        (("java", "-jar", "build/bot.jar"), "bot"),
        (("node", "bot.js"), "bot"),
    ],
)
def test_display_name_is_derived_from_the_command(argv: tuple[str, ...], expected: str) -> None:
    assert BotCommand(argv).display_name == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty bot command"),
        ("   ", "empty bot command"),
        ("python 'bot.py", 'bad bot command "python \'bot.py": no closing quotation'),
        ("name=alice", "bad bot command 'name=alice': cmd= is missing"),
        ("name=alice cmd=''", "bad bot command \"name=alice cmd=''\": cmd= is empty"),
        ("cmd=bot cmd=bot2", "bad bot command 'cmd=bot cmd=bot2': cmd= given twice"),
        ("cmd=bot env=NOVALUE", "bad bot command 'cmd=bot env=NOVALUE': env needs K=V, got"),
        ("cmd=bot seed=3", "bad bot command 'cmd=bot seed=3': expected name=, cmd=, dir="),
        ("cmd=bot --fast", "bad bot command 'cmd=bot --fast': expected name=, cmd=, dir="),
        ("cmd=bot memory=lots", "bad bot command 'cmd=bot memory=lots': bad size 'lots'"),
        ("cmd=bot processes=0", "bad bot command 'cmd=bot processes=0': bad count '0'"),
        ("cmd=bot network=maybe", "bad bot command 'cmd=bot network=maybe': bad switch"),
        ("cmd=bot cpus=a-b", "bad bot command 'cmd=bot cpus=a-b': bad CPU list"),
        ("cmd=bot env=1X=2", "bad environment variable name '1X'"),
    ],
)
def test_parse_rejects_bad_text(text: str, message: str) -> None:
    with pytest.raises(BotCommandError) as caught:
        BotCommand.parse(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_command_refuses_nul_and_unknown_limits() -> None:
    with pytest.raises(BotCommandError, match="NUL"):
        BotCommand(("./bot", "a\0b"))
    with pytest.raises(BotCommandError, match="unknown limit 'cpu_time'"):
        BotCommand(("./bot",), limits={"cpu_time": 3})


def test_a_bare_python_runs_under_the_referees_interpreter() -> None:
    command = BotCommand.parse("python -m bots.random --seed 2")
    assert command.resolved_argv() == (sys.executable, "-m", "bots.random", "--seed", "2")
    assert command.argv[0] == "python"  # as the user wrote it, in records and names
    other = BotCommand.parse("python3.11 bot.py")
    assert other.resolved_argv() == other.argv


# --- starting, and whose fault a failure is ------------------------------------


async def test_a_missing_program_cannot_start(policy: SandboxPolicy) -> None:
    with pytest.raises(BotCrashed, match=r"^cannot start 'no-such-bot-x': No such file or direc"):
        async with open_bot(BotCommand(("no-such-bot-x",)), sandbox=policy):
            pytest.fail("the bot should not have started")


async def test_a_missing_directory_is_named(tmp_path: Path, policy: SandboxPolicy) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(BotCrashed, match=f"directory '{missing}'"):
        async with open_bot(BotCommand((sys.executable,), cwd=str(missing)), sandbox=policy):
            pytest.fail("the bot should not have started")


async def test_cwd_and_env_reach_the_bot(tmp_path: Path, policy: SandboxPolicy) -> None:
    script = "import os; print(os.environ['BOT_SEED'], os.environ['PATH'] != '', os.getcwd())"
    command = BotCommand((sys.executable, "-c", script), cwd=str(tmp_path), env={"BOT_SEED": "42"})
    async with open_bot(command, sandbox=policy) as bot:
        with trio.fail_after(GUARD):
            line = await Lines(bot).line()
    assert line == f"42 True {tmp_path}".encode()


async def test_a_bot_runs_in_the_referees_directory_even_under_tmp(
    tmp_path: Path, policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sandbox has a private /tmp; the directory the bot runs in is bound back into it
    # (with its own permissions: as another user, the bot needs others' r-x on it).
    tmp_path.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text("import os; print(os.getcwd(), os.listdir('.'))")
    async with open_bot(BotCommand(("python", "bot.py")), sandbox=policy) as bot:
        with trio.fail_after(GUARD):
            line = await Lines(bot).line()
    assert line == f"{tmp_path} ['bot.py']".encode()


async def test_the_environment_is_the_fixed_list_and_the_declared_variables(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFEREE_SECRET", "hunter2")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("TZ", raising=False)
    script = (
        "import json; raw = open('/proc/self/environ', 'rb').read().split(b'\\0');"
        " print(json.dumps(dict(i.decode().split('=', 1) for i in raw if i)))"
    )
    command = BotCommand((sys.executable, "-c", script), env={"DECLARED": "yes"})
    async with open_bot(command, sandbox=policy) as bot:
        with trio.fail_after(GUARD):
            environment = await Lines(bot).message()
    expected = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "DECLARED": "yes"}
    if policy.mode == "on":
        expected |= {"HOME": "/tmp", "TMPDIR": "/tmp"}
    else:
        expected |= {key: os.environ[key] for key in ("HOME", "TMPDIR") if key in os.environ}
    assert environment == expected


async def test_out_of_file_descriptors_is_a_referee_fault(policy: SandboxPolicy) -> None:
    assert policy.mode == "off" or sandbox_problem() is None  # probed before the limit
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = {int(fd) for fd in os.listdir("/proc/self/fd")}
    lowest_free = min(set(range(len(in_use) + 1)) - in_use)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free + 1, hard))  # room for one more
    try:
        with pytest.raises(RefereeFault, match=r"Too many open files \(raise the limit"):
            async with open_bot(fakebot("pass_bot.py"), sandbox=policy):
                pytest.fail("the bot should not have started")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize("code", [errno.EAGAIN, errno.ENOMEM, errno.EMFILE, errno.ENFILE, "exec"])
async def test_fork_failures_are_referee_faults(
    code: int | str, policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "exec": the program vanished between the check and the start. Unsandboxed that is
    # the bot's ("cannot start"); sandboxed, bwrap itself is missing: the referee's.
    fault: type[Exception] = RefereeFault
    if code == "exec":
        code = errno.ENOENT
        fault = RefereeFault if policy.mode == "on" else BotCrashed

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(referee.process.subprocess, "Popen", fail)
    with pytest.raises(fault, match=os.strerror(code)):
        async with open_bot(fakebot("pass_bot.py"), sandbox=policy):
            pytest.fail("the bot should not have started")


async def test_a_log_that_cannot_be_opened_is_a_referee_fault(
    tmp_path: Path, policy: SandboxPolicy
) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(RefereeFault, match="cannot open the bot log"):
        async with open_bot(
            fakebot("pass_bot.py"), sandbox=policy, stderr_path=tmp_path / "file" / "x.log"
        ):
            pytest.fail("the bot should not have started")


async def test_a_full_disk_under_the_log_is_a_referee_fault(policy: SandboxPolicy) -> None:
    with pytest.raises(RefereeFault, match="No space left on device"):
        async with open_bot(
            misbehaving("flood_stderr"), sandbox=policy, stderr_path=Path("/dev/full")
        ) as bot:
            await handshake(bot, lines := Lines(bot))
            with trio.fail_after(GUARD):
                for request_id in range(2, 1_000_000):
                    await request_turn(bot, request_id)
                    await lines.message()


@needs_sandbox
async def test_a_sandbox_that_cannot_be_set_up_is_a_referee_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = referee.process.make_plan

    def into_nowhere(*args: Any, **kwargs: Any) -> Any:
        return dataclasses.replace(real(*args, **kwargs), cwd=str(tmp_path / "gone"))

    monkeypatch.setattr(referee.process, "make_plan", into_nowhere)
    with pytest.raises(RefereeFault, match=r"could not be set up \(bwrap: Can't chdir"):
        async with open_bot(fakebot("pass_bot.py"), sandbox=SandboxPolicy(mode="on")) as bot:
            await handshake(bot, Lines(bot))


async def test_bots_are_started_from_the_event_loop_thread(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PR_SET_PDEATHSIG, which ties a bot (or its sandbox) to the referee, fires when the
    # thread that forked it ends; trio's worker threads end after ~10 idle seconds.
    # So a bot must be forked by a thread that lives as long as the referee: this one.
    forked_by: list[int] = []
    real = subprocess.Popen

    class Spy(real):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            forked_by.append(threading.get_ident())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(referee.process.subprocess, "Popen", Spy)
    async with open_bot(fakebot("pass_bot.py"), sandbox=policy) as bot:
        await handshake(bot, Lines(bot))
    assert forked_by == [threading.get_ident()]


# --- talking and stopping ----------------------------------------------------


async def test_pass_bot_plays_and_stops(policy: SandboxPolicy) -> None:
    async with open_bot(fakebot("pass_bot.py"), sandbox=policy) as bot:
        assert bot.name == "pass_bot"
        assert bot.sandboxed == (policy.mode == "on")
        assert bot.exit_description() is None
        lines = Lines(bot)
        assert (await handshake(bot, lines))["name"] == "pass"
        for request_id in range(2, 6):
            await request_turn(bot, request_id)
            with trio.fail_after(GUARD):
                assert await lines.message() == {"type": "turn", "id": request_id, "actions": []}
        with trio.fail_after(GUARD):
            await bot.stop(grace=SHORT_GRACE)
        assert bot.exit_description() in ("exit code 0", "killed by signal 15 (SIGTERM)")
        assert bot.stderr_closed
        await bot.stop()  # idempotent


async def test_quit_lets_the_bot_exit_by_itself(policy: SandboxPolicy) -> None:
    async with open_bot(fakebot("pass_bot.py"), sandbox=policy) as bot:
        await handshake(bot, lines := Lines(bot))
        await send(bot, {"type": "quit"})
        with trio.fail_after(GUARD):
            assert await lines.line() is None
            assert await bot.wait() == 0
        assert bot.exit_description() == "exit code 0"


async def test_leaving_on_an_exception_kills_the_bot_and_keeps_the_exception(
    policy: SandboxPolicy,
) -> None:
    with pytest.raises(ValueError, match="boom"):
        async with open_bot(fakebot("pass_bot.py"), sandbox=policy) as bot:
            await handshake(bot, Lines(bot))
            raise ValueError("boom")
    assert bot.returncode is not None
    assert bot.stderr_closed


async def test_leaving_on_cancellation_kills_the_bot(policy: SandboxPolicy) -> None:
    with trio.CancelScope() as scope:
        async with open_bot(misbehaving("ignore_sigterm"), sandbox=policy) as bot:
            await handshake(bot, Lines(bot))
            scope.cancel()
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert bot.exit_description() == "killed by signal 9 (SIGKILL)"
    assert bot.stderr_closed


async def test_a_bot_that_ignores_sigterm_is_killed(policy: SandboxPolicy) -> None:
    async with open_bot(misbehaving("ignore_sigterm"), sandbox=policy) as bot:
        await handshake(bot, Lines(bot))
        with trio.fail_after(GUARD):
            await bot.stop(grace=SHORT_GRACE)
        assert bot.exit_description() == "killed by signal 9 (SIGKILL)"
        assert bot.stderr_tail() == ["misbehave: ignoring SIGTERM"]


async def test_stop_kills_what_the_bot_forked(policy: SandboxPolicy, pidfds: list[int]) -> None:
    async with open_bot(misbehaving("fork_child"), sandbox=policy) as bot:
        await handshake(bot, Lines(bot))
        await wait_for_stderr(bot)
        # Every process under the one the referee started: the bot, its child, and
        # (sandboxed) bwrap's first process in the sandbox.
        tree = hold(descendants(bot.pid), pidfds)
        assert len(tree) == (3 if bot.sandboxed else 1)
    await all_gone(tree)
    assert bot.stderr_closed


async def test_nothing_survives_a_bot_that_exits_leaving_children(
    policy: SandboxPolicy, pidfds: list[int]
) -> None:
    async with open_bot(misbehaving("fork_child"), sandbox=policy) as bot:
        await handshake(bot, lines := Lines(bot))
        await wait_for_stderr(bot)
        tree = hold([bot.pid, *descendants(bot.pid)], pidfds)
        # Sandboxed, the tree is bwrap's first process, the bot, the bot's child.
        leader = descendants(bot.pid)[1] if bot.sandboxed else bot.pid
        os.kill(leader, signal.SIGKILL)
        if not bot.sandboxed:
            with trio.fail_after(GUARD):
                await bot.wait()
            # Unsandboxed, the child still holds the bot's stdout: no end of file yet.
            with trio.move_on_after(0.1) as scope:
                await lines.line()
            assert scope.cancelled_caught
    await all_gone(tree)
    assert bot.stderr_closed


async def test_a_bot_that_exits_at_start_gives_end_of_file(policy: SandboxPolicy) -> None:
    async with open_bot(misbehaving("exit_at_start"), sandbox=policy) as bot:
        with trio.fail_after(GUARD):
            assert await bot.receive_some() == b""
            assert await bot.wait() == 0
        assert bot.exit_description() == "exit code 0"
        with pytest.raises(BotCrashed, match=r"^bot 'misbehave' \(pid \d+\) closed its stdin$"):
            with trio.fail_after(GUARD):
                # Enough to fill the pipe, should the first write land before the error.
                await bot.send_all(b"{}\n" * 100_000)
        await bot.stop()
        assert bot.stderr_tail() == ["misbehave: exiting at start"]


async def test_a_crash_leaves_its_exit_code_and_last_words(policy: SandboxPolicy) -> None:
    async with open_bot(misbehaving("crash"), sandbox=policy) as bot:
        await handshake(bot, lines := Lines(bot))
        await request_turn(bot)
        with trio.fail_after(GUARD):
            assert await lines.line() is None
        await bot.stop()
        assert bot.exit_description() == "exit code 3"
        assert bot.stderr_tail() == ["misbehave: crashing on purpose at turn 1"]


async def test_a_bot_killed_by_a_signal_says_so(policy: SandboxPolicy) -> None:
    script = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    async with open_bot(BotCommand((sys.executable, "-c", script)), sandbox=policy) as bot:
        with trio.fail_after(GUARD):
            await bot.wait()
        assert bot.exit_description() == "killed by signal 11 (SIGSEGV)"


async def test_sending_to_a_stopped_bot_is_a_crash(policy: SandboxPolicy) -> None:
    async with open_bot(fakebot("pass_bot.py"), sandbox=policy) as bot:
        await bot.stop(grace=SHORT_GRACE)
        with pytest.raises(BotCrashed, match="has been stopped"):
            await bot.send_all(b"{}\n")


async def test_send_nowait_writes_what_the_pipe_takes_and_no_more(policy: SandboxPolicy) -> None:
    async with open_bot(misbehaving("no_read"), sandbox=policy) as bot:
        sent = await bot.send_nowait(b"x" * (4 << 20))
        assert 0 < sent < 4 << 20  # a pipe's worth: the rest would have to wait
        assert await bot.send_nowait(b"x") == 0
        await bot.stop(grace=SHORT_GRACE)
        with pytest.raises(BotCrashed, match="has been stopped"):
            await bot.send_nowait(b"{}\n")
        assert await bot.receive_some() == b""


async def test_a_bot_that_does_not_read_blocks_send_until_the_deadline(
    policy: SandboxPolicy,
) -> None:
    async with open_bot(misbehaving("no_read"), sandbox=policy) as bot:
        with trio.move_on_after(0.3) as scope:
            await bot.send_all(b"x" * (4 << 20))
        assert scope.cancelled_caught
        assert bot.returncode is None


async def test_closing_stdout_reads_as_end_of_file_while_the_bot_runs(
    policy: SandboxPolicy,
) -> None:
    async with open_bot(misbehaving("close_stdout"), sandbox=policy) as bot:
        await handshake(bot, lines := Lines(bot))
        await request_turn(bot)
        with trio.fail_after(GUARD):
            assert await lines.line() is None
        assert bot.returncode is None


# --- leftovers of a killed run ---------------------------------------------------


def _ledger_line(pid: int, kind: str, started: str | None = None) -> str:
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return f"{boot} {pid} {started or stat[19]} {kind}\n"


def test_stop_leftovers_kills_what_the_ledger_names_and_nothing_else(tmp_path: Path) -> None:
    sleep = ["sleep", "600"]
    leftover = subprocess.Popen(sleep, start_new_session=True)
    group = subprocess.Popen(sleep, start_new_session=True)
    bystander = subprocess.Popen(sleep)
    try:
        ledger = tmp_path / "bots.pids"
        ledger.write_text(
            _ledger_line(leftover.pid, "sandbox")
            + _ledger_line(group.pid, "group")
            + _ledger_line(bystander.pid, "sandbox", started="1")  # a reused pid
            + "garbage line\n"
        )
        assert stop_leftovers(ledger) == 2
        assert leftover.wait(timeout=GUARD) == -signal.SIGKILL
        assert group.wait(timeout=GUARD) == -signal.SIGKILL
        assert bystander.poll() is None
        assert ledger.read_text() == ""
        assert stop_leftovers(tmp_path / "missing") == 0
    finally:
        for process in (leftover, group, bystander):
            process.kill()
            process.wait()


async def test_each_started_bot_is_noted_in_the_ledger(
    tmp_path: Path, policy: SandboxPolicy
) -> None:
    ledger = tmp_path / "bots.pids"
    noted = SandboxPolicy(mode=policy.mode, ledger=ledger)
    async with open_bot(fakebot("pass_bot.py"), sandbox=noted) as bot:
        await handshake(bot, Lines(bot))
        kinds = [line.split()[3] for line in ledger.read_text().splitlines()]
        assert kinds == (["sandbox", "sandbox"] if bot.sandboxed else ["group"])
        assert ledger.read_text().split()[1] == str(bot.pid)
    assert stop_leftovers(ledger) == 0  # all stopped already


# --- stderr --------------------------------------------------------------------


async def test_stderr_flood_is_capped_in_the_log_and_does_not_block_the_bot(
    tmp_path: Path,
) -> None:
    log = tmp_path / "logs" / "flood.stderr"
    limit = 64 * 1024
    async with open_bot(misbehaving("flood_stderr"), stderr_path=log, stderr_limit=limit) as bot:
        await handshake(bot, lines := Lines(bot))
        request_id = 2
        with trio.fail_after(GUARD):
            while bot.stderr_bytes < 20 * limit or request_id < 5:
                await request_turn(bot, request_id)
                assert (await lines.message())["id"] == request_id
                request_id += 1
        tail = bot.stderr_tail(5)
        assert 1 <= len(tail) <= 5
        assert all(line.startswith("misbehave: flooding stderr") for line in tail[:-1])
    content = log.read_bytes()
    note = f"\n[referee: stderr truncated after {limit} bytes]\n".encode()
    assert content.endswith(note)
    assert len(content) == limit + len(note)
    assert content.startswith(b"misbehave: flooding stderr, line 0\n")


async def test_stderr_tail_keeps_the_last_lines(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "for i in range(50): sys.stderr.write(f'line {i}\\n')\n"
        "sys.stderr.write('x' * 5000 + '\\r\\n')\n"
        "sys.stderr.write('no newline at the end')\n"
    )
    log = tmp_path / "bot.stderr"
    async with open_bot(BotCommand((sys.executable, "-c", script)), stderr_path=log) as bot:
        with trio.fail_after(GUARD):
            await bot.wait()
        await bot.stop()
        assert bot.stderr_tail(3) == ["line 49", "x" * 1000, "no newline at the end"]
        assert bot.stderr_tail()[0] == "line 32"
        assert len(bot.stderr_tail(100)) == 20
        assert bot.stderr_tail(0) == []
    assert log.read_text().startswith("line 0\nline 1\n")
    assert log.read_text().endswith("no newline at the end")


# --- the fake bots themselves ------------------------------------------------


async def answer_to_first_turn(mode: str) -> list[bytes | None]:
    """Play a handshake and one turn with ``misbehave.py MODE``; return what it sent
    back: its ``log`` lines and the first other line, or ``None`` for end of file
    (``timeout`` is told to quit at once, to show it sends nothing before it goes);
    ``flood_stdout``: the first 16 bytes it piles up without a newline."""
    answer: list[bytes | None] = []
    async with open_bot(misbehaving(mode)) as bot:
        await handshake(bot, lines := Lines(bot))
        await request_turn(bot, 7)
        if mode == "timeout":
            await send(bot, {"type": "quit"})
        with trio.fail_after(GUARD):
            if mode == "flood_stdout":
                while len(lines.buffer) < 16:
                    lines.buffer += await bot.receive_some()
                answer.append(bytes(lines.buffer[:16]))
            else:
                while (line := await lines.line()) is not None:
                    answer.append(line)
                    if not line.startswith(b'{"type": "log"'):
                        break
                else:
                    answer.append(None)
        await bot.stop(grace=SHORT_GRACE)
    return answer


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("timeout", [None]),
        ("garbage", [b"this is not json"]),
        ("invalid", [b'{"type": "turn", "id": 7, "actions": "pass"}']),
        ("illegal", [b'{"type": "turn", "id": 7, "actions": [{"type": "creep", "cell": "e12"}]}']),
        ("crash", [None]),
        ("close_stdout", [None]),
        ("flood_stdout", [b"x" * 16]),
    ],
)
async def test_misbehaving_bots_break_their_one_rule(
    mode: str, expected: list[bytes | None]
) -> None:
    assert await answer_to_first_turn(mode) == expected


async def test_oversized_bot_sends_a_2_mib_line() -> None:
    [line] = await answer_to_first_turn("oversized")
    assert line is not None
    assert len(line) > 2 << 20
    assert json.loads(line)["actions"] == []


async def test_log_spam_bot_logs_then_passes() -> None:
    answer = await answer_to_first_turn("log_spam")
    assert len(answer) == 101
    assert all(json.loads(line or b"")["type"] == "log" for line in answer[:-1])
    assert json.loads(answer[-1] or b"") == {"type": "turn", "id": 7, "actions": []}


# --- Ctrl-C while bots are started and stopped ---------------------------------------

REPO = Path(__file__).resolve().parents[1]
CTRL_C_ROUNDS = 12
"""How many times Ctrl-C is sent, each at another moment: the moments that matter are
milliseconds wide (a bot half started, a sandbox half stopped)."""

SLEEPER = f"{sys.executable} -c 'import time; time.sleep(60)'"
"""A bot that never answers: the start-up check waits for it until Ctrl-C."""


class _Tournament:
    """``referee tournament`` run by the test. What it printed, and the stderr logs it
    opens just before it starts a bot for a game, tell what it is doing.

    At the ``preflight`` stage its bots are a sleeper and the pass bot, so the start-up
    check never ends; otherwise a bot that never answers a turn (it loses on time, so it
    is stopped and started again for every game) and the pass bot.
    """

    def __init__(self, folder: Path, stage: str) -> None:
        folder.mkdir()
        self.folder = folder
        self.stdout = folder / "stdout"
        sleepy = SLEEPER
        if stage != "preflight":
            sleepy = f"{sys.executable} -u {FAKEBOTS / 'misbehave.py'} timeout"
        passer = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
        players = [f"name=sleepy cmd={sleepy!r}", f"name=pass cmd={passer!r}"]
        command = [sys.executable, "-m", "referee.cli", "tournament", "--quiet", "--output", "out"]
        command += ["--tc", "0.05+0", "--margin", "0.05", "--startup", "30", "--games", "1000"]
        command += [f"--player={player}" for player in players]
        with open(self.stdout, "w") as stdout:
            self.process = subprocess.Popen(
                command,
                cwd=folder,
                env=os.environ | {"PYTHONPATH": str(REPO), "PYTHONFAULTHANDLER": "1"},
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
            )

    def wait_for_lines(self, count: int) -> None:
        """Wait until it printed ``count`` lines (the first names the tournament)."""
        self._wait_until(lambda: len(self.stdout.read_text().splitlines()) >= count)

    def wait_for_bots(self, count: int) -> None:
        """Wait until it began to start the ``count``-th bot of its games."""
        logs = self.folder / "out" / "logs"
        self._wait_until(lambda: len(list(logs.glob("run-*/worker-*/*.stderr.log"))) >= count)

    def _wait_until(self, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + GUARD
        while not ready():
            assert self.process.poll() is None, self.process.communicate()
            assert time.monotonic() < deadline, "the hang guard ran out"
            time.sleep(0.001)

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C's SIGINT; the exit status and what it said on stderr."""
        self.process.send_signal(signal.SIGINT)
        try:
            _, stderr = self.process.communicate(timeout=GUARD)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGABRT)  # faulthandler: where it is stuck
            _, stderr = self.process.communicate(timeout=GUARD)
            pytest.fail(f"still running after Ctrl-C (the hang guard):\n{stderr}")
        return self.process.returncode, stderr


def _interrupt_at(folder: Path, round_: int) -> str:
    """Run a tournament and Ctrl-C it at the moment ``round_`` picks; which moment."""
    stage = ("preflight", "start", "games")[round_ % 3]
    jitter = (round_ * 7 % 10) / 1000  # 0 to 9 ms, another each round
    referee = _Tournament(folder, stage)
    if stage == "preflight":  # the check starts the bots as soon as this is printed
        referee.wait_for_lines(1)
        jitter *= 5
    elif stage == "start":  # a game's bot is being started: its log was just opened
        referee.wait_for_bots(1 + round_ // 3)
    else:  # a game ended: its loser is being stopped and a fresh one started
        referee.wait_for_lines(2 + round_ // 3)
    time.sleep(jitter)
    status, stderr = referee.interrupt()
    where = f"Ctrl-C in round {round_} ({stage}, +{jitter * 1000:.0f} ms)"
    assert status == 130, f"{where}: {stderr}"
    assert stderr.startswith("Interrupted: stopped by Ctrl-C"), f"{where}: {stderr}"
    assert stderr.count("\n") == 1, f"{where}: {stderr}"
    return where


def _kill_and_reap(leftovers: list[str]) -> None:
    """Kill leftovers (``"PID STATE COMMAND"``, live children of this process: their pids
    cannot have been reused) so that a failure does not leave them behind."""
    for leftover in leftovers:
        pid = int(leftover.split()[0])
        with contextlib.suppress(ChildProcessError, ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


@needs_sandbox
def test_ctrl_c_while_bots_start_and_stop_leaves_no_sandbox_alive(tmp_path: Path) -> None:
    """Ctrl-C during the start-up check (bots being started), as a game's bot is being
    started, and between games (a bot being stopped): exit 130 every time, and nothing of
    any sandbox is left. This process is a child subreaper (see ``fakebots``): a sandbox
    process the referee left behind would now be its child."""
    before = set(leftover_processes())
    try:
        for round_ in range(CTRL_C_ROUNDS):
            where = _interrupt_at(tmp_path / f"round-{round_}", round_)
            left = [process[:100] for process in leftover_processes() if process not in before]
            assert left == [], f"{where}: left alive {left}"
    finally:
        _kill_and_reap([process for process in leftover_processes() if process not in before])


CTRL_C_ON_SIGTERM = """
import os, signal, sys, time
terms = 0
def on_sigterm(signum, frame):
    global terms
    terms += 1
    print(f"SIGTERM {terms}", file=sys.stderr, flush=True)
    if terms == 1:
        os.kill(os.getppid(), signal.SIGINT)  # Ctrl-C reaches the referee stopping it
    else:
        sys.exit(0)
signal.signal(signal.SIGTERM, on_sigterm)
print("up", flush=True)
while True:
    time.sleep(1)
"""
"""An unsandboxed bot (its parent is the referee) that, stopped, sends the referee Ctrl-C
and goes on; stopped again, it exits."""


def test_ctrl_c_in_trios_main_task_is_raised_once_the_bot_is_stopped() -> None:
    """trio raises Ctrl-C in its main task at any checkpoint, even a protected one: a
    stop there is finished (the bot stopped and reaped) before ``KeyboardInterrupt``
    comes out of it."""
    command = BotCommand((sys.executable, "-c", CTRL_C_ON_SIGTERM))
    seen: list[tuple[BotProcess, int | None]] = []

    async def main() -> None:  # trio's main task
        async with open_bot(command, sandbox=SandboxPolicy(mode="off")) as bot:
            assert await Lines(bot).line() == b"up"
            try:
                await bot.stop(grace=GUARD)  # the grace is only a hang guard here
            finally:
                seen.append((bot, bot.returncode))

    with pytest.raises(KeyboardInterrupt):
        trio.run(main)
    [(bot, code)] = seen
    assert code == 0  # stopped again after Ctrl-C: it exited by itself, and was reaped
    assert bot.stderr_tail() == ["SIGTERM 1", "SIGTERM 2"]


def test_ctrl_c_as_a_bot_is_started_is_raised_once_it_is_stopped(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C that comes between starting a bot and taking charge of it (trio's default
    raises it wherever unprotected code runs) is raised once the bot is stopped."""
    note = referee.process._note

    def ctrl_c_then_note(*args: Any) -> None:  # runs just after the bot was started
        signal.raise_signal(signal.SIGINT)
        note(*args)

    monkeypatch.setattr(referee.process, "_note", ctrl_c_then_note)

    async def main() -> None:
        async with open_bot(fakebot("pass_bot.py"), sandbox=policy):
            await trio.sleep_forever()

    before = set(leftover_processes())
    try:
        with pytest.raises(BaseException) as raised:
            trio.run(main)
        # Raised in trio's main task, which ran the bot's stop: out of its nursery.
        assert raised.type is KeyboardInterrupt or raised.group_contains(KeyboardInterrupt)
        assert [process for process in leftover_processes() if process not in before] == []
    finally:
        _kill_and_reap([process for process in leftover_processes() if process not in before])
