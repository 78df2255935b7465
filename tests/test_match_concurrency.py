"""``referee match --concurrency N``, ``--recover`` and the engine testers' progress lines.

The bots are deterministic fakes (``tests/fakebots``): ``coin.py``'s result is a fixed
function of its game's opening and seat, so a game plays alike on any process.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fakebots import FAKEBOTS, leftover_processes

from referee.cli import main
from referee.match import MatchOpenings
from referee.pgn import GameRecord, read_pgn_file

REPO = Path(__file__).resolve().parents[1]
PASS_BOT = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
COIN_BOT = f"{sys.executable} -u {FAKEBOTS / 'coin.py'}"
OPENINGS = [
    line
    for line in (REPO / "examples" / "openings.txt").read_text().splitlines()
    if line and not line.startswith("#")
]
HANG_GUARD = 60
"""Seconds after which a test gives up waiting for a process: a guard, never a measure."""


def score_lines(result: Any) -> list[str]:
    """The summary's Score and Elo lines (the CPU cost line differs from run to run)."""
    return [line for line in result.stdout.splitlines() if line.startswith(("Score of", "Elo "))]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def match_args(tmp_path: Path, *more: str, coin: str = COIN_BOT) -> list[str]:
    book = tmp_path / "openings.txt"
    book.write_text("\n".join(OPENINGS) + "\n", encoding="utf-8")
    return [
        "match", f"name=steady cmd='{PASS_BOT}'", f"name=coin cmd='{coin}'",
        "--openings", str(book), "--openings-order", "random", "--seed", "4",
        "--option", "turn_limit=6", "--tc", "5+0.1", "--sandbox", "off",
        "--pgn", str(tmp_path / "m.pgn"), "--log-dir", str(tmp_path / "logs"), *more,
    ]  # fmt: skip


def games_of(pgn: Path) -> list[tuple[dict[str, str], list[str], str]]:
    """Each game's tags (but its date), decisions and result: what a replay of the same
    game has in common with it (the clock comments are the time each bot took)."""
    found = []
    for record in read_pgn_file(pgn):
        assert isinstance(record, GameRecord), record
        tags = {k: v for k, v in record.tags.items() if k != "Date"}
        found.append((tags, [turn.word for turn in record.turns], record.result))
    return found


def game_lines(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith(("game ", "  SPRT"))]


def test_concurrency_2_plays_the_games_serial_play_plays(tmp_path: Path) -> None:
    (tmp_path / "serial").mkdir()
    (tmp_path / "two").mkdir()
    serial = run(*match_args(tmp_path / "serial", "--games", "12"))
    two = run(*match_args(tmp_path / "two", "--games", "12", "--concurrency", "2"))
    assert serial.exit_code == 0 and two.exit_code == 0, (serial.output, two.output)
    games = games_of(tmp_path / "two" / "m.pgn")
    assert games == games_of(tmp_path / "serial" / "m.pgn")
    assert [tags["Round"] for tags, _, _ in games] == [str(n) for n in range(1, 13)]
    assert len({result for _, _, result in games}) > 1  # not all alike
    assert game_lines(two) == game_lines(serial)  # same lines, same order
    assert score_lines(serial) == score_lines(two)
    logs = tmp_path / "two" / "logs"
    assert {path.name for path in logs.iterdir() if path.is_dir()} == {"worker-1", "worker-2"}
    assert leftover_processes() == []


def test_three_seeded_verdant_bots_deal_alike_on_workers(tmp_path: Path) -> None:
    def verdant(folder: Path, *more: str) -> Result:
        folder.mkdir()
        return run(
            "match", PASS_BOT, PASS_BOT, PASS_BOT, "--game", "verdant", "--games", "6",
            "--seed", "9", "--sandbox", "off", "--pgn", str(folder / "v.pgn"),
            "--log-dir", str(folder / "logs"), *more,
        )  # fmt: skip

    serial, three = verdant(tmp_path / "s"), verdant(tmp_path / "c", "--concurrency", "3")
    assert serial.exit_code == 0 and three.exit_code == 0, (serial.output, three.output)
    games = games_of(tmp_path / "c" / "v.pgn")
    assert games == games_of(tmp_path / "s" / "v.pgn") and len(games) == 6
    assert len({tags["Seed"] for tags, _, _ in games}) == 6


def test_an_sprt_on_workers_stops_with_the_serial_verdict(tmp_path: Path) -> None:
    sprt = ("--sprt", "elo0=0 elo1=100")
    (tmp_path / "serial").mkdir()
    (tmp_path / "two").mkdir()
    serial = run(*match_args(tmp_path / "serial", *sprt))
    two = run(*match_args(tmp_path / "two", *sprt, "--concurrency", "2"))
    assert serial.exit_code == 0 and two.exit_code == 0, (serial.output, two.output)
    verdict = [line for line in serial.stdout.splitlines() if line.startswith("SPRT elo0=")]
    assert len(verdict) == 1 and "H1 accepted after " in verdict[0]
    assert verdict[0] in two.stdout.splitlines()
    assert game_lines(two) == game_lines(serial)
    counted = int(re.search(r"after (\d+) games", verdict[0])[1])  # type: ignore[index]
    # The PGN holds exactly the pairs the test counted: games past the decision are dropped.
    assert len(games_of(tmp_path / "two" / "m.pgn")) == counted < 100
    assert games_of(tmp_path / "two" / "m.pgn") == games_of(tmp_path / "serial" / "m.pgn")
    assert leftover_processes() == []


def children(pid: int) -> list[int]:
    """The processes ``pid`` started and has not reaped."""
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(FileNotFoundError):
            found += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def wait_for(ready: object, process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not ready():  # type: ignore[operator]
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"the hang guard ran out waiting for {what}"
        time.sleep(0.02)


def wait_for_no_leftovers() -> None:
    """Orphaned bots and workers see their input end and exit; give them a moment."""
    deadline = time.monotonic() + HANG_GUARD
    while leftover_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftover_processes() == []


def test_a_match_killed_on_workers_is_recovered_from_its_pgn(tmp_path: Path) -> None:
    hold = tmp_path / "gate"
    hold.mkdir()
    (hold / "hold").touch()
    # Games 5 and 6 (the third pair) start from an opening no game before them does: they
    # wait at the gate while games 1 to 4 are recorded.
    opening = MatchOpenings(tuple(OPENINGS), "random", 4).start(4, 2)
    assert opening not in {
        MatchOpenings(tuple(OPENINGS), "random", 4).start(k, 2) for k in range(4)
    }
    gate = f"env=HOLD_DIR={hold} env=HOLD_OPENING={hashlib.sha256(opening.encode()).hexdigest()}"
    args = match_args(tmp_path, "--games", "8", "--concurrency", "2", "--tc", "120+1")
    args[2] = f"name=coin cmd='{COIN_BOT}' {gate}"
    pgn = tmp_path / "m.pgn"
    referee = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: len(list(hold.glob("held-*"))) == 2, referee, "two held games")
    wait_for(lambda: pgn.exists() and len(read_pgn_file(pgn)) == 4, referee, "four games")
    assert len(children(referee.pid)) == 2  # its two worker processes
    referee.kill()  # kill -9
    referee.communicate()
    wait_for_no_leftovers()
    assert [r.tags["Round"] for r in read_pgn_file(pgn)] == ["1", "2", "3", "4"]  # type: ignore[union-attr]
    (hold / "hold").unlink()

    recovered = run(*args, "--recover")
    assert recovered.exit_code == 0, recovered.output
    assert f"Recovering the match of {pgn}.plan.json: 4 of its 8 games are in {pgn}" in (
        recovered.stdout
    )
    games = games_of(pgn)
    assert [tags["Round"] for tags, _, _ in games] == [str(n) for n in range(1, 9)]  # once each
    assert "Score of steady vs coin: " in recovered.stdout
    # Games 5 and 6 were begun, and their first attempts seen: each is a second attempt now.
    assert [tags.get("Attempt") for tags, _, _ in games] == [None] * 4 + ["2", "2"] + [None] * 2
    # Else the same games as one uninterrupted run of the same match.
    (tmp_path / "whole").mkdir()
    whole = run(*match_args(tmp_path / "whole", "--games", "8", "--tc", "120+1"))
    assert whole.exit_code == 0, whole.output
    for tags, _, _ in games:
        tags.pop("Attempt", None)
    assert games == games_of(tmp_path / "whole" / "m.pgn")
    assert game_lines(recovered) == game_lines(whole)
    # A finished match recovers to itself: nothing is played again.
    again = run(*args, "--recover")
    assert again.exit_code == 0 and len(games_of(pgn)) == 8, again.output
    assert leftover_processes() == []


def test_recover_refuses_other_settings_and_a_missing_plan(tmp_path: Path) -> None:
    first = run(*match_args(tmp_path, "--games", "2"))
    assert first.exit_code == 0, first.output
    other = run(*match_args(tmp_path, "--games", "4", "--recover"))
    assert other.exit_code == 1
    assert other.stderr.count("\n") == 1 and "(these differ: games)" in other.stderr
    (tmp_path / "m.pgn.plan.json").unlink()
    missing = run(*match_args(tmp_path, "--games", "2", "--recover"))
    assert missing.exit_code == 1 and "nothing to recover: no match plan" in missing.stderr
    assert len(read_pgn_file(tmp_path / "m.pgn")) == 2  # nothing lost


# --- the engine testers' lines ----------------------------------------------------------

# Sample lines from the tools themselves, to check ours against (names and numbers vary).
SAMPLES = {
    # fastchess, app/tests/config_test.cpp (the test of its cutechess-style output)
    "started": "Started game 1 of 10 (engine1 vs engine2)",
    # fastchess, app/src/matchmaking/tournament/roundrobin/roundrobin.cpp (a comment)
    "finished": "Finished game 187 (Engine1 vs Engine2): 0-1 {White loses on time}",
    "score": "Score of Engine1 vs Engine2: 95 - 92 - 0  [0.508] 187",
    # cutechess, projects/lib/src/tournament.cpp: its format string, with numbers put in
    # ("Elo difference: %1 +/- %2, LOS: %3 %, DrawRatio: %4 %")
    "elo": "Elo difference: 11.1 +/- 30.2, LOS: 76.5 %, DrawRatio: 0.0 %",
    # fastchess, app/src/matchmaking/output/output_fastchess.hpp: "Ptnml(0-2): {}" with
    # formatPentaStats's "[{}, {}, {}, {}, {}]" (then its WL/DD ratio, which we leave out)
    "ptnml": "Ptnml(0-2): [4, 20, 50, 21, 5]",
}


def shape(line: str, names: tuple[str, ...]) -> str:
    """``line`` with player names, results, reasons and numbers made placeholders."""
    for name in names:
        line = line.replace(name, "NAME")
    line = re.sub(r"\{[^}]*\}", "{REASON}", line)
    line = re.sub(r"(1-0|0-1|1/2-1/2)", "RESULT", line)
    return re.sub(r"-?(?:inf|nan|\d+(?:\.\d+)?)", "N", line)


def test_cutechess_output_has_the_lines_the_tools_write(tmp_path: Path) -> None:
    result = run(*match_args(tmp_path, "--games", "4", "--output", "cutechess",
                             "--ratinginterval", "2"))  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    ours = ("steady", "coin")
    theirs = ("Engine1", "Engine2", "engine1", "engine2")
    kinds = {
        "started": "Started game ",
        "finished": "Finished game ",
        "score": "Score of ",
        "elo": "Elo difference: ",
        "ptnml": "Ptnml(0-2): ",
    }
    for kind, start in kinds.items():
        found = [line for line in lines if line.startswith(start)]
        assert found, kind
        for line in found:
            assert shape(line, ours) == shape(SAMPLES[kind], theirs), line
    started = [line for line in lines if line.startswith("Started game ")]
    assert started == [
        "Started game 1 of 4 (steady vs coin)",
        "Started game 2 of 4 (coin vs steady)",
        "Started game 3 of 4 (steady vs coin)",
        "Started game 4 of 4 (coin vs steady)",
    ]
    finished = [line for line in lines if line.startswith("Finished game ")]
    assert [line.split(" (")[0] for line in finished] == [f"Finished game {n}" for n in range(1, 5)]
    # After each game, its Score line; every 2 games, the Elo difference and the pairs.
    after_second = lines[lines.index(finished[1]) + 1 : lines.index(finished[1]) + 4]
    assert [line.split(":")[0] for line in after_second] == [
        "Score of steady vs coin",
        "Elo difference",
        "Ptnml(0-2)",
    ]
    # cutechess's own clop-cutechess-cli.py reads a result so: ": 1-0" in "Finished game".
    assert all(re.search(r": (1-0|0-1|1/2-1/2) \{", line) for line in finished)


def test_referee_output_prints_the_ratings_every_n_games(tmp_path: Path) -> None:
    result = run(*match_args(tmp_path, "--games", "4", "--ratinginterval", "2"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[2:5]] == [
        "Score of steady vs coin",
        "Elo difference",
        "Ptnml(0-2)",
    ]
    assert lines[-4].startswith("Score of steady vs coin: ") and "Started game" not in result.stdout


@pytest.mark.parametrize("flag", ["--concurrency", "--ratinginterval"])
def test_bad_counts_are_usage_errors(tmp_path: Path, flag: str) -> None:
    result = run(*match_args(tmp_path, flag, "-1"))
    assert result.exit_code == 2 and not (tmp_path / "m.pgn").exists()


def test_rounds_and_each_are_fastchess_words_for_games_and_settings(tmp_path: Path) -> None:
    args = match_args(tmp_path, "--rounds", "3", "--each", "tc=7+0.2", "startup=4", "margin=0.3")
    del args[args.index("--tc") : args.index("--tc") + 2]  # --each gives it
    result = run(*args)
    assert result.exit_code == 0, result.output
    games = games_of(tmp_path / "m.pgn")
    assert len(games) == 6  # 3 rounds of the 2 bots' rotation: 3 game pairs
    assert {tags["TimeControl"] for tags, _, _ in games} == {"7+0.2"}
    assert [tags["FEN"] for tags, _, _ in games][::2] == [tags["FEN"] for tags, _, _ in games][1::2]


@pytest.mark.parametrize(
    ("more", "error"),
    [
        (("--rounds", "2", "--games", "4"), "--rounds N plays N rotations of the seats"),
        (("--each", "tc=1+0.1"), "--each tc= and --tc"),
        (("--each", "startup=1 startup=2"), "(or a second startup=)"),
        (("--each", "hash=16"), "--each takes tc=…, startup=…, margin=…, not 'hash=16'"),
        (("--each", "margin=-1"), "--each margin= is seconds, 0 or more, not '-1'"),
    ],
)
def test_bad_rounds_and_each_are_one_error_line(
    tmp_path: Path, more: tuple[str, ...], error: str
) -> None:
    result = run(*match_args(tmp_path, *more))
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.output
    assert error in result.stderr and not (tmp_path / "m.pgn").exists()


def test_a_seeded_game_begun_and_not_recorded_is_dealt_afresh(tmp_path: Path) -> None:
    """--recover plays a game the plan says was begun as its next attempt, with that
    attempt's seed: what the killed attempt dealt is never dealt again."""
    from referee.games import game_seed
    from referee.match import read_plan, write_plan

    args = [
        "match", PASS_BOT, PASS_BOT, PASS_BOT, "--game", "verdant", "--games", "3",
        "--seed", "9", "--sandbox", "off", "--pgn", str(tmp_path / "v.pgn"),
        "--log-dir", str(tmp_path / "logs"),
    ]  # fmt: skip
    assert run(*args).exit_code == 0
    plan = read_plan(tmp_path / "v.pgn")
    assert plan.begun == {0: 1, 1: 1, 2: 1}
    # As if the run had been killed during game 3: its record missing, its attempt begun.
    records = (tmp_path / "v.pgn").read_text().split("[Event ")
    (tmp_path / "v.pgn").write_text("[Event ".join(records[:-1]))
    write_plan(tmp_path / "v.pgn", plan)
    recovered = run(*args, "--recover", "--concurrency", "2")
    assert recovered.exit_code == 0, recovered.output
    games = games_of(tmp_path / "v.pgn")
    assert [tags.get("Attempt") for tags, _, _ in games] == [None, None, "2"]
    assert games[2][0]["Seed"] == str(game_seed(9, 2, 2)) != str(game_seed(9, 2, 1))
    assert read_plan(tmp_path / "v.pgn").begun == {0: 1, 1: 1, 2: 2}
