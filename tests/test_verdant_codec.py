"""Verdant on the wire: views and decisions through :data:`referee.games.verdant.CODEC`.

Round trips of every step (rules value → JSON → rules value), the view's JSON shape,
the state rebuilt from a decoded view, and bad decisions refused as protocol
violations that name their JSON path.
"""

from __future__ import annotations

import random

import msgspec
import pytest
from test_verdant_rules import deal, play, random_decision, started, with_seat

from protocol.messages import ProtocolViolation
from referee.errors import RuleError
from referee.games import CHANCE, GameSettings, get_entry
from referee.games.verdant import (
    CODEC,
    VerdantGame,
    VerdantState,
    parse_decision,
    state_from_view,
    view_from_wire,
)
from referee.games.verdant.codec import MAX_STEPS, VerdantWireView, decode_view

GAME = VerdantGame()


@pytest.mark.parametrize(
    "word",
    [
        "north",
        "pass",
        "P07",
        "watering-can",
        "collector",
        "cards:0p+1r",
        "tokens:0+3",
        "split/grow@-1,2/pick:2r:1/place@1,0/store/use:stored@0,0+2,0/discard:taken",
        "pick:0p/place@1,1/use:taken@1,0",
    ],
)
def test_decisions_round_trip(word: str) -> None:
    decision = parse_decision(word)
    assert CODEC.decode_actions(CODEC.actions_raw(decision)) == decision
    raw = msgspec.Raw(msgspec.json.encode(CODEC.encode_actions(decision)))
    assert CODEC.decode_actions(raw) == decision


def test_steps_on_the_wire() -> None:
    raw = CODEC.actions_raw(parse_decision("cards:0p+1r"))
    assert msgspec.json.decode(bytes(raw)) == [
        {
            "type": "replace_cards",
            "cards": [{"column": 0, "kind": "plant"}, {"column": 1, "kind": "room"}],
        }
    ]
    raw = CODEC.actions_raw(parse_decision("split/pick:2r/pick:2r:1/place@-1,0/use:taken@1,0"))
    assert bytes(raw) == (
        b'[{"type":"split"},{"type":"pick","column":2,"kind":"room"},'
        b'{"type":"pick","column":2,"kind":"room","token_column":1},'
        b'{"type":"place","at":[-1,0]},{"type":"use","token":"taken","at":[[1,0]]}]'
    )
    assert bytes(CODEC.actions_raw(parse_decision("west"))) == b'[{"type":"setup","side":"west"}]'
    assert (
        bytes(CODEC.actions_raw(parse_decision("red-bed"))) == b'[{"type":"reveal","id":"red-bed"}]'
    )
    assert bytes(CODEC.actions_raw(())) == b"[]"
    explicit_null = msgspec.Raw(b'[{"type":"pick","column":1,"kind":"plant","token_column":null}]')
    assert CODEC.decode_actions(explicit_null) == parse_decision("pick:1p")


@pytest.mark.parametrize(
    ("actions", "message", "offending"),
    [
        (
            b'[{"type":"split"},{"type":"fly"}]',
            "Invalid value 'fly' - at `$.actions[1].type`",
            "$.actions[1].type",
        ),
        (
            b'[{"type":"pick","column":"2","kind":"room"}]',
            "Expected `int`, got `str` - at `$.actions[0].column`",
            "$.actions[0].column",
        ),
        (
            b'[{"type":"pick","column":2,"kind":"tree"}]',
            "Invalid enum value 'tree' - at `$.actions[0].kind`",
            "$.actions[0].kind",
        ),
        (
            b'[{"type":"place","at":[1]}]',
            "Expected `array` of length 2 - at `$.actions[0].at`",
            "$.actions[0].at",
        ),
        (
            b'[{"type":"use","token":"mine","at":[]}]',
            "Invalid enum value 'mine' - at `$.actions[0].token`",
            "$.actions[0].token",
        ),
        (
            b'[{"type":"use","token":"taken","at":[[0,0],[1]]}]',
            "Expected `array` of length 2 - at `$.actions[0].at[1]`",
            "$.actions[0].at[1]",
        ),
        (
            b'[{"type":"replace_cards","cards":[{"column":0}]}]',
            "Object missing required field `kind` - at `$.actions[0].cards[0]`",
            "$.actions[0].cards[0]",
        ),
        (
            b'[{"type":"setup"}]',
            "Object missing required field `side` - at `$.actions[0]`",
            "$.actions[0]",
        ),
        (b'{"type":"split"}', "Expected `array`, got `object` - at `$.actions`", "$.actions"),
        (
            b'[{"type":"reveal","id":"P99"}]',
            "Expected `str` matching regex",
            "$.actions[0].id",
        ),
    ],
)
def test_bad_actions_name_their_path(actions: bytes, message: str, offending: str) -> None:
    with pytest.raises(ProtocolViolation) as caught:
        CODEC.decode_actions(msgspec.Raw(actions))
    error = caught.value
    assert error.code == "invalid_message" and error.offending == offending
    assert str(error).startswith(message.split(" - at")[0])
    assert str(error).endswith(f"- at `{offending}`")


def test_too_many_steps() -> None:
    raw = msgspec.Raw(b"[" + b",".join([b'{"type":"split"}'] * (MAX_STEPS + 1)) + b"]")
    with pytest.raises(ProtocolViolation, match="at most 256 steps") as caught:
        CODEC.decode_actions(raw)
    assert caught.value.offending == "$.actions"


def test_registry_entry() -> None:
    entry = get_entry("verdant")
    assert entry.codec is CODEC and CODEC.game == "verdant"
    assert "pick:2r/place@1,0" in entry.person_help


def test_view_on_the_wire() -> None:
    state = with_seat(started(3), 0, storage="trowel")
    state = play(state, "pick:3r/place@-1,0/use:taken@1,0")
    state = deal(state, "R50", "blue-dog")
    wire = msgspec.json.decode(bytes(CODEC.view_raw(GAME.view(state, 2))))
    assert wire["seat"] == 2 and wire["to_decide"] == 1 and wire["current"] == 1
    assert (wire["players"], wire["variant"], wire["phase"]) == (3, "standard", "turn")
    assert wire["turn"] == 2 and wire["turns_left"] == [12, 13, 13]
    home = wire["homes"][0]
    assert home["storage"] == "trowel" and home["thumbs"] == 0
    assert {"kind": "room", "id": "R23", "at": [-1, 0], "item": None} in home["cards"]
    assert {"kind": "room", "id": "R46", "at": [1, 0], "item": "red-bed"} in home["cards"]
    plant = next(card for card in home["cards"] if card["at"] == [0, 0])
    assert plant["kind"] == "plant" and plant["id"] == "P46" and plant["pot"] is None
    assert wire["market"][3] == {
        "plant": "P23", "plant_thumbs": 1, "token": "blue-dog", "room": "R50", "room_thumbs": 0,
    }  # fmt: skip
    assert wire["decks"] == {"plants": 53, "rooms": 52}
    assert wire["discards"] == {"plants": [], "rooms": []}
    assert wire["bag"]["fertilizer"] == 14 and "red-bed" not in wire["bag"]
    assert wire["pots"] == {"3": 4, "2": 4, "1": 4} and wire["objectives"] == []
    assert wire["setup_room"] is None and wire["tokens_out"] == 0
    assert wire["this_turn"] == {
        "thumb_actions": 0, "split": False, "picked": None, "placed": None,
        "taken": None, "taken_at": "none", "stored": None, "stored_at": "none",
    }  # fmt: skip


def test_setup_view_shows_the_dealt_room() -> None:
    state = deal(GAME.start(GameSettings(players=2)), "P05", "R07")
    wire = decode_view(CODEC.view_raw(GAME.view(state, 0)))
    assert isinstance(wire, VerdantWireView)
    assert (wire.phase, wire.setup_room, wire.this_turn, wire.to_decide) == (
        "setup",
        "R07",
        None,
        0,
    )
    assert state_from_view(view_from_wire(wire)) == state


def test_decoded_views_rebuild_the_state_through_a_random_game() -> None:
    rng = random.Random(4)
    state: VerdantState = GAME.start(GameSettings(players=4, options={"variant": "advanced"}))
    views = 0
    while (actor := GAME.to_decide(state)) is not None:
        if actor == CHANCE:
            state = GAME.apply(state, actor, rng.choice(GAME.chance_outcomes(state)))
            continue
        wire = decode_view(CODEC.view_raw(GAME.view(state, actor)))
        assert state_from_view(view_from_wire(wire)) == state
        views += 1
        decision = random_decision(state, rng)
        assert CODEC.decode_actions(CODEC.actions_raw(decision)) == decision
        state = GAME.apply(state, actor, decision)
    wire = decode_view(CODEC.view_raw(GAME.view(state, 0)))
    assert wire.phase == "over" and wire.to_decide is None and wire.this_turn is None
    assert state_from_view(view_from_wire(wire)) == state
    assert views >= 4 * 14


def test_steps_after_a_revealing_step_are_dropped_not_recorded() -> None:
    # §3: the seat decides the rest after seeing the new cards, so the rest is ignored:
    # it must not reach the record or the other seats either.
    codec = get_entry("verdant").codec
    rules = get_entry("verdant").rules
    raw = msgspec.Raw(
        b'[{"type": "replace_tokens", "columns": [0]},'
        b' {"type": "pick", "column": 1, "kind": "plant"}, {"type": "place", "at": [1, 0]}]'
    )
    decision = codec.decode_actions(raw)
    assert len(decision) == 1
    assert rules.format_decision(decision) == "tokens:0"
    assert rules.parse_decision("tokens:0") == decision
    # In notation (records, a person's typing) the rest is refused, not silently dropped.
    with pytest.raises(RuleError, match="after a revealing step"):
        rules.parse_decision("tokens:0/pick:1p/place@1,0")
