"""A closed standard output (``referee … | head -1``) ends every command quietly, with
exit code 141, and a tournament so stopped keeps its games and resumes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakebots import FAKEBOTS, MARK, leftover_processes

from referee.cli import PIPE_CLOSED
from tournaments.runner import DATABASE
from tournaments.store import ResultStore

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
HANG_GUARD = 120
"""Seconds after which a test gives up waiting for a command: a guard, never a measure."""

PASS_BOT = [sys.executable, "-u", str(FAKEBOTS / "pass_bot.py")]


def referee(*args: str | os.PathLike[str]) -> list[str]:
    return [sys.executable, "-m", "referee.cli", *map(str, args)]


def tournament_file(path: Path, players: int, *, remote: bool = False) -> Path:
    """A quick tournament of ``players`` passing fake bots (and a remote player)."""
    lines = ['event = "Pipe"', 'tc = "5+0"', "concurrency = 1", "games = 1"]
    lines += ["[options]", "turn_limit = 4"]
    for number in range(1, players + 1):
        lines += [
            "[[players]]",
            f'name = "p{number}"',
            f"cmd = {json.dumps(PASS_BOT)}",
            f'env = {{ REFEREE_TEST_MARK = "{MARK}" }}',
        ]
    if remote:
        lines += ["[[players]]", 'name = "alice"', "remote = true"]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_unread(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command whose standard output is a pipe nobody reads any more."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=HANG_GUARD,
        )
    finally:
        os.close(write)


def games_in(out: Path) -> list[int]:
    with ResultStore.open(out / DATABASE) as store:
        return [game.index for game in store.games()]


RATED = "".join(
    f'[Event "e"]\n[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n{result}\n\n'
    for white, black, result in [("a", "b", "1-0"), ("b", "a", "1/2-1/2"), ("a", "c", "0-1")]
)
"""Finished games, read by their tags alone (``referee ratings``)."""

BOT = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
COMMANDS = {
    "replay": ["replay", DATA / "mixed.pgn"],
    "show": ["show", DATA / "spec_example.pgn"],
    "ratings": ["ratings", "rated.pgn"],
    "ratings --json": ["ratings", "rated.pgn", "--json"],
    "view": ["view", DATA / "spec_example.pgn", "-o", "view.html"],
    "match": ["match", BOT, BOT, "--games", "2", "--option", "turn_limit=4", "--pgn", "m.pgn"],
    "play": ["play", BOT],
    "--help": ["--help"],
    "--version": ["--version"],
    "tournament --help": ["tournament", "--help"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_closed_stdout_ends_every_command_quietly(tmp_path: Path, command: str) -> None:
    (tmp_path / "rated.pgn").write_text(RATED)
    done = run_unread(referee(*COMMANDS[command]), tmp_path)
    assert (done.returncode, done.stderr) == (PIPE_CLOSED, "")


def test_a_closed_stdout_ends_serve_quietly_before_it_listens(tmp_path: Path) -> None:
    path = tournament_file(tmp_path / "t.toml", 1, remote=True)
    done = run_unread(referee("serve", path), tmp_path)
    assert (done.returncode, done.stderr) == (PIPE_CLOSED, "")
    assert not (tmp_path / "t" / DATABASE).exists()  # it stopped at its first line


def test_an_error_before_any_output_is_still_reported(tmp_path: Path) -> None:
    done = run_unread(referee("replay", tmp_path / "missing.pgn"), tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1


def test_a_tournament_read_by_head_stops_quietly_keeps_its_games_and_resumes(
    tmp_path: Path,
) -> None:
    path = tournament_file(tmp_path / "t.toml", 4)  # 6 games, one line each
    out = tmp_path / "t"
    child = subprocess.Popen(
        referee("tournament", path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.stdout is not None and child.stderr is not None
    heading, first = child.stdout.readline(), child.stdout.readline()  # head -2
    child.stdout.close()
    child.wait(timeout=HANG_GUARD)
    stderr = child.stderr.read()
    child.stderr.close()
    assert heading == "Pipe: 6 games\n" and first.startswith("[1/6] game 1 (round 1): ")
    assert (child.returncode, stderr) == (PIPE_CLOSED, "")
    kept = games_in(out)
    assert 1 <= len(kept) < 6 and kept == sorted(set(kept))
    assert leftover_processes() == []
    again = subprocess.run(
        referee("tournament", path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=HANG_GUARD,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"Pipe: 6 games, {len(kept)} already played\n")
    assert sorted(games_in(out)) == list(range(6))
