"""The one game driver (referee.driver) with each kind of seat but bot processes.

Bot processes are tested through ``referee.match`` (test_match.py); here the seats are
scripted ones, the arena's in-process bots and a person typing into a pipe, on the
Auction test game (three seats, chance, face-down bids) and on Ivy.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import pytest
import trio
from auction import CODEC as AUCTION
from auction import ENTRY as AUCTION_ENTRY
from auction import PRIZES, AuctionGame, AuctionView

import referee.games
from bots.arena import InProcessSeat
from bots.random import RandomBot
from bots.sdk import Clock, GameBot, GameResult
from protocol.messages import ErrorMessage, GameOver, NewGame, TurnReply, TurnRequest
from referee.clock import TimeControl
from referee.driver import SeatStopped, drive, play_in_process
from referee.errors import BotCrashed, BotFault, BotTimeout
from referee.games import get_entry
from referee.games.base import CHANCE, GameSettings
from referee.play import PersonSeat, _LineReader
from referee.replay import verify
from referee.session import GameSession, Request


def auction(players: int = 3, rounds: int = 2) -> GameSession:
    return GameSession(
        AuctionGame(),
        AUCTION,
        GameSettings(players=players, seed=11, options={"rounds": rounds}),
        players=("ann", "bob", "cat")[:players],
        control=TimeControl.parse("10+0.1"),
        max_line_bytes=1 << 20,
    )


class Scripted:
    """A seat that answers from a list of tokens and notes everything it is told."""

    def __init__(self, name: str, tokens: list[str], *, fail_start: bool = False) -> None:
        self.name = name
        self.forgiving = False
        self.tokens = tokens
        self.fail_start = fail_start
        self.asked: list[Request] = []
        self.told: list[str] = []
        self.over: GameOver | None = None
        self.next_id = 1

    async def start(self, session: GameSession, seat: int) -> None:
        if self.fail_start:
            raise BotTimeout("no ready")
        self.told.append(f"new_game {session.new_game(seat, 1).seat}")

    async def decide(self, request: Request) -> tuple[TurnReply, float]:
        self.asked.append(request)
        self.next_id += 1
        token = self.tokens.pop(0)
        return TurnReply(id=request.message.id, actions=AUCTION.actions_raw(token)), 0.01

    async def refused(self, seat: int, error: ErrorMessage) -> None:
        self.told.append(f"refused {error.code}")

    async def forfeited(self, seat: int, fault: BotFault, error: ErrorMessage | None) -> None:
        self.told.append(f"forfeited {fault}")

    async def pending_fault(self, seat: int) -> BotFault | None:
        return None  # it is only ever asked, and answers at once

    async def finish(self, session: GameSession, seat: int) -> None:
        if session.ending is not None:
            self.over = session.game_over(self.next_id)
        self.told.append("finish")


async def test_every_seat_is_asked_in_turn_and_hears_the_end():
    session = auction()
    seats = [Scripted(name, [f"b{n}"] * 2) for n, name in enumerate(("ann", "bob", "cat"))]
    ending = await drive(session, seats)
    assert ending is not None and ending.termination == "normal"
    for seat, player in enumerate(seats):
        assert player.told == [f"new_game {seat}", "finish"]
        assert player.over is not None and player.over.places == ending.places
        assert [request.seat for request in player.asked] == [seat, seat]
        for request in player.asked:  # the others' bids arrive face down
            for past in request.message.since_last:
                assert past.notation in PRIZES if past.seat is None else past.notation == "bx"
    assert session.record().result == ending.result


async def test_a_seat_failing_the_start_loses_and_the_others_play_on_nothing():
    session = auction()
    seats = [Scripted("ann", []), Scripted("bob", [], fail_start=True), Scripted("cat", [])]
    ending = await drive(session, seats)
    assert ending is not None and ending.places == (1, 3, 1)
    assert seats[1].told == ["forfeited no ready", "finish"]
    assert all(not player.asked for player in seats)


class Exited(Scripted):
    """A seat whose bot exited once it had been asked ``after`` times."""

    def __init__(self, name: str, tokens: list[str], after: int = 1) -> None:
        super().__init__(name, tokens)
        self.after = after

    async def pending_fault(self, seat: int) -> BotFault | None:
        return BotCrashed("its stdout closed") if len(self.asked) >= self.after else None


class TimingOut(Scripted):
    async def decide(self, request: Request) -> tuple[TurnReply, float]:
        self.asked.append(request)
        raise BotTimeout("no reply within 1.000 s")


async def test_a_seat_that_crashed_while_waiting_is_charged_with_the_one_that_failed_asked():
    # bob's bot exited after its first bid; cat's crashes when asked: bob must not share
    # first place with ann, as if it were still playing.
    class Crashing(Scripted):
        async def decide(self, request: Request) -> tuple[TurnReply, float]:
            raise BotCrashed("exit code 1")

    session = auction()
    seats = [Scripted("ann", ["b1", "b1"]), Exited("bob", ["b1"]), Crashing("cat", [])]
    ending = await drive(session, seats)
    assert ending is not None and ending.faulty_seats == (1, 2)
    assert ending.places == (1, 2, 2)
    assert seats[1].told[-2:] == ["forfeited its stdout closed", "finish"]


@pytest.mark.parametrize(
    ("asked", "after", "termination"),
    [
        (TimingOut("ann", []), 0, "time forfeit"),  # cat exited before its first request
        (Scripted("ann", ["b1", "bx"]), 1, "rules infraction"),  # after it; ann's bid refused
    ],
    ids=["timeout", "illegal"],
)
async def test_however_a_fault_ends_the_game_a_seat_dead_while_waiting_shares_the_last_place(
    monkeypatch: pytest.MonkeyPatch, asked: Scripted, after: int, termination: str
) -> None:
    monkeypatch.setitem(referee.games._ENTRIES, "auction", "auction")
    session = auction()
    seats = [asked, Scripted("bob", ["b1"] * 2), Exited("cat", ["b0"] * 2, after=after)]
    ending = await drive(session, seats)
    assert ending is not None and ending.faulty_seats == (0, 2)
    assert (ending.places, ending.termination) == ((2, 1, 2), termination)
    report = verify(session.record())  # the record of what happened replays as valid
    assert report.valid and report.reason == termination, report.reason


async def test_every_seat_at_fault_in_mid_game_share_the_places_under_the_askeds_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(referee.games._ENTRIES, "auction", "auction")
    session = auction(players=2)
    seats = [Exited("ann", ["b1", "b1"], after=1), TimingOut("bob", [])]
    ending = await drive(session, seats)
    assert ending is not None and ending.faulty_seats == (0, 1)
    assert (ending.places, ending.termination) == ((1, 1), "time forfeit")  # not adjudicated
    report = verify(session.record())
    assert report.valid, report.reason


async def test_a_refused_bot_decision_ends_the_game_with_its_fault():
    session = auction()
    seats = [Scripted("ann", ["bx"]), Scripted("bob", []), Scripted("cat", [])]
    ending = await drive(session, seats)
    assert ending is not None and ending.faulty_seats == (0,)
    assert seats[0].told == ["new_game 0", "refused illegal_turn", "finish"]


async def test_a_forgiving_seat_is_asked_again_and_its_decision_applied_once():
    session = auction(rounds=1)
    person = Scripted("ann", ["bx", "b3"])
    person.forgiving = True
    seats = [person, Scripted("bob", ["b1"]), Scripted("cat", ["b0"])]
    ending = await drive(session, seats)
    assert ending is not None and ending.termination == "normal"
    assert person.told == ["new_game 0", "refused illegal_turn", "finish"]
    assert len(person.asked) == 2 and person.asked[0] is person.asked[1]  # the same request
    words = [(turn.actor, turn.token) for turn in session.record().turns]
    assert words[1:] == [(0, "b3"), (1, "b1"), (2, "b0")] and words[0][0] == CHANCE


async def test_a_stopped_game_is_left_unfinished_and_every_seat_hears_of_it():
    class Quitter(Scripted):
        async def decide(self, request: Request) -> tuple[TurnReply, float]:
            raise SeatStopped

    session = auction()
    seats = [Quitter("ann", []), Scripted("bob", []), Scripted("cat", [])]
    assert await drive(session, seats) is None
    assert all(player.told[-1] == "finish" and player.over is None for player in seats)
    assert session.record().result == "*"


# --- in-process bots (the arena's seat) ------------------------------------------------


class AuctionBot(GameBot[NewGame, AuctionView, str]):
    """A bot of the Auction test game written with the SDK: bids what the prize is worth."""

    name = "bidder"
    game = "auction"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.seen: list[Any] = []
        self.result: GameResult | None = None

    def game_over(self, result: GameResult) -> None:
        self.result = result

    def read_new_game(self, message: NewGame) -> NewGame:
        return message

    def read_turn(self, message: TurnRequest) -> AuctionView:
        self.seen.extend(message.since_last)
        return AUCTION_ENTRY.codec.decode_view(message.view)

    def write_decision(self, decision: str) -> msgspec.Raw:
        return AUCTION.actions_raw(decision)

    def choose(self, situation: AuctionView, clock: Clock) -> str:
        assert situation.prize is not None
        return f"b{min(3, situation.prize // 2)}"


def test_in_process_bots_play_a_game_of_chance_from_synchronous_code():
    bots = [AuctionBot(seed) for seed in range(3)]
    session = auction(rounds=3)
    seats = [InProcessSeat(bot, name=name) for bot, name in zip(bots, session.players, strict=True)]
    ending = play_in_process(session, seats)
    assert ending is not None and ending.termination == "normal"
    assert all(seat.longest >= 0 for seat in seats)
    chance = [past for past in bots[0].seen if past.seat is None]
    assert chance and all(past.notation in PRIZES for past in chance)
    assert all(past.notation == "bx" for past in bots[0].seen if past.seat is not None)


def test_the_arena_seat_plays_ivy_and_the_record_replays():
    entry = get_entry("ivy")
    session = GameSession(
        entry.rules,
        entry.codec,
        GameSettings(players=2, options={"turn_limit": 12}),
        players=("r1", "r2"),
        control=TimeControl.parse("5+0.1"),
        max_line_bytes=1 << 20,
    )
    ending = play_in_process(session, [InProcessSeat(RandomBot(1)), InProcessSeat(RandomBot(2))])
    assert ending is not None
    report = verify(session.record())
    assert report.valid, report.reason


# --- a person at the terminal ------------------------------------------------------------


@pytest.fixture
def typed():
    """A file descriptor to read typed lines from: write them with the returned function."""
    read_fd, write_fd = os.pipe()
    yield read_fd, lambda text: os.write(write_fd, text.encode())
    os.close(read_fd)
    os.close(write_fd)


async def test_a_person_sees_only_what_the_seat_may_and_is_asked_again(typed):
    read_fd, write = typed
    write("help\nzz\nbx\nb2\nb0\n")  # help, bad notation, an illegal bid, then bids
    said: list[str] = []
    reader = _LineReader(read_fd)
    person = PersonSeat("me", AUCTION_ENTRY, reader, color=False, say=said.append)
    bots = [AuctionBot(1), AuctionBot(2)]
    session = GameSession(
        AuctionGame(),
        AUCTION,
        GameSettings(players=3, seed=5, options={"rounds": 2}),
        players=("b1", "me", "b2"),
        control=TimeControl.parse("10+0.1"),
        max_line_bytes=1 << 20,
    )
    with trio.fail_after(10):
        ending = await drive(session, [InProcessSeat(bots[0]), person, InProcessSeat(bots[1])])
    await reader.aclose()
    assert ending is not None and ending.termination == "normal"
    text = "\n".join(said)
    assert said[0].startswith("You play Seat 2 against b1, b2. Type a bid, b0 to b3.")
    assert "Not a legal turn: 'zz' is not a bid" in text
    assert "Not a legal turn: round 1: bid b0 to b3, not bx" in text
    assert "b1 plays bx" in text and "Chance: p" in text
    assert "b2 plays bx" in text  # told at the next request, or at the end
    assert said[-1].startswith(f"Game over: {ending.result} — 2 rounds played")
    mine = [turn.token for turn in session.record().turns if turn.actor == 1]
    assert mine == ["b2", "b0"]
    assert all(bot.seen for bot in bots)
    # The bots playing a person hear how the game ended, as in any match.
    assert all(bot.result is not None and bot.result.places == ending.places for bot in bots)
