"""Matches between real bot processes (referee.match): every way to lose, and no leftovers."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import trio
from fakebots import fake, leftover_processes

from referee.clock import TimeControl
from referee.match import BotPlayer, MatchConfig, play_game, run_match
from referee.pgn import read_pgn_file
from referee.process import BotCommand
from referee.replay import verify


def config(tmp_path: Path, tc: str = "0.6+0") -> MatchConfig:
    return MatchConfig(
        control=TimeControl.parse(tc, startup=2.0, margin=0.1),
        options={"turn_limit": 10},
        log_dir=tmp_path / "logs",
        event="Fault test",
    )


async def play_one(tmp_path: Path, bad: BotCommand, *, tc: str = "0.6+0") -> tuple[object, float]:
    (tmp_path / "logs").mkdir(exist_ok=True)
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        cfg = config(tmp_path, tc)
        players = [
            BotPlayer(bad, bad.name or "bad", nursery, log_dir=cfg.log_dir),
            BotPlayer(fake(name="pass"), "pass", nursery, log_dir=cfg.log_dir),
        ]
        result = await play_game(players, cfg)
        for player in players:
            await player.close()
    return result, trio.current_time() - started


@pytest.mark.parametrize(
    ("mode", "termination", "cause"),
    [
        ("timeout", "time forfeit", "no reply within"),
        ("illegal", "rules infraction", "creep e12"),
        ("garbage", "rules infraction", "not JSON"),
        ("invalid", "rules infraction", "$.actions"),
        ("oversized", "rules infraction", "longer than"),
        ("flood_stdout", "rules infraction", "longer than"),
        ("crash", "abandoned", "exit code 3"),
        ("exit_at_start", "abandoned", "exit"),
        ("close_stdout", "abandoned", "closed its stdout"),
        ("no_read", "time forfeit", "start-up allowance"),
        ("ignore_sigterm", "time forfeit", "no reply within"),
        ("fork_child", "time forfeit", "no reply within"),
    ],
)
async def test_each_fault_loses_quickly_and_leaves_nothing_behind(
    tmp_path, mode, termination, cause
):
    result, seconds = await play_one(tmp_path, fake(mode))
    record = result.record
    assert record.result == "0-1", record.tags
    assert record.tags["Termination"] == termination
    reason = record.turns[-1].comment if record.turns else record.comment
    assert cause in reason
    assert "Green (" + mode in reason
    assert seconds < 6, f"{mode} took {seconds:.1f} s"
    assert verify(record).valid
    assert leftover_processes() == []


async def test_crash_record_quotes_the_end_of_stderr(tmp_path):
    result, _ = await play_one(tmp_path, fake("crash"))
    assert "crashing on purpose" in result.record.comment


async def test_flooding_stderr_is_bounded_and_the_game_goes_on(tmp_path):
    result, _ = await play_one(tmp_path, fake("flood_stderr"))
    assert result.record.tags["Termination"] == "normal"
    assert result.result == "1/2-1/2"  # both pass until the turn limit
    logs = list((tmp_path / "logs").glob("flood_stderr-*.stderr.log"))
    assert logs and logs[0].stat().st_size <= (1 << 20) + 1000
    assert leftover_processes() == []


async def test_log_messages_are_kept_bounded_and_never_moves(tmp_path):
    result, _ = await play_one(tmp_path, fake("log_spam"))
    assert result.record.tags["Termination"] == "normal"
    assert any("thinking hard (0)" in line for line in result.logs)
    assert any("more log messages not kept" in line for line in result.logs)


async def test_a_command_that_cannot_start_loses(tmp_path):
    missing = BotCommand(argv=("/nonexistent/bot",), name="ghost")
    result, _ = await play_one(tmp_path, missing)
    assert result.record.tags["Termination"] == "abandoned"
    assert "cannot start" in result.record.comment


async def test_match_alternates_colours_reuses_bots_and_appends_pgn(tmp_path):
    pgn = tmp_path / "match.pgn"
    seen: list[str] = []
    score = await run_match(
        [fake(name="a"), fake(name="b")],
        config(tmp_path),
        games=4,
        pgn=pgn,
        on_game=lambda n, result, score: seen.append(result.record.tags["White"]),
    )
    assert seen == ["a", "b", "a", "b"]
    assert (score.wins, score.draws, score.losses) == (0, 4, 0)
    assert score.score == 2.0 and score.games == 4
    games = read_pgn_file(pgn)
    assert len(games) == 4 and all(verify(g).valid for g in games)
    # Reused across games: one process each, so one stderr log each.
    assert len(list((tmp_path / "logs").glob("a-*.stderr.log"))) == 1
    assert leftover_processes() == []


async def test_a_faulty_bot_is_restarted_for_its_next_game(tmp_path):
    score = await run_match(
        [fake("crash", name="crashy"), fake(name="pass")], config(tmp_path), games=2
    )
    assert (score.wins, score.draws, score.losses) == (0, 0, 2)
    assert len(list((tmp_path / "logs").glob("crashy-*.stderr.log"))) == 2
    assert leftover_processes() == []


async def test_cancelling_a_match_reaps_every_bot(tmp_path):
    with trio.move_on_after(0.5):
        await run_match(
            [fake("ignore_sigterm", name="stubborn"), fake(name="pass")],
            config(tmp_path, tc="30+0"),
            games=1,
        )
    assert leftover_processes() == []


def test_no_leftovers_from_this_module():
    assert os.environ.get("REFEREE_TEST_MARK") is None
    assert leftover_processes() == []


BUNDLED = {
    "random": BotCommand(argv=(sys.executable, "-m", "bots.random", "--seed", "5"), name="random"),
    "greedy": BotCommand(argv=(sys.executable, "-m", "bots.greedy"), name="greedy"),
    "node": BotCommand(argv=("node", "bots/ivy_bot.js"), name="ivy-js"),
}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("random", "greedy"),
        pytest.param(
            "node",
            "random",
            marks=pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js"),
        ),
    ],
)
async def test_whole_games_between_bundled_bots_are_valid_records(tmp_path, first, second):
    cfg = MatchConfig(control=TimeControl.parse("10+0.1"), log_dir=tmp_path / "logs")
    pgn = tmp_path / "games.pgn"
    score = await run_match([BUNDLED[first], BUNDLED[second]], cfg, games=2, pgn=pgn)
    games = read_pgn_file(pgn)
    assert score.games == 2 and len(games) == 2
    for game in games:
        assert game.tags["Termination"] == "normal", game.turns[-1].comment
        report = verify(game)
        assert report.valid and report.rules_result == game.result
    if first == "random":
        assert score.losses == 2  # greedy beats random
    assert leftover_processes() == []
