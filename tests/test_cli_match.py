"""The ``referee`` commands that run bots: match, play, tournament, ratings."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fakebots import FAKEBOTS, leftover_processes

import tournaments.runner
from referee.cli import main
from referee.errors import RefereeFault
from referee.pgn import GameRecord, read_pgn_file
from referee.replay import verify

PASS_BOT = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
CRASH_BOT = f"{sys.executable} -u {FAKEBOTS / 'misbehave.py'} crash"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_match_prints_each_game_and_the_score(tmp_path: Path) -> None:
    pgn = tmp_path / "out" / "m.pgn"
    result = run(
        "match", f"name=one cmd='{PASS_BOT}'", f"name=two cmd='{PASS_BOT}'",
        "--games", "3", "--option", "turn_limit=6", "--tc", "5+0.1",
        "--pgn", str(pgn), "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("game 1: one vs two  1/2-1/2  (turn limit 6 reached; 6 turns)")
    assert lines[1].startswith("game 2: two vs one")
    # cutechess-cli's two lines, word for word: W - L - D, then the Elo difference.
    assert lines[-4:-2] == [
        "Score of one vs two: 0 - 0 - 4  [0.500] 4",
        "Elo difference: 0.0 +/- 0.0, LOS: 50.0 %, DrawRatio: 100.0 %",
    ]
    # The referee's own cost beside the bots', per decision played.
    assert re.fullmatch(r"CPU per decision: referee \d+\.\d\d ms, bots \d+\.\d\d ms", lines[-2])
    assert lines[-1] == f"Games: {pgn}  Logs: {tmp_path / 'logs'}"
    assert "Warning: 3 games rounded up to 4, a multiple of the 2 bots" in result.stderr
    games = read_pgn_file(pgn)
    assert len(games) == 4 and all(verify(game).valid for game in games)
    assert leftover_processes() == []


def test_match_records_a_crash_as_a_lost_game(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    result = run(
        "match", f"name=crashy cmd='{CRASH_BOT}'", f"name=steady cmd='{PASS_BOT}'",
        "--games", "2", "--option", "turn_limit=6", "--pgn", str(pgn),
        "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "game 1: crashy vs steady  0-1  (Green (crashy) forfeits: exited (exit code 3)" in (
        result.stdout
    )
    # A zero score has no finite Elo: cutechess-cli's -inf, no virtual draw behind it.
    assert result.stdout.splitlines()[-4:-2] == [
        "Score of crashy vs steady: 0 - 2 - 0  [0.000] 2",
        "Elo difference: -inf +/- nan, LOS: 7.9 %, DrawRatio: 0.0 %",
    ]
    assert [g.tags["Termination"] for g in read_pgn_file(pgn)] == ["abandoned", "abandoned"]


def test_a_second_match_into_the_same_files_numbers_its_games_on(tmp_path: Path) -> None:
    pgn, logs = tmp_path / "m.pgn", tmp_path / "logs"
    common = ("--option", "turn_limit=4", "--pgn", str(pgn), "--log-dir", str(logs))
    bots = (f"name=one cmd='{PASS_BOT}'", f"name=two cmd='{PASS_BOT}'")
    first = run("match", *bots, "--games", "2", *common)
    assert first.exit_code == 0, first.output
    before = {path.name: path.read_bytes() for path in logs.iterdir()}
    assert {"game-0001.log", "game-0002.log", "one-1.stderr.log"} <= set(before)
    second = run("match", *bots, "--games", "2", *common)
    assert second.exit_code == 0, second.output
    # The rounds, the game lines and the logs go on from the games already there.
    assert [line.split(":")[0] for line in second.stdout.splitlines()[:2]] == ["game 3", "game 4"]
    assert [game.tags["Round"] for game in read_pgn_file(pgn)] == ["1", "2", "3", "4"]
    after = {path.name: path.read_bytes() for path in logs.iterdir()}
    assert {name: after[name] for name in before} == before  # nothing overwritten
    assert {"game-0003.log", "game-0004.log", "one-2.stderr.log", "two-2.stderr.log"} <= set(after)


def test_match_with_a_malformed_bot_is_one_error_line(tmp_path: Path) -> None:
    result = run("match", "name=x cmd='unterminated", PASS_BOT, "--pgn", str(tmp_path / "m.pgn"))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


def test_match_refuses_a_bad_time_control(tmp_path: Path) -> None:
    result = run("match", PASS_BOT, PASS_BOT, "--tc", "fast", "--pgn", str(tmp_path / "m.pgn"))
    assert result.exit_code == 1
    assert "bad time control 'fast'" in result.stderr


def test_play_lets_a_person_type_turns_and_explains_mistakes(tmp_path: Path) -> None:
    pgn = tmp_path / "played.pgn"
    typed = "c2\nd9\n--\nc3+Lc3\n--\n"
    completed = subprocess.run(
        [sys.executable, "-m", "referee.cli", "play", PASS_BOT, "--option", "turn_limit=8",
         "--no-color", "--pgn", str(pgn)],
        input=typed, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "You play Green against pass_bot" in out
    assert "Not a legal turn: turn 3 (Green): creep d9" in out
    assert "pass_bot plays --" in out
    assert "Game over: 1/2-1/2 — turn limit 8 reached" in out
    assert "\x1b[" not in out
    (game,) = read_pgn_file(pgn)
    assert [turn.token for turn in game.turns][:4] == ["c2", "--", "--", "--"]
    assert verify(game).valid


def test_tournament_from_flags_then_ratings_of_its_pgn(tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = [
        "tournament", "--quiet", "--output", str(out), "--option", "turn_limit=6", "--tc", "5+0.1",
        "--games", "2", "--concurrency", "2",
        "--player", f"name=a cmd='{PASS_BOT}'",
        "--player", f"name=b cmd='{PASS_BOT}'",
        "--player", f"name=c cmd='{CRASH_BOT}'",
    ]  # fmt: skip
    first = run(*args)
    assert first.exit_code == 0, first.output
    assert all(f"[{n}/6] game " in first.stdout for n in range(1, 7))
    assert "Crosstable" in first.stdout
    players = json.loads((out / "ratings.json").read_text())["players"]
    assert players[-1]["name"] == "c" and players[-1]["losses"] == 4
    again = run(*args)
    assert again.exit_code == 0
    assert again.stdout.startswith("Tournament: 6 games, 6 already played\n")
    assert "[1/6]" not in again.stdout  # nothing played twice
    rated = run("ratings", str(out / "games.pgn"), "--json")
    assert rated.exit_code == 0
    assert {p["name"] for p in json.loads(rated.stdout)["players"]} == {"a", "b", "c"}
    assert leftover_processes() == []


def test_ratings_at_80_columns_keep_names_whole_and_signs_with_an_anchor(tmp_path: Path) -> None:
    names = ("bots.verdant.random", "bots.verdant.greedy", "bots.verdant.mc")
    games = []
    for number, result in enumerate(("1-0", "1/2-1/2", "0-1", "1-0", "1-0", "1/2-1/2")):
        white, black = names[number % 3], names[(number + 1) % 3]
        games.append(f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n{result}\n')
    pgn = tmp_path / "names.pgn"
    pgn.write_text("\n".join(games))

    def rows(*flags: str) -> list[str]:
        result = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["ratings", str(pgn), *flags])
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80
        return [line for line in lines if line.startswith("│")][:5]

    # Folded, not cut to "bots.verdant.…": each name can still be told from the others.
    assert rows() == [
        "│ 1 │ bots.verdant.ran │ +227 │ 345 │     4 │ 3 │ 1 │ 0 │    3½ │ 87.5 │ 86.2% │",
        "│   │ dom              │      │     │       │   │   │   │       │      │       │",
        "│ 2 │ bots.verdant.gre │  -77 │ 272 │     4 │ 1 │ 1 │ 2 │    1½ │ 37.5 │ 62.5% │",
        "│   │ edy              │      │     │       │   │   │   │       │      │       │",
        "│ 3 │ bots.verdant.mc  │ -150 │ 290 │     4 │ 0 │ 2 │ 2 │     1 │ 25.0 │       │",
    ]
    assert rows("--anchor", "bots.verdant.mc")[::2] == [
        "│ 1 │ bots.verdant.ran │ +377 │ 576 │     4 │ 3 │ 1 │ 0 │    3½ │ 87.5 │ 86.2% │",
        "│ 2 │ bots.verdant.gre │  +72 │ 445 │     4 │ 1 │ 1 │ 2 │    1½ │ 37.5 │ 62.5% │",
        "│ 3 │ bots.verdant.mc  │   +0 │   0 │     4 │ 0 │ 2 │ 2 │     1 │ 25.0 │       │",
    ]
    # On a scale an anchor fixes at another rating, ratings are plain numbers, as Ordo's.
    plain = rows("--anchor", "bots.verdant.mc", "--anchor-elo", "2800")
    assert plain[0].startswith("│ 1 │ bots.verdant.ran │ 3177 │")


def test_tournament_needs_players() -> None:
    result = run("tournament")
    assert result.exit_code == 2
    assert "CONFIG.toml" in result.output


def test_ratings_of_a_file_without_results_is_one_error_line(tmp_path: Path) -> None:
    empty = tmp_path / "none.pgn"
    empty.write_text('[White "a"]\n[Black "b"]\n[Result "*"]\n\n*\n')
    result = run("ratings", str(empty))
    assert result.exit_code == 1
    assert "holds no finished games" in result.stderr


# --- one line for every error, exit 130 on Ctrl-C ---------------------------------------

REPO = Path(__file__).resolve().parents[1]
HANG_GUARD = 60
"""Seconds after which a test gives up waiting for a process: a guard, never a measure."""

SLEEPER_MARK = "time.sleep(120)"
SLEEPER = f"{sys.executable} -c 'import time; {SLEEPER_MARK}'"
"""A bot that never answers (so that a command is still starting when it is interrupted)."""


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    """``referee ARGS`` as a process of its own, its stdin a pipe nobody writes to."""
    return subprocess.Popen(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(ready: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    """Wait until ``ready()`` holds while ``process`` runs (the hang guard fails the test)."""
    deadline = time.monotonic() + HANG_GUARD
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the hang guard ran out"
        time.sleep(0.02)


def runs_bot(process: subprocess.Popen[str], marker: str) -> Callable[[], bool]:
    """Whether ``process`` (started by this test) has a child whose command line holds
    ``marker``: the bot itself, or the sandbox running it. (Other children come and go:
    importing trio runs ``ldconfig``, and until that execs, the child still has the
    referee's own command line, which holds ``marker`` too.)"""

    def check() -> bool:
        with contextlib.suppress(OSError):
            tasks = Path(f"/proc/{process.pid}/task").iterdir()
            children = [
                child for task in tasks for child in (task / "children").read_text().split()
            ]
            own = command_line(str(process.pid))
            return any(
                marker.encode() in line and line != own for line in map(command_line, children)
            )
        return False

    return check


def command_line(pid: str) -> bytes:
    """The command line of process ``pid``, or nothing once it is gone."""
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def interrupt(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Send Ctrl-C's SIGINT; the exit status and stderr."""
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=HANG_GUARD)
    return process.returncode, stderr


def test_ctrl_c_in_a_match_exits_130_with_one_line(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    match = start(
        "match", PASS_BOT, PASS_BOT, "--games", "1000", "--option", "turn_limit=6",
        "--pgn", str(pgn), cwd=tmp_path,
    )  # fmt: skip
    wait_until(lambda: pgn.exists() and "[Result" in pgn.read_text(), match)
    status, stderr = interrupt(match)
    assert status == 130
    assert stderr == f"Interrupted: finished games are in {pgn}\n"
    assert leftover_processes() == []


def test_ctrl_c_while_a_match_starts_exits_130_and_writes_nothing(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    match = start("match", SLEEPER, PASS_BOT, "--startup", "100", "--pgn", str(pgn), cwd=tmp_path)
    wait_until(runs_bot(match, SLEEPER_MARK), match)
    status, stderr = interrupt(match)
    assert status == 130 and stderr.startswith("Interrupted") and stderr.count("\n") == 1
    assert not pgn.exists()


def test_ctrl_c_while_playing_a_bot_yourself_exits_130(tmp_path: Path) -> None:
    play = start("play", PASS_BOT, "--no-color", cwd=tmp_path)
    assert play.stdout is not None
    wait_until(lambda: "You play Green" in play.stdout.readline(), play)
    status, stderr = interrupt(play)
    assert status == 130 and "Traceback" not in stderr


def test_ctrl_c_in_a_tournament_exits_130(tmp_path: Path) -> None:
    tournament = start(
        "tournament", "--quiet", "--output", "out", "--startup", "100",
        "--player", f"name=a cmd='{PASS_BOT}'", "--player", f"name=b cmd={SLEEPER!r}",
        cwd=tmp_path,
    )  # fmt: skip
    wait_until(runs_bot(tournament, SLEEPER_MARK), tournament)
    status, stderr = interrupt(tournament)
    assert status == 130 and stderr.startswith("Interrupted") and stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--startup", "nan"], "startup must be a number of seconds from 0 to 1000000, not nan"),
        (["--margin", "inf"], "margin must be a number of seconds from 0 to 1000000, not inf"),
        (["--output", ""], "output must be a path, not an empty string"),
        (["--player", "name='x\ny' cmd=z", "--player", "b"], "holds '\\n'"),
        (["--player", "name=? cmd=z", "--player", "b"], "'?' means 'unknown' in PGN"),
        (["--player", f"name={'n' * 300} cmd=z", "--player", "b"], "300 characters long"),
        (["--games", "1" + "0" * 20], "more than the 1,000,000,000,000,000"),
        (
            ["--option", "turn_limit=100000000"],
            "turn_limit must be a whole number from 1 to 1000000",
        ),
    ],
)
def test_bad_tournament_settings_are_one_error_line_and_create_nothing(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    players = [] if "--player" in flags else ["--player", PASS_BOT, "--player", PASS_BOT]
    with contextlib.chdir(tmp_path):
        result = run("tournament", "--quiet", *players, *flags)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_tournament_file_that_is_not_utf8_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_bytes(b'event = "caf\xe9"\n')
    result = run("tournament", str(path))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}: not UTF-8 text (byte 0xe9 at offset 12)\n"


def test_a_player_that_cannot_start_is_one_error_line(tmp_path: Path) -> None:
    with contextlib.chdir(tmp_path):
        result = run(
            "tournament", "--quiet", "--player", PASS_BOT, "--player", "name=typo cmd=pythno",
        )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: a player failed the start-up check (typo: ")
    assert result.stderr.count("\n") == 1 and "cannot start 'pythno'" in result.stderr
    with contextlib.closing(sqlite3.connect(tmp_path / "tournament" / "results.sqlite")) as db:
        assert db.execute("SELECT count(*) FROM config").fetchone() == (0,)


def test_a_match_with_a_bot_that_cannot_start_is_one_error_line(tmp_path: Path) -> None:
    pgn = tmp_path / "out" / "m.pgn"
    result = run("match", PASS_BOT, "no-such-referee-bot", "--pgn", str(pgn))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: a player failed the start-up check (")
    assert "cannot start 'no-such-referee-bot'" in result.stderr
    assert not pgn.parent.exists()  # nothing written


@pytest.mark.parametrize(
    ("raised", "status", "stderr"),
    [
        (
            ExceptionGroup("two", [RefereeFault("out of files"), RefereeFault("out of memory")]),
            1,
            "Error: out of files\n",
        ),
        (
            BaseExceptionGroup("nested", [ExceptionGroup("inner", [OSError(28, "No space")])]),
            1,
            "Error: [Errno 28] No space\n",
        ),
        (
            BaseExceptionGroup("stop", [KeyboardInterrupt(), RefereeFault("x")]),
            130,
            "Interrupted\n",
        ),
    ],
    ids=["two faults at once", "nested", "Ctrl-C among them"],
)
def test_errors_from_several_tasks_at_once_are_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    raised: BaseException,
    status: int,
    stderr: str,
) -> None:
    async def fails(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(tournaments.runner, "run_tournament", fails)
    with contextlib.chdir(tmp_path):
        result = run("tournament", "--quiet", "--player", PASS_BOT, "--player", PASS_BOT)
    assert (result.exit_code, result.stderr) == (status, stderr)


# --- games of more seats: Verdant end to end -------------------------------------------

VERDANT_RANDOM = f"{sys.executable} -m bots.verdant.random"


def test_match_between_three_verdant_bots_rotates_seats_and_records_seeds(tmp_path: Path) -> None:
    pgn = tmp_path / "v.pgn"
    bots = [f"name={name} cmd='{VERDANT_RANDOM} --seed {n}'" for n, name in enumerate("abc")]
    result = run(
        "match", *bots, "--game", "verdant", "--option", "variant=simplified", "--seed", "5",
        "--tc", "20+0.1", "--pgn", str(pgn), "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("game 1: a vs b vs c  ")
    assert lines[1].startswith("game 2: b vs c vs a  ")
    assert lines[2].startswith("game 3: c vs a vs b  ")
    assert "decisions)" in lines[0]
    assert lines[3] == "Standings after 3 games:"
    assert all(": 3 games, " in line and "mean place" in line for line in lines[4:7])
    games = read_pgn_file(pgn)
    assert [game.tags["Seat1"] for game in games] == ["a", "b", "c"]
    assert len({game.tags["Seed"] for game in games}) == 3
    for game in games:
        assert game.tags["VerdantVariant"] == "simplified" and game.tags["Places"]
        report = verify(game)
        assert report.valid, report.reason
    again = run(
        "match", *bots, "--game", "verdant", "--option", "variant=simplified", "--seed", "5",
        "--tc", "20+0.1", "--pgn", str(tmp_path / "again.pgn"),
        "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert again.exit_code == 0, again.output

    # The match's seed decides each game's chance: seeded bots play the same games again.
    def moves(game: GameRecord) -> list[tuple[int | None, str]]:
        return [(turn.actor, turn.token) for turn in game.turns]

    replayed = read_pgn_file(tmp_path / "again.pgn")
    assert [(g.tags["Seed"], moves(g), g.result) for g in replayed] == [
        (g.tags["Seed"], moves(g), g.result) for g in games
    ]
    assert leftover_processes() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "verdant", "--option", "variant=huge"], "variant"),
        (["--option", "turn_limit"], "--option takes KEY=VALUE, not 'turn_limit'"),
        (["--option", "colour=red"], "unknown Ivy option 'colour'"),
        (["--game", "chess"], "unknown game 'chess'"),
    ],
)
def test_bad_game_settings_are_one_error_line_before_any_bot_runs(
    tmp_path: Path, args: list[str], message: str
) -> None:
    pgn = tmp_path / "m.pgn"
    result = run("match", "no-such-bot", "no-such-bot", *args, "--pgn", str(pgn))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert not pgn.exists()


def test_a_match_needs_as_many_bots_as_the_game_has_players(tmp_path: Path) -> None:
    result = run("match", PASS_BOT, PASS_BOT, PASS_BOT, "--pgn", str(tmp_path / "m.pgn"))
    assert result.exit_code == 1
    assert result.stderr == "Error: ivy is played by 2 players, not 3\n"


def test_play_verdant_against_a_bot_in_its_notation(tmp_path: Path) -> None:
    pgn = tmp_path / "played.pgn"
    typed = "help\nnowhere\neast\nquit\n"
    completed = subprocess.run(
        [sys.executable, "-m", "referee.cli", "play", VERDANT_RANDOM, "--game", "verdant",
         "--as", "2", "--seed", "3", "--no-color", "--sandbox", "off", "--pgn", str(pgn)],
        input=typed, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert out.startswith("You play Seat 2 against bots.verdant.random. ")
    assert "Chance: " in out and "bots.verdant.random plays " in out
    assert "Not a legal turn: " in out
    assert "Stopped; the game is left unfinished." in out
    (game,) = read_pgn_file(pgn)
    assert game.result == "*" and game.tags["Seed"] == "3"
    assert [turn.token for turn in game.turns if turn.actor == 1] == ["east"]


# --- openings and the SPRT in a match -----------------------------------------------

OPENINGS = [line for line in Path("examples/openings.txt").read_text().splitlines()[:12]
            if line and not line.startswith("#")][:3]  # fmt: skip


def match_with(tmp_path: Path, *bots: str, args: tuple[str, ...] = ()) -> tuple[Result, Path]:
    pgn = tmp_path / "m.pgn"
    result = run(
        "match", *bots, "--option", "turn_limit=6", "--tc", "5+0.1", *args,
        "--pgn", str(pgn), "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    return result, pgn


def openings_file(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "openings.txt"
    path.write_text("# starts\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_match_plays_each_opening_with_both_colours_in_order(tmp_path: Path) -> None:
    book = openings_file(tmp_path, OPENINGS[:2])
    result, pgn = match_with(
        tmp_path, f"name=one cmd='{PASS_BOT}'", f"name=two cmd='{PASS_BOT}'",
        args=("--openings", str(book)),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    games = read_pgn_file(pgn)  # default: one rotation per opening
    assert [g.tags["FEN"] for g in games] == [OPENINGS[0]] * 2 + [OPENINGS[1]] * 2
    assert all(g.tags["SetUp"] == "1" and verify(g).valid for g in games)
    assert [g.tags["White"] for g in games] == ["one", "two", "one", "two"]
    assert leftover_processes() == []


def test_match_shuffles_openings_by_the_seed_and_keeps_pairs(tmp_path: Path) -> None:
    book = openings_file(tmp_path, OPENINGS)
    orders = []
    for attempt in ("a", "b"):
        (tmp_path / attempt).mkdir()
        result, pgn = match_with(
            tmp_path / attempt, PASS_BOT, PASS_BOT,
            args=("--openings", str(book), "--openings-order", "random", "--seed", "11",
                  "--games", "12"),
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        fens = [g.tags["FEN"] for g in read_pgn_file(pgn)]
        assert fens[0::2] == fens[1::2]  # each opening with both colours, one after the other
        assert sorted(fens[:6]) == sorted(fens[6:]) == sorted(OPENINGS * 2)  # each pass: all
        orders.append(fens)
    assert orders[0] == orders[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--openings-order", "random"), "--openings-order orders the positions of --openings"),
        (("--openings", "BAD"), "opening 2:"),
        (("--openings", "MISSING"), "cannot read openings file"),
        (("--sprt", "elo0=5", "elo1=0"), "SPRT elo0 must be less than elo1"),
        (("--sprt", "elo0=0 elo1=5 model=bayes"), "unknown SPRT model 'bayes'"),
    ],
)
def test_bad_openings_and_sprt_settings_are_one_error_line(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    bad = openings_file(tmp_path, [OPENINGS[0], "not a position"])
    args = tuple({"BAD": str(bad), "MISSING": str(tmp_path / "none.txt")}.get(a, a) for a in args)
    result, pgn = match_with(tmp_path, "no-such-bot", "no-such-bot", args=args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert not pgn.exists()


def test_sprt_needs_two_bots(tmp_path: Path) -> None:
    result = run(
        "match", PASS_BOT, PASS_BOT, PASS_BOT, "--game", "verdant", "--sprt", "elo0=0 elo1=5",
        "--pgn", str(tmp_path / "m.pgn"),
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr == "Error: --sprt tests one bot against another: give 2 bots, not 3\n"


def sprt_lines(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("  SPRT ")]


def test_sprt_stops_a_match_once_h1_is_accepted(tmp_path: Path) -> None:
    book = openings_file(tmp_path, OPENINGS[:1])
    # The words after --sprt are its settings, as fastchess writes them; the bots follow.
    result, pgn = match_with(
        tmp_path, "--sprt", "elo0=0", "elo1=200", "alpha=0.05", "beta=0.05",
        f"name=steady cmd='{PASS_BOT}'", f"name=crashy cmd='{CRASH_BOT}'",
        args=("--openings", str(book)),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = sprt_lines(result)
    assert len(lines) == 7  # one per pair: 14 games of fake wins reach the upper bound
    assert (
        lines[0].startswith("  SPRT LLR ")
        and "(-2.94, 2.94) [0, 200] normalized: continue" in (lines[0])
    )
    assert "Ptnml(0-2) [0, 0, 0, 0, 1]" in lines[0]
    assert "H1 accepted" in lines[-1] and "14 games, Ptnml(0-2) [0, 0, 0, 0, 7]" in lines[-1]
    assert (
        "SPRT elo0=0 elo1=200 alpha=0.05 beta=0.05 model=normalized: H1 accepted after 14 games;"
        in result.stdout
    )
    games = read_pgn_file(pgn)
    assert len(games) == 14 and {g.tags["FEN"] for g in games} == {OPENINGS[0]}
    assert leftover_processes() == []


def test_sprt_accepts_h0_for_a_bot_that_always_loses(tmp_path: Path) -> None:
    result, pgn = match_with(
        tmp_path, CRASH_BOT, PASS_BOT, args=("--sprt", "elo0=0 elo1=400 model=logistic")
    )
    assert result.exit_code == 0, result.output
    assert "[0, 400] logistic: H0 accepted" in sprt_lines(result)[-1]
    assert "model=logistic: H0 accepted after" in result.stdout
    assert len(read_pgn_file(pgn)) == 2 * len(sprt_lines(result))


@pytest.mark.parametrize(
    ("games", "counts"),
    [("2", "2 games, Ptnml(0-2) [0, 0, 0, 0, 1]"), ("1", "1 games, W-L-D +1 -0 =0")],
)
def test_sprt_is_inconclusive_when_the_games_run_out(
    tmp_path: Path, games: str, counts: str
) -> None:
    result, _ = match_with(
        tmp_path, PASS_BOT, CRASH_BOT, args=("--sprt", "elo0=0 elo1=5", "--games", games)
    )
    assert result.exit_code == 0, result.output
    assert len(sprt_lines(result)) == 1 and counts in sprt_lines(result)[0]
    assert f"model=normalized: inconclusive after {games} game" in result.stdout
