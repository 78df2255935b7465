"""No Verdant view ever holds hidden information (spec §3).

Over random games, at every decision (the chance seat's too), every seat's view is
encoded with the real codec to JSON, as a bot receives it, and must hold

- no card id that chance has not revealed yet, no objective not yet drawn, and no
  token outside the bag's public counts that has not been revealed;
- the decks only as their sizes, and never the seed;
- nothing private at all: Verdant has no hidden hands, so every seat sees the same
  view but for its own ``seat`` number.

The decks have no order to leak: the state is rebuilt exactly from any view
(``state_from_view``), so two states that show the same view are the same state, and
the same trajectory started from another seed gives byte-identical views throughout.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_verdant_properties import GAME, VARIANTS, random_game, revealed_id

from referee.games.base import CHANCE, GameSettings
from referee.games.verdant import codec, rules
from referee.games.verdant.cards import OBJECTIVE_NAMES, TOKEN_BY_ID
from referee.games.verdant.state import VerdantState

CARD_ID = re.compile(r'"([PR]\d\d)"')
QUOTED = re.compile(r'"([a-z][a-z-]*)"')


def view_bytes(state: VerdantState, seat: int) -> bytes:
    return msgspec.json.encode(codec.encode_view(GAME.view(state, seat)))


def check_view(raw: bytes, revealed: set[str], seed: int) -> None:
    text = raw.decode()
    view: dict[str, Any] = json.loads(text)
    unrevealed_cards = set(CARD_ID.findall(text)) - revealed
    assert not unrevealed_cards, f"cards never revealed: {sorted(unrevealed_cards)}"
    assert set(view["decks"]) == {"plants", "rooms"}
    assert all(isinstance(size, int) for size in view["decks"].values())
    # The bag's counts are public (§3); every other token named must have been drawn.
    outside_bag = json.dumps({key: value for key, value in view.items() if key != "bag"})
    named = {word for word in QUOTED.findall(outside_bag) if word in TOKEN_BY_ID}
    assert named <= revealed, f"tokens never revealed: {sorted(named - revealed)}"
    objectives = {word for word in QUOTED.findall(text) if word in OBJECTIVE_NAMES}
    assert objectives <= revealed, f"objectives never drawn: {sorted(objectives - revealed)}"
    assert str(seed) not in text, "the seed shows in a view"


def check_game(players: int, variant: str, seed: int) -> None:
    revealed: set[str] = set()
    trajectory = []
    views = []
    for moment in random_game(players, variant, seed):
        state = moment.state
        assert rules.state_from_view(GAME.view(state, 0)) == state, "the state holds more"
        seen = [view_bytes(state, seat) for seat in range(players)]
        for raw in seen:
            check_view(raw, revealed, seed)
        # Nothing is private in Verdant: the views differ only in whose they are.
        bare = [{**json.loads(raw), "seat": None} for raw in seen]
        assert all(view == bare[0] for view in bare)
        views.append(seen)
        if GAME.to_decide(state) is None:
            break
        trajectory.append((moment.actor, moment.decision))
        if moment.actor == CHANCE:
            revealed.add(revealed_id(moment.decision))
    # Another seed, the same trajectory: not one byte of any view may change.
    other = GAME.start(GameSettings(players=players, seed=seed + 1, options={"variant": variant}))
    for (actor, decision), seen in zip(trajectory, views, strict=False):
        assert [view_bytes(other, seat) for seat in range(players)] == seen
        other = GAME.apply(other, actor, decision)
    assert [view_bytes(other, seat) for seat in range(players)] == views[-1]


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    players=st.integers(min_value=1, max_value=5),
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(min_value=10**6, max_value=2**32 - 1),
)
def test_views_hold_no_hidden_information(players: int, variant: str, seed: int) -> None:
    check_game(players, variant, seed)


@pytest.mark.parametrize("variant", VARIANTS)
def test_views_of_a_five_seat_game(variant: str) -> None:
    check_game(5, variant, 7_654_321)
