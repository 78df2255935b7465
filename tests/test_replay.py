"""Replaying records through the rules: legal turns, results, terminations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.errors import RecordError
from referee.pgn import GameRecord, PgnError, RecordedTurn, read_games, read_pgn_file
from referee.replay import check_games, replay, verify

DATA = Path(__file__).parent / "data"

START = (
    "./.../...../.#...#./........./........./..#...#../........./........./....#..../"
    "....#..../..g...p.. g 1 2 1"
)
SPEC_FINAL = (
    "./.../...../.#...#./........./........./..#...#../........w/.......1./....#.pP./"
    "..G.#.Pp./..g..pp.. g 8 0 9"
)
"""The position the spec (§8) gives after its example's eight turns."""

SPEC_TURNS = "c2+b2 f1+f2+g2 Lc2+b3+Lb2+b4 h2+Lg2+h3+xf2 xb2 h1+xh1 -- h4+h5+i5+Lh3+g3+xh4"

GREEN_AT_TOP = (
    "G/.g./..g../.#.g.#./....g..../....g..../..#.g.#../..ggg..../..g....../..g.#..../"
    "..g.#..../..g...p.. p 0 3 40"
)
"""Purple to play turn 40; Green holds a leaf on e12 and wins at the next Feed."""


def game(tokens: str, result: str = "*", **tags: str) -> GameRecord:
    """A record of the space-separated ``tokens`` with ``tags``."""
    return GameRecord(
        tags={"White": "alice", "Black": "bob", **tags},
        turns=[RecordedTurn(token) for token in tokens.split()],
        result=result,
    )


def from_the_top(tokens: str, result: str, **tags: str) -> GameRecord:
    """A record starting from :data:`GREEN_AT_TOP`."""
    return game(tokens, result, SetUp="1", Position=GREEN_AT_TOP, **tags)


# --- the spec's example ---------------------------------------------------------


def test_the_spec_example_replays_to_the_stated_position() -> None:
    [record] = read_pgn_file(DATA / "spec_example.pgn")
    assert isinstance(record, GameRecord)
    report = verify(record)
    assert report.final_notation == SPEC_FINAL
    assert report.valid, report.reason
    assert report.reason == "unfinished"
    assert report.players == ("random", "greedy")
    assert (report.recorded_result, report.rules_result, report.turns) == ("*", "*", 8)
    assert report.first_illegal is None
    assert report.rules_reason is None


def test_replay_keeps_every_position_for_show() -> None:
    played = replay(game(SPEC_TURNS))
    assert played.first_turn == 1
    assert played.notation_before(1) == START
    assert played.notation_before(9) == SPEC_FINAL
    assert played.notation_before() == SPEC_FINAL
    assert played.notation_before(5).endswith(" g 0 1 5")
    with pytest.raises(RecordError, match="positions before turns 1 to 9"):
        played.notation_before(10)


def test_a_setup_game_is_read_from_its_fen_tag_or_an_old_position_tag() -> None:
    new = game("--", "1-0", SetUp="1", FEN=GREEN_AT_TOP, Variant="Ivy")
    old = game("--", "1-0", SetUp="1", Position=GREEN_AT_TOP, Game="Ivy")
    for record in (new, old):
        report = verify(record)
        assert report.valid, report.reason
        assert replay(record).notation_before(40) == GREEN_AT_TOP


def test_a_setup_game_starting_with_purple_counts_from_its_turn() -> None:
    played = replay(from_the_top("--", "1-0"))
    assert played.first_turn == 40
    assert played.notation_before(40) == GREEN_AT_TOP
    assert played.notation_before(41).endswith(" g 0 6 41")
    with pytest.raises(RecordError, match="turns 40 to 41"):
        played.notation_before(1)


# --- results and terminations ------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (from_the_top("--", "1-0"), "Green reached the top"),
        (from_the_top("--", "1-0", Termination="normal", PlyCount="1"), "Green reached the top"),
        (game(SPEC_TURNS, "1/2-1/2", TurnLimit="8"), "turn limit 8 reached"),
        (game(SPEC_TURNS, "*", Termination="unterminated"), "unfinished"),
        (game(SPEC_TURNS, "*"), "unfinished"),
        (game(SPEC_TURNS, "0-1", Termination="time forfeit"), "time forfeit"),
        (game(SPEC_TURNS, "1-0", Termination="rules infraction"), "rules infraction"),
        (game(SPEC_TURNS, "0-1", Termination="Abandoned"), "abandoned"),
        (game(SPEC_TURNS, "1/2-1/2", Termination="adjudication"), "adjudication"),
        (game("", "1-0", Termination="time forfeit"), "time forfeit"),
    ],
)
def test_valid_records(record: GameRecord, reason: str) -> None:
    report = verify(record)
    assert report.valid, report.reason
    assert report.reason == reason


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (from_the_top("--", "0-1"), "result 0-1 but the rules give 1-0 (Green reached the top)"),
        (from_the_top("--", "*"), "result * but the rules give 1-0"),
        (game(SPEC_TURNS, "1-0"), "result 1-0 but the rules say the game goes on"),
        (game(SPEC_TURNS, "1-0", Termination="normal"), "the rules say the game goes on"),
        (game(SPEC_TURNS, "*", Termination="normal"), "not 'unterminated'"),
        (game(SPEC_TURNS, "1-0", Termination="unterminated"), "the game goes on"),
        (game(SPEC_TURNS, "1/2-1/2", Termination="time forfeit"), "cannot be a draw"),
        (game(SPEC_TURNS, "0-1", Termination="bored"), "unknown Termination 'bored'"),
        (game(SPEC_TURNS, "*", PlyCount="7"), "PlyCount is 7 but 8 turns are recorded"),
        (
            from_the_top("--", "0-1", Termination="time forfeit"),
            "the rules ended the game (Green reached the top) but Termination is 'time forfeit'",
        ),
    ],
)
def test_invalid_records(record: GameRecord, reason: str) -> None:
    report = verify(record)
    assert not report.valid
    assert reason in report.reason
    assert report.first_illegal is None


def test_a_time_forfeit_is_lost_by_the_player_to_move() -> None:
    # After SPEC_TURNS (8 turns) Green is to play turn 9: only its clock was running.
    lost_by_green = game(SPEC_TURNS, "0-1", Termination="time forfeit")
    assert verify(lost_by_green).valid
    flipped = verify(game(SPEC_TURNS, "1-0", Termination="time forfeit"))
    assert not flipped.valid
    assert flipped.reason == (
        "result 1-0 but a time forfeit is lost by the player to move (Green), which gives 0-1"
    )
    # Purple to move after one turn.
    assert verify(game("c2+b2", "1-0", Termination="time forfeit")).valid
    assert not verify(game("c2+b2", "0-1", Termination="time forfeit")).valid


def test_a_time_forfeit_before_the_first_turn_may_be_either_players() -> None:
    # Either bot may overrun its start-up allowance in the handshake.
    for result in ("1-0", "0-1"):
        assert verify(game("", result, Termination="time forfeit")).valid
        assert verify(from_the_top("", result, Termination="time forfeit")).valid


def test_other_forfeits_may_be_lost_by_either_player() -> None:
    # A bot may crash or send a bad line while the other one thinks.
    for termination in ("rules infraction", "abandoned"):
        for result in ("1-0", "0-1"):
            assert verify(game(SPEC_TURNS, result, Termination=termination)).valid


# --- illegal turns -----------------------------------------------------------------


def test_an_illegal_turn_is_found_and_replay_stops_before_it() -> None:
    report = verify(game("c2+b2 f1+f2+g2 Lc2+b3+Lb2+b4 h2+Lg2+h3+xf2 h9 h1+xh1"))
    assert not report.valid
    assert report.first_illegal is not None
    assert report.first_illegal.turn == 5
    assert report.first_illegal.token == "h9"
    assert report.first_illegal.reason.startswith("turn 5 (Green): ")
    assert "h9" in report.first_illegal.reason
    assert report.reason == report.first_illegal.reason
    assert report.final_notation.endswith(" g 0 1 5")


def test_bad_turn_notation_is_an_illegal_turn_naming_the_player() -> None:
    report = verify(game("c2 zz9"))
    assert report.first_illegal is not None
    assert report.first_illegal.turn == 2
    assert report.first_illegal.reason.startswith("turn 2 (Purple): ")
    assert "zz9" in report.first_illegal.reason


def test_a_turn_after_a_win_at_feed_is_illegal() -> None:
    report = verify(from_the_top("-- c2", "1-0"))
    assert not report.valid
    assert report.first_illegal is not None
    assert report.first_illegal.turn == 41
    assert report.first_illegal.reason == "turn 41: the game was over (Green reached the top)"
    assert report.rules_result == "1-0"


def test_a_turn_after_the_turn_limit_is_illegal() -> None:
    report = verify(game(SPEC_TURNS, "1/2-1/2", TurnLimit="7"))
    assert report.first_illegal is not None
    assert report.first_illegal.turn == 8
    assert "turn limit 7 reached" in report.first_illegal.reason


# --- records that cannot be set up ----------------------------------------------------


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"Game": "chess"}, "unknown game 'chess'"),
        ({"SetUp": "1"}, "FEN tag goes with"),
        ({"Position": START}, "FEN tag goes with"),
        ({"FEN": START}, "FEN tag goes with"),
        ({"SetUp": "0", "FEN": START}, "FEN tag goes with"),
        (
            {"Game": "Ivy", "Variant": "chess"},
            "Game tag 'Ivy' and the Variant tag 'chess' disagree",
        ),
        ({"Variant": "go"}, "unknown game 'go'"),
        ({"SetUp": "yes", "Position": START}, "SetUp tag must be"),
        ({"SetUp": "1", "FEN": START.replace(" g 1 2 1", " p 1 2 1")}, "cannot set up"),
        ({"TurnLimit": "lots"}, "TurnLimit tag 'lots'"),
        ({"TurnLimit": "0"}, "turn_limit"),
    ],
)
def test_records_that_cannot_be_set_up_raise(tags: dict[str, str], message: str) -> None:
    with pytest.raises(RecordError, match=message):
        verify(game("c2", **tags))


def test_check_games_reports_every_game_of_a_file() -> None:
    checks = list(check_games(read_pgn_file(DATA / "mixed.pgn")))
    assert [check.valid for check in checks] == [True, False, False, True, False]
    assert checks[0].reason == "unfinished"
    assert checks[1].reason.startswith("turn 5 (Green): ")
    assert checks[2].record is None
    assert isinstance(checks[2].error, PgnError)
    assert checks[2].reason == "line 36: unexpected '&&&' in the movetext"
    assert checks[3].reason == "Green reached the top"
    assert checks[4].reason == "turn 41: the game was over (Green reached the top)"


def test_check_games_reports_a_set_up_it_cannot_make() -> None:
    [check] = check_games(read_games('[Game "go"]\n\n1. c2 *\n'))
    assert not check.valid
    assert check.record is not None
    assert check.report is None
    assert "unknown game 'go'" in check.reason


# --- a tampered file ---------------------------------------------------------------------


def _lost_on_time(turns_before: int) -> GameRecord:
    """A real record from the referee's session: the bot to move overruns its clock."""
    import msgspec

    from protocol.messages import TurnReply
    from referee.clock import TimeControl
    from referee.games import get_entry, get_game
    from referee.games.base import GameSettings
    from referee.session import GameSession

    session = GameSession(
        get_game("ivy"),
        get_entry("ivy").codec,
        GameSettings(players=2, options={"turn_limit": 200}),
        players=("alice", "bob"),
        control=TimeControl.parse("1+0.1"),
        max_line_bytes=1 << 20,
    )
    for request_id in range(1, turns_before + 2):
        request = session.next_request(request_id)
        took = 0.05 if request_id <= turns_before else 5.0
        pass_turn = TurnReply(id=request_id, actions=msgspec.Raw(b"[]"))
        session.submit(request.seat, pass_turn, took)
    return session.record()


def test_replay_finds_time_forfeits_whose_results_were_flipped(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from referee.cli import main
    from referee.pgn import append_game

    honest = tmp_path / "honest.pgn"
    for turns in (2, 3):
        append_game(honest, _lost_on_time(turns))
    assert [g.result for g in read_pgn_file(honest)] == ["0-1", "1-0"]
    assert CliRunner().invoke(main, ["replay", str(honest)]).exit_code == 0

    swap = {"1-0": "0-1", "0-1": "1-0"}
    tampered = tmp_path / "tampered.pgn"
    tampered.write_text(
        re.sub(r'(?<=[ "])(1-0|0-1)(?=["\n])', lambda m: swap[m[1]], honest.read_text())
    )
    assert [g.result for g in read_pgn_file(tampered)] == ["1-0", "0-1"]

    run = CliRunner().invoke(main, ["replay", str(tampered)])
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert len(lines) == 2
    assert all("INVALID: result" in line and "time forfeit" in line for line in lines)


def test_replay_prints_what_a_file_holds_without_its_control_bytes(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from referee.cli import main

    path = tmp_path / "other-tool.pgn"
    path.write_text(
        '[White "\x1b]0;owned\x07al\x1b[31mice"]\n[Black "bob"]\n\n1. c2 *\n\n'
        '[White "carol"]\n[Black "dave"]\n\n1. c2 \x1b[2J *\n'
    )
    run = CliRunner().invoke(main, ["replay", str(path)])
    assert run.exit_code == 1
    assert "\x1b" not in run.output and "\x07" not in run.output
    assert run.stdout.splitlines() == [
        "game 1: alice vs bob, *, 1 turn, valid",
        "game 2: INVALID: line 9: unexpected '\\x1b[2J' in the movetext",
    ]
