"""The referee's judgement of one game, without processes (referee.session, referee.clock)."""

from __future__ import annotations

import msgspec
import pytest
from auction import CODEC as AUCTION
from auction import PRIZES, AuctionGame

from protocol.messages import TurnReply
from referee.clock import Clock, TimeControl
from referee.errors import BotCrashed, BotTimeout, SettingsError
from referee.games import get_entry, get_game
from referee.games.base import CHANCE, GameSettings
from referee.pgn import ClockAnnotation, format_game, read_games
from referee.replay import verify
from referee.session import GameSession, Request


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
    clock = Clock(TimeControl.parse("1+0.05"), seats=2, margin=0.1)
    assert clock.budget(0) == pytest.approx(1.1)
    assert clock.charge(0, 0.3)
    clock.add_increment(0)
    assert clock.remaining(0) == pytest.approx(0.75)
    assert clock.remaining(1) == 1.0
    assert clock.last_turn(0) == 0.3 and clock.last_turn(1) is None


def test_fischer_clock_flag_falls_only_past_the_margin():
    clock = Clock(TimeControl.parse("1+0"), seats=2, margin=0.1)
    assert clock.charge(0, 1.05)  # inside the margin: allowed, bank empties
    assert clock.remaining(0) == 0.0
    assert not clock.charge(1, 1.2)


def test_per_turn_clock_never_carries_over():
    clock = Clock(TimeControl.parse("0.5/turn"), seats=2, margin=0.0)
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


# --- more seats, chance and hidden decisions (the Auction test game) ------------------


def auction_session(players: int = 3, *, seed: int = 7, rounds: int = 2) -> GameSession:
    return GameSession(
        AuctionGame(),
        AUCTION,
        GameSettings(players=players, seed=seed, options={"rounds": rounds}),
        players=("ann", "bob", "cat")[:players],
        control=TimeControl.parse("10+0.1"),
        tags={"Event": "Auction"},
        max_line_bytes=1 << 20,
    )


def bid(request_id: int, token: str) -> TurnReply:
    return TurnReply(id=request_id, actions=msgspec.Raw(msgspec.json.encode([token])))


def play_out(session: GameSession, bids: dict[int, str]) -> list[Request]:
    """Every seat bids its token in ``bids`` until the game ends; the requests made."""
    requests = []
    while (seat := session.deciding) is not None:
        request = session.next_request(len(requests) + 1)
        requests.append(request)
        assert session.submit(seat, bid(request.message.id, bids[seat]), 0.01) is None
    return requests


def test_three_seats_with_chance_and_hidden_bids_finish_and_record():
    session = auction_session()
    assert session.deciding == 0  # chance revealed the first prize before anyone is asked
    requests = play_out(session, {0: "b1", 1: "b3", 2: "b0"})
    ending = session.ending
    assert ending is not None and ending.termination == "normal"
    record = session.record()
    assert record.result == ending.result != "*"
    assert ending.places[0] == 3 and ending.places[1] == 1  # ann wins nothing, bob every prize
    assert [r.seat for r in requests] == [0, 1, 2, 0, 1, 2]
    assert [r.message.turn for r in requests] == [1, 1, 1, 2, 2, 2]
    # A bid is made face down: the others are told only that a bid was made.
    for request in requests:
        seen = [(past.seat, past.notation) for past in request.message.since_last]
        assert all(note in ("bx", *PRIZES) for _, note in seen)
        assert all(seat != request.seat for seat, _ in seen)
        assert not any(
            seat is not None and msgspec.json.decode(past.actions) != ["bx"]
            for past, (seat, _) in zip(request.message.since_last, seen, strict=True)
        )
    # Seat 1's second request: seat 2's bid, then chance's prize, then seat 0's bid.
    assert [(p.seat, p.turn) for p in requests[4].message.since_last] == [(2, 1), (None, 2), (0, 2)]
    tags = record.tags
    assert (tags["Seat1"], tags["Seat2"], tags["Seat3"]) == ("ann", "bob", "cat")
    assert (tags["White"], tags["Black"]) == ("?", "?")  # only two-seat records name them
    assert tags["Seed"] == "7" and tags["Rounds"] == "2" and tags["PlyCount"] == "8"
    assert tags["Places"] == "-".join(map(str, ending.places))
    assert tags["Seat2Score"].startswith("prizes=") and "total=" in tags["Seat2Score"]
    chance = [turn for turn in record.turns if turn.actor == CHANCE]
    assert len(chance) == 2 and all(turn.clock is None and turn.token in PRIZES for turn in chance)
    assert [turn.actor for turn in record.turns] == [CHANCE, 0, 1, 2, CHANCE, 0, 1, 2]
    assert [turn.turn for turn in record.turns] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert record.turns[1].token == "b1"  # the record keeps every decision in full
    over = session.game_over(99)
    assert over.places == ending.places and over.scores == ending.scores
    (again,) = read_games(format_game(record))  # the records module writes it, and reads it
    assert again.turns == record.turns and again.result == record.result


def test_chance_comes_from_the_seed():
    def prizes(seed: int) -> list[str]:
        session = auction_session(seed=seed, rounds=6)
        play_out(session, {0: "b0", 1: "b1", 2: "b2"})
        return [turn.token for turn in session.record().turns if turn.actor == CHANCE]

    assert prizes(3) == prizes(3)
    assert len({tuple(prizes(seed)) for seed in range(5)}) > 1


def test_a_forfeit_among_three_puts_the_faulty_seat_last():
    session = auction_session()
    session.next_request(1)
    session.submit(0, bid(1, "b1"), 0.1)
    session.next_request(2)
    error = session.submit(1, bid(2, "b9"), 0.1)
    assert error is not None and error.code == "illegal_turn" and error.offending == "$.actions[0]"
    ending = session.ending
    assert ending is not None
    assert (ending.places, ending.scores, ending.result) == ((1, 3, 1), (0.0, 0.0, 0.0), "1-3-1")
    assert session.game_over(3).places == (1, 3, 1)
    record = session.record()
    assert record.result == "1-3-1" and record.tags["Termination"] == "rules infraction"
    # A game scored in points says so even when forfeited: everyone scores 0.
    assert (record.tags["Places"], record.tags["Scores"]) == ("1-3-1", "0-0-0")


def test_every_seat_failing_the_start_of_a_points_game_shares_first_place():
    session = auction_session()
    session.faults({seat: BotCrashed("exited") for seat in range(3)})
    ending = session.ending
    assert ending is not None
    assert (ending.places, ending.scores, ending.result) == ((1, 1, 1), (0.0,) * 3, "1-1-1")
    assert ending.termination == "adjudication"
    assert session.record().result == "1-1-1"


def test_a_solo_game_scores_its_points():
    session = auction_session(players=1, rounds=3)
    play_out(session, {0: "b0"})
    ending = session.ending
    assert ending is not None and ending.places == (1,)
    record = session.record()
    assert record.result == str(int(ending.scores[0])) and record.tags["Seat1"] == "ann"
    forfeit = auction_session(players=1)
    forfeit.fault(0, BotTimeout("slow"))
    assert forfeit.record().result == "0"


def test_a_forgiving_seat_may_try_again():
    session = auction_session()
    request = session.next_request(1)
    error = session.submit(0, bid(1, "b7"), 0.0, forfeit=False)
    assert error is not None and error.code == "illegal_turn" and session.ending is None
    error = session.submit(0, bid(1, "nonsense-shape"), 0.0, forfeit=False)
    assert error is not None and session.ending is None
    assert session.submit(0, bid(1, "b2"), 0.0, forfeit=False) is None
    assert session.deciding == 1 and request.seat == 0


def test_the_number_of_players_is_checked():
    with pytest.raises(SettingsError, match="auction is played by 1 to 3 players, not 4"):
        GameSession(
            AuctionGame(),
            AUCTION,
            GameSettings(players=4),
            players=("a", "b", "c", "d"),
            control=TimeControl.parse("1"),
            max_line_bytes=1 << 20,
        )
