"""A bot that overruns its clock is told, and the record says, what it really had left."""

from __future__ import annotations

import msgspec
import pytest

from protocol.messages import TurnReply
from referee.clock import Clock, TimeControl
from referee.games import get_entry, get_game
from referee.games.base import GameSettings
from referee.session import GameSession


def test_a_flag_leaves_the_bank_as_it_was_when_the_turn_began() -> None:
    clock = Clock(TimeControl.parse("1+0.5"), seats=2, margin=0.1)
    assert clock.charge(0, 0.2)
    clock.add_increment(0)
    assert clock.remaining(0) == pytest.approx(1.3)
    assert not clock.charge(0, 5.0)
    assert clock.remaining(0) == pytest.approx(1.3)
    assert clock.used(0) == pytest.approx(5.2)


@pytest.mark.parametrize(
    ("tc", "left"), [("1+0.5", "1.300"), ("2", "1.800"), ("0.5/turn", "0.500")]
)
def test_the_timeout_reason_says_what_the_bot_had(tc: str, left: str) -> None:
    session = GameSession(
        get_game("ivy"),
        get_entry("ivy").codec,
        GameSettings(players=2, options={"turn_limit": 200}),
        players=("alice", "bob"),
        control=TimeControl.parse(tc),
        max_line_bytes=1 << 20,
    )
    for request_id, took in enumerate((0.2, 0.2, 5.0), start=1):
        request = session.next_request(request_id)
        error = session.submit(
            request.seat, TurnReply(id=request_id, actions=msgspec.Raw(b"[]")), took
        )
    assert error is not None and error.code == "timeout"
    expected = f"Green ran out of time: the reply took 5.000 s, {left} s were left"
    assert error.message == expected
    assert session.ending is not None and session.ending.reason.endswith(expected)
    assert session.record().turns[-1].comment.endswith(expected)
