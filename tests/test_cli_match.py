"""The ``referee`` commands that run bots: match, play, tournament, ratings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result
from fakebots import FAKEBOTS, leftover_processes

from referee.cli import main
from referee.pgn import read_pgn_file
from referee.replay import verify

PASS_BOT = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
CRASH_BOT = f"{sys.executable} -u {FAKEBOTS / 'misbehave.py'} crash"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_match_prints_each_game_and_the_score(tmp_path: Path) -> None:
    pgn = tmp_path / "out" / "m.pgn"
    result = run(
        "match", f"name=one cmd='{PASS_BOT}'", f"name=two cmd='{PASS_BOT}'",
        "--games", "3", "--turn-limit", "6", "--tc", "5+0.1",
        "--pgn", str(pgn), "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("game 1: one vs two  1/2-1/2  (turn limit 6 reached; 6 turns)")
    assert lines[1].startswith("game 2: two vs one")
    assert "Score of one vs two: 0 - 0 - 3 [0.500] 3, Elo difference: +0.0" in result.stdout
    games = read_pgn_file(pgn)
    assert len(games) == 3 and all(verify(game).valid for game in games)
    assert leftover_processes() == []


def test_match_records_a_crash_as_a_lost_game(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    result = run(
        "match", f"name=crashy cmd='{CRASH_BOT}'", f"name=steady cmd='{PASS_BOT}'",
        "--games", "2", "--turn-limit", "6", "--pgn", str(pgn),
        "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "game 1: crashy vs steady  0-1  (Green (crashy) forfeits: exited (exit code 3)" in (
        result.stdout
    )
    assert "Score of crashy vs steady: 0 - 2 - 0" in result.stdout
    assert [g.tags["Termination"] for g in read_pgn_file(pgn)] == ["abandoned", "abandoned"]


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
        [sys.executable, "-m", "referee.cli", "play", PASS_BOT, "--turn-limit", "8",
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
        "tournament", "--quiet", "--output", str(out), "--turn-limit", "6", "--tc", "5+0.1",
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
