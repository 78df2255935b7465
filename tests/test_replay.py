"""Replaying records through the rules: legal turns, results, terminations."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from referee.errors import RecordError
from referee.pgn import (
    GameRecord,
    PgnError,
    RecordedTurn,
    outcome_tags,
    read_games,
    read_pgn_file,
    result_places,
)
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
        (game("", "1/2-1/2", Termination="adjudication"), "adjudication"),
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
        (game("", "1/2-1/2", Termination="time forfeit"), "adjudicated, not lost by time"),
        (game(SPEC_TURNS, "0-1", Termination="bored"), "unknown Termination 'bored'"),
        (game(SPEC_TURNS, "*", PlyCount="7"), "PlyCount is 7 but 8 turns are recorded"),
        # The referee adjudicates only a game that every seat failed to start.
        (game(SPEC_TURNS, "1/2-1/2", Termination="adjudication"), "no seat started it"),
        (game("", "1-0", Termination="adjudication"), "shares place 1 among all"),
        (game("", "1/2-1/2", Termination="time forfeit", Scores="1-0"), "scores '0-0'"),
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


# --- games of chance and of any number of seats (tests/tinygames.py) ----------------------

from tinygames import dice_record, registered  # noqa: E402

from referee.games import CHANCE  # noqa: E402
from referee.pgn import format_game  # noqa: E402

SEATS = ("ann", "bea", "cy", "dan", "eve")


@pytest.fixture
def dice(monkeypatch: pytest.MonkeyPatch) -> None:
    registered(monkeypatch)


def retagged(record: GameRecord, result: str | None = None, **tags: str) -> GameRecord:
    """``record`` with other tags (and result)."""
    result = result or record.result
    return GameRecord(
        tags={**record.tags, **tags, "Result": result}, turns=record.turns, result=result
    )


def returned(record: GameRecord, index: int, **changes: object) -> GameRecord:
    """``record`` with decision ``index`` changed."""
    turns = list(record.turns)
    turns[index] = dataclasses.replace(turns[index], **changes)  # type: ignore[arg-type]
    return GameRecord(tags=record.tags, turns=turns, result=record.result)


@pytest.mark.parametrize("seats", [1, 2, 3, 5])
def test_a_game_of_chance_replays_from_its_record_alone(dice: None, seats: int) -> None:
    record = dice_record(SEATS[:seats], seed=seats)
    [read] = read_games(format_game(record))
    report = verify(read)
    assert report.valid, report.reason
    assert report.reason == "all rounds played"
    assert report.players == SEATS[:seats]
    assert report.rules_result == record.result
    assert report.outcome is not None and len(report.outcome.places) == seats
    line = report.breakdown_line
    assert line is not None and line.count("; ") == seats - 1
    assert line.startswith("seat=1 place=")
    played = replay(read)
    assert played.seats == seats and played.broken is None
    assert len(played.states) == len(record.turns) + 1


def test_the_final_line_gives_each_seats_place_and_breakdown(dice: None) -> None:
    record = dice_record(SEATS[:3], seed=7)
    assert record.result == "2-1-2"
    assert verify(record).breakdown_line == (
        "seat=1 place=2 dice=6 bonus=4 total=10; seat=2 place=1 dice=0 bonus=11 total=11;"
        " seat=3 place=2 dice=4 bonus=6 total=10"
    )


def test_a_draw_chance_could_not_give_is_illegal(dice: None) -> None:
    record = dice_record(SEATS[:3])
    report = verify(returned(record, 2, token="keep"))  # decision 2 is the second roll
    assert report.first_illegal is not None
    assert report.first_illegal.turn == 2
    assert report.first_illegal.token == "c:keep"
    assert report.reason == "turn 2: chance cannot give keep here"
    unreadable = verify(returned(record, 0, token="d9"))
    assert unreadable.reason == "turn 1 (chance): 'd9' is not a dice decision"


@pytest.mark.parametrize(
    ("index", "changes", "reason"),
    [
        (1, {"actor": 1}, "turn 1: seat 1 decides, not seat 2"),
        (2, {"actor": 0, "clock": None}, "turn 2: chance decides, not seat 1"),
        (0, {"actor": 2, "clock": None}, "turn 1: chance decides, not seat 3"),
        (3, {"turn": 3}, "turn 2: the record says turn 3"),
    ],
)
def test_a_decision_recorded_under_another_actor_or_turn_is_illegal(
    dice: None, index: int, changes: dict[str, object], reason: str
) -> None:
    report = verify(returned(dice_record(SEATS[:3]), index, **changes))
    assert not report.valid
    assert report.reason == reason


def test_a_record_that_does_not_name_actors_is_refused_for_such_a_game(dice: None) -> None:
    record = dice_record(SEATS[:2], stop_after=3)
    plain = GameRecord(
        tags=record.tags,
        turns=[RecordedTurn(turn.token) for turn in record.turns if turn.actor == CHANCE],
        result="*",
    )
    report = verify(retagged(plain, "*", PlyCount="2"))
    assert report.reason == "turn 1: chance decides, but the record does not say who (s1:…, c:…)"


@pytest.mark.parametrize(
    ("tags", "result", "reason"),
    [
        ({}, "1-2-2", "result 1-2-2 but the rules give 2-1-2 (all rounds played)"),
        ({"Places": "1-2-3"}, None, "its Places tag is '1-2-3' but the rules give '2-1-2'"),
        ({"Scores": "10-11-11"}, None, "its Scores tag is '10-11-11'"),
        (
            {"Seat2Score": "dice=1 bonus=10 total=11"},
            None,
            "its Seat2Score tag is 'dice=1 bonus=10 total=11' but the rules give"
            " 'dice=0 bonus=11 total=11'",
        ),
        ({"Seat3Score": ""}, None, "its Seat3Score tag is ''"),
    ],
)
def test_scores_that_the_rules_do_not_give_are_invalid(
    dice: None, tags: dict[str, str], result: str | None, reason: str
) -> None:
    record = dice_record(SEATS[:3], seed=7)
    report = verify(retagged(record, result, **tags))
    assert not report.valid
    assert reason in report.reason


def test_a_record_without_its_score_tags_is_invalid(dice: None) -> None:
    record = dice_record(SEATS[:2])
    tags = {k: v for k, v in record.tags.items() if k != "Seat1Score"}
    report = verify(GameRecord(tags=tags, turns=record.turns, result=record.result))
    assert report.reason.startswith("its Seat1Score tag is None")


def unfinished(
    seats: int, decisions: int, result: str, termination: str, *, score_tags: bool = True
) -> GameRecord:
    """A game of dice stopped after ``decisions`` decisions, ended by ``termination``,
    with the ``Places`` and ``Scores`` tags the referee writes for a game of points."""
    record = dice_record(SEATS[:seats], stop_after=decisions)
    places = result_places(result, seats)
    tags = {}
    if score_tags and places is not None:
        tags = outcome_tags(places, (0.0,) * seats, (), points=True)
    return retagged(record, result, Termination=termination, **tags)


def test_a_finished_game_of_points_without_its_score_tags_is_not_the_referees(dice: None) -> None:
    report = verify(unfinished(3, 3, "1-3-1", "time forfeit", score_tags=False))
    assert not report.valid
    assert "records its Places and Scores tags" in report.reason


@pytest.mark.parametrize(
    ("seats", "decisions", "result", "termination"),
    [
        (3, 3, "1-3-1", "time forfeit"),  # chance, seat 1, chance: seat 2 is to decide
        (3, 1, "1-1-3", "time forfeit"),  # before a seat's decision: anyone's start-up
        (3, 3, "3-1-1", "rules infraction"),
        (3, 3, "1-2-2", "abandoned"),
        (5, 3, "1-1-1-1-5", "rules infraction"),
        (3, 1, "1-1-1", "adjudication"),  # chance dealt, then every seat failed the start
        (3, 1, "1-3-1", "time forfeit"),  # seat 2's start-up allowance, seat 1 to decide
        (3, 1, "1-2-2", "time forfeit"),  # seat 2 timed out, seat 3 crashed at the start
        (1, 1, "0", "time forfeit"),
        (2, 3, "1-0", "time forfeit"),
    ],
)
def test_forfeits_of_any_number_of_seats(
    dice: None, seats: int, decisions: int, result: str, termination: str
) -> None:
    report = verify(unfinished(seats, decisions, result, termination))
    assert report.valid, report.reason
    assert report.reason == termination


@pytest.mark.parametrize(
    ("seats", "decisions", "result", "termination", "reason"),
    [
        (
            3,
            3,
            "3-1-1",
            "time forfeit",
            "result 3-1-1 but a time forfeit is lost by the player to move (seat 2),"
            " which gives 1-3-1",
        ),
        (3, 1, "1-1-1", "rules infraction", "adjudicated, not lost by rules infraction"),
        (3, 3, "1-2-3", "abandoned", "the faulty seats share the last place"),
        (1, 1, "4", "time forfeit", "a solo game lost by time forfeit scores 0, not 4"),
        (2, 3, "0-1", "time forfeit", "(seat 2), which gives 1-0"),
        (3, 3, "2-1-3", "normal", "the rules say the game goes on"),
        (3, 3, "1-1-1", "adjudication", "only when no seat started it, but seats decided"),
        (3, 1, "1-1-3", "adjudication", "an adjudicated game shares place 1 among all"),
        (3, 2, "1-3-1", "time forfeit", "cannot end by time forfeit while chance is to decide"),
        (3, 2, "1-1-3", "abandoned", "cannot end by abandoned while chance is to decide"),
    ],
)
def test_forfeits_that_do_not_fit_the_record_are_invalid(
    dice: None, seats: int, decisions: int, result: str, termination: str, reason: str
) -> None:
    report = verify(unfinished(seats, decisions, result, termination))
    assert not report.valid
    assert reason in report.reason


def test_a_places_tag_must_agree_with_the_result_of_a_forfeit(dice: None) -> None:
    record = unfinished(3, 3, "1-3-1", "time forfeit")
    assert verify(retagged(record, Places="1-3-1", Scores="0-0-0")).valid
    report = verify(retagged(record, Places="3-1-1"))
    assert report.reason == "its Places tag is '3-1-1' but its result 1-3-1 gives other places"


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"Rounds": "lots"}, "Rounds tag 'lots' is not a setting: rounds must be"),
        ({"Seed": "x1"}, "Seed tag 'x1' is not a whole number"),
        ({"Attempt": "0"}, "Attempt tag '0' is not a whole number from 1"),
        ({"Attempt": "02"}, "Attempt tag '02' is not a whole number from 1"),
        ({f"Seat{n}": "p" for n in range(1, 7)}, "played by 1 to 5 seats, not 6"),
    ],
)
def test_dice_records_that_cannot_be_set_up_raise(
    dice: None, tags: dict[str, str], message: str
) -> None:
    record = GameRecord(tags={"Game": "Dice", "Seat1": "a", **tags})
    with pytest.raises(RecordError, match=message):
        verify(record)
    with pytest.raises(RecordError, match="does not name dice's seats"):
        verify(GameRecord(tags={"Game": "Dice", "White": "a", "Black": "b"}))


def test_replay_and_show_on_the_command_line(dice: None, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from referee.cli import main
    from referee.pgn import append_game

    path = tmp_path / "dice.pgn"
    finished = dice_record(SEATS[:3], seed=7)
    append_game(path, finished)
    append_game(path, dice_record(SEATS[:2], stop_after=5))
    append_game(path, returned(finished, 2, token="keep"))
    runner = CliRunner()
    run = runner.invoke(main, ["replay", str(path)])
    assert run.exit_code == 1
    assert run.stdout.splitlines() == [
        "game 1: ann vs bea vs cy, 2-1-2, 12 decisions, valid",
        "game 2: ann vs bea, *, 5 decisions, valid",
        "game 3: ann vs bea vs cy, 2-1-2, 12 decisions, INVALID: turn 2: chance cannot give"
        " keep here",
    ]
    final = runner.invoke(main, ["replay", "--final-position", str(path)])
    assert final.stdout.splitlines() == [
        verify(finished).breakdown_line,
        "turn 3 rolled 4 dice 0,0 bonus 4,5",
        "ILLEGAL 2 turn 2: chance cannot give keep here",
    ]
    public = runner.invoke(main, ["show", str(path)])
    assert public.exit_code == 0, public.output
    assert public.stdout.splitlines() == [
        "turn 7",
        "seat 1: dice 6 bonus 4",
        "seat 2: dice 0 bonus 11",
        "seat 3: dice 4 bonus 6",
    ]
    before = runner.invoke(main, ["show", str(path), "--turn", "2", "--seat", "3"])
    assert before.stdout.splitlines() == [
        "seat view",
        "turn 2",
        "seat 1: dice 0 bonus 4",
        "seat 2: dice 0 bonus 0",
        "seat 3: dice 0 bonus 0",
    ]
    too_far = runner.invoke(main, ["show", str(path), "--seat", "4"])
    assert too_far.exit_code == 2
    assert "the game has 3 seats" in too_far.output


# --- Verdant ------------------------------------------------------------------------------


def verdant_record(players: int, seed: int, variant: str = "standard") -> GameRecord:
    """A random game of Verdant recorded as the session records one: each decision, chance
    included, with its actor and turn number; the seat tags, seed and score tags. Chance
    draws as the referee does from ``seed``; the seats choose with a generator of their own."""
    import random

    from referee.games import GameSettings, get_game
    from referee.games.verdant import (
        ReplaceCards,
        ReplaceTokens,
        Setup,
        advance,
        can_finish,
        legal_steps,
    )
    from referee.pgn import ClockAnnotation, outcome_tags, result_token, seat_tags
    from referee.session import ChanceDraws

    game = get_game("verdant")
    draws, rng = ChanceDraws(seed), random.Random(seed)
    state = game.start(GameSettings(players=players, seed=seed, options={"variant": variant}))
    turns = []
    while (actor := game.to_decide(state)) is not None:
        if actor == CHANCE:
            decision: tuple[object, ...] = draws.draw(game, state)
            clock = None
        else:
            steps: list[object] = []
            seat_state = state
            while True:
                options = legal_steps(seat_state)
                if can_finish(seat_state) and (not options or rng.random() < 0.6):
                    break
                step = rng.choice(options)
                steps.append(step)
                seat_state = advance(seat_state, step)
                if isinstance(step, Setup | ReplaceCards | ReplaceTokens):
                    break
            decision, clock = tuple(steps), ClockAnnotation(5_000, 40)
        turn = game.turn_number(state)
        token = game.format_decision(decision)
        turns.append(RecordedTurn(token, clock=clock, actor=actor, turn=turn))
        state = game.apply(state, actor, decision)
    outcome = game.outcome(state)
    assert outcome is not None
    tags = {
        **seat_tags(None, SEATS[:players]),
        "Game": "Verdant",
        **game.settings_tags(state),
        "Seed": str(seed),
        "Termination": "normal",
        "PlyCount": str(len(turns)),
        "Variant": "Verdant",
        **outcome_tags(outcome.places, outcome.scores, outcome.breakdown),
    }
    result = result_token(outcome.places, outcome.scores)
    return GameRecord(tags=tags, turns=turns, result=result)


@pytest.mark.parametrize(
    ("players", "variant"),
    [(1, "standard"), (2, "standard"), (3, "advanced"), (4, "simplified"), (5, "standard")],
)
def test_a_game_of_verdant_replays_and_verifies_from_its_record(players: int, variant: str) -> None:
    record = verdant_record(players, seed=players, variant=variant)
    [read] = read_games(format_game(record))
    assert read == record
    report = verify(read)
    assert report.valid, report.reason
    line = report.breakdown_line
    assert line is not None and len(line.split("; ")) == players
    first = line.split("; ")[0].split(" ")
    assert first[:2] == ["seat=1", f"place={report.outcome.places[0]}"]  # type: ignore[union-attr]
    assert [word.split("=")[0] for word in first[2:]] == [
        "plants",
        "verdancy",
        "pots",
        "rooms",
        "motifs",
        "colours",
        "objectives",
        "total",
    ]


def test_a_verdant_record_whose_reveals_were_changed_is_refused() -> None:
    record = verdant_record(3, seed=11)
    chance = [i for i, turn in enumerate(record.turns) if turn.actor == CHANCE]
    # The first card revealed cannot come out of the deck a second time.
    again = returned(record, chance[2], token=record.turns[chance[0]].token)
    report = verify(again)
    assert report.first_illegal is not None
    assert report.reason == f"turn 1: chance cannot give {record.turns[chance[0]].token} here"
    # Another seed's draws are another game: the record no longer verifies.
    assert not verify(retagged(record, VerdantVariant="simplified")).valid


def test_a_verdant_record_with_a_changed_breakdown_is_invalid() -> None:
    record = verdant_record(2, seed=5)
    score = record.tags["Seat1Score"]
    plants = int(score.split(" ")[0].split("=")[1])
    forged = score.replace(f"plants={plants}", f"plants={plants + 1}", 1)
    report = verify(retagged(record, Seat1Score=forged))
    assert not report.valid
    assert report.reason.startswith(f"its Seat1Score tag is {forged!r} but the rules give")


def test_an_illegal_verdant_decision_names_its_turn_seat_and_rule() -> None:
    record = verdant_record(2, seed=3)
    index = next(
        i for i, turn in enumerate(record.turns) if turn.actor == 0 and "pick" in turn.token
    )
    report = verify(returned(record, index, token="pick:0p/place@5,5"))
    assert report.first_illegal is not None
    assert report.first_illegal.token == "s1:pick:0p/place@5,5"
    assert report.reason.startswith("turn 1 (seat 1): §4.3: ")


# --- what only the referee's own generator could have drawn ---------------------------------


def test_a_draw_the_seed_does_not_give_is_illegal_only_with_the_seed(dice: None) -> None:
    record = dice_record(SEATS[:2], stop_after=5)
    assert verify(record).valid
    first = record.turns[0].token
    other = next(face for face in ("d1", "d2") if face != first)
    rigged = returned(record, 0, token=other)
    report = verify(rigged)
    assert report.first_illegal is not None and report.first_illegal.token == f"c:{other}"
    assert report.reason == f"turn 1: chance drew {first} here from the record's seed, not {other}"
    unseeded = {k: v for k, v in rigged.tags.items() if k != "Seed"}
    assert verify(GameRecord(tags=unseeded, turns=rigged.turns, result="*")).valid


def test_a_verdant_record_with_rigged_reveals_under_its_seed_is_refused() -> None:
    record = verdant_record(3, seed=11)
    assert verify(record).valid
    dealt = record.turns[0].token  # seat 1's first plant
    other = next(card for card in ("P01", "P02") if card != dealt)
    report = verify(returned(record, 0, token=other))
    assert report.reason == f"turn 1: chance drew {dealt} here from the record's seed, not {other}"


def test_a_game_played_again_is_checked_against_its_attempts_seed() -> None:
    # The referee's record of attempt 2 carries that attempt's seed and an Attempt tag.
    from referee.games import game_seed

    second = game_seed(11, 0, 2)
    assert second not in (game_seed(11, 0, 1), game_seed(11, 1, 1), game_seed(11, 0, 3))
    record = verdant_record(3, seed=second)
    again = GameRecord({**record.tags, "Attempt": "2"}, record.turns, record.result)
    assert verify(again).valid
    # The deal of attempt 2 is not the deal of attempt 1.
    as_first = GameRecord(
        {**again.tags, "Seed": str(game_seed(11, 0, 1))}, again.turns, again.result
    )
    report = verify(as_first)
    assert report.reason is not None and report.reason.startswith("turn 1: chance drew")


def verdant_session(players: int = 3) -> object:
    """The referee's session of a game of Verdant, its first cards dealt, no seat asked."""
    from referee.clock import TimeControl
    from referee.games import GameSettings, get_entry
    from referee.session import GameSession

    entry = get_entry("verdant")
    return GameSession(
        entry.rules,
        entry.codec,
        GameSettings(players=players, seed=5, options={"variant": "standard"}),
        players=SEATS[:players],
        control=TimeControl.parse("10+0.1"),
        max_line_bytes=1 << 20,
    )


@pytest.mark.parametrize(
    ("faulty", "result", "termination"),
    [
        ({1: "slow"}, "1-3-1", "time forfeit"),
        ({2: "slow"}, "1-1-3", "time forfeit"),
        ({1: "slow", 2: "crash"}, "1-2-2", "time forfeit"),
        ({0: "crash", 2: "slow"}, "2-1-2", "abandoned"),
        ({0: "slow", 1: "crash", 2: "slow"}, "1-1-1", "adjudication"),
    ],
)
def test_a_verdant_game_failed_at_its_start_verifies(
    faulty: dict[int, str], result: str, termination: str
) -> None:
    from referee.errors import BotCrashed, BotTimeout
    from referee.session import GameSession

    session = verdant_session()
    assert isinstance(session, GameSession)
    errors = {
        seat: BotTimeout("no ready") if why == "slow" else BotCrashed("exited")
        for seat, why in faulty.items()
    }
    session.faults(errors)
    [record] = read_games(format_game(session.record()))
    assert isinstance(record, GameRecord)
    assert [turn.actor for turn in record.turns] == [CHANCE, CHANCE]  # dealt before the start
    assert (record.result, record.tags["Termination"]) == (result, termination)
    report = verify(record)
    assert report.valid, report.reason
    assert report.reason == termination


@pytest.mark.parametrize(
    ("tags", "reason"),
    [
        ({"Scores": "5-0-0"}, "its Scores tag is '5-0-0' but a game ended by time forfeit scores"),
        ({"Scores": "0-0"}, "its Scores tag is '0-0'"),
        ({"Seat1Score": "dice=9 total=9"}, "it has a Seat1Score tag but the rules did not end"),
    ],
)
def test_a_forfeit_scores_nothing(dice: None, tags: dict[str, str], reason: str) -> None:
    record = unfinished(3, 3, "1-3-1", "time forfeit")
    assert verify(retagged(record, Scores="0-0-0")).valid
    report = verify(retagged(record, **tags))
    assert not report.valid
    assert report.reason.startswith(reason)


def test_a_verdant_decision_going_on_after_a_reveal_is_illegal() -> None:
    record = verdant_record(2, seed=3)
    index = next(
        i
        for i, turn in enumerate(record.turns)
        if turn.actor == 0 and turn.token not in ("north", "east", "south", "west")
    )
    report = verify(returned(record, index, token="cards:0p/pick:9p/place@99,99"))
    assert report.first_illegal is not None
    assert report.first_illegal.token == "s1:cards:0p/pick:9p/place@99,99"
    assert "goes on after a revealing step" in report.reason
