"""A ladder of real bot processes (tournaments/ladder/): games, updates mid-run, refusals,
retirement, kill -9 and resume, a damaged registry, and the final phase."""

from __future__ import annotations

import json
import shlex
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from referee.sandbox import sandbox_problem
from tournaments.ladder.entries import retire, write_version
from tournaments.ladder.final import FINAL, run_final
from tournaments.ladder.ladder import LadderError, LadderRun, run_ladder
from tournaments.ladder.registry import REGISTRY, State
from tournaments.ladder.settings import LadderConfig, load_ladder
from tournaments.store import DATABASE, PGN, ResultStore

pytestmark = pytest.mark.slow

GREEDY = "python -m bots.greedy --skill {}"
FAILS = "python -c 'import sys; sys.exit(3)'"


def make_ladder(tmp_path: Path, entrants: dict[str, str]) -> LadderConfig:
    path = tmp_path / "spring.toml"
    path.write_text(
        'event = "Spring"\noutput = "spring"\ntc = "5+0.1"\nconcurrency = 2\nplacement_games = 2\n'
        'scan_interval = 0.2\nsandbox = "off"\n[options]\nturn_limit = 40\n'
    )
    config = load_ladder(path)
    for name, command in entrants.items():
        write_version(config.entries, name, "v1", command, None)
    return config


def stored(config: LadderConfig) -> list[tuple[int, tuple[str, ...]]]:
    with ResultStore.open(config.output / DATABASE, read_only=True) as store:
        return [(game.index, game.players) for game in store.games(pgn=False)]


def pgn_games(config: LadderConfig) -> int:
    return (config.output / PGN).read_text().count("[GameNumber ")


async def test_a_ladder_plays_records_and_publishes_its_games(tmp_path: Path) -> None:
    config = make_ladder(tmp_path, {f"s{n}": GREEDY.format(p) for n, p in enumerate((0.2, 0.6, 1))})
    finished = await run_ladder(config, games=6)
    games = stored(config)
    assert finished.games == len(games) == pgn_games(config) == 6
    assert {name for _, players in games for name in players} == {"s0@v1", "s1@v1", "s2@v1"}
    assert all(len(set(players)) == 2 for _, players in games)
    assert sorted(row.entrant for row in finished.rows) == ["s0", "s1", "s2"]
    index = (config.output / "index.html").read_text()
    for name in ("s0", "s1", "s2"):
        assert f'href="entrants/{name}.html"' in index
    page = (config.output / "entrants" / "s0.html").read_text()
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="rating-chart"' in page
    first = min(number for number, players in games if "s0@v1" in players) + 1
    assert f'href="../games/{first:04d}.html"' in page
    assert (config.output / "games" / f"{first:04d}.html").exists()

    # A damaged registry is moved aside and rebuilt from the entries and the games.
    (config.output / REGISTRY).write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (config.output / f"{REGISTRY}{suffix}").unlink(missing_ok=True)
    warnings: list[str] = []
    run = LadderRun.open(config, warnings.append)
    try:
        assert [v.state for v in run.versions()] == [State.ACTIVE] * 3
        assert run.standings.count == 6
    finally:
        run.close()
    assert len(warnings) == 1 and "is damaged" in warnings[0]
    assert (config.output / f"{REGISTRY}.damaged-1").exists()

    # A damaged store is moved aside and rebuilt from its readable rows and games.pgn.
    database = config.output / DATABASE
    with open(database, "r+b") as file:
        file.seek(4096)
        file.write(b"\xff" * 4096 * 3)
    for suffix in ("-wal", "-shm"):
        (config.output / f"{DATABASE}{suffix}").unlink(missing_ok=True)
    warnings.clear()
    run = LadderRun.open(config, warnings.append)
    try:
        assert run.standings.count == 6
    finally:
        run.close()
    assert "moved aside as results.sqlite.damaged-1" in warnings[0]
    assert stored(config) == games and pgn_games(config) == 6


async def test_an_update_mid_run_replaces_the_old_version_at_once(tmp_path: Path) -> None:
    config = make_ladder(
        tmp_path, {"a": GREEDY.format(0.5), "b": GREEDY.format(0.5), "c": GREEDY.format(0.5)}
    )
    marks: dict[str, int] = {}

    def board(run: LadderRun) -> None:
        if run.standings.count >= 2 and "written" not in marks:
            marks["written"] = run.next_index
            write_version(config.entries, "a", "v2", GREEDY.format(1), None)
            retire(config.entries, "c")
        matched = {v.player for v in run.matched()}
        if "a@v2" in matched and "a@v2" not in marks:
            marks["a@v2"] = run.next_index
        if "c" in run.registry.retired() and "c" not in marks:
            marks["c"] = run.next_index

    await run_ladder(config, games=10, board=board)
    games = stored(config)
    assert {"a@v2", "c"} <= set(marks)
    after_update = [players for index, players in games if index >= marks["a@v2"]]
    assert after_update and all("a@v1" not in players for players in after_update)
    assert any("a@v2" in players for players in after_update)
    assert all("c@v1" not in players for index, players in games if index >= marks["c"])
    index = (config.output / "index.html").read_text()
    assert "a@v2 accepted" in index and "c retired" in index


async def test_a_refused_version_is_one_line_and_the_previous_keeps_playing(
    tmp_path: Path,
) -> None:
    config = make_ladder(tmp_path, {"a": GREEDY.format(0.5), "b": GREEDY.format(0.5)})
    write_version(config.entries, "b", "v2", FAILS, None)
    warnings: list[str] = []
    finished = await run_ladder(config, games=3, warn=warnings.append)
    (refusal,) = [line for line in warnings if "refused" in line]
    assert refusal.startswith("b@v2 refused: exited (exit code 3)")
    assert refusal.endswith("(b@v1 keeps playing)") and "\n" not in refusal
    assert all(set(players) == {"a@v1", "b@v1"} for _, players in stored(config)), stored(config)
    assert {row.player for row in finished.rows} == {"a@v1", "b@v1"}
    assert "b@v2 refused: exited (exit code 3)" in (config.output / "index.html").read_text()
    page = (config.output / "entrants" / "b.html").read_text()
    assert "refused: exited (exit code 3)" in page


async def test_kill_9_then_resume_keeps_every_game_and_version(tmp_path: Path) -> None:
    config = make_ladder(tmp_path, {f"s{n}": GREEDY.format(0.5) for n in range(3)})
    ladder_file = tmp_path / "spring.toml"
    process = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "ladder", str(ladder_file), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:
        database = config.output / DATABASE
        for _ in range(1200):  # bounded: at most about two minutes
            if database.exists():
                with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
                    try:
                        (count,) = db.execute("SELECT count(*) FROM games").fetchone()
                    except sqlite3.OperationalError:
                        count = 0
                if count >= 2:
                    break
            await trio.sleep(0.1)
        else:
            pytest.fail("the ladder recorded no two games")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    before = stored(config)
    assert len(before) >= 2
    finished = await run_ladder(config, games=len(before) + 2)
    after = stored(config)
    assert finished.games == len(after) == len(before) + 2 == pgn_games(config)
    assert after[: len(before)] == before  # nothing recorded was lost or changed
    with ResultStore.open(config.output / DATABASE, read_only=True) as store:
        unfinished = [a for a in store.attempts() if a.abandoned is None]
        assert {a.index for a in unfinished} <= {index for index, _ in after}
    run = LadderRun.open(config, lambda line: None)
    try:
        assert [(v.player, v.state) for v in run.versions()] == [
            (f"s{n}@v1", State.ACTIVE) for n in range(3)
        ]
    finally:
        run.close()


async def test_the_final_freezes_submissions_and_ranks_the_top_k(tmp_path: Path) -> None:
    config = make_ladder(tmp_path, {f"s{n}": GREEDY.format(p) for n, p in enumerate((0, 0.5, 1))})
    finished = await run_ladder(config, games=6)
    top = [row.player for row in finished.rows[:2]]
    tournament, table = await run_final(config, top=2, tables=2)
    assert tournament.names == tuple(top)
    assert tournament.table_games == 2  # 2 tables from a cycle of 1: one game per seat
    ratings = json.loads((config.output / FINAL / "ratings.json").read_text())
    assert sorted(player["name"] for player in ratings["players"]) == sorted(top)
    assert (config.output / FINAL / "ratings.csv").exists()
    assert (config.output / FINAL / "index.html").exists()
    ladder_index = (config.output / "index.html").read_text()
    assert '<a href="final/index.html">' in ladder_index and "submissions frozen" in ladder_index
    assert len(table.players) == 2
    write_version(config.entries, "late", "v1", GREEDY.format(1), None)
    with pytest.raises(LadderError, match="submissions were frozen for the final"):
        await run_ladder(config, games=8)
    again, _ = await run_final(config, top=2, tables=2)  # resumes the same final
    assert again.names == tuple(top)
    run = LadderRun.open(config, lambda line: None)
    try:
        assert "late@v1" not in {v.player for v in run.versions()}  # frozen: not read
    finally:
        run.close()


def test_the_ladder_file_is_checked_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    for text, problem in (
        ("players = []\n", "unknown key 'players' in a ladder file"),
        ("seats = 1\n", "seats must be a whole number of at least 2"),
        ("seats = 3\n", "seats must be 2 for ivy"),
        ("scan_interval = 0\n", "scan_interval must be a number of seconds above 0"),
    ):
        path.write_text(text)
        with pytest.raises(Exception, match=problem) as caught:
            load_ladder(path)
        assert "\n" not in str(caught.value)
        assert str(path) in str(caught.value)


async def test_a_verdant_ladder_seats_its_tables_of_three(tmp_path: Path) -> None:
    path = tmp_path / "verdant.toml"
    path.write_text(
        'game = "verdant"\nseats = 3\noutput = "out"\ntc = "10+0.1"\nconcurrency = 1\n'
        'placement_games = 1\nscan_interval = 0.2\nsandbox = "off"\n'
    )
    config = load_ladder(path)
    for name in "abcd":
        write_version(config.entries, name, "v1", "python -m bots.verdant.greedy", None)
    finished = await run_ladder(config, games=3)
    games = stored(config)
    assert all(len(set(players)) == 3 for _, players in games)
    # Placement first: the fourth entrant is seated by the second table at the latest.
    assert {name for _, players in games[:2] for name in players} == {f"{n}@v1" for n in "abcd"}
    assert len(finished.rows) == 4


def spy(secret: Path) -> str:
    """A bot that fails its start-up check when it can see ``secret``, else plays as
    bots.greedy does."""
    script = (
        f"import os, runpy, sys; sys.exit(3) if os.path.exists({str(secret)!r}) else None;"
        " sys.argv = ['greedy']; runpy.run_module('bots.greedy', run_name='__main__')"
    )
    return shlex.join([sys.executable, "-c", script])


@pytest.mark.skipif(sandbox_problem() is not None, reason="the sandbox is not available here")
async def test_no_sandboxed_bot_sees_another_entrants_folder(tmp_path: Path) -> None:
    make_ladder(tmp_path, {"a": GREEDY.format(0.5)})
    config = load_ladder(tmp_path / "spring.toml", sandbox="on")
    # b's bot fails its start-up check if it can see a's files (unsandboxed, it would).
    write_version(config.entries, "b", "v1", spy(config.entries / "a" / "v1" / "entry.toml"), None)
    warnings: list[str] = []
    with trio.fail_after(120):
        finished = await run_ladder(config, games=2, warn=warnings.append)
    assert [line for line in warnings if "refused" in line] == [], warnings
    assert {row.player for row in finished.rows} == {"a@v1", "b@v1"}
