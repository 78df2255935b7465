"""Tournaments between real (fake) bot processes: settings checked before anything is saved,
the preflight, resuming after kill -9, records checked and repaired at every start, the
referee's own faults, concurrency, stopping, and the ratings of a PGN file."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from fakebots import FAKEBOTS, MARK, leftover_processes, stop_stranded_sandboxes
from rich.console import Console

import tournaments.runner
import tournaments.workers
from referee.errors import RecordError, RefereeFault
from referee.games import game_seed
from referee.match import GameResult
from referee.pgn import GameRecord, format_game, read_games, read_pgn_file
from referee.preflight import PreflightError
from referee.process import BotCommand
from referee.replay import replay, verify
from tournaments.config import ConfigError, Entrant, TournamentConfig, load_config
from tournaments.pairings import MAX_GAMES, Pairing
from tournaments.progress import LiveProgress, Progress, QuietProgress
from tournaments.ratings import RatingTable
from tournaments.recovery import UNFINISHED
from tournaments.runner import (
    DATABASE,
    LOST_ATTEMPTS,
    PGN,
    RATINGS_CSV,
    RATINGS_JSON,
    TournamentError,
    concurrency_limit,
    ratings_for_pgn,
    run_tournament,
)
from tournaments.store import ResultStore, StoreError
from tournaments.workers import GameDone, GameJob, GameLost, Pool, Work, process_pool, task_pool

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
        "options": {"turn_limit": 6},
        "concurrency": 2,
        "output": tmp_path / "out",
        "event": "Test",
    }
    return load_config(None, **{**defaults, **settings})


def write_toml(path: Path, kinds: list[str], **settings: Any) -> Path:
    """A tournament file for players of these kinds, other settings as given (a dict as a
    table: ``options={"turn_limit": 4}`` is ``[options]``)."""
    tables = {key: value for key, value in settings.items() if isinstance(value, dict)}
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items() if key not in tables]
    for key, table in tables.items():
        lines += [f"[{key}]", *(f"{name} = {json.dumps(value)}" for name, value in table.items())]
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
    """Remembers what the runner reported: which games ran, and how many at once."""

    def __init__(self, stop: trio.CancelScope | None = None) -> None:
        self.stop = stop
        """Cancelled when the first game finishes."""
        self.begun: tuple[int, int] | None = None
        self.has_begun = trio.Event()
        self.started: set[int] = set()
        self.finished: list[int] = []
        self.most_at_once = 0
        self.results: list[GameDone] = []
        self.closed = False

    def begin(self, *, event: str, total: int, done: int, standings: RatingTable) -> None:
        self.begun = (total, done)
        self.has_begun.set()

    def game_started(self, pairing: Pairing) -> None:
        self.started.add(pairing.index)
        self.most_at_once = max(self.most_at_once, len(self.started))

    def game_finished(self, pairing: Pairing, result: GameDone, standings: RatingTable) -> None:
        self.started.remove(pairing.index)
        self.finished.append(pairing.index)
        self.results.append(result)
        if self.stop is not None:
            self.stop.cancel()

    def close(self) -> None:
        self.closed = True


def stored(out: Path) -> list[Any]:
    with ResultStore.open(out / DATABASE) as store:
        return store.games()


def true_games(path: Path) -> Counter[str]:
    """The games of a PGN file that replay to their result, as text, with their counts."""
    if not path.exists():
        return Counter()
    return Counter(
        format_game(game)
        for game in read_pgn_file(path)
        if isinstance(game, GameRecord) and verify(game).valid
    )


def start_position(game: GameRecord) -> str:
    """The position a recorded game starts from, as its game writes positions."""
    played = replay(game)
    return played.game.notation(played.states[0])


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
        options={"turn_limit": 40},
        openings="openings.txt",
        format="gauntlet",
    )
    cfg = load_config(path, concurrency=3, tc=None)
    assert cfg.names == ("p1", "p2", "p3")
    assert cfg.openings == OPENINGS and cfg.openings_file == tmp_path / "openings.txt"
    assert str(cfg.tc) == "2+0.05" and cfg.concurrency == 3
    assert cfg.rule_options == {"turn_limit": 40} and cfg.seats == 2
    assert cfg.output == Path("cup")  # default: named after the file, in the current directory
    schedule = cfg.schedule()
    assert len(schedule) == 2 * 4  # each opponent: two openings, both colours
    assert {p.opening for p in schedule} == set(OPENINGS)
    assert all("p1" in p.players for p in schedule)
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
        ('format = "arena"\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "unknown format"),
        ('[options]\nturn_limit = 0\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "turn_limit"),
        (
            "turn_limit = 50\n",
            "'turn_limit' is an option of the game ivy: write it under [options]",
        ),
        ("[options]\nturn_limit = [1]\n", "option 'turn_limit' must be a string, a number or"),
        ('[options]\nlimit = 2\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "unknown Ivy"),
        ('players_per_table = 3\n[[players]]\ncmd="a"\n[[players]]\ncmd="b"\n', "must be 2 for"),
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


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("two\nlines", "holds '\\n'"),
        ("?", "'?' means 'unknown'"),
        ("x" * 300, "300 characters long, more than 64"),
        ('say "hi"', "holds '\"'"),
        ("back\\slash", "holds '\\\\'"),
        ("bidi\u202eevil", "holds '\\u202e'"),
        ("esc\x1b[31m", "holds '\\x1b'"),
        (" padded", "starts or ends with a space"),
    ],
)
def test_names_pgn_cannot_carry_are_refused_before_anything_is_created(tmp_path, name, message):
    players = [Entrant(name, BotCommand(tuple(bot()))), entrant("fine")]
    with pytest.raises(ConfigError, match=r"^player name [^\n]+$") as caught:
        config(tmp_path, players=players)
    assert message in str(caught.value)
    with pytest.raises(ConfigError, match=r"^event "):
        config(tmp_path, "pass", "pass", event='Cup\n[Result "1-0"]')
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"startup": float("nan")},
            "startup must be a number of seconds from 0 to 1000000, not nan",
        ),
        ({"margin": float("inf")}, "margin must be a number of seconds from 0 to 1000000, not inf"),
        ({"startup": -1}, "startup must be a number of seconds"),
        ({"tc": "9" * 400}, "base must be a number of seconds from 0 to 1000000, not inf"),
        ({"tc": "1+2000000"}, "increment must be a number of seconds"),
        ({"options": {"turn_limit": 10**7}}, "turn_limit must be a whole number from 1 to 1000000"),
        ({"seed": 2**70}, "seed must be from"),
        ({"games": 10**15 + 1}, "more than the 1,000,000,000,000,000 a tournament may"),
        ({"games": 0}, "games per pairing must be at least 1"),
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"output": ""}, "output must be a path, not an empty string"),
        ({"openings": ""}, "openings must be a path, not an empty string"),
    ],
)
def test_numbers_and_paths_out_of_range_are_refused_in_one_line(tmp_path, settings, message):
    with pytest.raises(ConfigError, match=r"^[^\n]+$") as caught:
        config(tmp_path, "pass", "pass", **settings)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("startup = nan", "startup must be a number of seconds from 0 to 1000000, not nan"),
        ("margin = inf", "margin must be a number of seconds from 0 to 1000000, not inf"),
        ('output = ""', "output must be a path, not an empty string"),
        ("games = 1_000_000_000_000_001", "would hold 1,000,000,000,000,002 games"),
    ],
)
def test_a_tournament_file_is_held_to_the_same_ranges(tmp_path, line, message):
    path = write_toml(tmp_path / "t.toml", ["pass", "pass"])
    path.write_text(line + "\n" + path.read_text())
    with pytest.raises(ConfigError, match=r"^[^\n]+$") as caught:
        load_config(path)
    assert message in str(caught.value)


def test_files_that_are_not_utf8_are_refused_in_one_line(tmp_path):
    path = write_toml(tmp_path / "t.toml", ["pass", "pass"])
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'event = "Caf\xe9"\n' + path.read_bytes())
    with pytest.raises(
        ConfigError, match=r"latin.toml: not UTF-8 text \(byte 0xe9 at offset 12\)$"
    ):
        load_config(latin)
    openings = tmp_path / "openings.txt"
    openings.write_bytes(OPENINGS[0].encode() + b"\n# caf\xe9\n")
    with pytest.raises(ConfigError, match=r"openings.txt is not UTF-8 text \(byte 0xe9"):
        load_config(path, openings=openings)


def test_a_trillion_game_schedule_is_made_at_once_in_constant_memory(tmp_path):
    cfg = config(tmp_path, "pass", "pass", "pass", games=10**12)
    schedule = cfg.schedule()
    assert len(schedule) == 3 * 10**12 < MAX_GAMES
    last = schedule[-1]
    assert (last.index, last.round) == (3 * 10**12 - 1, 3)
    assert schedule[10**12 + 7] == Pairing(index=10**12 + 7, round=2, players=("p2", "p1"))
    assert json.loads(cfg.to_json())["games"] == 10**12


def verdant_entrant(name: str, module: str, *args: str) -> Entrant:
    """A bundled Verdant bot (``bots.verdant.<module>``) as a player."""
    argv = (sys.executable, "-m", f"bots.verdant.{module}", *args)
    return Entrant(name, BotCommand(argv, env={"REFEREE_TEST_MARK": MARK}))


VERDANT_PLAYERS = [
    verdant_entrant("r1", "random", "--seed", "1"),
    verdant_entrant("r2", "random", "--seed", "2"),
    verdant_entrant("g", "greedy"),
]


def verdant(tmp_path: Path, count: int = 3, **settings: Any) -> TournamentConfig:
    """A Verdant tournament of the first ``count`` of :data:`VERDANT_PLAYERS` (and more
    random bots beyond three)."""
    extra = [verdant_entrant(f"x{n}", "random") for n in range(3, count)]
    defaults: dict[str, Any] = {
        "players": [*VERDANT_PLAYERS, *extra][:count],
        "game": "verdant",
        "tc": "30+1",
        "concurrency": 2,
        "output": tmp_path / "out",
        "event": "Verdant",
        "seed": 11,
    }
    return load_config(None, **{**defaults, **settings})


def test_players_per_table_defaults_to_everyone_at_one_table_up_to_the_games_most(tmp_path):
    assert verdant(tmp_path).seats == 3
    assert verdant(tmp_path, count=7).seats == 5  # Verdant seats 1 to 5
    assert verdant(tmp_path, players_per_table=2).seats == 2
    assert config(tmp_path, "pass", "pass", "pass").seats == 2  # Ivy seats two, always
    four = verdant(tmp_path, count=4, players_per_table=3).schedule()
    assert len(four) == 4 * 3 and {len(p.players) for p in four} == {3}
    solo = verdant(tmp_path, count=1)
    assert solo.seats == 1 and [p.players for p in solo.schedule()] == [("r1",)]


def test_game_options_are_checked_by_the_game_and_given_ones_are_in_the_snapshot(tmp_path):
    cfg = verdant(tmp_path, options={"variant": "advanced"})
    assert cfg.rule_options == {"variant": "advanced"}
    assert cfg.match_config().options == {"variant": "advanced"}
    snapshot = json.loads(cfg.to_json())
    assert snapshot["options"] == {"variant": "advanced"} and snapshot["players_per_table"] == 3
    assert json.loads(verdant(tmp_path).to_json())["options"] == {}
    # Text (from --option KEY=VALUE) and TOML values are the same option once checked.
    assert json.loads(config(tmp_path, "pass", "pass", options={"turn_limit": "40"}).to_json())[
        "options"
    ] == {"turn_limit": 40}
    assert "players_per_table" not in json.loads(config(tmp_path, "pass", "pass").to_json())
    path = write_toml(tmp_path / "t.toml", ["pass", "pass"], options={"turn_limit": 40})
    assert load_config(path, options={"turn_limit": "50"}).rule_options == {"turn_limit": 50}


def test_each_games_seed_is_derived_from_the_tournament_seed_and_its_index(tmp_path):
    cfg = verdant(tmp_path, seed=-3)
    assert [cfg.game_seed(index) for index in range(3)] == [game_seed(-3, i) for i in range(3)]
    assert len({verdant(tmp_path, seed=seed).game_seed(0) for seed in (-3, 3)}) == 2


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"players_per_table": 6}, "players_per_table must be 1 to 5 for verdant"),
        ({"players_per_table": 0}, "players_per_table must be 1 to 5 for verdant"),
        ({"players_per_table": 4}, "tables of 4 need at least 4 players, not 3"),
        ({"format": "gauntlet", "players_per_table": 1}, "a gauntlet needs tables of at least 2"),
        ({"options": {"variant": "huge"}}, "variant"),
        ({"options": {"colour": "red"}}, "colour"),
        ({"options": {"variant": ["a"]}}, "option 'variant' must be a string, a number or"),
        ({"players_per_table": "3"}, "players_per_table must be a whole number"),
    ],
)
def test_tables_are_checked_in_one_line(tmp_path, settings, message):
    with pytest.raises(ConfigError, match=r"^[^\n]+$") as caught:
        verdant(tmp_path, **settings)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("games", "played", "line"),
    [
        (None, 3, None),
        (1, 1, None),
        (3, 3, None),
        (
            4,
            6,
            "4 games per table rounded up to 6, a multiple of the 3 seats,"
            " so that each player sits each seat equally often",
        ),
    ],
)
def test_a_tables_games_are_rounded_up_to_whole_rotations(tmp_path, games, played, line):
    cfg = verdant(tmp_path, games=games)
    assert len(cfg.schedule()) == played
    assert cfg.rounding() == line
    seated = Counter((seat, p.players[seat]) for p in cfg.schedule() for seat in range(3))
    assert len(seated) == (3 if played == 1 else 9)  # each player in each seat
    if games is not None:  # the rounded count is the one stored: --games 6 resumes it
        assert json.loads(cfg.to_json())["games"] == played


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
    # Bot processes are reused between games, so far fewer than two per game were started.
    assert len(list((out / "logs").rglob("*.stderr.log"))) < 24
    assert sorted(int(game.tags["GameNumber"]) for game in games) == list(range(1, 13))
    assert leftover_processes() == []


async def test_openings_are_played_from_their_positions_with_both_colours(tmp_path):
    openings = tmp_path / "openings.txt"
    openings.write_text("\n".join(OPENINGS) + "\n")
    cfg = config(tmp_path, "pass", "pass", openings=openings, options={"turn_limit": 8})
    await run_tournament(cfg)
    games = assert_pgn_matches_store(cfg.output)
    assert len(games) == 4
    assert Counter((start_position(g), g.tags["White"]) for g in games) == Counter(
        (opening, white) for opening in OPENINGS for white in ("p1", "p2")
    )
    assert all(verify(g).valid for g in games)


class CountingPool:
    """A pool of worker processes that counts the games it plays at once."""

    def __init__(self, pool: Pool) -> None:
        self.pool, self.slots = pool, pool.slots
        self.playing = self.most = 0

    async def check(self, names: tuple[str, ...], start: str | None) -> None:
        await self.pool.check(names, start)

    async def play(self, slot: int, job: GameJob) -> GameDone:
        self.playing += 1
        self.most = max(self.most, self.playing)
        try:
            return await self.pool.play(slot, job)
        finally:
            self.playing -= 1


async def test_games_overlap_at_concurrency_two_and_never_more(tmp_path):
    # Each game needs many round trips to bot processes; while one waits on them, the
    # other worker plays its game. No clock is read: the pool counts.
    cfg = config(tmp_path, "slow", "slow", "slow", "slow", concurrency=2, games=1)
    counted: list[CountingPool] = []

    @contextlib.asynccontextmanager
    async def counting(work: Work, slots: int) -> AsyncIterator[CountingPool]:
        async with process_pool(work, slots) as pool:
            counted.append(CountingPool(pool))
            yield counted[-1]

    progress = Recorder()
    await run_tournament(cfg, progress=progress, pool=counting)
    assert len(progress.results) == 6
    (pool,) = counted
    assert pool.most == 2


async def test_crashing_and_hanging_bots_lose_and_the_tournament_goes_on(tmp_path):
    cfg = config(tmp_path, "pass", "crash", "timeout", tc="0.3+0", games=2)
    table = await run_tournament(cfg)
    games = stored(cfg.output)
    assert len(games) == 6
    faults = {"p2": "abandoned", "p3": "time forfeit"}
    for game in games:
        # The first faulty bot asked for a turn loses: Green (White) moves first.
        white, black = game.players
        loser = white if white in faults else black
        assert game.termination == faults[loser]
        assert game.result == ("0-1" if loser == white else "1-0")
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
    assert progress.begun == (2, 2) and progress.started == set() and progress.results == []
    assert again == first
    assert len(assert_pgn_matches_store(cfg.output)) == 2


async def test_a_run_keeps_the_site_and_a_resumed_run_writes_the_pages_it_lacks(tmp_path):
    cfg = config(tmp_path, "pass", "pass", games=2)
    await run_tournament(cfg)
    out = cfg.output
    pages = sorted(path.name for path in (out / "games").iterdir())
    assert pages == ["0001.html", "0002.html"]
    index = (out / "index.html").read_text()
    assert "2 of 2 games played" in index and 'http-equiv="refresh"' not in index
    (out / "games" / "0002.html").unlink()  # a run killed before writing its last page
    (out / "index.html").unlink()
    await run_tournament(config(tmp_path, "pass", "pass", games=2))
    assert (out / "games" / "0002.html").exists() and (out / "index.html").exists()


async def test_other_settings_on_resume_are_refused(tmp_path):
    await run_tournament(config(tmp_path, "pass", "pass"))
    with pytest.raises(StoreError, match=r"other settings .*differs in: time_control"):
        await run_tournament(config(tmp_path, "pass", "pass", tc="0.6+0"))


async def test_a_second_run_of_the_same_tournament_at_once_is_refused(tmp_path):
    cfg = config(tmp_path, "slow", "slow", games=2, options={"turn_limit": 30})
    first = Recorder()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_tournament(cfg, progress=first))
        await first.has_begun.wait()  # the first run holds the lock from before it begins
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
    # p2-p3 was dropped, and so was the game p1-p4's worker took at once (if it did).
    assert 1 in progress.started and progress.started <= {1, 2}
    assert leftover_processes() == []
    assert [(game.index, game.players) for game in stored(cfg.output)] == [(0, ("p1", "p4"))]
    assert_pgn_matches_store(cfg.output)


async def test_a_verdant_table_of_three_bundled_bots_plays_every_seat(tmp_path):
    cfg = verdant(tmp_path)
    progress = Recorder()
    table = await run_tournament(cfg, progress=progress)
    out = cfg.output
    games = assert_pgn_matches_store(out)
    assert len(games) == 3 and all(verify(game).valid for game in games)
    seats = Counter((game.tags[f"Seat{seat}"], seat) for game in games for seat in (1, 2, 3))
    assert seats == {(name, seat): 1 for name in ("r1", "r2", "g") for seat in (1, 2, 3)}
    for game in games:
        index = int(game.tags["GameNumber"]) - 1
        assert game.tags["Seed"] == str(cfg.game_seed(index))
        assert game.result == game.tags["Places"]  # 3 seats: the Result is the places
    rows = {row.index: row for row in stored(out)}
    for result in progress.results:
        row = next(r for r in rows.values() if r.players == result.game.players)
        assert (row.places, row.scores) == (result.game.places, result.game.scores)
    assert table.kind == "tables" and sum(row.games for row in table.players) == 9
    points = sum(score for row in rows.values() for score in row.scores)
    assert sum(row.points for row in table.players) == points
    ratings = json.loads((out / RATINGS_JSON).read_text())
    assert ratings["kind"] == "tables"
    assert {p["name"]: p["mean_place"] for p in ratings["players"]} == {
        row.name: round(row.mean_place, 2) for row in table.players
    }
    assert ratings_for_pgn(out / PGN).table == table  # the ratings command reads the same
    again = Recorder()
    assert await run_tournament(cfg, progress=again) == table
    assert again.begun == (3, 3) and again.results == []
    assert leftover_processes() == []


# --- surviving kill -9 and signals ----------------------------------------------------

HANG_GUARD = 60
"""Seconds after which a test that waits for a process gives up: a guard, never a measure."""


def referee_command(*args: str | os.PathLike[str]) -> list[str]:
    """The argv of the ``referee`` command line with ``args``."""
    return [sys.executable, "-m", "referee.cli", *map(str, args)]


def child_env() -> dict[str, str]:
    """The environment of a referee started by a test: this checkout importable."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


def start_cli(
    *args: str | os.PathLike[str], cwd: Path, preexec: Callable[[], None] | None = None
) -> subprocess.Popen[str]:
    """Start ``referee ARGS`` in ``cwd``; its output is text."""
    return subprocess.Popen(
        referee_command(*args),
        cwd=cwd,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
    )


def run_cli(
    *args: str | os.PathLike[str], cwd: Path, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``referee ARGS`` in ``cwd`` to its end."""
    child = start_cli(*args, cwd=cwd, preexec=preexec)
    stdout, stderr = child.communicate(timeout=HANG_GUARD * 2)
    return subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)


def one_error_line(stderr: str) -> str:
    """The single ``Error:`` line a failed command printed (after any warnings)."""
    lines = [line for line in stderr.splitlines() if not line.startswith("Warning: ")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def games_recorded(out: Path) -> int:
    """How many games the store of ``out`` holds, read without disturbing a running writer."""
    if not (out / DATABASE).exists():
        return 0
    uri = f"{(out / DATABASE).resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        try:
            return db.execute("SELECT count(*) FROM games").fetchone()[0]
        except sqlite3.OperationalError:  # not created yet
            return 0


def children(pid: int) -> list[int]:
    """The processes ``pid`` started and has not reaped (its worker processes)."""
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(FileNotFoundError):
            found += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def wait_for_games(out: Path, count: int, runner: subprocess.Popen[Any]) -> int:
    """Wait until the runner has recorded ``count`` games; return how many it had."""
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        assert runner.poll() is None, runner.communicate()
        done = games_recorded(out)
        if done >= count:
            return done
        time.sleep(0.02)
    raise AssertionError("the runner recorded too few games before the hang guard")


def wait_for_no_leftovers(*, stranded_allowed: bool = False) -> None:
    """Orphaned bots see their stdin end and exit; give them a moment.

    ``stranded_allowed``: after a SIGKILL of the referee, the one documented exception
    (a sandbox's first process that bwrap never let go on) is killed, not blamed.
    """
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        if stranded_allowed:
            stop_stranded_sandboxes()
        if not leftover_processes():
            break
        time.sleep(0.05)
    assert leftover_processes() == []


def kill_after(path: Path, games: int, cwd: Path) -> None:
    """Run the tournament of ``path`` and kill it with SIGKILL once ``games`` are recorded."""
    runner = start_cli("tournament", path, "--quiet", cwd=cwd)
    wait_for_games(cwd / "out", games, runner)
    runner.kill()
    runner.communicate()
    wait_for_no_leftovers(stranded_allowed=True)


def slow_tournament(tmp_path: Path, **settings: Any) -> Path:
    """A tournament file of four slow bots, twelve games, two at once, output ``out``."""
    defaults = {
        "tc": "1+0",
        "options": {"turn_limit": 10},
        "games": 2,
        "concurrency": 2,
        "output": "out",
    }
    return write_toml(tmp_path / "t.toml", ["slow"] * 4, **{**defaults, **settings})


async def test_a_tournament_killed_at_any_moment_resumes_without_losing_or_repeating(tmp_path):
    path = slow_tournament(tmp_path)
    out = tmp_path / "out"
    kill_after(path, 3, tmp_path)
    # As if the kill had come in the middle of appending a game:
    with open(out / PGN, "a") as pgn:
        pgn.write('[Event "Test"]\n[Site "?"]\n[Date "2026.')
    recorded = {game.index for game in stored(out)}
    assert 3 <= len(recorded) < 12

    progress = Recorder()
    warnings: list[str] = []
    table = await run_tournament(load_config(path), progress=progress, warn=warnings.append)
    # Half a game at the end is no damage: it is dropped silently. The games the kill
    # interrupted (two at once) were started: each is played again as a new attempt.
    assert warnings and all(
        re.fullmatch(
            rf"game \d+: attempt 1 \(started [^)]+\) was abandoned: {re.escape(UNFINISHED)};"
            r" it is played again as attempt 2",
            warning,
        )
        for warning in warnings
    ), warnings
    assert len(warnings) <= 2
    assert progress.begun == (12, len(recorded))
    assert len(progress.results) == 12 - len(recorded)
    assert sorted(game.index for game in stored(out)) == list(range(12))
    games = assert_pgn_matches_store(out)
    assert len(games) == 12
    assert sum(row.games for row in table.players) == 24
    assert leftover_processes() == []


def test_a_worker_process_killed_mid_game_has_its_game_played_again_once(tmp_path):
    path = slow_tournament(tmp_path)
    out = tmp_path / "out"
    runner = start_cli("tournament", path, "--quiet", cwd=tmp_path)
    wait_for_games(out, 2, runner)
    workers = children(runner.pid)
    assert len(workers) == 2  # concurrency 2: two worker processes, the bots are theirs
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = runner.communicate(timeout=HANG_GUARD * 2)
    assert runner.returncode == 0, stderr
    (warning,) = [line for line in stderr.splitlines() if "worker process" in line]
    assert "was killed by SIGKILL while playing game" in warning, warning
    assert warning.endswith(": attempt 1 abandoned, playing it again as attempt 2"), warning
    assert sorted(game.index for game in stored(out)) == list(range(12))
    assert_no_game_blames_the_referee(out)
    assert_pgn_matches_store(out)
    wait_for_no_leftovers()


# --- attempts: a game played again never deals what was seen ----------------------------

HELD_VERDANT_BOT = """
import os, sys, time
from bots.sdk import main
from bots.verdant.random import RandomBot

class Held(RandomBot):
    def choose(self, situation, clock):
        gate = os.environ["GATE_FILE"]
        if not os.path.exists(gate):  # the first game to ask is held (it has seen its deal)
            with open(gate, "w") as file:
                file.write(str(os.getpid()))
            time.sleep(600)  # until the test kills what plays it
        return super().choose(situation, clock)

main(Held)
"""
"""A Verdant random bot whose first decision waits until it is killed, once (a file says so)."""

SEED = 11


def held_verdant_tournament(tmp_path: Path) -> tuple[Path, Path]:
    """A seeded Verdant tournament of one game, its first player :data:`HELD_VERDANT_BOT`;
    → the tournament file and the gate file its first decision creates."""
    gate = tmp_path / "held"
    lines = [
        'game = "verdant"',
        f"seed = {SEED}",
        'tc = "30+1"',
        'sandbox = "off"',
        "concurrency = 1",
        "games = 1",
        'output = "out"',
        'event = "Attempts"',
    ]
    for name, argv in (
        ("p1", [sys.executable, "-u", "-c", HELD_VERDANT_BOT]),
        ("p2", [sys.executable, "-m", "bots.verdant.random", "--seed", "2"]),
    ):
        env = {"REFEREE_TEST_MARK": MARK, "GATE_FILE": str(gate)}
        lines += [
            "[[players]]",
            f'name = "{name}"',
            f"cmd = {json.dumps(argv)}",
            f"dir = {json.dumps(str(REPO))}",
            "env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }",
        ]
    path = tmp_path / "t.toml"
    path.write_text("\n".join(lines) + "\n")
    return path, gate


def wait_for_file(path: Path, runner: subprocess.Popen[Any]) -> None:
    """Wait (under the hang guard) until ``path`` exists while ``runner`` runs."""
    deadline = time.monotonic() + HANG_GUARD
    while not path.exists():
        assert runner.poll() is None, runner.communicate()
        assert time.monotonic() < deadline, "the held bot never asked for its first decision"
        time.sleep(0.02)


def assert_second_attempt_deals_afresh(out: Path, cause: str) -> None:
    """Game 1 is recorded once, as attempt 2 with that attempt's seed, its deal not the one
    attempt 1 dealt; attempt 1 is kept as abandoned with ``cause``."""
    with ResultStore.open(out / DATABASE) as store:
        attempts = store.attempts(0)
        (game,) = store.games()
    assert [(a.number, a.abandoned) for a in attempts] == [(1, cause), (2, None)]
    (record,) = read_games(game.pgn)
    assert isinstance(record, GameRecord)
    assert record.tags["Attempt"] == "2" and record.tags["GameNumber"] == "1"
    first, second = game_seed(SEED, 0, 1), game_seed(SEED, 0, 2)
    assert first != second and record.tags["Seed"] == str(second)
    assert verify(record).valid
    # Under attempt 1's seed, the very first draws (the deal) are not the recorded ones.
    as_first = GameRecord({**record.tags, "Seed": str(first)}, record.turns, record.result)
    report = verify(as_first)
    assert not report.valid and "from the record's seed" in (report.reason or ""), report
    assert_pgn_matches_store(out)


async def test_a_seeded_game_the_coordinator_was_killed_in_is_played_again_as_attempt_2(
    tmp_path,
):
    path, gate = held_verdant_tournament(tmp_path)
    runner = start_cli("tournament", path, "--quiet", cwd=tmp_path)
    wait_for_file(gate, runner)  # attempt 1 is being played: its deal was seen
    runner.kill()
    runner.communicate()
    wait_for_no_leftovers(stranded_allowed=True)
    warnings: list[str] = []
    await run_tournament(load_config(path), warn=warnings.append)
    (warning,) = warnings
    assert warning.startswith("game 1: attempt 1 (started "), warning
    assert warning.endswith(f"was abandoned: {UNFINISHED}; it is played again as attempt 2")
    assert_second_attempt_deals_afresh(tmp_path / "out", UNFINISHED)
    assert leftover_processes() == []


def test_a_seeded_game_whose_worker_was_killed_is_played_again_as_attempt_2(tmp_path):
    path, gate = held_verdant_tournament(tmp_path)
    runner = start_cli("tournament", path, "--quiet", cwd=tmp_path)
    wait_for_file(gate, runner)
    (worker,) = children(runner.pid)
    os.kill(worker, signal.SIGKILL)
    _, stderr = runner.communicate(timeout=HANG_GUARD * 2)
    assert runner.returncode == 0, stderr
    assert "Warning: worker process 1 was killed by SIGKILL while playing game 1: attempt 1" in (
        stderr
    )
    assert_second_attempt_deals_afresh(tmp_path / "out", "worker process 1 was killed by SIGKILL")
    wait_for_no_leftovers()


async def test_a_bot_fault_is_that_bots_loss_never_a_new_attempt(tmp_path):
    cfg = config(tmp_path, "crash", "pass", concurrency=1, games=2)
    await run_tournament(cfg)
    with ResultStore.open(cfg.output / DATABASE) as store:
        games, attempts = store.games(), store.attempts()
    assert len(games) == 2
    for game in games:
        crashed = game.players.index("p1")
        assert game.termination == "abandoned" and game.places[crashed] == 2
        assert "[Attempt " not in game.pgn
    assert [(a.index, a.number, a.abandoned) for a in attempts] == [(0, 1, None), (1, 1, None)]


async def test_a_game_lost_again_and_again_stops_the_run_each_attempt_noted(tmp_path):
    cfg = config(tmp_path, "pass", "pass", concurrency=1, seed=5, games=1)
    seeds: list[int] = []

    class Dying:
        slots = 1

        async def check(self, names: tuple[str, ...], start: str | None) -> None:
            pass

        async def play(self, slot: int, job: GameJob) -> GameDone:
            seeds.append(job.seed)
            assert job.seed == game_seed(5, job.index, job.attempt)
            raise GameLost(f"worker {job.attempt} died", " (see nothing)")

    @contextlib.asynccontextmanager
    async def dying(work: Work, slots: int) -> AsyncIterator[Dying]:
        yield Dying()

    warnings: list[str] = []
    with pytest.raises(RefereeFault) as stopped:
        await run_tournament(cfg, pool=dying, warn=warnings.append)
    assert str(stopped.value).startswith(
        f"game 1 was lost {LOST_ATTEMPTS} times in a row (worker 1 died; worker 2 died;"
        " worker 3 died) (see nothing); it was not recorded; the run stopped with 0 of 1"
    ), stopped.value
    assert warnings == [
        "worker 1 died while playing game 1: attempt 1 abandoned, playing it again as attempt 2",
        "worker 2 died while playing game 1: attempt 2 abandoned, playing it again as attempt 3",
    ]
    assert len(set(seeds)) == LOST_ATTEMPTS
    with ResultStore.open(cfg.output / DATABASE) as store:
        noted = [(a.number, a.abandoned) for a in store.attempts(0)]
    assert noted == [(n, f"worker {n} died") for n in range(1, LOST_ATTEMPTS + 1)]
    # The next run goes on counting: its first attempt is the fourth, with its own seed.
    seeds.clear()
    with pytest.raises(RefereeFault):
        await run_tournament(cfg, pool=dying, warn=warnings.append)
    assert seeds[0] == game_seed(5, 0, LOST_ATTEMPTS + 1)


@pytest.mark.parametrize(
    ("signum", "status", "how"),
    [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")],
    ids=["SIGINT", "SIGTERM"],
)
def test_ctrl_c_or_sigterm_stops_cleanly_and_keeps_finished_games(tmp_path, signum, status, how):
    path = write_toml(
        tmp_path / "t.toml",
        ["slow", "slow", "ignore_sigterm", "slow"],  # round 1: p1-p4, p2-p3 (hangs)
        tc="5+0",
        options={"turn_limit": 10},
        games=2,
        concurrency=2,
        output="out",
    )
    runner = start_cli("tournament", path, "--quiet", cwd=tmp_path)
    wait_for_games(tmp_path / "out", 1, runner)
    os.kill(runner.pid, signum)
    _, stderr = runner.communicate(timeout=HANG_GUARD)
    assert runner.returncode == status
    assert stderr.startswith(f"Interrupted: stopped by {how} with ") and stderr.count("\n") == 1
    assert "run the same tournament again to resume" in stderr
    assert leftover_processes() == []  # reaped by the runner, not orphaned
    games = assert_pgn_matches_store(tmp_path / "out")
    # The ratings count every game kept, however fast they came before the stop.
    ratings = json.loads((tmp_path / "out" / RATINGS_JSON).read_text())
    assert sum(player["games"] for player in ratings["players"]) == 2 * len(games)


def test_a_trillion_game_tournament_starts_at_once(tmp_path):
    path = write_toml(
        tmp_path / "t.toml", ["pass", "pass"], options={"turn_limit": 4}, output="out"
    )
    runner = start_cli("tournament", path, "--quiet", "--games", "1000000000000", cwd=tmp_path)
    wait_for_games(tmp_path / "out", 3, runner)  # the hang guard would catch an eager schedule
    os.kill(runner.pid, signal.SIGINT)
    stdout, stderr = runner.communicate(timeout=HANG_GUARD)
    assert runner.returncode == 130
    assert stdout.startswith("Tournament: 1000000000000 games\n")
    assert " of 1000000000000 games played" in stderr
    assert len(assert_pgn_matches_store(tmp_path / "out")) >= 3


def test_ctrl_c_during_the_start_up_exits_130_and_saves_nothing(tmp_path):
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    path = tmp_path / "t.toml"
    path.write_text(
        f"startup = 60\noutput = 'out'\n[[players]]\ncmd = {json.dumps(sleeper)}\n"
        f"[[players]]\ncmd = {json.dumps(bot())}\n"
    )
    runner = start_cli("tournament", path, "--quiet", cwd=tmp_path)
    deadline = time.monotonic() + HANG_GUARD
    while not runs(runner.pid, "time.sleep(120)"):  # the preflight started the silent bot
        assert runner.poll() is None and time.monotonic() < deadline, runner.communicate()
        time.sleep(0.02)
    os.kill(runner.pid, signal.SIGINT)
    _, stderr = runner.communicate(timeout=HANG_GUARD)
    assert runner.returncode == 130, stderr
    assert stderr.startswith("Interrupted") and stderr.count("\n") == 1, stderr
    with ResultStore.open(tmp_path / "out" / DATABASE) as store:
        assert store.saved_config() is None and store.count() == 0


def runs(pid: int, marker: str) -> bool:
    """Whether process ``pid`` (started by the test) has a child whose command line holds
    ``marker``: a bot, or the sandbox running it (importing trio runs other children, which
    keep the referee's own command line, ``marker`` included, until they exec)."""
    with contextlib.suppress(OSError):
        tasks = Path(f"/proc/{pid}/task").iterdir()
        children = [child for task in tasks for child in (task / "children").read_text().split()]
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
        return any(
            marker.encode() in line and line != own
            for line in (Path(f"/proc/{child}/cmdline").read_bytes() for child in children)
        )
    return False


# --- the preflight: every bot answers before anything is saved -------------------------


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (("no-such-referee-bot",), "cannot start 'no-such-referee-bot'"),
        ((sys.executable, "-m", "bots.no_such_bot"), "No module named bots.no_such_bot"),
        ("exit_at_start", "exiting at start"),
    ],
    ids=["missing executable", "typo in a module", "exits at once"],
)
async def test_a_player_that_cannot_start_is_one_error_and_nothing_is_saved(tmp_path, command, why):
    if isinstance(command, str):
        broken = entrant("p2", command)
    else:
        broken = Entrant("p2", BotCommand(command))
    cfg = config(tmp_path, players=[entrant("p1"), broken, entrant("p3")], games=1)
    with pytest.raises(
        PreflightError, match=r"^a player failed the start-up check \(p2: "
    ) as caught:
        await run_tournament(cfg)
    assert why in str(caught.value) and "\n" not in str(caught.value)
    assert "nothing was played or saved" in str(caught.value)
    with ResultStore.open(cfg.output / DATABASE) as store:
        assert store.saved_config() is None and store.count() == 0
    # The corrected command, with other settings too, is not refused for that directory.
    await run_tournament(
        config(tmp_path, "pass", "pass", "pass", options={"turn_limit": 4}, games=1)
    )
    assert len(stored(cfg.output)) == 3
    assert leftover_processes() == []


async def test_a_bad_dir_is_named_by_the_preflight(tmp_path):
    cfg = config(
        tmp_path,
        players=[
            Entrant("p1", BotCommand(tuple(bot()), cwd=str(tmp_path / "nowhere"))),
            entrant("p2"),
        ],
    )
    with pytest.raises(PreflightError, match=r"\(p1: cannot start .*nowhere") as caught:
        await run_tournament(cfg)
    assert "p2" not in str(caught.value)


# --- records checked and repaired at every start ----------------------------------------


def finished_tournament(tmp_path: Path) -> TournamentConfig:
    """Play a small tournament to its end; its settings."""
    cfg = config(tmp_path, "pass", "pass", "pass", games=2, options={"turn_limit": 4})
    trio.run(run_tournament, cfg)
    assert len(stored(cfg.output)) == 6
    return cfg


def replayed_run(cfg: TournamentConfig) -> tuple[Recorder, list[str]]:
    """Run ``cfg`` again; what it reported and warned."""
    progress, warnings = Recorder(), []
    trio.run(lambda: run_tournament(cfg, progress=progress, warn=warnings.append))
    return progress, warnings


def pgn_game_texts(path: Path) -> list[str]:
    """The text of each game in a PGN file, as written."""
    return [block + "\n\n" for block in path.read_text().split("\n\n[")]


def rewrite_game(path: Path, number: int, change: Callable[[str], str]) -> None:
    """Apply ``change`` to the text of game ``number`` (its GameNumber) in a PGN file."""
    text = path.read_text()
    games = text.split("\n\n[")
    tag = f'[GameNumber "{number}"]'
    (place,) = [i for i, game in enumerate(games) if tag in game]
    games[place] = change(games[place])
    path.write_text("\n\n[".join(games))


def update_row(out: Path, sql: str) -> None:
    """Change the store's rows behind the referee's back."""
    with contextlib.closing(sqlite3.connect(out / DATABASE)) as db:
        db.execute(sql)
        db.commit()


def flip(text: str) -> str:
    """A record's draw turned into a win for White, everywhere it is written."""
    return text.replace("1/2-1/2", "1-0")


def test_a_deleted_store_is_rebuilt_from_the_pgn_and_nothing_is_played_again(tmp_path):
    cfg = finished_tournament(tmp_path)
    out = cfg.output
    before = true_games(out / PGN)
    for name in (DATABASE, DATABASE + "-wal", DATABASE + "-shm"):
        (out / name).unlink(missing_ok=True)
    progress, warnings = replayed_run(cfg)
    assert warnings == [f"{DATABASE} was missing: rebuilt it from 6 games of {PGN}"]
    assert progress.begun == (6, 6) and progress.results == []
    assert true_games(out / PGN) == before
    assert_pgn_matches_store(out)


@pytest.mark.parametrize("damage", ["truncated", "zeroed", "garbage"])
def test_a_damaged_store_is_set_aside_and_rebuilt_from_the_pgn(tmp_path, damage):
    cfg = finished_tournament(tmp_path)
    out = cfg.output
    before = true_games(out / PGN)
    database = out / DATABASE
    size = database.stat().st_size
    if damage == "truncated":
        os.truncate(database, size // 2)
    elif damage == "zeroed":
        os.truncate(database, 0)
    else:
        database.write_bytes(os.urandom(size))
    progress, warnings = replayed_run(cfg)
    assert progress.results == []  # no game played again
    assert true_games(out / PGN) == before
    assert_pgn_matches_store(out)
    if damage != "zeroed":  # an empty file is a new store, not a damaged one
        assert warnings[0].startswith(f"{database} is damaged (")
        assert f"moved it to {DATABASE}.damaged-1" in warnings[0]
        assert (out / f"{DATABASE}.damaged-1").stat().st_size in (size, size // 2)
    assert warnings[-1] == f"added 6 games of {PGN} that {DATABASE} lacked"


def test_a_store_that_lost_its_wal_after_a_kill_keeps_every_game_of_the_pgn(tmp_path):
    path = slow_tournament(tmp_path)
    out = tmp_path / "out"
    kill_after(path, 3, tmp_path)
    before = true_games(out / PGN)
    # The kill may fall between a game's commit and its PGN append: one game fewer.
    assert len(before) >= 2 and (out / f"{DATABASE}-wal").exists()
    (out / f"{DATABASE}-wal").unlink()
    progress, warnings = replayed_run(load_config(path))
    assert any(f"games of {PGN}" in warning for warning in warnings), warnings
    after = true_games(out / PGN)
    assert after & before == before  # every game the PGN held is still in it
    assert len(after) == 12 and len(progress.results) == 12 - len(before)
    assert_pgn_matches_store(out)


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        (
            "UPDATE games SET result = '1-0', pgn = replace(pgn, '1/2-1/2', '1-0')"
            " WHERE pairing = 2",
            "result 1-0 but the rules give 1/2-1/2",
        ),
        ("UPDATE games SET result = '0-1' WHERE pairing = 2", "result columns disagree"),
        ("UPDATE games SET pgn = replace(pgn, '1. --', '1. e12') WHERE pairing = 2", "e12"),
        ("""UPDATE games SET players = '["p3", "p2"]' WHERE pairing = 2""", "its players are"),
        ("UPDATE games SET plies = 'many' WHERE pairing = 2", "wrong type"),
    ],
    ids=["flipped result", "column and text disagree", "no longer replays", "players", "type"],
)
def test_a_damaged_row_is_restored_from_the_pgn(tmp_path, sql, why):
    cfg = finished_tournament(tmp_path)
    out = cfg.output
    before = (out / PGN).read_bytes()
    update_row(out, sql)
    progress, warnings = replayed_run(cfg)
    assert len(warnings) == 1 and why in warnings[0], warnings
    assert warnings[0].startswith(f"1 game in {DATABASE} damaged (game 3: ")
    assert "1 restored from games.pgn, 0 to be played again" in warnings[0]
    assert progress.results == []
    assert (out / PGN).read_bytes() == before  # the good copy was never overwritten
    assert (out / f"{DATABASE}.damaged-1").exists()
    assert_pgn_matches_store(out)


def test_a_damaged_pgn_game_is_replaced_by_the_stores_and_the_old_file_kept(tmp_path):
    cfg = finished_tournament(tmp_path)
    out = cfg.output
    good = true_games(out / PGN)
    rewrite_game(out / PGN, 3, flip)
    damaged = (out / PGN).read_text()
    progress, warnings = replayed_run(cfg)
    assert len(warnings) == 1 and warnings[0].startswith(
        f"{PGN} held 1 game damaged or not of this tournament (game "
    )
    assert f"kept the old file as {PGN}.damaged-1" in warnings[0]
    assert (out / f"{PGN}.damaged-1").read_text() == damaged
    assert progress.results == [] and true_games(out / PGN) == good
    assert_pgn_matches_store(out)


def test_a_game_damaged_in_both_files_is_played_again(tmp_path):
    cfg = finished_tournament(tmp_path)
    out = cfg.output
    update_row(out, "UPDATE games SET pgn = replace(pgn, '1. --', '1. e12') WHERE pairing = 4")
    rewrite_game(out / PGN, 5, flip)
    progress, warnings = replayed_run(cfg)
    assert "0 restored from games.pgn, 1 to be played again" in warnings[0]
    assert progress.finished == [4]  # game 5
    assert len(true_games(out / PGN)) == 6
    assert_pgn_matches_store(out)


def test_a_game_recorded_differently_but_validly_in_both_files_is_refused(tmp_path):
    cfg = finished_tournament(tmp_path)
    out = cfg.output
    rewrite_game(out / PGN, 2, lambda text: text.replace('[Date "', '[Date "1'))
    before = sorted(entry.name for entry in out.iterdir())
    with pytest.raises(StoreError, match=r"^game 2 is recorded differently in results.sqlite"):
        trio.run(run_tournament, cfg)
    assert sorted(entry.name for entry in out.iterdir()) == before  # nothing was touched


def test_the_pgn_of_another_tournament_is_refused(tmp_path):
    cfg = finished_tournament(tmp_path)
    (cfg.output / DATABASE).unlink()
    other = config(tmp_path, "pass", "pass", "pass", "pass", options={"turn_limit": 4})
    with pytest.raises(StoreError, match=r"games.pgn holds no game of this tournament \(game 1"):
        trio.run(run_tournament, other)


# --- the lock, and a read-only directory -------------------------------------------------


def test_two_runs_at_once_never_play_the_same_games(tmp_path):
    path = slow_tournament(tmp_path, concurrency=1)
    out = tmp_path / "out"
    first = start_cli("tournament", path, "--quiet", cwd=tmp_path)
    wait_for_games(out, 1, first)
    (out / "lock").unlink(missing_ok=True)  # the lock is on the directory, not in a file
    second = run_cli("tournament", path, "--quiet", cwd=tmp_path)
    assert second.returncode == 1
    assert one_error_line(second.stderr).endswith("is being run by another process")
    assert first.wait(timeout=HANG_GUARD * 2) == 0
    first.communicate()
    indices = [game.index for game in stored(out)]
    assert sorted(indices) == list(range(12))
    assert_pgn_matches_store(out)


def can_mount() -> bool:
    """Whether this test may make private mounts (a mount namespace of its own)."""
    return shutil.which("unshare") is not None and (
        subprocess.run(unshare_command("true"), capture_output=True).returncode == 0
    )


def unshare_command(script: str) -> list[str]:
    """Run the shell ``script`` in a mount namespace of its own (as root, or mapped to it)."""
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    return ["unshare", "--mount", *user, "sh", "-c", script]


needs_mounts = pytest.mark.skipif(not can_mount(), reason="needs private mounts (unshare -m)")


@needs_mounts
def test_a_finished_tournament_is_shown_from_a_read_only_directory(tmp_path):
    cfg = finished_tournament(tmp_path)
    out = cfg.output
    listing = {entry.name: entry.stat().st_mtime_ns for entry in out.iterdir()}
    path = write_toml(
        tmp_path / "t.toml",
        ["pass"] * 3,
        event="Test",
        tc="0.5+0",
        startup=3,
        options={"turn_limit": 4},
        games=2,
        output=str(out),
    )
    show = shlex.join(referee_command("tournament", path, "--quiet"))
    script = (
        f"mount --bind {out} {out} && mount -o remount,bind,ro {out} &&"
        f" {{ {show} > same.out 2> same.err; echo $? > same.rc;"
        f" {show} --games 3 > /dev/null 2> more.err; echo $? > more.rc; }}"
    )
    subprocess.run(
        unshare_command(script), cwd=tmp_path, env=child_env(), check=True, timeout=HANG_GUARD
    )
    assert (tmp_path / "same.rc").read_text() == "0\n", (tmp_path / "same.err").read_text()
    assert "Crosstable" in (tmp_path / "same.out").read_text()
    assert (tmp_path / "more.rc").read_text() == "1\n"
    assert "other settings" in one_error_line((tmp_path / "more.err").read_text())
    assert {entry.name: entry.stat().st_mtime_ns for entry in out.iterdir()} == listing


# --- the referee's own faults are never a bot's loss -------------------------------------


def open_files_limit(files: int) -> Callable[[], None]:
    """What a child runs before it starts: at most ``files`` open file descriptors (the
    soft limit, as ``ulimit -n`` sets it)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))


def assert_no_game_blames_the_referee(out: Path) -> None:
    """No recorded game was lost to the referee's own failure."""
    for game in stored(out):
        assert "open files" not in game.pgn and "cannot start" not in game.pgn, game.reason


def test_too_few_file_descriptors_is_one_error_and_records_nothing(tmp_path):
    path = slow_tournament(tmp_path, concurrency=50)
    done = run_cli("tournament", path, "--quiet", cwd=tmp_path, preexec=open_files_limit(20))
    assert done.returncode == 1
    line = one_error_line(done.stderr)
    assert "Too many open files" in line or "open files" in line, line
    assert "Warning: concurrency 50 is more than this machine allows" in done.stderr
    with ResultStore.open(tmp_path / "out" / DATABASE) as store:
        assert store.count() == 0
    assert leftover_processes() == []


def test_the_concurrency_is_capped_by_the_open_files_limit(tmp_path):
    path = write_toml(
        tmp_path / "t.toml",
        ["pass"] * 4,
        options={"turn_limit": 4},
        concurrency=50,
        output="out",
        games=1,
    )
    done = run_cli("tournament", path, "--quiet", cwd=tmp_path, preexec=open_files_limit(200))
    assert done.returncode == 0, done.stderr
    per_game = 2 * tournaments.runner.FILES_PER_SEAT
    games = (200 - tournaments.runner.FILES_RESERVED) // per_game
    assert (
        "Warning: concurrency 50 is more than this machine allows (open files limit 200,"
        f" up to {per_game} per game): playing {games} games at once"
    ) in done.stderr.splitlines()
    assert len(stored(tmp_path / "out")) == 6
    assert_no_game_blames_the_referee(tmp_path / "out")


def test_concurrency_limit_follows_the_open_files_and_process_limits(monkeypatch):
    unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    limits = {resource.RLIMIT_NOFILE: (1024, 4096), resource.RLIMIT_NPROC: unlimited}
    monkeypatch.setattr(resource, "getrlimit", limits.__getitem__)
    per_game = 2 * tournaments.runner.FILES_PER_SEAT
    expected = (1024 - tournaments.runner.FILES_RESERVED) // per_game
    assert concurrency_limit() == (expected, f"open files limit 1024, up to {per_game} per game")
    five = 5 * tournaments.runner.FILES_PER_SEAT  # a game of five seats holds more
    expected = (1024 - tournaments.runner.FILES_RESERVED) // five
    assert concurrency_limit(5) == (expected, f"open files limit 1024, up to {five} per game")
    limits[resource.RLIMIT_NPROC] = (40, 40)
    per_game = 2 * tournaments.runner.PROCESSES_PER_SEAT
    assert concurrency_limit() == (40 // per_game, f"process limit 40, up to {per_game} per game")
    limits[resource.RLIMIT_NOFILE] = limits[resource.RLIMIT_NPROC] = unlimited
    assert concurrency_limit()[1] == "no limit"
    limits[resource.RLIMIT_NOFILE] = (10, 10)
    assert concurrency_limit()[0] == 1  # one game is always tried; it fails in one line if it must


def test_running_out_of_file_descriptors_mid_run_stops_it_and_a_resume_completes(tmp_path):
    path = slow_tournament(tmp_path)
    out = tmp_path / "out"
    runner = start_cli("tournament", path, "--quiet", cwd=tmp_path)
    wait_for_games(out, 2, runner)
    # From now on neither the referee nor its worker processes can open one more file (the
    # bots they run keep theirs).
    for pid in (runner.pid, *children(runner.pid)):
        in_use = len(os.listdir(f"/proc/{pid}/fd"))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (in_use, in_use))
    _, stderr = runner.communicate(timeout=HANG_GUARD)
    assert runner.returncode == 1, stderr
    line = one_error_line(stderr)
    assert "open files" in line and "run the same command again to resume" in line, line
    recorded = len(stored(out))
    assert 2 <= recorded < 12
    assert_no_game_blames_the_referee(out)
    wait_for_no_leftovers()
    again = run_cli("tournament", path, "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert sorted(game.index for game in stored(out)) == list(range(12))
    assert_no_game_blames_the_referee(out)
    assert_pgn_matches_store(out)


async def test_two_workers_failing_at_once_are_one_error_and_record_nothing(tmp_path, monkeypatch):
    cfg = config(
        tmp_path, "pass", "pass", "pass", "pass", options={"turn_limit": 4}, concurrency=2, games=1
    )
    both_started = trio.Event()
    started = 0

    async def out_of_files(*args: object, **kwargs: object) -> GameResult:
        nonlocal started
        started += 1
        if started == 2:
            both_started.set()
        await both_started.wait()
        raise RefereeFault("cannot start 'bot': Too many open files")

    # In the coordinator's own loop, where the patch reaches.
    monkeypatch.setattr(tournaments.workers, "play_game", out_of_files)
    with pytest.raises(RefereeFault) as caught:
        await run_tournament(cfg, pool=task_pool())
    message = str(caught.value)
    assert message.startswith("cannot start 'bot': Too many open files; game ")
    assert "was not recorded; the run stopped with 0 of 6 games played" in message
    assert "\n" not in message
    assert stored(cfg.output) == []
    monkeypatch.undo()
    await run_tournament(cfg)
    assert len(stored(cfg.output)) == 6


async def test_a_pgn_that_cannot_be_appended_to_stops_the_run_and_loses_nothing(
    tmp_path, monkeypatch
):
    cfg = config(
        tmp_path, "pass", "pass", "pass", options={"turn_limit": 4}, concurrency=1, games=1
    )

    def disk_full(path: object, text: str) -> None:
        raise RefereeFault(f"cannot append a game to {path}: No space left on device")

    monkeypatch.setattr(tournaments.runner, "append_pgn", disk_full)
    with pytest.raises(RefereeFault, match="No space left on device; game 1 is recorded in"):
        await run_tournament(cfg)
    assert [game.index for game in stored(cfg.output)] == [0]
    monkeypatch.undo()
    await run_tournament(cfg)
    assert len(assert_pgn_matches_store(cfg.output)) == 3


@needs_mounts
def test_a_full_disk_is_one_error_at_the_time_and_the_next_run_recovers(tmp_path):
    path = slow_tournament(tmp_path, output=str(tmp_path / "disk" / "out"))
    (tmp_path / "disk").mkdir()
    run = shlex.join(referee_command("tournament", path, "--quiet"))
    # A 1 MiB disk with 80 KiB free: full after a game or two, whatever writes first.
    script = (
        "mount -t tmpfs -o size=1m tmpfs disk && head -c 966656 /dev/zero > disk/filler &&"
        f" {{ {run} > /dev/null 2> full.err; echo $? > full.rc; rm disk/filler;"
        f" {run} > /dev/null 2> freed.err; echo $? > freed.rc; cp -a disk/out kept; }}"
    )
    subprocess.run(
        unshare_command(script), cwd=tmp_path, env=child_env(), check=True, timeout=HANG_GUARD * 2
    )
    assert (tmp_path / "full.rc").read_text() == "1\n"
    line = one_error_line((tmp_path / "full.err").read_text())
    assert "disk is full" in line or "No space left on device" in line, line
    assert (tmp_path / "freed.rc").read_text() == "0\n", (tmp_path / "freed.err").read_text()
    kept = tmp_path / "kept"
    assert sorted(game.index for game in stored(kept)) == list(range(12))
    assert len(assert_pgn_matches_store(kept)) == 12
    assert_no_game_blames_the_referee(kept)


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
    # Rating reads only the tags: game 3, whose movetext is broken, has no Result tag.
    assert len(rated.warnings) == 2
    assert "game 5" in rated.warnings[0] and "2 unfinished games" in rated.warnings[1]
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
    cfg = config(tmp_path, "pass", "crash", games=1)
    trio.run(lambda: run_tournament(cfg, progress=progress))
    assert lines[0] == "Test: 1 game"
    assert lines[1].startswith("[1/1] game 1 (round 1): p1 - p2 1-0, Purple (p2) forfeits")
    assert leftover_processes() == []


def test_the_live_display_shows_the_bar_and_each_running_game_on_lines_of_their_own():
    console = Console(width=80, record=True, file=io.StringIO(), force_terminal=True)
    progress = LiveProgress(console)
    progress.begin(event="Test", total=48, done=12, standings=RatingTable((), {}))
    for index, players in enumerate([("random", "ivy-js"), ("greedy", "climber")]):
        progress.game_started(Pairing(index=index, round=1, players=players))
    progress.close()
    assert console.export_text(clear=True).splitlines()[0] == "Test: 48 games, 12 already played"
    console.print(progress)  # the display, as the live view draws it
    summary, bar, *running = console.export_text().splitlines()
    assert summary.startswith("12/48 games · 2 running · elapsed ")
    assert set(bar) <= set("━╺╸") and len(bar) == 60
    assert [line.split() for line in running] == [
        ["game", "1", "random", "vs", "ivy-js", "0:00"],
        ["game", "2", "greedy", "vs", "climber", "0:00"],
    ]


# --- Swiss and knockout ------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"format": "swiss", "rounds": 9}, "a Swiss of 5 players has 1 to 5 rounds"),
        ({"format": "swiss", "rounds": 0}, "has 1 to 5 rounds (a round-robin's), not 0"),
        ({"rounds": 3}, "rounds apply to a swiss, not to a round-robin"),
        ({"format": "knockout", "rounds": 3}, "rounds apply to a swiss, not to a knockout"),
        ({"format": "swiss", "tiebreaks": 1}, "tiebreaks apply to a knockout, not to a swiss"),
        ({"format": "knockout", "tiebreaks": -1}, "tie-break pairs cannot be negative"),
        ({"format": "swiss", "cycles": 2}, "cycles apply to a round-robin, not to a swiss"),
    ],
)
def test_swiss_and_knockout_settings_are_checked_in_one_line(tmp_path, settings, message):
    with pytest.raises(ConfigError, match=r"^[^\n]+$") as caught:
        config(tmp_path, *["pass"] * 5, **settings)
    assert message in str(caught.value)


def test_swiss_and_knockout_are_for_two_seat_games(tmp_path):
    for format_ in ("swiss", "knockout"):
        with pytest.raises(ConfigError, match=f"^a {format_} is for games of two seats, not 3$"):
            verdant(tmp_path, 3, format=format_)


def test_a_swiss_file_defaults_to_the_most_rounds_and_saves_them(tmp_path):
    path = write_toml(tmp_path / "s.toml", ["pass"] * 5, format="swiss")
    cfg = load_config(path)
    assert cfg.bracket().rounds == 5 and json.loads(cfg.to_json())["rounds"] == 5
    knockout = load_config(write_toml(tmp_path / "k.toml", ["pass"] * 3, format="knockout"))
    assert knockout.bracket().games == 2 and json.loads(knockout.to_json())["tiebreaks"] == 1


def pairings_of(out: Path) -> list[tuple[int, tuple[str, ...]]]:
    return sorted((game.index, game.players) for game in stored(out))


async def test_a_swiss_plays_round_by_round_without_rematches_and_one_bye_a_round(tmp_path):
    cfg = config(tmp_path, *["pass"] * 5, format="swiss", rounds=3)
    progress = Recorder()
    await run_tournament(cfg, progress=progress)
    assert progress.begun == (6, 0)  # the Swiss's length: 3 rounds of 2 boards
    games = pairings_of(cfg.output)
    assert [index for index, _ in games] == list(range(6))
    met = [frozenset(players) for _, players in games]
    assert len(set(met)) == 6  # no rematch
    everyone = {f"p{n}" for n in range(1, 6)}
    byes = [
        everyone - {p for _, players in games[r * 2 : r * 2 + 2] for p in players} for r in range(3)
    ]
    assert all(len(bye) == 1 for bye in byes) and len(set.union(*byes)) == 3  # a new one each round
    ratings = json.loads((cfg.output / RATINGS_JSON).read_text())
    swiss = ratings["swiss"]
    assert [row["rank"] for row in swiss] == [1, 2, 3, 4, 5]
    assert sum(row["points"] for row in swiss) == 6 + 3  # six games and three byes
    assert all("buchholz" in row for row in swiss)
    assert_pgn_matches_store(cfg.output)
    assert leftover_processes() == []


async def test_a_stopped_swiss_resumes_to_the_same_pairings(tmp_path):
    whole = config(tmp_path / "whole", *["pass"] * 5, format="swiss", rounds=3)
    await run_tournament(whole)
    cfg = config(tmp_path, *["pass"] * 5, format="swiss", rounds=3)
    with trio.CancelScope() as scope:
        await run_tournament(cfg, progress=Recorder(stop=scope))
    assert scope.cancelled_caught
    assert 1 <= len(stored(cfg.output)) < 6
    progress = Recorder()
    await run_tournament(cfg, progress=progress)
    assert progress.begun is not None and progress.begun[1] >= 1
    assert pairings_of(cfg.output) == pairings_of(whole.output)  # every game draws in both
    assert_pgn_matches_store(cfg.output)
    assert leftover_processes() == []


async def test_a_knockout_ends_with_a_winner(tmp_path):
    cfg = config(tmp_path, *["pass"] * 3, format="knockout", games=2, tiebreaks=1)
    progress = Recorder()
    await run_tournament(cfg, progress=progress)
    assert progress.begun == (12, 0)  # 3 matches of 2 games and up to 2 tie-breaks
    # Every game is drawn, so every match goes to its tie-breaks and the better seed:
    # p2-p3 (p1 has the bye), then the final p1-p2.
    games = pairings_of(cfg.output)
    assert [players for _, players in games] == [("p2", "p3"), ("p3", "p2")] * 2 + [
        ("p1", "p2"),
        ("p2", "p1"),
    ] * 2
    knockout = json.loads((cfg.output / RATINGS_JSON).read_text())["knockout"]
    assert knockout["winner"] == "p1"
    assert [match["winner"] for match in knockout["matches"]] == ["p1", "p2", "p1"]
    # Run again: nothing is played, the recovery checks the games against the bracket.
    again = Recorder()
    await run_tournament(cfg, progress=again)
    assert again.begun == (12, 8) and again.finished == []
    assert leftover_processes() == []


# --- games per table from the command line -------------------------------------------

ROUNDED = (
    "Warning: 3 games per pairing rounded up to 4, a multiple of the 2 seats,"
    " so that each player sits each seat equally often"
)


@pytest.mark.parametrize(
    ("games", "played", "warning"), [((), 2, None), (("--games", "3"), 4, ROUNDED)]
)
def test_two_players_on_the_command_line_sit_each_seat_equally_often(
    tmp_path, games, played, warning
):
    players = [f"--player=name=p{n} cmd={shlex.quote(shlex.join(bot()))}" for n in (1, 2)]
    done = run_cli(
        "tournament",
        *players,
        *games,
        *("--option", "turn_limit=4", "--tc", "5+0", "--output", "out", "--quiet"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("Warning: ")]
    assert warnings == ([] if warning is None else [warning])
    green = Counter(game.players[0] for game in stored(tmp_path / "out"))
    assert green == {"p1": played // 2, "p2": played // 2}


def test_a_files_games_are_rounded_up_by_serve_too(tmp_path):
    path = write_toml(tmp_path / "t.toml", ["pass"], games=3, output="out")
    path.write_text(path.read_text() + '[[players]]\nname = "alice"\nremote = true\n')
    done = run_cli("serve", path, "--issue", "alice", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [ROUNDED]
    assert done.stdout.startswith("token ")
