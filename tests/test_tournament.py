"""Tournaments between real (fake) bot processes: settings, resuming after kill -9, concurrency,
faults, stopping, and the ratings of a PGN file."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trio
from fakebots import FAKEBOTS, MARK, leftover_processes

from referee.errors import RecordError
from referee.match import GameResult
from referee.pgn import GameRecord, format_game, read_games, read_pgn_file
from referee.process import BotCommand
from referee.replay import verify
from tournaments.config import ConfigError, Entrant, TournamentConfig, load_config
from tournaments.pairings import Pairing
from tournaments.progress import Progress, QuietProgress
from tournaments.ratings import RatingTable
from tournaments.runner import (
    DATABASE,
    PGN,
    RATINGS_CSV,
    RATINGS_JSON,
    TournamentError,
    ratings_for_pgn,
    run_tournament,
)
from tournaments.store import ResultStore, StoreError

REPO = Path(__file__).resolve().parents[1]
SLOW_BOT = (
    "import sys, time; sys.path.insert(0, sys.argv[1]); from pass_bot import pass_turn, play;"
    " play('slow', lambda request: (time.sleep(0.02), pass_turn(request)))"
)
"""A bot that passes every turn after 20 ms, so that games last long enough to overlap."""

OPENINGS = (
    "./.../...../.#...#./........./........./..#...#../........./........./....#..../"
    "..g.#.p../..g...p.. g 3 4 3",
    "./.../...../.#...#./........./........./..#...#../........./........./..g.#.p../"
    "..g.#.p../..g...p.. g 2 3 3",
)


def bot(kind: str = "pass") -> list[str]:
    """The argv of a fake bot: ``pass``, ``slow`` or a misbehave.py mode."""
    if kind == "pass":
        return [sys.executable, "-u", str(FAKEBOTS / "pass_bot.py")]
    if kind == "slow":
        return [sys.executable, "-u", "-c", SLOW_BOT, str(FAKEBOTS)]
    return [sys.executable, "-u", str(FAKEBOTS / "misbehave.py"), kind]


def entrant(name: str, kind: str = "pass") -> Entrant:
    return Entrant(name, BotCommand(tuple(bot(kind)), env={"REFEREE_TEST_MARK": MARK}))


def config(tmp_path: Path, *kinds: str, **settings: Any) -> TournamentConfig:
    """A fast tournament of fake bots ``p1``, ``p2``, … of these kinds, in ``tmp_path/out``."""
    defaults: dict[str, Any] = {
        "players": [entrant(f"p{n}", kind) for n, kind in enumerate(kinds, start=1)],
        "tc": "0.5+0",
        "startup": 3,
        "turn_limit": 6,
        "concurrency": 2,
        "output": tmp_path / "out",
        "event": "Test",
    }
    return load_config(None, **{**defaults, **settings})


def write_toml(path: Path, kinds: list[str], **settings: Any) -> Path:
    """A tournament file for players of these kinds, other settings as given."""
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    for number, kind in enumerate(kinds, start=1):
        lines += [
            "[[players]]",
            f'name = "p{number}"',
            f"cmd = {json.dumps(bot(kind))}",
            f'env = {{ REFEREE_TEST_MARK = "{MARK}" }}',
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


class Recorder(Progress):
    """Remembers what the runner reported, with trio times for each game."""

    def __init__(self, stop: trio.CancelScope | None = None) -> None:
        self.stop = stop
        """Cancelled when the first game finishes."""
        self.begun: tuple[int, int] | None = None
        self.started: dict[int, float] = {}
        self.intervals: list[tuple[float, float]] = []
        self.results: list[GameResult] = []
        self.live_bots: list[int] = []
        self.closed = False

    def begin(self, *, event: str, total: int, done: int, standings: RatingTable) -> None:
        self.begun = (total, done)

    def game_started(self, pairing: Pairing) -> None:
        self.started[pairing.index] = trio.current_time()
        self.live_bots.append(len(leftover_processes()))

    def game_finished(self, pairing: Pairing, result: GameResult, standings: RatingTable) -> None:
        self.intervals.append((self.started.pop(pairing.index), trio.current_time()))
        self.results.append(result)
        if self.stop is not None:
            self.stop.cancel()

    def close(self) -> None:
        self.closed = True


def stored(out: Path) -> list[Any]:
    with ResultStore.open(out / DATABASE) as store:
        return store.games()


def assert_pgn_matches_store(out: Path) -> list[GameRecord]:
    """The PGN file holds exactly the stored games, each once and whole."""
    games = read_pgn_file(out / PGN)
    assert all(isinstance(game, GameRecord) for game in games), games
    in_file = Counter(format_game(game) for game in games)  # type: ignore[arg-type]
    in_store = Counter(format_game(read_pgn_text(game.pgn)) for game in stored(out))
    assert in_file == in_store
    return games  # type: ignore[return-value]


def read_pgn_text(text: str) -> GameRecord:
    (game,) = read_games(text)
    assert isinstance(game, GameRecord)
    return game


# --- settings ------------------------------------------------------------------


def test_a_tournament_file_is_read_with_paths_relative_to_it(tmp_path):
    (tmp_path / "openings.txt").write_text("# two openings\n\n" + "\n".join(OPENINGS) + "\n")
    path = write_toml(
        tmp_path / "cup.toml",
        ["pass", "pass", "crash"],
        tc="2+0.05",
        turn_limit=40,
        openings="openings.txt",
        format="gauntlet",
    )
    cfg = load_config(path, concurrency=3, tc=None)
    assert cfg.names == ("p1", "p2", "p3")
    assert cfg.openings == OPENINGS and cfg.openings_file == tmp_path / "openings.txt"
    assert str(cfg.tc) == "2+0.05" and cfg.turn_limit == 40 and cfg.concurrency == 3
    assert cfg.output == Path("cup")  # default: named after the file, in the current directory
    schedule = cfg.schedule()
    assert len(schedule) == 2 * 4  # each opponent: two openings, both colours
    assert {p.opening for p in schedule} == set(OPENINGS)
    assert all("p1" in (p.white, p.black) for p in schedule)
    # What decides results is in the snapshot; how fast it runs is not.
    assert cfg.to_json() == load_config(path, concurrency=1, output="elsewhere").to_json()
    assert cfg.to_json() != load_config(path, tc="3+0").to_json()


def test_players_can_be_command_strings_and_are_named_uniquely():
    cfg = load_config(
        None,
        players=["python -m bots.random", "python -m bots.random", "name=g cmd='x --y'"],
    )
    assert cfg.names == ("bots.random", "bots.random-2", "g")
    assert cfg.output == Path("tournament")
    assert cfg.players[2].command.argv == ("x", "--y")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('colour = "green"\n', "unknown key 'colour'"),
        ('tc = "1+0"\n', "no players"),
        ('tc = "fast"\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "bad time control 'fast'"),
        ('[[players]]\nname = "a"\n[[players]]\ncmd = "b"\n', "player 1: cmd is missing"),
        ('[[players]]\ncmd="a"\n[[players]]\ncommand="b"\n', "player 2: unknown key 'command'"),
        ('[[players]]\ncmd = "a"\n', "at least 2 players, not 1"),
        ('[[players]]\nname="x"\ncmd="a"\n[[players]]\nname="x"\ncmd="b"\n', "'x' is given more"),
        ('cycles = "two"\n', "cycles must be a whole number"),
        ('format = "swiss"\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "unknown format"),
        ('turn_limit = 0\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "turn_limit must be"),
        ('openings = "none.txt"\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "cannot read"),
        ('openings = "bad.txt"\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "opening 2:"),
        ("tc = \n", "not valid TOML"),
    ],
)
def test_bad_settings_are_refused_in_one_line(tmp_path, text, message):
    (tmp_path / "bad.txt").write_text(OPENINGS[0] + "\n" + OPENINGS[0].replace("g 3", "p 3") + "\n")
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"^[^\n]+$") as caught:
        load_config(path)
    assert message in str(caught.value)


# --- playing ---------------------------------------------------------------------


async def test_round_robin_plays_every_game_once_and_writes_ratings(tmp_path):
    cfg = config(tmp_path, "pass", "pass", "pass", "pass", games=2)
    progress = Recorder()
    table = await run_tournament(cfg, progress=progress)
    out = cfg.output
    assert progress.begun == (12, 0) and progress.closed
    assert sorted(game.index for game in stored(out)) == list(range(12))
    games = assert_pgn_matches_store(out)
    assert len(games) == 12 and all(verify(game).valid for game in games)
    assert all(game.tags["Event"] == "Test" for game in games)
    pairs = Counter((game.tags["White"], game.tags["Black"]) for game in games)
    assert len(pairs) == 12 and set(pairs.values()) == {1}  # each pairing once with each colour
    assert sum(row.games for row in table.players) == 24
    assert all(row.draws == 6 for row in table.players)  # everyone passes to the turn limit
    ratings = json.loads((out / RATINGS_JSON).read_text())
    assert [p["name"] for p in ratings["players"]] == [row.name for row in table.players]
    assert (out / RATINGS_CSV).read_text().startswith("rank,name,elo")
    # At most two bots per game at once; processes are reused, so few were started.
    assert max(progress.live_bots) <= 2 * cfg.concurrency
    assert len(list((out / "logs").rglob("*.stderr.log"))) < 24
    assert leftover_processes() == []


async def test_openings_are_played_from_their_positions_with_both_colours(tmp_path):
    openings = tmp_path / "openings.txt"
    openings.write_text("\n".join(OPENINGS) + "\n")
    cfg = config(tmp_path, "pass", "pass", openings=openings, turn_limit=8)
    await run_tournament(cfg)
    games = assert_pgn_matches_store(cfg.output)
    assert len(games) == 4
    assert Counter((g.tags["Position"], g.tags["White"]) for g in games) == Counter(
        (opening, white) for opening in OPENINGS for white in ("p1", "p2")
    )
    assert all(g.tags["SetUp"] == "1" and verify(g).valid for g in games)


async def test_games_overlap_at_concurrency_two(tmp_path):
    cfg = config(tmp_path, "slow", "slow", "slow", "slow", concurrency=2)
    progress = Recorder()
    await run_tournament(cfg, progress=progress)
    intervals = sorted(progress.intervals)
    assert len(intervals) == 6
    overlaps = [(a, b) for a, b in itertools.pairwise(intervals) if b[0] < a[1] - 0.05]
    assert overlaps, intervals
    for _, end in intervals:  # never more than two at once
        assert sum(start < end <= finish for start, finish in intervals) <= 2


async def test_crashing_and_hanging_bots_lose_and_the_tournament_goes_on(tmp_path):
    cfg = config(tmp_path, "pass", "crash", "timeout", tc="0.3+0", games=2)
    table = await run_tournament(cfg)
    games = stored(cfg.output)
    assert len(games) == 6
    faults = {"p2": "abandoned", "p3": "time forfeit"}
    for game in games:
        # The first faulty bot asked for a turn loses: Green (White) moves first.
        loser = game.white if game.white in faults else game.black
        assert game.termination == faults[loser]
        assert game.result == ("0-1" if loser == game.white else "1-0")
    assert table.player("p1").score == 4
    assert table.player("p2").score == table.player("p3").score == 1
    # A crashed bot is started afresh for its next game.
    crashes = sum(game.termination == "abandoned" for game in games)
    assert len(list((cfg.output / "logs").rglob("p2-*.stderr.log"))) >= crashes == 3
    assert leftover_processes() == []


async def test_a_finished_tournament_run_again_plays_nothing(tmp_path):
    cfg = config(tmp_path, "pass", "pass", games=2)
    first = await run_tournament(cfg)
    progress = Recorder()
    again = await run_tournament(
        config(tmp_path, "pass", "pass", games=2, concurrency=1), progress=progress
    )
    assert progress.begun == (2, 2) and progress.started == {} and progress.intervals == []
    assert again == first
    assert len(assert_pgn_matches_store(cfg.output)) == 2


async def test_other_settings_on_resume_are_refused(tmp_path):
    await run_tournament(config(tmp_path, "pass", "pass"))
    with pytest.raises(StoreError, match=r"other settings .*differs in: time_control"):
        await run_tournament(config(tmp_path, "pass", "pass", tc="0.6+0"))


async def test_a_second_run_of_the_same_tournament_at_once_is_refused(tmp_path):
    cfg = config(tmp_path, "slow", "slow", games=2, turn_limit=30)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_tournament, cfg)
        await trio.sleep(0.3)
        with pytest.raises(TournamentError, match="being run by another process"):
            await run_tournament(cfg)
    assert len(stored(cfg.output)) == 2


async def test_cancelling_drops_running_games_keeps_finished_ones_and_reaps_every_bot(tmp_path):
    # Round 1 is p1-p4 and p2-p3; the run is cancelled when p1-p4 ends, p3 hanging.
    cfg = config(tmp_path, "slow", "slow", "ignore_sigterm", "slow", tc="5+0")
    with trio.CancelScope() as scope:
        progress = Recorder(stop=scope)
        await run_tournament(cfg, progress=progress)
    assert scope.cancelled_caught and progress.closed
    assert list(progress.started) == [1]  # p2-p3, dropped
    assert leftover_processes() == []
    assert [(game.index, game.white, game.black) for game in stored(cfg.output)] == [
        (0, "p1", "p4")
    ]
    assert_pgn_matches_store(cfg.output)


# --- surviving kill -9 and signals ----------------------------------------------------

RUNNER = (
    "import signal, sys, trio\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from tournaments.config import load_config\n"
    "from tournaments.runner import run_tournament\n"
    "trio.run(run_tournament, load_config(sys.argv[1]))\n"
)


def start_runner(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for_games(out: Path, count: int, runner: subprocess.Popen[bytes]) -> int:
    """Wait until the runner has recorded ``count`` games; return how many it had."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert runner.poll() is None, runner.communicate()
        if (out / DATABASE).exists():
            with sqlite3.connect(out / DATABASE) as db:
                try:
                    (done,) = db.execute("SELECT count(*) FROM games").fetchone()
                except sqlite3.OperationalError:
                    done = 0
            if done >= count:
                return done
        time.sleep(0.02)
    raise AssertionError("the runner recorded too few games in time")


def wait_for_no_leftovers() -> None:
    """Orphaned bots see their stdin end and exit; give them a moment."""
    deadline = time.monotonic() + 5
    while leftover_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftover_processes() == []


async def test_a_tournament_killed_at_any_moment_resumes_without_losing_or_repeating(tmp_path):
    path = write_toml(
        tmp_path / "t.toml",
        ["slow", "slow", "slow", "slow"],
        tc="1+0",
        turn_limit=10,
        games=2,
        concurrency=2,
        output="out",
    )
    out = tmp_path / "out"
    runner = start_runner(path)
    wait_for_games(out, 3, runner)
    runner.kill()
    runner.communicate()
    wait_for_no_leftovers()
    # As if the kill had come in the middle of appending a game:
    with open(out / PGN, "a") as pgn:
        pgn.write('[Event "Test"]\n[Site "?"]\n[Date "2026.')
    recorded = {game.index for game in stored(out)}
    assert 3 <= len(recorded) < 12

    progress = Recorder()
    table = await run_tournament(load_config(path), progress=progress)
    assert progress.begun == (12, len(recorded))
    assert len(progress.results) == 12 - len(recorded)
    assert sorted(game.index for game in stored(out)) == list(range(12))
    games = assert_pgn_matches_store(out)
    assert len(games) == 12
    assert sum(row.games for row in table.players) == 24
    assert leftover_processes() == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_stops_cleanly_and_keeps_finished_games(tmp_path, signum):
    path = write_toml(
        tmp_path / "t.toml",
        ["slow", "slow", "ignore_sigterm", "slow"],  # round 1: p1-p4, p2-p3 (hangs)
        tc="5+0",
        turn_limit=10,
        games=2,
        concurrency=2,
        output="out",
    )
    runner = start_runner(path)
    wait_for_games(tmp_path / "out", 1, runner)
    os.kill(runner.pid, signum)
    _, stderr = runner.communicate(timeout=10)
    assert runner.returncode == 1
    how = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert f"TournamentStopped: stopped by {how} with" in stderr.decode()
    assert leftover_processes() == []  # reaped by the runner, not orphaned
    assert_pgn_matches_store(tmp_path / "out")


# --- ratings of a PGN file -------------------------------------------------------------


def test_ratings_of_a_pgn_file_skip_broken_and_unfinished_games(tmp_path):
    def game(white: str, black: str, result: str) -> str:
        return f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n1. c2 g2 {result}\n\n'

    path = tmp_path / "games.pgn"
    path.write_text(
        game("a", "b", "1-0")
        + game("b", "c", "1/2-1/2")
        + '[White "a"]\n[Black "c"]\n\n1. c2 &&& 1-0\n\n'
        + game("c", "a", "*")
        + game("a", "?", "1-0")
        + game("c", "a", "0-1")
    )
    rated = ratings_for_pgn(path)
    assert rated.games == 3
    assert [row.name for row in rated.table.players] == ["a", "b", "c"]
    assert rated.table.player("a").wins == 2
    assert len(rated.warnings) == 3
    assert rated.warnings[0].startswith("skipped game 3, line")
    assert "game 5" in rated.warnings[1] and "unfinished" in rated.warnings[2]
    anchored = ratings_for_pgn(path, anchor="b", anchor_elo=1500)
    assert anchored.table.player("b").elo == pytest.approx(1500)


def test_a_pgn_file_without_finished_games_cannot_be_rated(tmp_path):
    path = tmp_path / "empty.pgn"
    path.write_text('[White "a"]\n[Black "b"]\n[Result "*"]\n\n*\n')
    with pytest.raises(RecordError, match="no finished games"):
        ratings_for_pgn(path)


def test_quiet_progress_prints_one_line_per_game(tmp_path):
    lines: list[str] = []
    progress = QuietProgress(lines.append)
    cfg = config(tmp_path, "pass", "crash")
    trio.run(lambda: run_tournament(cfg, progress=progress))
    assert lines[0] == "Test: 1 game"
    assert lines[1].startswith("[1/1] game 1 (round 1): p1 - p2 1-0, Purple (p2) forfeits")
    assert leftover_processes() == []
