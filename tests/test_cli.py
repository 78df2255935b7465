"""The ``referee`` command line: replay and show, and Ctrl-C in every command."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from referee.cli import main

DATA = Path(__file__).parent / "data"

SPEC_FINAL = (
    "./.../...../.#...#./........./........./..#...#../........w/.......1./....#.pP./"
    "..G.#.Pp./..g..pp.. g 8 0 9"
)
START = (
    "./.../...../.#...#./........./........./..#...#../........./........./....#..../"
    "....#..../..g...p.. g 1 2 1"
)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_one_line_error(result: Result, text: str) -> None:
    """The command failed with exit code 1 and a single ``Error:`` line, no traceback."""
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ")
    assert text in result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


# --- replay ----------------------------------------------------------------------


def test_replay_of_a_valid_file_exits_0() -> None:
    result = run("replay", str(DATA / "spec_example.pgn"))
    assert result.exit_code == 0
    assert result.stdout == "game 1: random vs greedy, *, 8 turns, valid\n"
    assert result.stderr == ""


def test_replay_reports_every_game_and_exits_1_on_an_invalid_one() -> None:
    result = run("replay", str(DATA / "mixed.pgn"))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 5
    assert lines[0] == "game 1: random vs greedy, *, 8 turns, valid"
    assert lines[1].startswith("game 2: random vs greedy, *, 6 turns, INVALID: turn 5 (Green): ")
    assert lines[2] == "game 3: INVALID: line 36: unexpected '&&&' in the movetext"
    assert lines[3] == "game 4: climber vs sleeper, 1-0, 1 turn, valid"
    assert lines[4] == (
        "game 5: climber vs sleeper, 1-0, 2 turns,"
        " INVALID: turn 41: the game was over (Green reached the top)"
    )
    assert result.stderr == ""  # each reason once, in its game's line


def test_replay_final_position_says_each_reason_once_on_stdout() -> None:
    result = run("replay", str(DATA / "mixed.pgn"), "--final-position")
    assert result.stderr == ""
    assert sum("the game was over" in line for line in result.stdout.splitlines()) == 1


def test_replay_final_position_prints_one_line_per_game() -> None:
    result = run("replay", str(DATA / "mixed.pgn"), "--final-position")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert result.stdout.count("\n") == 5
    assert lines[0] == SPEC_FINAL
    assert lines[1].startswith("ILLEGAL 5 turn 5 (Green): creep h9")
    assert lines[2] == "ILLEGAL 0 line 36: unexpected '&&&' in the movetext"
    assert lines[3].endswith(" g 0 6 41")
    assert lines[4] == "ILLEGAL 41 turn 41: the game was over (Green reached the top)"


def test_replay_final_position_of_broken_games_keeps_one_line_each() -> None:
    result = run("replay", "--final-position", str(DATA / "broken.pgn"))
    lines = result.stdout.splitlines()
    assert len(lines) == 5
    assert [line.split()[:2] for line in lines[1:4]] == [["ILLEGAL", "0"]] * 3
    assert not lines[0].startswith("ILLEGAL")
    assert not lines[4].startswith("ILLEGAL")


def test_replay_of_a_missing_file_is_one_error_line() -> None:
    assert_one_line_error(run("replay", "no/such/file.pgn"), "cannot read no/such/file.pgn")


def test_replay_of_an_empty_file_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pgn"
    empty.write_text("\n")
    assert_one_line_error(run("replay", str(empty)), "holds no games")


# --- show ------------------------------------------------------------------------


def test_show_a_position_in_plain_text() -> None:
    result = run("show", SPEC_FINAL)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\x1b" not in out
    lines = out.splitlines()
    assert lines[0].split() == list("abcdefghi")
    assert lines[1].split() == ["12", "/.", "\\", "12"]
    assert lines[12].split() == ["1", "|.", ".", "g^", ".", ".", "p", "p^", ".", ".", "|", "1"]
    assert lines[11].split() == ["2", "|.", ".", "G*", ".", "#", ".", "P", "p", ".", "|", "2"]
    assert lines[9].split() == ["4", "|.", ".", ".", ".", ".", ".", ".", "x1", ".", "|", "4"]
    assert lines[8].split() == ["5", "=.", ".", ".", ".", ".", ".", ".", ".", "w", "=", "5"]
    assert "Turn 9, Green to move. Sun: Green 8 (+4), Purple 0 (+3)." in out
    assert f"Position: {SPEC_FINAL}" in out
    assert "Legend:" in out


def test_show_in_colour_uses_escape_codes() -> None:
    result = run("show", "--color", START)
    assert result.exit_code == 0
    assert "\x1b[" in result.stdout


def test_show_a_pgn_game_before_a_turn() -> None:
    path = str(DATA / "spec_example.pgn")
    first = run("show", path, "--turn", "1")
    assert first.exit_code == 0
    assert f"Position: {START}" in first.stdout
    last = run("show", path)
    assert f"Position: {SPEC_FINAL}" in last.stdout
    assert run("show", path, "--turn", "9").stdout == last.stdout
    assert_one_line_error(run("show", path, "--turn", "10"), "no position before turn 10")


def test_show_picks_a_game_and_warns_about_an_illegal_turn() -> None:
    path = str(DATA / "mixed.pgn")
    won = run("show", path, "--game", "4")
    assert won.exit_code == 0
    assert "Turn 41, Green to move." in won.stdout
    assert "Green wins at this Feed (living leaf on e12)." in won.stdout
    assert won.stdout.splitlines()[1].split() == ["12", "/G*\\", "12"]
    before = run("show", path, "--game", "4", "--turn", "40")
    assert "Turn 40, Purple to move." in before.stdout
    assert "Green wins" not in before.stdout
    broken = run("show", path, "--game", "2")
    assert broken.exit_code == 0
    assert broken.stderr.startswith("Warning: turn 5 (Green): ")
    assert "Turn 5, Green to move." in broken.stdout
    assert_one_line_error(run("show", path, "--game", "3"), "game 3, line 36")
    assert_one_line_error(run("show", path, "--game", "9"), "holds 5 games")


def test_show_reports_bad_input_in_one_line() -> None:
    assert_one_line_error(run("show", "not a position"), "Error: a position has 5 fields")
    assert_one_line_error(run("show", "missing.pgn"), "cannot read missing.pgn")


def test_show_a_seats_view_of_a_finished_verdant_game_says_each_thing_once(
    tmp_path: Path,
) -> None:
    from bots import make_bot
    from bots.arena import play_game
    from referee.clock import TimeControl
    from referee.pgn import append_game

    played = play_game(
        make_bot("verdant-random", 1),
        make_bot("verdant-random", 2),
        time_control=TimeControl.parse("60"),
    )
    path = tmp_path / "verdant.pgn"
    append_game(path, played.record)
    result = run("show", str(path), "--seat", "1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "Verdant (standard), 2 players, seat 1's view: the game is over after turn 26."
        " Turns left per seat: 0, 0."
    )
    homes = [line.split(":")[0] for line in lines if line.startswith("Seat ")]
    assert homes == ["Seat 1 (viewer)", "Seat 2"]  # nobody at `show` is "you"
    public = run("show", str(path)).stdout.splitlines()
    assert public[0].startswith("Verdant (standard), 2 players, public view: the game is over")
    assert [line.split(":")[0] for line in public if line.startswith("Seat ")] == [
        "Seat 1",
        "Seat 2",
    ]


def test_show_refuses_turn_for_a_position_string() -> None:
    result = run("show", START, "--turn", "3")
    assert result.exit_code == 2
    assert "--game and --turn apply to a PGN file" in result.stderr


# --- Ctrl-C ----------------------------------------------------------------------

HANG_GUARD = 60
"""Seconds after which a test gives up waiting for a process: a guard, never a measure."""


@pytest.mark.parametrize("command", ["replay", "show", "ratings"])
def test_ctrl_c_exits_130_with_one_line_in_every_command(tmp_path: Path, command: str) -> None:
    # Opening a FIFO waits for a writer that never comes: the command is surely running.
    fifo = tmp_path / "games.pgn"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", command, str(fifo)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + HANG_GUARD
    while not opened_by(child.pid, fifo):
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=HANG_GUARD)
    assert child.returncode == 130
    assert (stdout, stderr) == ("", "Interrupted\n")


def opened_by(pid: int, path: Path) -> bool:
    """Whether process ``pid`` (started by the test) is opening or holds ``path``: its
    main thread waits in the kernel's FIFO open, or one of its descriptors is the file."""
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/wchan").read_text() in ("fifo_open", "wait_for_partner"):
            return True
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    return False
