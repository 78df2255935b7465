"""The referee's judgement of one game, without processes (referee.session, referee.clock)."""

from __future__ import annotations

import msgspec
import pytest

from protocol.messages import TurnReply
from referee.clock import Clock, TimeControl
from referee.errors import BotCrashed, BotTimeout, SettingsError
from referee.games import get_entry, get_game
from referee.games.base import GameSettings
from referee.pgn import ClockAnnotation
from referee.replay import verify
from referee.session import GameSession


def make_session(*, turn_limit: int = 200, tc: str = "10+0.1", start: str | None = None):
    return GameSession(
        get_game("ivy"),
        get_entry("ivy").codec,
        GameSettings(players=2, start=start, options={"turn_limit": turn_limit}),
        players=("alice", "bob"),
        control=TimeControl.parse(tc),
        tags={"Event": "Test", "Round": "3"},
        max_line_bytes=1 << 20,
    )


def reply(request_id: int, actions: list[dict[str, str]]) -> TurnReply:
    return TurnReply(id=request_id, actions=msgspec.Raw(msgspec.json.encode(actions)))


# --- time controls ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "base", "increment", "per_turn", "tag"),
    [
        ("10+0.1", 10.0, 0.1, None, "10+0.1"),
        ("60", 60.0, 0.0, None, "60"),
        ("0.5/turn", None, 0.0, 0.5, "1/0.5"),
        ("st=2", None, 0.0, 2.0, "1/2"),
    ],
)
def test_time_control_parses_each_kind(text, base, increment, per_turn, tag):
    control = TimeControl.parse(text)
    assert (control.base, control.increment, control.per_turn) == (base, increment, per_turn)
    assert control.pgn_tag == tag


@pytest.mark.parametrize("text", ["", "abc", "10+", "-1+0", "0+0", "0/turn", "1:30"])
def test_time_control_refuses_nonsense(text):
    with pytest.raises(SettingsError, match="time control"):
        TimeControl.parse(text)


def test_fischer_clock_takes_time_then_adds_increment():
    clock = Clock(TimeControl.parse("1+0.05", margin=0.1), seats=2)
    assert clock.budget(0) == pytest.approx(1.1)
    assert clock.charge(0, 0.3)
    clock.add_increment(0)
    assert clock.remaining(0) == pytest.approx(0.75)
    assert clock.remaining(1) == 1.0
    assert clock.last_turn(0) == 0.3 and clock.last_turn(1) is None


def test_fischer_clock_flag_falls_only_past_the_margin():
    clock = Clock(TimeControl.parse("1+0", margin=0.1), seats=2)
    assert clock.charge(0, 1.05)  # inside the margin: allowed, bank empties
    assert clock.remaining(0) == 0.0
    assert not clock.charge(1, 1.2)


def test_per_turn_clock_never_carries_over():
    clock = Clock(TimeControl.parse("0.5/turn", margin=0.0), seats=2)
    assert clock.charge(0, 0.4)
    assert clock.remaining(0) == 0.5
    assert not clock.charge(0, 0.6)


# --- a game --------------------------------------------------------------------


def test_requests_alternate_and_tell_what_the_other_did():
    session = make_session()
    assert session.deciding == 0
    first = session.next_request(1)
    assert first.seat == 0 and first.message.turn == 1 and first.message.since_last == ()
    view = msgspec.json.decode(first.message.view)
    assert view["position"] == get_game("ivy").notation(session.state)
    assert session.submit(0, reply(1, [{"type": "creep", "cell": "c2"}]), 0.25) is None
    second = session.next_request(2)
    assert second.seat == 1 and second.message.turn == 2
    assert [p.notation for p in second.message.since_last] == ["c2"]
    assert second.message.opponents_clock_ms == (9850,)  # 10 s - 0.25 s + 0.1 s
    assert session.submit(1, reply(2, []), 0.1) is None
    third = session.next_request(3)
    assert third.message.clock.last_turn_ms == 250
    assert [p.notation for p in third.message.since_last] == ["--"]


def test_turn_limit_draw_is_recorded_and_replays_valid():
    session = make_session(turn_limit=4)
    request_id = 0
    while (seat := session.deciding) is not None:
        request_id += 1
        session.next_request(request_id)
        assert session.submit(seat, reply(request_id, []), 0.01) is None
    assert session.ending is not None
    assert session.ending.result == "1/2-1/2"
    record = session.record()
    assert record.tags["Termination"] == "normal"
    assert record.tags["PlyCount"] == "4"
    assert record.tags["TurnLimit"] == "4"
    assert record.tags["Green"] == "alice" and record.tags["Purple"] == "bob"
    assert record.tags["Round"] == "3"
    assert record.turns[0].clock == ClockAnnotation(clock_ms=10_090, elapsed_ms=10)
    assert "turn limit 4 reached" in record.turns[-1].comment
    report = verify(record)
    assert report.valid, report.reason


def test_timeout_forfeits_with_time_forfeit_termination():
    session = make_session(tc="1+0")
    session.next_request(1)
    error = session.submit(0, reply(1, []), 5.0)
    assert error is not None and error.code == "timeout"
    assert session.ending.result == "0-1"
    record = session.record()
    assert record.tags["Termination"] == "time forfeit"
    assert "ran out of time" in record.comment
    assert verify(record).valid


def test_illegal_turn_points_at_the_action_and_the_rule():
    session = make_session()
    session.next_request(1)
    error = session.submit(
        0, reply(1, [{"type": "creep", "cell": "c2"}, {"type": "creep", "cell": "e12"}]), 0.1
    )
    assert error is not None
    assert error.code == "illegal_turn"
    assert error.offending == "$.actions[1]"
    assert error.message.startswith("turn 1 (Green): creep e12")
    assert session.record().tags["Termination"] == "rules infraction"
    assert session.ending.faulty_seat == 0


def test_malformed_actions_are_an_invalid_message_with_a_path():
    session = make_session()
    session.next_request(1)
    error = session.submit(0, reply(1, [{"type": "creep", "cell": 7}]), 0.1)
    assert error is not None and error.code == "invalid_message"
    assert error.offending == "$.actions[0].cell"


def test_crash_cannot_be_told_and_is_abandoned():
    session = make_session()
    session.next_request(1)
    session.submit(0, reply(1, []), 0.1)
    session.next_request(2)
    assert session.fault(1, BotCrashed("exited (exit code 3)")) is None
    record = session.record()
    assert record.result == "1-0"
    assert record.tags["Termination"] == "abandoned"
    assert "exit code 3" in record.turns[-1].comment
    assert verify(record).valid


def test_fault_in_the_handshake_is_recorded_without_turns():
    session = make_session()
    error = session.fault(0, BotTimeout("no ready within the start-up allowance"))
    assert error is not None and error.code == "timeout"
    record = session.record()
    assert record.turns == [] and record.result == "0-1"
    assert "start-up" in record.comment


def test_game_from_a_set_up_position_records_it():
    start = (
        "./.../...../.#...#./........./........./..#...#../........./"
        "........./....#..../....#..../..g...p.. p 4 2 2"
    )
    session = make_session(start=start)
    assert session.deciding == 1
    message = session.new_game(1, 1)
    assert message.position == start and message.seat_name == "purple"
    assert message.settings == {"turn_limit": 200}
    record = session.record()
    assert record.tags["SetUp"] == "1" and record.tags["FEN"] == start


def test_a_seat_not_asked_cannot_submit():
    session = make_session()
    with pytest.raises(RuntimeError):
        session.submit(1, reply(1, []), 0.1)


def test_a_reason_quoting_braces_still_makes_a_valid_record():
    session = make_session()
    session.next_request(1)
    session.fault(0, BotCrashed('exited; stderr ends: {"oops": 1}'))
    record = session.record()
    assert "(exit" not in record.comment and '"oops": 1)' in record.comment


# --- forfeits at the start ----------------------------------------------------


def test_every_seat_failing_the_start_is_a_draw_by_adjudication():
    session = make_session()
    errors = session.faults(
        {1: BotTimeout("no ready within the start-up allowance"), 0: BotCrashed("exited")}
    )
    assert errors[0] is None  # a crash: nobody to tell
    assert errors[1] is not None and errors[1].code == "timeout"
    ending = session.ending
    assert ending is not None
    assert (ending.result, ending.scores, ending.termination) == (
        "1/2-1/2",
        (0.5, 0.5),
        "adjudication",
    )
    assert ending.faulty_seats == (0, 1) and ending.faulty_seat is None
    assert ending.reason == (
        "Green (alice) forfeits: exited; Purple (bob) forfeits: no ready within the start-up"
        " allowance; nobody played, so the game is adjudicated a draw"
    )
    assert session.deciding is None
    report = verify(session.record())
    assert report.valid, report.reason
    with pytest.raises(RuntimeError, match="already over"):
        session.fault(0, BotCrashed("again"))


def test_one_seat_failing_the_start_loses_it():
    session = make_session()
    [error] = session.faults({1: BotTimeout("slow")}).values()
    assert error is not None and error.code == "timeout"
    assert session.ending is not None
    assert (session.ending.result, session.ending.faulty_seat) == ("1-0", 1)
