"""Tests for referee.process: starting, talking to and always stopping bot processes.

The bots are the fake bots in ``tests/fakebots/``, run with this interpreter.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.errors import BotCrashed
from referee.process import BotCommand, BotCommandError, BotProcess, open_bot

FAKEBOTS = Path(__file__).parent / "fakebots"
SHORT_GRACE = 0.2

needs_proc = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="tells zombies from the living through /proc"
)


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
    with trio.fail_after(5):
        ready = await lines.message()
    assert ready["type"] == "ready"
    assert ready["id"] == 1
    return ready


async def request_turn(bot: BotProcess, request_id: int = 2) -> None:
    await send(bot, {"type": "turn", "id": request_id, "turn": request_id - 1})


def is_alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie waiting for init to reap it counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def wait_until_dead(pid: int) -> None:
    """Wait for a process that is not our child to die: SIGKILL takes a moment."""
    with trio.fail_after(2):
        while is_alive(pid):
            await trio.sleep(0.01)


def living_members(pgid: int) -> list[int]:
    """The living processes of group ``pgid``, per /proc (zombies excluded)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            members.append(int(entry.name))
    return members


# --- commands ----------------------------------------------------------------


def test_parse_plain_command_line() -> None:
    command = BotCommand.parse("python -m bots.random --seed '3 4'")
    assert command.argv == ("python", "-m", "bots.random", "--seed", "3 4")
    assert command.name is None
    assert command.cwd is None
    assert dict(command.env) == {}
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


def test_command_is_immutable() -> None:
    env = {"K": "V"}
    command = BotCommand(("./bot",), env=env)
    env["K"] = "changed"
    assert command.env["K"] == "V"
    with pytest.raises(TypeError):
        command.env["K"] = "W"  # type: ignore[index]


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
    ],
)
def test_parse_rejects_bad_text(text: str, message: str) -> None:
    with pytest.raises(BotCommandError) as caught:
        BotCommand.parse(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


async def test_a_missing_program_cannot_start() -> None:
    with pytest.raises(BotCrashed, match=r"^cannot start 'no-such-bot-x': No such file or direc"):
        async with open_bot(BotCommand(("no-such-bot-x",))):
            pytest.fail("the bot should not have started")


async def test_a_missing_directory_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(BotCrashed, match=f"directory '{missing}'"):
        async with open_bot(BotCommand((sys.executable,), cwd=str(missing))):
            pytest.fail("the bot should not have started")


async def test_cwd_and_env_reach_the_bot(tmp_path: Path) -> None:
    script = "import os; print(os.environ['BOT_SEED'], os.environ['PATH'] != '', os.getcwd())"
    command = BotCommand((sys.executable, "-c", script), cwd=str(tmp_path), env={"BOT_SEED": "42"})
    async with open_bot(command) as bot:
        with trio.fail_after(5):
            line = await Lines(bot).line()
    assert line == f"42 True {tmp_path}".encode()


# --- talking and stopping ----------------------------------------------------


async def test_pass_bot_plays_and_stops() -> None:
    async with open_bot(fakebot("pass_bot.py")) as bot:
        assert bot.name == "pass_bot"
        assert bot.pid > 0
        assert bot.exit_description() is None
        lines = Lines(bot)
        assert (await handshake(bot, lines))["name"] == "pass"
        for request_id in range(2, 6):
            await request_turn(bot, request_id)
            with trio.fail_after(5):
                assert await lines.message() == {"type": "turn", "id": request_id, "actions": []}
        started = time.monotonic()
        await bot.stop(grace=SHORT_GRACE)
        assert time.monotonic() - started < 2
        assert bot.exit_description() in ("exit code 0", "killed by signal 15 (SIGTERM)")
        await bot.stop()  # idempotent
    assert not is_alive(bot.pid)


async def test_quit_lets_the_bot_exit_by_itself() -> None:
    async with open_bot(fakebot("pass_bot.py")) as bot:
        await handshake(bot, lines := Lines(bot))
        await send(bot, {"type": "quit"})
        with trio.fail_after(5):
            assert await lines.line() is None
            assert await bot.wait() == 0
        assert bot.exit_description() == "exit code 0"


async def test_leaving_on_an_exception_kills_the_bot_and_keeps_the_exception() -> None:
    with pytest.raises(ValueError, match="boom"):
        async with open_bot(fakebot("pass_bot.py")) as bot:
            await handshake(bot, Lines(bot))
            raise ValueError("boom")
    assert bot.returncode is not None
    assert not is_alive(bot.pid)


async def test_leaving_on_cancellation_kills_the_bot() -> None:
    with trio.move_on_after(0.2) as scope:
        async with open_bot(misbehaving("ignore_sigterm")) as bot:
            await handshake(bot, Lines(bot))
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert bot.exit_description() == "killed by signal 9 (SIGKILL)"
    assert not is_alive(bot.pid)


async def test_stop_is_bounded_when_the_bot_ignores_sigterm() -> None:
    async with open_bot(misbehaving("ignore_sigterm")) as bot:
        await handshake(bot, Lines(bot))
        started = time.monotonic()
        await bot.stop(grace=SHORT_GRACE)
        elapsed = time.monotonic() - started
        assert SHORT_GRACE <= elapsed < SHORT_GRACE + 1.5
        assert bot.exit_description() == "killed by signal 9 (SIGKILL)"
        assert bot.stderr_tail() == ["misbehave: ignoring SIGTERM"]


@needs_proc
async def test_stop_kills_what_the_bot_forked() -> None:
    async with open_bot(misbehaving("fork_child")) as bot:
        await handshake(bot, Lines(bot))
        with trio.fail_after(5):
            while not bot.stderr_tail():
                await trio.sleep(0.01)
        child = int(bot.stderr_tail()[0].removeprefix("misbehave: forked child "))
        assert is_alive(child)
        assert os.getpgid(child) == bot.pid
    assert not is_alive(bot.pid)
    await wait_until_dead(child)
    assert living_members(bot.pid) == []


@needs_proc
async def test_the_group_is_killed_even_when_the_leader_already_exited() -> None:
    async with open_bot(misbehaving("fork_child")) as bot:
        await handshake(bot, lines := Lines(bot))
        with trio.fail_after(5):
            while not bot.stderr_tail():
                await trio.sleep(0.01)
        child = int(bot.stderr_tail()[0].rpartition(" ")[2])
        os.kill(bot.pid, signal.SIGKILL)
        with trio.fail_after(5):
            await bot.wait()
        assert is_alive(child)
        # The child still holds the bot's stdout, so there is no end of file yet.
        with trio.move_on_after(0.1) as scope:
            await lines.line()
        assert scope.cancelled_caught
    await wait_until_dead(child)


async def test_a_bot_that_exits_at_start_gives_end_of_file() -> None:
    async with open_bot(misbehaving("exit_at_start")) as bot:
        with trio.fail_after(5):
            assert await bot.receive_some() == b""
            assert await bot.wait() == 0
        assert bot.exit_description() == "exit code 0"
        with pytest.raises(BotCrashed, match=r"^bot 'misbehave' \(pid \d+\) closed its stdin$"):
            with trio.fail_after(5):
                # Enough to fill the pipe, should the first write land before the error.
                await bot.send_all(b"{}\n" * 100_000)
        await bot.stop()
        assert bot.stderr_tail() == ["misbehave: exiting at start"]


async def test_a_crash_leaves_its_exit_code_and_last_words() -> None:
    async with open_bot(misbehaving("crash")) as bot:
        await handshake(bot, lines := Lines(bot))
        await request_turn(bot)
        with trio.fail_after(5):
            assert await lines.line() is None
        await bot.stop()
        assert bot.exit_description() == "exit code 3"
        assert bot.stderr_tail() == ["misbehave: crashing on purpose at turn 1"]


async def test_sending_to_a_stopped_bot_is_a_crash() -> None:
    async with open_bot(fakebot("pass_bot.py")) as bot:
        await bot.stop(grace=SHORT_GRACE)
        with pytest.raises(BotCrashed, match="has been stopped"):
            await bot.send_all(b"{}\n")


async def test_a_bot_that_does_not_read_blocks_send_until_the_deadline() -> None:
    async with open_bot(misbehaving("no_read")) as bot:
        with trio.move_on_after(0.3) as scope:
            await bot.send_all(b"x" * (4 << 20))
        assert scope.cancelled_caught
        assert bot.returncode is None


async def test_closing_stdout_reads_as_end_of_file_while_the_bot_runs() -> None:
    async with open_bot(misbehaving("close_stdout")) as bot:
        await handshake(bot, lines := Lines(bot))
        await request_turn(bot)
        with trio.fail_after(5):
            assert await lines.line() is None
        assert bot.returncode is None


# --- stderr --------------------------------------------------------------------


async def test_stderr_flood_is_capped_in_the_log_and_does_not_block_the_bot(
    tmp_path: Path,
) -> None:
    log = tmp_path / "logs" / "flood.stderr"
    limit = 64 * 1024
    async with open_bot(misbehaving("flood_stderr"), stderr_path=log, stderr_limit=limit) as bot:
        await handshake(bot, lines := Lines(bot))
        request_id = 2
        with trio.fail_after(10):
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
        with trio.fail_after(5):
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
    """Play a handshake and one turn with ``misbehave.py MODE``; return the lines it
    sent back within a short while (``None`` for end of file)."""
    answer: list[bytes | None] = []
    async with open_bot(misbehaving(mode)) as bot:
        await handshake(bot, lines := Lines(bot))
        await request_turn(bot, 7)
        with trio.move_on_after(0.5):
            while (line := await lines.line()) is not None:
                answer.append(line)
                if line.startswith(b'{"type": "turn"'):
                    break
            else:
                answer.append(None)
        # flood_stdout never ends a line: report what piled up instead.
        if lines.buffer:
            answer.append(bytes(lines.buffer[:16]))
        await bot.stop(grace=SHORT_GRACE)
    return answer


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("timeout", []),
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


def test_a_bare_python_runs_under_the_referees_interpreter() -> None:
    command = BotCommand.parse("python -m bots.random --seed 2")
    assert command.resolved_argv() == (sys.executable, "-m", "bots.random", "--seed", "2")
    assert command.argv[0] == "python"  # as the user wrote it, in records and names
    other = BotCommand.parse("python3.11 bot.py")
    assert other.resolved_argv() == other.argv
