"""Replaying records through the rules: legal turns, results, terminations."""

from __future__ import annotations

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
        ({"SetUp": "1"}, "Position tag goes with"),
        ({"Position": START}, "Position tag goes with"),
        ({"SetUp": "yes", "Position": START}, "SetUp tag must be"),
        ({"SetUp": "1", "Position": START.replace(" g 1 2 1", " p 1 2 1")}, "cannot set up"),
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
