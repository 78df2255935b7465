"""Auction: a tiny game of 1 to 3 seats with chance and face-down choices, for tests.

Each round chance reveals a prize (``p1`` … ``p6``), then every seat in turn bids
face down (``b0`` … ``b3``): the others see only that it bid (``bx``). Once all have
bid, the highest bid takes the prize (a tie: the earliest seat); a seat that bid
nothing gets one point for thrift. After ``rounds`` rounds (the game's option, 2 by
default) the points decide; the breakdown is ``prizes`` and ``thrift``.

It exercises what Ivy cannot: a turn of several requests, a chance seat, hidden
information, points and places for more than two seats, solo games.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import msgspec

from protocol.messages import GameCodec, ProtocolViolation, invalid_message
from referee.errors import IllegalDecision, RuleError, SettingsError
from referee.games import GameEntry
from referee.games.base import CHANCE, GameSettings, Outcome

PRIZES = tuple(f"p{value}" for value in range(1, 7))
BIDS = tuple(f"b{value}" for value in range(4))
HIDDEN = "bx"


@dataclass(frozen=True, slots=True)
class AuctionState:
    players: int
    rounds: int
    round: int = 1
    prize: int | None = None
    bids: tuple[int | None, ...] = ()
    prizes: tuple[int, ...] = ()
    thrift: tuple[int, ...] = ()


class AuctionView(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    prize: int | None
    my_bid: int | None
    bidders: int
    points: tuple[int, ...]


class AuctionGame:
    name: ClassVar[str] = "auction"
    seat_names: ClassVar[tuple[str, ...] | None] = None
    min_players: ClassVar[int] = 1
    max_players: ClassVar[int] = 3
    scored_in_points: ClassVar[bool] = True
    alternating: ClassVar[bool] = False

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(options) - {"rounds"})
        if unknown:
            raise SettingsError(f"unknown auction option {unknown[0]!r} (known: rounds)")
        rounds = options.get("rounds", 2)
        if isinstance(rounds, str) and rounds.isdigit():
            rounds = int(rounds)
        if type(rounds) is not int or not 1 <= rounds <= 9:
            raise SettingsError(f"rounds must be a whole number from 1 to 9, got {rounds!r}")
        return {"rounds": rounds}

    def start(self, settings: GameSettings) -> AuctionState:
        rounds = self.check_options(settings.options)["rounds"]
        seats = settings.players
        return AuctionState(seats, rounds, bids=(None,) * seats, prizes=(0,) * seats,
                            thrift=(0,) * seats)  # fmt: skip

    def to_decide(self, state: AuctionState) -> int | None:
        if state.round > state.rounds:
            return None
        if state.prize is None:
            return CHANCE
        return state.bids.index(None)

    def chance_outcomes(self, state: AuctionState) -> Sequence[str]:
        return PRIZES

    def view(self, state: AuctionState, seat: int) -> AuctionView:
        return AuctionView(
            round=state.round,
            prize=state.prize,
            my_bid=state.bids[seat] if state.bids else None,
            bidders=sum(bid is not None for bid in state.bids),
            points=tuple(p + t for p, t in zip(state.prizes, state.thrift, strict=True)),
        )

    def apply(self, state: AuctionState, seat: int, decision: str) -> AuctionState:
        actor = self.to_decide(state)
        if actor != seat:
            raise IllegalDecision(f"round {state.round}: seat {seat} is not to decide")
        if seat == CHANCE:
            if decision not in PRIZES:
                raise IllegalDecision(f"{decision!r} is not a prize")
            return replace(state, prize=int(decision[1:]))
        if decision not in BIDS:
            raise IllegalDecision(f"round {state.round}: bid b0 to b3, not {decision}", index=0)
        bids = list(state.bids)
        bids[seat] = int(decision[1:])
        if None in bids:
            return replace(state, bids=tuple(bids))
        best = max(bid for bid in bids if bid is not None)
        winner = bids.index(best)
        prizes = list(state.prizes)
        assert state.prize is not None
        prizes[winner] += state.prize
        thrift = tuple(t + (bid == 0) for t, bid in zip(state.thrift, bids, strict=True))
        return AuctionState(state.players, state.rounds, state.round + 1, None,
                            (None,) * state.players, tuple(prizes), thrift)  # fmt: skip

    def observe(self, state: AuctionState, actor: int, decision: str, observer: int) -> str:
        return decision if actor == CHANCE else HIDDEN

    def turn_number(self, state: AuctionState) -> int:
        return state.round

    def outcome(self, state: AuctionState) -> Outcome | None:
        if state.round <= state.rounds:
            return None
        scores = tuple(float(p + t) for p, t in zip(state.prizes, state.thrift, strict=True))
        places = tuple(1 + sum(other > score for other in scores) for score in scores)
        return Outcome(
            scores=scores,
            places=places,
            reason=f"{state.rounds} rounds played",
            breakdown=tuple(
                (("prizes", p), ("thrift", t))
                for p, t in zip(state.prizes, state.thrift, strict=True)
            ),
        )

    def format_decision(self, decision: str) -> str:
        return decision

    def parse_decision(self, text: str) -> str:
        if text not in (*PRIZES, *BIDS, HIDDEN):
            raise RuleError(f"{text!r} is not a bid (b0 to b3)")
        return text

    def notation(self, state: AuctionState) -> str:
        return f"round {state.round} of {state.rounds}"

    def rule_settings(self, state: AuctionState) -> Mapping[str, Any]:
        return {"rounds": state.rounds}

    def settings_tags(self, state: AuctionState) -> Mapping[str, str]:
        return {"Rounds": str(state.rounds)}


_TOKENS = msgspec.json.Decoder(list[str])


def _decode_actions(raw: msgspec.Raw) -> str:
    try:
        tokens = _TOKENS.decode(raw)
    except msgspec.ValidationError as error:
        raise invalid_message(error, at="$.actions") from None
    except msgspec.DecodeError as error:
        raise ProtocolViolation("invalid_message", str(error), "$.actions") from None
    if len(tokens) != 1:
        raise ProtocolViolation("invalid_message", "one token, please", "$.actions")
    return tokens[0]


CODEC: GameCodec[AuctionView, str] = GameCodec(
    game="auction",
    encode_view=lambda view: view,
    decode_view=lambda raw: msgspec.json.decode(raw, type=AuctionView),
    encode_actions=lambda decision: [decision],
    decode_actions=_decode_actions,
)

ENTRY = GameEntry(
    rules=AuctionGame(),
    codec=CODEC,
    render=lambda view, color: f"round {view.round}: prize {view.prize}, you bid {view.my_bid}",
    render_public=lambda state, color: f"points {state.prizes} thrift {state.thrift}",
    person_help="Type a bid, b0 to b3.",
)
