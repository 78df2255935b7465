"""The cpu clock: a bot is charged the CPU time of its whole process tree, under a
wall-clock cap; both figures are recorded, and the clock in force is the record's."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from protocol.messages import TurnReply
from referee import cli
from referee.cgroups import group_problem
from referee.clock import WALL_EXTRA, WALL_FACTOR, Clock, Spent, TimeControl
from referee.errors import SettingsError
from referee.games import get_entry
from referee.games.base import GameSettings
from referee.pgn import ClockAnnotation, GameRecord, read_games
from referee.session import GameSession

REPO = Path(__file__).resolve().parent.parent
FAKEBOTS = Path(__file__).parent / "fakebots"
GUARD = 120.0
PASS = TurnReply(id=1, actions=msgspec.Raw(b"[]"))
needs_groups = pytest.mark.skipif(
    group_problem() is not None, reason=f"no control groups: {group_problem()}"
)


def test_the_clock_is_part_of_the_time_control() -> None:
    assert TimeControl.parse("0.1/turn").clock == "wall"
    control = TimeControl.parse("10+0.1", "cpu")
    assert control.clock == "cpu" and str(control) == "10+0.1"
    with pytest.raises(SettingsError, match="unknown clock 'sun'"):
        TimeControl.parse("10", "sun")


def test_the_wall_cap_is_a_multiple_of_the_time_left_plus_a_constant() -> None:
    assert Clock(TimeControl.parse("10+0.1"), 2).wall_cap(0) is None
    clock = Clock(TimeControl.parse("10+0.1", "cpu"), 2)
    assert clock.wall_cap(0) == WALL_FACTOR * 10 + WALL_EXTRA
    assert clock.charge(0, 4.0)
    assert clock.wall_cap(0) == WALL_FACTOR * 6 + WALL_EXTRA


def _session(clock: str) -> GameSession:
    entry = get_entry("ivy")
    return GameSession(
        entry.rules,
        entry.codec,
        GameSettings(players=2, seed=1),
        players=("a", "b"),
        control=TimeControl.parse("0.1/turn", clock),
        max_line_bytes=65536,
    )


def test_cpu_is_charged_on_the_cpu_clock_and_wall_on_the_wall_clock() -> None:
    slow_but_idle = Spent(wall=0.8, cpu=0.01)
    session = _session("cpu")
    assert session.new_game(0, 1).time_control.clock == "cpu"
    request = session.next_request(1)
    assert request.wall_cap == WALL_FACTOR * 0.1 + WALL_EXTRA
    assert session.submit(0, PASS, slow_but_idle) is None
    record = session.record()
    assert record.tags["Clock"] == "cpu"
    assert record.turns[0].clock == ClockAnnotation(clock_ms=100, elapsed_ms=800, cpu_ms=10)
    assert str(record.turns[0].clock) == "[%clk 0:00:00.1] [%emt 0:00:00.8] [%ect 0:00:00.01]"

    session = _session("wall")
    assert session.new_game(0, 1).time_control.clock == "wall"
    session.next_request(1)
    error = session.submit(0, PASS, slow_but_idle)
    assert error is not None and error.code == "timeout"
    assert "Clock" not in session.record().tags

    session = _session("cpu")
    session.next_request(1)
    error = session.submit(0, PASS, Spent(wall=0.3, cpu=0.3))
    assert error is not None and "0.300 s of CPU time" in error.message


def test_a_clock_comment_reads_back() -> None:
    text = "[%clk 0:00:09.5] [%emt 0:00:00.21] [%ect 0:00:00.012]"
    assert ClockAnnotation.parse(text) == ClockAnnotation(9500, 210, 12)


def test_the_cpu_clock_is_refused_without_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "group_problem", lambda: "no cgroup file system is mounted")
    bot = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
    result = CliRunner().invoke(cli.main, ["match", bot, bot, "--clock", "cpu"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: the cpu clock needs a control group per bot, which cannot be had here: no"
        " cgroup file system is mounted (docs/security.md says how to delegate one; or use"
        " --clock wall)"
    ]


def _match(tmp_path: Path, bot: list[str], clock: str, tc: str) -> tuple[str, str]:
    """One game of ``bot`` against a passer on ``clock``; → (stdout, PGN text)."""
    pgn = tmp_path / f"{clock}.pgn"
    passer = shlex.join([sys.executable, "-u", str(FAKEBOTS / "pass_bot.py")])
    command = [
        *(sys.executable, "-m", "referee.cli", "match", shlex.join(bot), passer),
        *("--games", "1", "--option", "turn_limit=2", "--tc", tc, "--margin", "0.05"),
        *("--clock", clock, "--pgn", str(pgn), "--log-dir", str(tmp_path / "logs")),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=GUARD, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    replay = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", str(pgn)],
        capture_output=True,
        text=True,
        timeout=GUARD,
        cwd=REPO,
        check=False,
    )
    assert replay.returncode == 0 and ", valid" in replay.stdout, replay.stdout
    return done.stdout, pgn.read_text()


def _clock_bot(*args: str) -> list[str]:
    return [sys.executable, "-u", str(FAKEBOTS / "clock_bot.py"), *args]


@needs_groups
def test_a_sleeping_bot_is_not_charged_for_its_sleep(tmp_path: Path) -> None:
    stdout, text = _match(tmp_path, _clock_bot("sleep", "0.3"), "cpu", "0.1/turn")
    assert "turn limit 2 reached" in stdout, stdout
    [game] = list(read_games(text))
    assert isinstance(game, GameRecord)
    assert game.tags["Clock"] == "cpu"
    mine = [turn.clock for turn in game.turns[::2]]
    assert all(c is not None and c.elapsed_ms and c.elapsed_ms >= 300 for c in mine)
    assert all(c is not None and c.cpu_ms is not None and c.cpu_ms < 100 for c in mine)


@needs_groups
def test_a_bot_that_sleeps_past_the_wall_cap_loses_on_time(tmp_path: Path) -> None:
    cap = WALL_FACTOR * 0.1 + WALL_EXTRA
    stdout, text = _match(tmp_path, _clock_bot("sleep", str(cap + 1)), "cpu", "0.1/turn")
    assert "0-1" in stdout, stdout
    assert '[Termination "time forfeit"]' in text
    assert f"no reply within {cap:.3f} s of wall time" in text


@needs_groups
def test_the_cpu_of_every_process_of_the_bot_is_charged(tmp_path: Path) -> None:
    # Two children burn 0.3 s each while the bot itself waits: 0.6 s, over its 0.45.
    stdout, text = _match(tmp_path, _clock_bot("burn", "0.3", "2"), "cpu", "0.4/turn")
    assert "0-1" in stdout, stdout
    assert '[Termination "time forfeit"]' in text
    assert "s of CPU time" in text
