"""Matches between real bot processes (referee.match): every way to lose, and no leftovers."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from fakebots import fake, leftover_processes
from test_protocol import new_game
from test_protocol_fuzz import sending

from protocol import (
    DEFAULT_MAX_LINE_BYTES,
    ErrorMessage,
    GameOver,
    LocalProtocolError,
    ProtocolViolation,
    Quit,
)
from referee.clock import Allowances, TimeControl
from referee.errors import BotCrashed, BotTimeout
from referee.match import (
    DRAIN_LIMIT,
    GAME_LOG_LIMIT,
    BotPlayer,
    GameResult,
    MatchConfig,
    _Link,
    play_game,
    run_match,
)
from referee.pgn import read_pgn_file
from referee.process import BotCommand
from referee.replay import verify
from referee.sandbox import SandboxPolicy


def config(tmp_path: Path, tc: str = "0.6+0") -> MatchConfig:
    return MatchConfig(
        control=TimeControl.parse(tc),
        allowances=Allowances(startup=2.0, margin=0.1),
        options={"turn_limit": 10},
        log_dir=tmp_path / "logs",
        event="Fault test",
    )


async def play_one(
    tmp_path: Path, bad: BotCommand, *, tc: str = "0.6+0", bad_seat: int = 0
) -> GameResult:
    """One game of ``bad`` against the pass bot, ``bad`` in seat ``bad_seat``."""
    (tmp_path / "logs").mkdir(exist_ok=True)
    with trio.fail_after(60):  # a hang guard, not what is tested
        async with trio.open_nursery() as nursery:
            cfg = config(tmp_path, tc)
            players = [
                BotPlayer(bad, bad.name or "bad", nursery, log_dir=cfg.log_dir),
                BotPlayer(fake(name="pass"), "pass", nursery, log_dir=cfg.log_dir),
            ]
            if bad_seat == 1:
                players.reverse()
            result = await play_game(players, cfg)
            for player in players:
                await player.close()
    return result


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
async def test_each_fault_loses_and_leaves_nothing_behind(tmp_path, mode, termination, cause):
    result = await play_one(tmp_path, fake(mode))
    record = result.record
    assert record.result == "0-1", record.tags
    assert record.tags["Termination"] == termination
    reason = record.turns[-1].comment if record.turns else record.comment
    assert cause in reason
    assert "Green (" + mode in reason
    assert verify(record).valid
    assert leftover_processes() == []


async def test_crash_record_quotes_the_end_of_stderr(tmp_path):
    result = await play_one(tmp_path, fake("crash"))
    assert "crashing on purpose" in result.record.comment


async def test_flooding_stderr_is_bounded_and_the_game_goes_on(tmp_path):
    result = await play_one(tmp_path, fake("flood_stderr"))
    assert result.record.tags["Termination"] == "normal"
    assert result.result == "1/2-1/2"  # both pass until the turn limit
    logs = list((tmp_path / "logs").glob("flood_stderr-*.stderr.log"))
    assert logs and logs[0].stat().st_size <= (1 << 20) + 1000
    assert leftover_processes() == []


async def test_log_messages_are_kept_bounded_and_never_moves(tmp_path):
    result = await play_one(tmp_path, fake("log_spam"))
    assert result.record.tags["Termination"] == "normal"
    assert any("thinking hard (0)" in line for line in result.logs)
    assert any("more log messages not kept" in line for line in result.logs)


async def test_a_command_that_cannot_start_loses(tmp_path):
    missing = BotCommand(argv=("/nonexistent/bot",), name="ghost")
    result = await play_one(tmp_path, missing)
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


# --- when a line counts, and what a fault costs ---------------------------------------

REPLY_2 = b'{"type":"turn","id":2,"actions":[]}\n'  # the first turn request has id 2


def reason_of(result: GameResult) -> str:
    return result.ending.reason


async def test_both_bots_failing_the_start_is_a_draw_by_adjudication(tmp_path):
    pgn = tmp_path / "m.pgn"
    with trio.fail_after(60):
        score = await run_match(
            [fake("exit_at_start", name="quitter"), fake("garbage_ready", name="mumbler")],
            config(tmp_path),
            games=2,
            pgn=pgn,
        )
    games = read_pgn_file(pgn)
    assert [(g.result, g.tags["Termination"]) for g in games] == [("1/2-1/2", "adjudication")] * 2
    for game in games:
        assert "(quitter) forfeits: exited (exit code 0)" in game.comment
        assert "(mumbler) forfeits: line is not JSON" in game.comment
        assert verify(game).valid
    assert (score.wins, score.draws, score.losses) == (0, 2, 0)
    # Each game was played by fresh processes: every bot that faulted is replaced.
    for name in ("quitter", "mumbler"):
        assert len(list((tmp_path / "logs").glob(f"{name}-*.stderr.log"))) == 2
    assert leftover_processes() == []


async def test_one_bot_failing_the_start_loses_it(tmp_path):
    result = await play_one(tmp_path, fake("garbage_ready"), bad_seat=1)
    assert (result.result, result.record.tags["Termination"]) == ("1-0", "rules infraction")
    assert result.ending.faulty_seats == (1,)


@pytest.mark.parametrize("bad_seat", [0, 1])
async def test_a_reply_before_its_request_loses_the_game_it_was_written_in(tmp_path, bad_seat):
    # Its ready and, in the same write, the reply to the turn request it expects next.
    result = await play_one(tmp_path, sending("early", REPLY_2), bad_seat=bad_seat)
    assert result.ending.faulty_seats == (bad_seat,)
    assert "unexpected turn: no request is waiting for a reply" in reason_of(result)
    assert len(result.record.turns) == bad_seat  # caught before its first turn was played


async def test_a_second_reply_loses_the_game_it_was_written_in_not_the_next(tmp_path):
    pgn = tmp_path / "m.pgn"
    with trio.fail_after(60):
        await run_match(
            [sending("late", REPLY_2), fake(name="pass")], config(tmp_path), games=2, pgn=pgn
        )
    first, second = read_pgn_file(pgn)
    assert (first.result, first.tags["Termination"]) == ("0-1", "rules infraction")
    assert "unexpected turn: no request is waiting" in first.turns[-1].comment
    # A fresh process, which did it again, at its own second turn (turn 4), not at the start.
    assert (second.result, second.tags["Termination"]) == ("1-0", "rules infraction")
    assert len(second.turns) == 3
    assert len(list((tmp_path / "logs").glob("hostile-*.stderr.log"))) == 2


async def test_a_second_reply_after_the_deciding_turn_changes_nothing(tmp_path):
    cfg = MatchConfig(
        control=TimeControl.parse("5+0"),
        allowances=Allowances(startup=5.0),
        options={"turn_limit": 1},
        log_dir=tmp_path,
    )
    results: list[GameResult] = []
    with trio.fail_after(60):
        await run_match(
            [sending("late", REPLY_2), fake(name="pass")],
            cfg,
            games=2,
            on_game=lambda n, result, score: results.append(result),
        )
    first, second = results
    assert (first.result, first.record.tags["Termination"]) == ("1/2-1/2", "normal")
    assert any(
        "after the game was decided (no change to it): unexpected turn" in line
        for line in first.logs
    )
    assert (second.result, second.record.tags["Termination"]) == ("1/2-1/2", "normal")
    # ... but it cost the bot its process: the second game had a fresh one.
    assert len(list(tmp_path.glob("hostile-*.stderr.log"))) == 2
    log = (tmp_path / "game-0001.log").read_text(encoding="utf-8")
    assert 'offending line (35 bytes): {"type":"turn","id":2,"actions":[]}' in log


async def test_a_bot_that_broke_the_protocol_reads_its_error_and_exits_by_itself(tmp_path):
    with trio.fail_after(60):
        await run_match([fake("listen", name="listener"), fake(name="pass")], config(tmp_path))
    [stderr] = (tmp_path / "logs").glob("listener-*.stderr.log")
    said = stderr.read_text(encoding="utf-8")
    assert 'misbehave: read {"type":"error","code":"parse_error"' in said
    assert 'misbehave: read {"type":"game_over"' in said
    assert 'misbehave: read {"type":"quit"}' in said
    assert "misbehave: exiting by myself" in said


async def test_the_game_log_keeps_what_the_record_cannot(tmp_path):
    bad = b"not json \x1b[31m red \\ back\rslash \xff\n"
    pgn = tmp_path / "m.pgn"
    with trio.fail_after(60):
        await run_match([sending("turn", bad), fake(name="pass")], config(tmp_path), pgn=pgn)
    log = (tmp_path / "logs" / "game-0001.log").read_text(encoding="utf-8")
    lines = log.splitlines()
    assert {
        "Green (hostile): ready: name 'send'",
        "Purple (pass): ready: name 'pass', version '1.0'",
    } == set(lines[:2])
    # The whole offending line, escaped: one entry per line, no control byte in the file.
    assert (
        "Green (hostile): offending line (33 bytes): not json \\x1b[31m red \\\\ back\\rslash \\xff"
    ) in lines
    assert any(
        line.startswith(
            "result: 0-1 (rules infraction): Green (hostile) forfeits: line is not valid UTF-8"
        )
        for line in lines
    )
    assert all(line.isprintable() for line in lines)
    [game] = read_pgn_file(pgn)
    assert verify(game).valid


async def test_ids_count_up_per_process_across_games(tmp_path):
    cfg = MatchConfig(
        control=TimeControl.parse("5+0"),
        allowances=Allowances(startup=5.0),
        options={"turn_limit": 2},
    )
    logs: list[str] = []
    with trio.fail_after(60):
        await run_match(
            [fake("tell_ids", name="counter"), fake(name="pass")],
            cfg,
            games=2,
            on_game=lambda n, result, score: logs.extend(result.logs),
        )
    said = [
        line.split(": ", 1)[1] for line in logs if line.split(" ", 1)[1].startswith("(counter)")
    ]
    ids = [int(text.removeprefix("id ")) for text in said if text.startswith("id ")]
    # Game 1 (Green): new_game 1, turn 2, game_over 3; game 2 (Purple): new_game 4, turn 5.
    # (The log of game_over 6 is never read: the match ends.)
    assert ids == [1, 2, 3, 4, 5]


async def test_a_local_protocol_error_is_never_swallowed(tmp_path):
    async with trio.open_nursery() as nursery:
        player = BotPlayer(fake(name="pass"), "pass", nursery)
        link = await player.link()
        with pytest.raises(LocalProtocolError, match="cannot send game_over in phase idle"):
            await link.goodbye(GameOver(id=1, result="*", scores=(), termination="", reason=""))
        await player.close()


# --- what no bot can make the referee write or keep -------------------------------------


async def test_a_huge_value_is_quoted_short_to_every_bot_and_the_next_game_is_clean(tmp_path):
    # A megabyte cell name: its game_over once went out whole, was cut short, and the
    # innocent bot's next game began glued to half a line.
    results: list[GameResult] = []
    with trio.fail_after(60):
        await run_match(
            [fake("huge_cell", name="huge"), fake("measure", name="measure")],
            config(tmp_path),
            games=2,
            on_game=lambda n, result, score: results.append(result),
        )
    assert [result.result for result in results] == ["0-1", "1-0"]  # huge loses both
    for result in results:
        assert result.ending.faulty_seats == (results.index(result),)
        assert "unknown cell 'xxx" in reason_of(result)
        assert "(1000000 characters)" in reason_of(result)
        assert len(reason_of(result)) < 1000
    [stderr] = (tmp_path / "logs").glob("measure-*.stderr.log")  # one process: reused
    read = [line.split()[2:] for line in stderr.read_text().splitlines()]
    # Every message whole, each a short line: game 1, where it was Purple, then game 2.
    kinds = ["new_game", "game_over", "new_game", "turn", "game_over", "quit"]
    assert [kind for kind, _ in read] == kinds
    assert max(int(size) for _, size in read) < 4096
    assert leftover_processes() == []


async def test_a_bot_that_does_not_take_its_goodbye_is_never_reused(tmp_path):
    async with trio.open_nursery() as nursery:
        player = BotPlayer(fake("no_read", name="deaf"), "deaf", nursery)
        link = await player.link()
        with trio.fail_after(60):
            # More than its input pipe holds: the write stops half-way.
            await link.goodbye(ErrorMessage(code="timeout", message="x" * 300_000))
        assert link.broken
        assert "did not read its error message within" in str(link.fault)
        with trio.fail_after(60):
            await link.goodbye(Quit())  # nothing more is written to it
            assert await player.link() is not link  # a fresh process
        await player.close()
    assert leftover_processes() == []


@pytest.mark.parametrize("bad_seat", [0, 1])
async def test_a_reply_started_before_its_request_loses(tmp_path, bad_seat):
    # Half its reply with its ready, the rest once the request came: early all the same.
    result = await play_one(tmp_path, fake("split_reply", name="split"), bad_seat=bad_seat)
    assert result.ending.faulty_seats == (bad_seat,)
    assert "reply started before its request" in reason_of(result)
    assert len(result.record.turns) == bad_seat


class _Flooder:
    """A stand-in for a bot process that always has more output waiting (log lines)."""

    def __init__(self) -> None:
        self.read = 0

    async def receive_nowait(self, max_bytes: int = 65536) -> bytes:
        self.read += max_bytes
        return b'{"type":"log","message":"x"}\n' * (max_bytes // 29)


class _Deaf:
    """A stand-in for a bot process whose input pipe takes 10 bytes, then no more."""

    def __init__(self) -> None:
        self.written = b""

    async def receive_nowait(self, max_bytes: int = 65536) -> bytes | None:
        return None

    async def send_nowait(self, data: bytes) -> int:
        self.written += data[:10]
        return min(len(data), 10)

    async def send_all(self, data: bytes) -> None:
        await trio.sleep_forever()


async def test_a_request_written_half_way_is_a_timeout_and_nothing_more_is_written():
    deaf = _Deaf()
    link = _Link(deaf, DEFAULT_MAX_LINE_BYTES)  # type: ignore[arg-type]
    with pytest.raises(BotTimeout, match=r"^did not read its input for 0\.010 s$"):
        await link.ask(new_game(), 0.01)
    assert link.broken
    await link.goodbye(Quit())
    assert len(deaf.written) == 10  # the quit was not written after the half request


async def test_more_output_waiting_than_the_drain_reads_is_a_flood():
    flooder = _Flooder()
    link = _Link(flooder, DEFAULT_MAX_LINE_BYTES)  # type: ignore[arg-type]
    await link.drain()
    assert isinstance(link.fault, ProtocolViolation)
    assert (link.fault.code, str(link.fault)) == (
        "flood",
        f"more than {DRAIN_LIMIT} bytes of output were waiting to be read",
    )
    assert DRAIN_LIMIT <= flooder.read <= DRAIN_LIMIT + 2 * 65536  # it stopped there


async def test_the_game_log_is_bounded_per_bot(tmp_path):
    # 201 logs of 4000 U+10FFFF (40 KB each once escaped) per turn: legal, but bounded.
    pgn = tmp_path / "m.pgn"
    with trio.fail_after(60):
        await run_match(
            [fake("log_flood", name="spam"), fake("oversized", name="big")],
            config(tmp_path),
            pgn=pgn,
        )
    log = tmp_path / "logs" / "game-0001.log"
    lines = log.read_text(encoding="utf-8").splitlines()
    spam = [line for line in lines if line.startswith("Green (spam)")]
    assert sum(len(line.encode()) + 1 for line in spam[:-1]) <= GAME_LOG_LIMIT
    assert spam[-1].startswith("Green (spam): … ")
    assert spam[-1].endswith(
        f"bytes of its entries dropped (a game's log keeps {GAME_LOG_LIMIT} bytes per bot)"
    )
    # The 2 MiB line that lost the game is quoted up to its first 4096 bytes.
    [offending] = [line for line in lines if "offending line" in line]
    assert offending.startswith("Purple (big): offending line (1048577 bytes): {")
    assert offending.endswith(" … [1044481 more bytes not shown]")
    assert len(offending) < 5000
    assert log.stat().st_size < 2 * GAME_LOG_LIMIT


async def test_a_replaced_bot_keeps_its_cpu_under_affinity(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    policy = SandboxPolicy(affinity=True)
    async with trio.open_nursery() as nursery:
        first, second = (
            BotPlayer(fake(name=name), name, nursery, sandbox=policy) for name in ("a", "b")
        )
        one, other = await first.link(), await second.link()
        assert one.process.cpus != other.process.cpus
        # Replaced while its old process is still being stopped (which holds its CPU):
        # the new one gets that CPU, not the least used one (its opponent's).
        await first.retire(wait=False)
        again = await first.link()
        assert again is not one and again.process.cpus == one.process.cpus
        await first.close()
        await second.close()
    assert leftover_processes() == []


async def test_a_bot_found_dead_before_its_new_game_is_not_told_the_game_over(
    tmp_path, monkeypatch
):
    # Its process exited between games and the drain before new_game found it: it never
    # joined the game, so sending it game_over would break the protocol (a crash of ours).
    real_link = BotPlayer.link

    async def dead_link(self: BotPlayer) -> Any:
        link = await real_link(self)
        if self.name == "gone":
            link.fault = BotCrashed("its stdout closed")
        return link

    monkeypatch.setattr(BotPlayer, "link", dead_link)
    score = await run_match([fake(name="gone"), fake(name="pass")], config(tmp_path), games=1)
    assert (score.wins, score.draws, score.losses) == (0, 0, 1)
    assert leftover_processes() == []
