"""The rules of Verdant (spec §1–§7), one focused test per rule and clarification V1–V11.

Games are dealt with chosen cards: :func:`started` plays the setup through the
:class:`~referee.games.base.Game` interface, revealing the cards a test names, and
:func:`play` applies a seat's decision written in the record notation. Odd corners
(empty decks, a nearly full home) are built directly with ``_replace`` on the state's
tuples and :func:`make_home`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import IllegalDecision, RuleError, SettingsError
from referee.games import CHANCE, GameSettings, get_game
from referee.games.verdant import (
    PLANTS,
    ROOMS,
    TOKENS,
    Pick,
    Place,
    ReplaceCards,
    ReplaceTokens,
    Reveal,
    Setup,
    Split,
    VerdantGame,
    VerdantState,
    advance,
    can_finish,
    format_decision,
    legal_steps,
    parse_decision,
    plant_by_id,
    render,
    render_public,
    room_by_id,
    rules,
    scoring,
    state_from_view,
    steps_by_kind,
    token_by_id,
)
from referee.games.verdant.cards import LIGHTS, OBJECTIVES, TOKEN_COUNTS
from referee.games.verdant.state import (
    CELLS,
    EMPTY_CELLS,
    IS_PLANT_CELL,
    OVER,
    Home,
    VerdantView,
    cell_of,
)
from referee.games.verdant.steps import Decision, Step

GAME = VerdantGame()
MARKET = (
    ("P20", "fertilizer", "R20"),
    ("P21", "trowel", "R21"),
    ("P22", "watering-can", "R22"),
    ("P23", "red-bed", "R23"),
)


# --- helpers ------------------------------------------------------------------------


def new(players: int = 2, variant: str = "standard") -> VerdantState:
    return GAME.start(GameSettings(players=players, options={"variant": variant}))


def deal(state: VerdantState, *ids: str) -> VerdantState:
    """Chance reveals ``ids`` in order (each must be a listed outcome)."""
    for revealed in ids:
        assert GAME.to_decide(state) == CHANCE
        decision = (Reveal(revealed),)
        assert decision in GAME.chance_outcomes(state)
        state = GAME.apply(state, CHANCE, decision)
    return state


def play(state: VerdantState, text: str) -> VerdantState:
    """The deciding seat's decision written in the notation."""
    seat = GAME.to_decide(state)
    assert seat is not None and seat != CHANCE
    return GAME.apply(state, seat, parse_decision(text))


def started(
    players: int = 2,
    variant: str = "standard",
    homes: Iterable[tuple[str, str, str]] | None = None,
    market: Iterable[tuple[str, str, str]] = MARKET,
    objectives: Iterable[str] = ("collector", "outer-ring", "pet-lover"),
) -> VerdantState:
    """A game dealt with these cards, at seat 0's first turn (by default seat ``s`` has
    P46+s at (0, 0) and R46+s east of it)."""
    if homes is None:
        homes = [(f"P{46 + seat:02d}", f"R{46 + seat:02d}", "east") for seat in range(players)]
    state = new(players, variant)
    for plant, room, side in homes:
        state = deal(state, plant, room)
        state = play(state, side)
    for column in market:
        state = deal(state, *column)
    if variant == "advanced":
        state = deal(state, *objectives)
    assert GAME.to_decide(state) == 0
    return state


def make_home(
    cards: Mapping[tuple[int, int], str],
    verdancy: Mapping[tuple[int, int], int] | None = None,
    complete: Mapping[tuple[int, int], int] | None = None,
    items: Mapping[tuple[int, int], str] | None = None,
) -> Home:
    """A home holding ``cards`` (ids by coordinates); ``complete`` maps complete plants to
    their pot (-1 for none)."""
    numbers = list(EMPTY_CELLS)
    growth = [0] * CELLS
    pots = list(EMPTY_CELLS)
    slots = list(EMPTY_CELLS)
    occupied = done = 0
    for (x, y), card in cards.items():
        cell = cell_of(x, y)
        assert IS_PLANT_CELL[cell] == card.startswith("P"), (x, y, card)
        numbers[cell] = (plant_by_id(card) if card.startswith("P") else room_by_id(card)).index
        occupied |= 1 << cell
    for (x, y), value in (verdancy or {}).items():
        growth[cell_of(x, y)] = value
    for (x, y), pot in (complete or {}).items():
        pots[cell_of(x, y)] = pot
        done |= 1 << cell_of(x, y)
    for (x, y), item in (items or {}).items():
        slots[cell_of(x, y)] = token_by_id(item).index
    xs = [x for x, _ in cards]
    ys = [y for _, y in cards]
    bounds = (min(xs), max(xs), min(ys), max(ys))
    return Home(tuple(numbers), tuple(growth), tuple(pots), tuple(slots), occupied, done, bounds)


def with_seat(
    state: VerdantState,
    seat: int,
    *,
    home: Home | None = None,
    thumbs: int | None = None,
    storage: str | None = None,
) -> VerdantState:
    mine = state.seats[seat]
    mine = mine._replace(
        home=mine.home if home is None else home,
        thumbs=mine.thumbs if thumbs is None else thumbs,
        storage=mine.storage if storage is None else token_by_id(storage).index,
    )
    state = state._replace(seats=(*state.seats[:seat], mine, *state.seats[seat + 1 :]))
    if seat == state.seat and state.part is not None and storage is not None:
        state = state._replace(part=rules._fresh_part(mine.storage))
    return state


def home_of(state: VerdantState, seat: int = 0) -> Home:
    return state.seats[seat].home


def card_at(home: Home, x: int, y: int) -> str | None:
    card = home.cards[cell_of(x, y)]
    if card < 0:
        return None
    return (PLANTS if IS_PLANT_CELL[cell_of(x, y)] else ROOMS)[card].id


def verdancy_at(home: Home, x: int, y: int) -> int:
    return home.verdancy[cell_of(x, y)]


def pot_at(home: Home, x: int, y: int) -> int | None:
    cell = cell_of(x, y)
    return home.pots[cell] if home.complete >> cell & 1 else None


def outcome_kinds(state: VerdantState) -> str:
    """The kind of the next chance draw: plant, room, token or objective."""
    first = GAME.chance_outcomes(state)[0][0]
    assert isinstance(first, Reveal)
    if first.id in {plant.id for plant in PLANTS}:
        return "plant"
    if first.id in {room.id for room in ROOMS}:
        return "room"
    if first.id in {token.id for token in TOKENS}:
        return "token"
    return "objective"


def illegal(state: VerdantState, text: str, match: str) -> IllegalDecision:
    with pytest.raises(IllegalDecision, match=match) as caught:
        play(state, text)
    return caught.value


def random_decision(state: VerdantState, rng: random.Random) -> Decision:
    """A random decision, step by step: a uniformly chosen kind of step (or the end of
    the turn), then a step of that kind, until the turn ends or something is revealed."""
    steps: list[Step] = []
    while True:
        by_kind = steps_by_kind(state)
        kinds: list[str | None] = list(by_kind)
        if can_finish(state):
            kinds.append(None)
        kind = rng.choice(kinds)
        if kind is None:
            return tuple(steps)
        step = rng.choice(by_kind[kind])
        steps.append(step)
        state = advance(state, step)
        if isinstance(step, Setup | ReplaceCards | ReplaceTokens):
            return tuple(steps)


def random_game(
    players: int, seed: int, variant: str = "standard"
) -> tuple[VerdantState, list[tuple[int, str]]]:
    """A random game to its end and its record: (actor, notation) per decision."""
    rng = random.Random(seed)
    state = new(players, variant)
    record: list[tuple[int, str]] = []
    while (actor := GAME.to_decide(state)) is not None:
        if actor == CHANCE:
            decision = rng.choice(GAME.chance_outcomes(state))
        else:
            decision = random_decision(state, rng)
        record.append((actor, GAME.format_decision(decision)))
        state = GAME.apply(state, actor, decision)
    return state, record


# --- §1 components ------------------------------------------------------------------


def test_v1_plant_cards_follow_the_formula() -> None:
    assert len(PLANTS) == 60
    p01, p04, p07, p10 = (plant_by_id(card) for card in ("P01", "P04", "P07", "P10"))
    assert (p01.colour, p01.lights, p01.needs, p01.points) == ("red", {"low"}, 3, 4)
    assert (p04.lights, p04.needs, p04.points) == ({"low", "medium"}, 4, 4)
    assert (p07.lights, p07.needs, p07.points) == ({"low"}, 5, 7)
    assert (p10.lights, p10.needs, p10.points) == ({"low", "medium"}, 6, 6)
    p60 = plant_by_id("P60")
    assert (p60.colour, p60.lights, p60.needs, p60.points) == ("purple", {"low", "bright"}, 6, 6)
    assert plant_by_id("P13").colour == "yellow"
    for plant in PLANTS:
        _c, k = divmod(plant.index, 12)
        v = k // 6
        one = len(plant.lights) == 1
        assert plant.needs == (3 + 2 * v if one else 4 + 2 * v)
        assert plant.points == (4 + 3 * v if one else 4 + 2 * v)


def test_v1_room_cards_follow_the_formula() -> None:
    assert len(ROOMS) == 60
    assert room_by_id("R01").sides == ("low", "medium", "bright", "medium")
    assert room_by_id("R13").sides == ("medium", "bright", "low", "bright")
    off = [[0, 1, 2, 1], [0, 2, 1, 2], [0, 1, 1, 2], [0, 2, 2, 1]]
    for room in ROOMS:
        c, k = divmod(room.index, 12)
        assert room.sides == tuple(LIGHTS[(k + c + off[k // 3][d]) % 3] for d in range(4))
    # The spec's remarks on the set: no two alike in a colour, none uniform, lights even.
    for colour in range(5):
        sides = [room.sides for room in ROOMS[12 * colour : 12 * colour + 12]]
        assert len(set(sides)) == 12
    assert all(len(set(room.sides)) > 1 for room in ROOMS)
    counts = {light: sum(room.sides.count(light) for room in ROOMS) for light in LIGHTS}
    assert counts == {"low": 80, "medium": 80, "bright": 80}


def test_tokens_and_bag() -> None:
    items = [token for token in TOKENS if token.is_item]
    assert len(items) == 45 and len({(t.colour, t.motif) for t in items}) == 45
    assert token_by_id("red-bed").motif == "bed" and token_by_id("purple-fish").is_pet
    assert sum(TOKEN_COUNTS) == 90
    assert TOKEN_COUNTS[45:] == (15, 15, 15)
    assert new().bag == TOKEN_COUNTS


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_v2_pots_per_player_count(players: int) -> None:
    assert new(players).pots == (players + 1,) * 3


def test_bad_ids_are_rule_errors() -> None:
    for lookup, bad in ((plant_by_id, "P61"), (room_by_id, "R00"), (token_by_id, "red-sofa")):
        with pytest.raises(RuleError):
            lookup(bad)


# --- §2 setup -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "variant", "thumbs"),
    [
        (1, "standard", (1,)),
        (2, "standard", (0, 2)),
        (3, "standard", (0, 1, 2)),
        (5, "advanced", (0, 1, 1, 1, 2)),
        (4, "simplified", (0, 0, 0, 0)),
    ],
)
def test_thumbs_at_setup(players: int, variant: str, thumbs: tuple[int, ...]) -> None:
    assert tuple(seat.thumbs for seat in new(players, variant).seats) == thumbs


@pytest.mark.parametrize("players", [0, 6])
def test_v4_player_count(players: int) -> None:
    with pytest.raises(SettingsError, match="1 to 5 players"):
        new(players)


def test_setup_order_deal_then_choose_per_seat() -> None:
    state = new(2)
    assert outcome_kinds(state) == "plant"
    assert [o[0].id for o in GAME.chance_outcomes(state)] == [p.id for p in PLANTS]  # type: ignore[union-attr]
    state = deal(state, "P05")
    assert outcome_kinds(state) == "room"
    state = deal(state, "R07")
    assert GAME.to_decide(state) == 0
    assert legal_steps(state) == tuple(Setup(side) for side in ("north", "east", "south", "west"))
    assert GAME.view(state, 1).part.card == room_by_id("R07").index  # type: ignore[union-attr]
    state = play(state, "west")
    assert card_at(home_of(state), 0, 0) == "P05" and card_at(home_of(state), -1, 0) == "R07"
    # Seat 1's deal follows; the market comes only after every seat chose.
    assert outcome_kinds(state) == "plant"
    state = play(deal(state, "P06", "R08"), "north")
    assert card_at(home_of(state, 1), 0, 1) == "R08"
    kinds = []
    for column in MARKET:
        for revealed in column:
            kinds.append(outcome_kinds(state))
            state = deal(state, revealed)
    assert kinds == ["plant", "token", "room"] * 4
    assert state.market.plants == tuple(plant_by_id(c[0]).index for c in MARKET)
    assert GAME.to_decide(state) == 0 and GAME.turn_number(state) == 1


def test_setup_light_match_is_scored_at_once() -> None:
    # P01 likes low light; R01 is low on its north side, bright on its south side.
    south = started(1, homes=[("P01", "R01", "south")])
    assert verdancy_at(home_of(south), 0, 0) == 1
    north = started(1, homes=[("P01", "R01", "north")])
    assert verdancy_at(home_of(north), 0, 0) == 0


def test_setup_decision_is_one_setup_step() -> None:
    state = deal(new(2), "P05", "R07")
    illegal(state, "north/split", "§2.2")
    with pytest.raises(IllegalDecision, match=r"§2\.2") as caught:
        GAME.apply(state, 0, (Split(),))
    assert caught.value.index == 0
    ready = started()
    illegal(ready, "north", "§2.2: the setup is over")


def test_v9_advanced_objectives_one_per_category() -> None:
    state = new(2, "advanced")
    state = play(deal(state, "P01", "R01"), "east")
    state = play(deal(state, "P02", "R02"), "east")
    for column in MARKET:
        state = deal(state, *column)
    for category in OBJECTIVES:
        assert [o[0].id for o in GAME.chance_outcomes(state)] == list(category)  # type: ignore[union-attr]
        state = deal(state, category[1])
    assert state.objectives == ("big-growers", "matched-rows", "furnished")
    assert GAME.to_decide(state) == 0
    assert new(2).pending and started().objectives == ()


# --- §3 decisions -------------------------------------------------------------------


def test_a_revealing_step_ends_the_decision_and_the_rest_is_ignored() -> None:
    state = with_seat(started(), 0, thumbs=4)
    after = GAME.apply(state, 0, (ReplaceCards(((0, "plant"),)), Place((9, 9))))
    assert GAME.to_decide(after) == CHANCE and outcome_kinds(after) == "plant"
    after = deal(after, "P30")
    assert GAME.to_decide(after) == 0  # asked again, same turn
    assert after.part is not None and after.part.thumb_actions == 1
    assert GAME.turn_number(after) == 1
    after = play(after, "pick:0p/place@1,1")
    assert card_at(home_of(after), 1, 1) == "P30"


def test_a_decision_without_a_reveal_must_finish_the_turn() -> None:
    state = with_seat(started(), 0, thumbs=2)
    illegal(state, "split", "§4.2: the turn needs a pick")
    illegal(state, "pick:0p", "§4.3: the picked card must be placed")
    illegal(state, "pass", "§4.2")


def test_illegal_step_index_names_the_step() -> None:
    error = illegal(started(), "pick:1r/place@5,5", "§4.3")
    assert error.index == 1
    error = illegal(started(), "pick:1r/place@-1,0/use:stored@0,0", "V5")
    assert error.index == 2


def test_only_the_deciding_seat_and_chance_in_its_turn() -> None:
    state = started()
    with pytest.raises(IllegalDecision, match="§3: seat 1 decides now, not seat 2"):
        GAME.apply(state, 1, ())
    with pytest.raises(IllegalDecision, match="§3"):
        GAME.apply(state, CHANCE, (Reveal("P30"),))
    with pytest.raises(IllegalDecision, match="§2: only chance"):
        GAME.apply(state, 0, (Reveal("P30"),))
    with pytest.raises(IllegalDecision, match="V11"):
        GAME.apply(new(), CHANCE, (Reveal("R01"),))  # a plant is due
    with pytest.raises(IllegalDecision, match="V11"):
        GAME.apply(new(), CHANCE, (Reveal("P01"), Reveal("P02")))


# --- §4.1 thumb actions -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule"),
    [("cards:0p", "§4.1a"), ("tokens:0", "§4.1b"), ("split", "§4.1c"), ("grow@0,0", "§4.1d")],
)
def test_each_thumb_action_costs_two(text: str, rule: str) -> None:
    state = with_seat(started(), 0, thumbs=1)
    illegal(state, text, f"{rule}: a thumb action costs 2 green thumbs, seat 1 has 1")
    state = with_seat(state, 0, thumbs=3)
    after = advance(state, parse_decision(text)[0])
    assert after.seats[0].thumbs == 1


def test_1a_replaces_cards_without_thumbs_draw_first_then_discard() -> None:
    state = with_seat(started(), 0, thumbs=2)
    p20, p21, p30 = (plant_by_id(card).index for card in ("P20", "P21", "P30"))
    # The deck holds one plant, the discard pile another: the second draw reshuffles the
    # discard pile, which does not yet hold the replaced cards.
    state = state._replace(plant_deck=1 << p30, plant_discard=1 << plant_by_id("P31").index)
    state = play(state, "cards:1p+0p")
    assert state.market.plants[:2] == (-1, -1)
    assert [o[0].id for o in GAME.chance_outcomes(state)] == ["P30"]  # type: ignore[union-attr]
    state = deal(state, "P30")
    assert [o[0].id for o in GAME.chance_outcomes(state)] == ["P31"]  # type: ignore[union-attr]
    state = deal(state, "P31")
    assert state.market.plants[:2] == (p30, plant_by_id("P31").index)  # column order
    assert state.plant_discard == 1 << p20 | 1 << p21 and state.plant_deck == 0
    assert GAME.to_decide(state) == 0


def test_1a_cards_with_thumbs_cannot_be_replaced() -> None:
    state = with_seat(started(), 0, thumbs=4)
    m = state.market
    state = state._replace(market=m._replace(room_thumbs=(0, 1, 0, 0)))
    illegal(state, "cards:1r", "§4.1a: the room of column 1 carries thumbs")
    illegal(state, "cards:", "§4.1a: name at least one")
    illegal(state, "cards:0p+0p", "§4.1a: each card is replaced once")
    assert ReplaceCards(((1, "room"),)) not in legal_steps(state)
    assert ReplaceCards(((1, "plant"),)) in legal_steps(state)


def test_1b_replaces_tokens_draw_first_then_return_to_the_bag() -> None:
    state = with_seat(started(), 0, thumbs=2)
    fertilizer = token_by_id("fertilizer").index
    bag_before = state.bag[fertilizer]
    state = play(state, "tokens:0+3")
    outcomes = [o[0].id for o in GAME.chance_outcomes(state)]  # type: ignore[union-attr]
    assert outcomes.count("fertilizer") == bag_before and "red-bed" not in outcomes
    assert len(outcomes) == sum(state.bag)
    state = deal(state, "trowel", "blue-cat")
    assert state.market.tokens[0] == token_by_id("trowel").index
    assert state.market.tokens[3] == token_by_id("blue-cat").index
    assert state.bag[fertilizer] == bag_before + 1
    assert state.bag[token_by_id("red-bed").index] == 1
    illegal(
        with_seat(state, 0, thumbs=2)._replace(market=state.market._replace(tokens=(-1,) * 4)),
        "tokens:1",
        "§4.1b: column 1 has no token",
    )


def test_1c_split_takes_card_and_token_from_different_columns_once() -> None:
    state = with_seat(started(), 0, thumbs=4)
    illegal(state, "pick:1r:3/place@-1,0", "§4.2: the token comes from the card's column")
    illegal(state, "split/split", "§4.1c: once a turn")
    after = play(state, "split/pick:1r:3/place@-1,0/store")
    assert after.seats[0].storage == token_by_id("red-bed").index
    assert after.market.tokens[1] == token_by_id("trowel").index  # the card's column keeps it
    assert after.pending and outcome_kinds(after) == "room"
    after = deal(after, "R40")
    assert after.market.rooms[1] == room_by_id("R40").index
    after = deal(after, "blue-bed")
    assert after.market.tokens[3] == token_by_id("blue-bed").index


def test_thumb_actions_only_before_the_pick_but_grow_any_time() -> None:
    state = with_seat(started(), 0, thumbs=6)
    illegal(state, "pick:1r/split", "§4.1c: this thumb action comes before the pick")
    illegal(state, "pick:1r/place@-1,0/cards:0p", "§4.1a: this thumb action comes before")
    after = play(state, "grow@0,0/pick:1r/grow@0,0/place@-1,0/grow@0,0")
    assert after.seats[0].thumbs == 0
    base = play(state, "pick:1r/place@-1,0")
    assert verdancy_at(home_of(after), 0, 0) == verdancy_at(home_of(base), 0, 0) + 3


def test_1d_grow_one_incomplete_plant_and_complete_it() -> None:
    home = make_home({(0, 0): "P01", (1, 0): "R01"}, verdancy={(0, 0): 2})
    state = with_seat(started(3), 0, home=home, thumbs=4)
    after = play(state, "grow@0,0/pick:1r/place@-1,0")
    assert pot_at(home_of(after), 0, 0) == 3 and verdancy_at(home_of(after), 0, 0) == 0
    assert after.pots == (3, 4, 4)
    done = with_seat(started(), 0, home=make_home({(0, 0): "P01"}, complete={(0, 0): 3}), thumbs=2)
    illegal(done, "grow@0,0", "§4.1d: the plant at \\(0, 0\\) is complete")
    illegal(state, "grow@1,0", "§4.1d: there is no plant of yours at \\(1, 0\\)")


def test_simplified_has_no_thumbs_or_thumb_actions() -> None:
    state = started(2, "simplified")
    assert all(seat.thumbs == 0 for seat in state.seats)
    illegal(with_seat(state, 0, thumbs=4), "split", "§6.1: no thumb actions")
    after = play(state, "pick:1r/place@-1,0")
    assert after.market.plant_thumbs == (0, 0, 0, 0)  # no thumb goes on the other card


# --- §4.2 pick ----------------------------------------------------------------------


def test_pick_takes_the_thumbs_and_puts_one_on_the_other_card() -> None:
    state = started()
    m = state.market
    state = state._replace(market=m._replace(room_thumbs=(0, 2, 0, 0)))
    after = play(state, "pick:1r/place@-1,0/discard:taken")
    assert after.seats[0].thumbs == 2
    assert after.market.plant_thumbs == (0, 1, 0, 0) and after.market.room_thumbs == (0, 0, 0, 0)
    # V3: the supply never runs out: a card collects thumbs without limit.
    state = state._replace(market=m._replace(plant_thumbs=(0, 40, 0, 0)))
    after = play(state, "pick:1r/place@-1,0")
    assert after.market.plant_thumbs[1] == 41


def test_a_pick_is_legal_only_if_the_card_can_be_placed() -> None:
    alone = make_home({(0, 0): "P01"})  # a lone plant: only rooms fit next to it
    state = with_seat(started(), 0, home=alone)
    illegal(state, "pick:0p/place@1,1", "§4.2: the plant of column 0 cannot be placed")
    picks = rules.legal_picks(state)
    assert picks and all(pick.kind == "room" for pick in picks)


def test_pass_when_no_legal_pick_exists() -> None:
    alone = make_home({(0, 0): "P01"})
    state = with_seat(started(), 0, home=alone)
    empty = state.market._replace(rooms=(-1,) * 4)
    state = state._replace(market=empty)
    assert rules.legal_picks(state) == () and can_finish(state)
    after = play(state, "pass")
    assert GAME.to_decide(after) == 1 and home_of(after) == alone
    assert after.market == empty  # nothing taken, nothing refilled
    illegal(started(), "pass", "§4.2: the turn needs a pick")


def test_pick_errors() -> None:
    state = started()
    illegal(state, "pick:4p/place@1,1", "§4.2: market columns are 0 to 3")
    state = state._replace(market=state.market._replace(plants=(-1, 1, 2, 3)))
    illegal(state, "pick:0p/place@1,1", "§4.2: column 0 has no plant card")
    illegal(started(), "pick:0r/pick:1r/place@-1,0", "§4.2: one pick a turn")


# --- §4.3 placement and light -------------------------------------------------------


def test_placement_chessboard_and_adjacency() -> None:
    state = started()  # P46 at (0, 0), R46 at (1, 0)
    illegal(state, "pick:1r/place@1,1", "plants and rooms alternate like a chessboard")
    illegal(state, "pick:1r/place@0,0", "the spot is taken")
    illegal(state, "pick:1r/place@1,2", "orthogonally next to one of your cards")
    illegal(state, "pick:0p/place@3,1", "orthogonally next to one of your cards")
    spots = {
        step.at for step in legal_steps(advance(state, Pick(1, "room"))) if isinstance(step, Place)
    }
    assert spots == {(-1, 0), (0, 1), (0, -1)}


def test_placement_keeps_five_columns_by_three_rows_never_rotated() -> None:
    row = make_home({(0, 0): "P01", (1, 0): "R01", (2, 0): "P02", (3, 0): "R02", (4, 0): "P03"})
    state = with_seat(started(), 0, home=row)
    illegal(state, "pick:1r/place@5,0", "would not fit 5 columns × 3 rows")
    illegal(state, "pick:1r/place@-1,0", "would not fit")
    column = make_home({(0, 0): "P01", (0, 1): "R01", (0, 2): "P02"})
    state = with_seat(started(), 0, home=column)
    illegal(state, "pick:1r/place@0,3", "would not fit")
    illegal(state, "pick:1r/place@0,-1", "would not fit")
    after = play(state, "pick:1r/place@1,2")
    assert card_at(home_of(after), 1, 2) == "R21"


def test_light_matches_add_one_verdancy_per_pair() -> None:
    # P02 likes medium: R01's west and east sides are medium, north low, south bright.
    home = make_home({(0, 0): "P02", (1, 0): "R02", (-1, 1): "P03"})
    market = (("P20", "trowel", "R01"), *MARKET[1:])
    state = with_seat(started(market=market), 0, home=home)
    after = play(state, "pick:0r/place@-1,0")  # east side faces P02 (medium): a match
    assert verdancy_at(home_of(after), 0, 0) == 1
    # Its north side (low) faces P03 (bright): no match.
    assert verdancy_at(home_of(after), -1, 1) == 0
    after = play(with_seat(state, 0, home=home), "pick:0r/place@0,1")  # south (bright) faces P02
    assert verdancy_at(home_of(after), 0, 0) == 0


def test_a_plant_between_matching_rooms_gains_for_each_pair() -> None:
    # P02 likes medium. West of (2, 0) lies R01, whose east side is medium; east of it
    # R06, whose west side is medium; R13 north of it shows its south side (low).
    assert room_by_id("R01").sides[1] == room_by_id("R06").sides[3] == "medium"
    assert room_by_id("R13").sides[2] == "low"
    home = make_home({(0, 0): "P01", (1, 0): "R01", (3, 0): "R06", (2, 1): "R13", (1, 1): "P03"})
    market = (("P02", "trowel", "R20"), *MARKET[1:])
    state = with_seat(started(market=market), 0, home=home)
    after = play(state, "pick:0p/place@2,0")
    assert verdancy_at(home_of(after), 2, 0) == 2


def test_completion_takes_the_best_pot_left_then_terracotta() -> None:
    home = make_home({(0, 0): "P02", (1, 0): "R02"}, verdancy={(0, 0): 2})
    market = (("P20", "trowel", "R01"), *MARKET[1:])
    state = with_seat(started(market=market), 0, home=home)
    after = play(state, "pick:0r/place@-1,0")  # +1 reaches P02's 3
    assert pot_at(home_of(after), 0, 0) == 3 and after.pots == (2, 3, 3)
    for pots, expected in (((0, 3, 3), 2), ((0, 0, 1), 1), ((0, 0, 0), 0)):
        after = play(state._replace(pots=pots), "pick:0r/place@-1,0")
        assert pot_at(home_of(after), 0, 0) == expected
    assert after.pots == (0, 0, 0)  # terracotta never runs out


def test_surplus_is_lost_and_complete_plants_gain_nothing() -> None:
    # R20 is bright on its north side: placed south of P01 (low) it forms no match.
    assert room_by_id("R20").sides[0] == "bright"
    home = make_home({(0, 0): "P01", (1, 0): "R01", (2, 0): "P02"}, verdancy={(0, 0): 2})
    state = with_seat(started(market=(("P20", "fertilizer", "R20"), *MARKET[1:])), 0, home=home)
    after = play(state, "pick:0r/place@0,-1/use:taken@0,0")
    assert pot_at(home_of(after), 0, 0) == 3 and verdancy_at(home_of(after), 0, 0) == 0
    illegal(state, "pick:0r/place@0,-1/use:taken@1,0", "§4.4: there is no plant of yours")
    illegal(
        with_seat(state, 0, home=make_home({(0, 0): "P01", (1, 0): "R01"}, complete={(0, 0): 3})),
        "pick:0r/place@0,-1/use:taken@0,0",
        "§4.4: the plant at \\(0, 0\\) is complete",
    )


# --- §4.4 tokens and V5 -------------------------------------------------------------


def test_item_goes_into_an_empty_room_slot() -> None:
    state = started()
    after = play(state, "pick:3r/place@-1,0/use:taken@1,0")
    assert home_of(after).items[cell_of(1, 0)] == token_by_id("red-bed").index
    assert after.spent == 0  # placed items stay in the home
    full = with_seat(
        state, 0, home=make_home({(0, 0): "P01", (1, 0): "R01"}, items={(1, 0): "blue-cat"})
    )
    illegal(full, "pick:3r/place@-1,0/use:taken@1,0", "holds an item already")
    illegal(state, "pick:3r/place@-1,0/use:taken@0,0", "no room of yours")
    illegal(state, "pick:3r/place@-1,0/use:taken@1,0+-1,0", "goes into one room")


def test_nurture_tokens() -> None:
    home = make_home({(0, 0): "P07", (1, 0): "R01", (2, 0): "P08", (1, 1): "P09"})
    state = with_seat(started(), 0, home=home)
    plants = ((2, 0), (0, 0), (1, 1))

    def gained(prefix: str, use: str) -> list[int]:
        base = home_of(play(state, f"{prefix}/discard:taken"))
        after = home_of(play(state, f"{prefix}/{use}"))
        return [verdancy_at(after, *at) - verdancy_at(base, *at) for at in plants]

    assert gained("pick:0r/place@-1,0", "use:taken@2,0") == [3, 0, 0]  # fertilizer
    illegal(state, "pick:0r/place@-1,0/use:taken@2,0+0,0", "fertilizer grows one plant")
    assert gained("pick:1r/place@-1,0", "use:taken@2,0+0,0+1,1") == [1, 1, 1]  # trowel
    assert gained("pick:1r/place@-1,0", "use:taken@1,1") == [0, 0, 1]
    illegal(state, "pick:1r/place@-1,0/use:taken@2,0+2,0", "three different plants")
    illegal(state, "pick:1r/place@-1,0/use:taken@", "one, two or three")
    # Watering can on R01 at (1, 0): its neighbours P07, P08, P09 each +1.
    assert gained("pick:2r/place@-1,0", "use:taken@1,0") == [1, 1, 1]
    assert play(state, "pick:2r/place@-1,0/use:taken@1,0").spent == 1
    illegal(state, "pick:2r/place@-1,0/use:taken@0,0", "no room of yours")


def test_tokens_are_handled_after_placing_the_card() -> None:
    illegal(
        started(), "pick:0r/store/place@-1,0", "§4.4: tokens are stored, used or discarded after"
    )


def test_store_and_the_taken_token_left_over_is_discarded() -> None:
    state = started()
    after = play(state, "pick:1r/place@-1,0/store")
    assert after.seats[0].storage == token_by_id("trowel").index and after.spent == 0
    after = play(state, "pick:1r/place@-1,0")
    assert after.seats[0].storage == -1 and after.spent == 1
    illegal(state, "pick:1r/place@-1,0/store/store", "§4.4: no taken token to store")
    illegal(state, "pick:1r/place@-1,0/discard:taken/use:taken@0,0", "§4.4: no taken token left")


def test_v5_storing_into_a_full_storage_displaces_the_old_token() -> None:
    home = make_home({(0, 0): "P07", (1, 0): "R01"})
    state = with_seat(started(), 0, home=home, storage="fertilizer")
    # Stored, then the old one used this turn:
    after = play(state, "pick:1r/place@-1,0/store/use:stored@0,0")
    assert after.seats[0].storage == token_by_id("trowel").index
    assert verdancy_at(home_of(after), 0, 0) == 3
    # Stored and the old one not used: it is discarded at the end of the turn.
    after = play(state, "pick:1r/place@-1,0/store")
    assert after.seats[0].storage == token_by_id("trowel").index and after.spent == 1
    # The old one cannot go back: there is no step that stores it, and it is gone after use.
    illegal(
        state,
        "pick:1r/place@-1,0/store/use:stored@0,0/discard:stored",
        "V5: the token stored before",
    )
    # Using the stored token first leaves room for the new one.
    after = play(state, "pick:1r/place@-1,0/use:stored@0,0/store")
    assert after.seats[0].storage == token_by_id("trowel").index and after.spent == 1
    illegal(started(), "pick:1r/place@-1,0/discard:stored", "V5: no token was in storage")


def test_discard_is_always_allowed() -> None:
    state = with_seat(started(), 0, storage="red-cat")
    after = play(state, "pick:1r/place@-1,0/discard:stored/discard:taken")
    assert after.seats[0].storage == -1 and after.spent == 2


# --- §4.5 refill --------------------------------------------------------------------


def test_refill_card_slot_then_token_slot() -> None:
    after = play(started(), "pick:1r/place@-1,0")
    assert GAME.to_decide(after) == CHANCE and outcome_kinds(after) == "room"
    assert GAME.turn_number(after) == 1  # the refill belongs to the turn
    after = deal(after, "R50")
    assert outcome_kinds(after) == "token"
    after = deal(after, "blue-dog")
    assert after.market.rooms[1] == room_by_id("R50").index
    assert after.market.tokens[1] == token_by_id("blue-dog").index
    assert GAME.to_decide(after) == 1 and GAME.turn_number(after) == 2


def test_empty_deck_reshuffles_its_discard_pile_or_leaves_the_slot_empty() -> None:
    state = started()._replace(room_deck=0, room_discard=1 << 55)
    after = play(state, "pick:1r/place@-1,0")
    assert [o[0].id for o in GAME.chance_outcomes(after)] == ["R56"]  # type: ignore[union-attr]
    after = deal(after, "R56")
    assert after.room_discard == 0
    state = started()._replace(room_deck=0, room_discard=0)
    after = deal(play(state, "pick:1r/place@-1,0"), "green-fish")
    assert after.market.rooms[1] == -1 and GAME.to_decide(after) == 1


def test_empty_bag_leaves_the_token_slot_empty_and_a_tokenless_column_can_be_picked() -> None:
    state = started()._replace(bag=(0,) * 48)
    after = deal(play(state, "pick:1r/place@-1,0"), "R50")
    assert after.market.tokens[1] == -1 and GAME.to_decide(after) == 1
    after = with_seat(after, 1, home=make_home({(0, 0): "P02", (1, 0): "R02"}))
    picked = advance(after, Pick(1, "plant"))
    assert picked.part is not None and picked.part.taken == -1  # no token to take
    spent = after.spent  # the first seat's trowel, discarded at the end of its turn
    after = play(after, "pick:1p/place@1,1")
    assert after.spent == spent and card_at(home_of(after, 1), 1, 1) == "P21"


# --- §7 solo ------------------------------------------------------------------------


def test_v10_solo_column_shift_after_the_refill() -> None:
    state = started(1, homes=[("P01", "R01", "east")])
    state = state._replace(market=state.market._replace(plant_thumbs=(3, 0, 0, 0)))
    after = play(state, "pick:1r/place@-1,0")
    after = deal(after, "R50", "blue-dog")  # the refill of column 1 first
    # Then the leftmost column leaves whole and a new column is dealt on the right.
    kinds = []
    for revealed in ("P50", "green-cat", "R51"):
        kinds.append(outcome_kinds(after))
        after = deal(after, revealed)
    assert kinds == ["plant", "token", "room"]
    m = after.market
    assert m.plants == tuple(plant_by_id(c).index for c in ("P21", "P22", "P23", "P50"))
    assert m.rooms == tuple(room_by_id(c).index for c in ("R50", "R22", "R23", "R51"))
    assert m.tokens[0] == token_by_id("blue-dog").index
    assert m.plant_thumbs == (1, 0, 0, 0)  # column 0's 3 thumbs went back to the supply
    assert after.plant_discard == 1 << plant_by_id("P20").index
    assert after.room_discard == 1 << room_by_id("R20").index
    # Column 0's fertilizer went back into the bag: all 15 are in it again.
    assert after.bag[token_by_id("fertilizer").index] == 15
    assert GAME.to_decide(after) == 0 and GAME.turn_number(after) == 2


def test_solo_outcome_is_the_score() -> None:
    state, _ = random_game(1, seed=5)
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.places == (1,)
    assert outcome.scores == (sum(points for _, points in outcome.breakdown[0]),)
    assert outcome.reason == f"solo score {outcome.scores[0]}"


# --- §5 scoring ---------------------------------------------------------------------


FULL = {
    (0, 0): "P01", (1, 0): "R01", (2, 0): "P02", (3, 0): "R02", (4, 0): "P03",
    (0, 1): "R13", (1, 1): "P13", (2, 1): "R14", (3, 1): "P14", (4, 1): "R15",
    (0, -1): "R25", (1, -1): "P25", (2, -1): "R26", (3, -1): "P26", (4, -1): "R27",
}  # fmt: skip
"""A finished home: plants red (row 0), yellow (row 1), green (row -1); rooms red,
yellow, green by row. Every plant sits on a room of its own colour's row or next to it."""


def scored(home: Home, variant: int = 0, objectives: tuple[str, ...] = ()) -> dict[str, int]:
    return dict(scoring.home_breakdown(home, variant, objectives))


def test_scoring_categories_in_order() -> None:
    home = make_home(FULL)
    assert tuple(scored(home)) == scoring.CATEGORIES == (
        "plants", "verdancy", "pots", "rooms", "motifs", "colours", "objectives",
    )  # fmt: skip


def test_complete_plants_score_their_points_and_pots() -> None:
    home = make_home(FULL, complete={(0, 0): 3, (2, 0): 0, (1, -1): 2})
    points = scored(home)
    assert points["plants"] == 4 + 4 + 4 and points["pots"] == 5


def test_v6_incomplete_verdancy_pooled_then_halved() -> None:
    home = make_home(FULL, verdancy={(0, 0): 1, (2, 0): 1, (4, 0): 1}, complete={(1, 1): 3})
    assert scored(home)["verdancy"] == 1  # 3 // 2, not 0 + 0 + 0


def test_rooms_score_adjacent_plants_of_their_colour_doubled_by_a_matching_item() -> None:
    home = make_home(FULL)
    # R01 (red) at (1, 0): neighbours P01, P02 (red), P13 (yellow), P25 (green): 2 points.
    base = scored(home)["rooms"]
    red_item = scored(make_home(FULL, items={(1, 0): "red-cat"}))["rooms"]
    blue_item = scored(make_home(FULL, items={(1, 0): "blue-cat"}))["rooms"]
    assert red_item == base + 2 and blue_item == base


def test_v7_distinct_motifs() -> None:
    rooms = [at for at, card in FULL.items() if card.startswith("R")]
    assert scoring.MOTIF_POINTS == (0, 1, 3, 5, 8, 11, 15, 20, 25)
    motifs = ["bed", "chair", "lamp", "shelf", "table", "bird", "cat", "dog"]
    for count in range(9):
        items = {at: f"blue-{motifs[i]}" for i, at in enumerate(rooms[:count])}
        assert scored(make_home(FULL, items=items))["motifs"] == scoring.MOTIF_POINTS[count]
    same_motif = {rooms[0]: "red-bed", rooms[1]: "blue-bed", rooms[2]: "green-cat"}
    assert scored(make_home(FULL, items=same_motif))["motifs"] == 3  # colours do not count


def test_colour_sets() -> None:
    assert scored(make_home(FULL))["colours"] == 0
    five = dict(FULL) | {(3, -1): "P37", (3, 1): "P49", (2, 1): "R37", (4, -1): "R49"}
    assert scored(make_home(five))["colours"] == 6


def finished(*homes: Home) -> VerdantState:
    state = started(len(homes))
    for seat, home in enumerate(homes):
        state = with_seat(state, seat, home=home)
    return state._replace(phase=OVER, turn=13 * len(homes), part=None, pending=())


def test_v8_places_with_tie_breaks() -> None:
    assert scoring.places((40, 40, 38), (3, 2, 5)) == (1, 2, 3)
    assert scoring.places((40, 40, 38), (3, 3, 5)) == (1, 1, 3)
    assert scoring.places((30, 40, 40, 40), (0, 1, 1, 1)) == (4, 1, 1, 1)
    plain = make_home(FULL)
    # One complete plant more, the same score: P01 complete with terracotta (4 points)
    # against 8 verdancy spread on incomplete plants (4 points).
    complete = make_home(FULL, complete={(0, 0): 0})
    grown = make_home(FULL, verdancy={(2, 0): 3, (4, 0): 3, (1, 1): 2})
    outcome = GAME.outcome(finished(complete, grown, plain))
    assert outcome is not None
    assert outcome.scores[0] == outcome.scores[1] and outcome.places == (1, 2, 3)
    assert outcome.reason == f"seat 1 wins with {outcome.scores[0]} points"
    outcome = GAME.outcome(finished(plain, plain))
    assert outcome is not None and outcome.places == (1, 1)
    assert "seats 1 and 2 share first place" in outcome.reason
    assert [name for name, _ in outcome.breakdown[0]] == list(scoring.CATEGORIES)


def test_simplified_scoring_and_nurture() -> None:
    home = make_home(FULL, complete={(0, 0): -1, (2, 0): -1}, verdancy={(4, 0): 3})
    points = scored(home, variant=1)
    assert points["plants"] == 10 and points["pots"] == 0 and points["verdancy"] == 1
    state = started(2, "simplified")
    after = play(state, "pick:0r/place@-1,0/use:taken@0,0")  # fertilizer completes P01
    assert pot_at(home_of(after), 0, 0) == -1 and after.pots == (3, 3, 3)
    after = play(state, "pick:1r/place@-1,0/use:taken@0,0")  # so does the trowel
    assert home_of(after).complete == 1 << cell_of(0, 0)
    illegal(state, "pick:1r/place@-1,0/use:taken@0,0+0,0", "§6.1: trowel completes one plant")


def test_v9_objectives() -> None:
    home = make_home(
        FULL,
        complete={(0, 0): 3, (2, 0): 2, (1, 1): 1, (1, -1): 0},
        items={(1, 0): "red-bed", (3, 0): "blue-cat", (0, 1): "yellow-dog", (2, -1): "green-chair"},
    )
    points = {name: scoring.objective_points(name, home) for pair in OBJECTIVES for name in pair}
    assert points["collector"] == 2 * 3  # red, yellow, green complete plants
    assert points["big-growers"] == 0  # P01, P02, P13, P25 need 3 or 4
    big = make_home({**FULL, (0, 0): "P07"}, complete={(0, 0): 3})  # P07 needs 5
    assert scoring.objective_points("big-growers", big) == 2
    # Outer ring: every spot but (1, 0), (2, 0), (3, 0): (0, 1) and (2, -1) hold items.
    assert points["outer-ring"] == 2
    # Rows: row 1 rooms R13, R14, R15 (yellow); row 0 R01, R02 (red); row -1 green.
    assert points["matched-rows"] == 9
    assert points["pet-lover"] == 2 * 2  # cat, dog
    assert points["furnished"] == 2 * 2  # red-bed on red R01, green-chair on green R26
    assert scored(home, 2, ("collector", "matched-rows", "pet-lover"))["objectives"] == 6 + 9 + 4
    assert scored(home, 0, ())["objectives"] == 0


# --- the Game interface -------------------------------------------------------------


def test_registry_and_class_facts() -> None:
    game = get_game("verdant")
    assert isinstance(game, VerdantGame)
    assert (game.min_players, game.max_players, game.alternating, game.seat_names) == (
        1, 5, False, None,
    )  # fmt: skip


def test_options() -> None:
    assert GAME.check_options({}) == {"variant": "standard"}
    assert GAME.check_options({"variant": " Advanced "}) == {"variant": "advanced"}
    with pytest.raises(SettingsError, match="variant must be"):
        GAME.check_options({"variant": "expert"})
    with pytest.raises(SettingsError, match="unknown Verdant option 'turns'"):
        GAME.check_options({"turns": 3})
    with pytest.raises(SettingsError, match="no start positions"):
        GAME.start(GameSettings(players=2, start="x"))
    state = new(3, "simplified")
    assert GAME.rule_settings(state) == {"variant": "simplified"}
    assert GAME.settings_tags(state) == {"VerdantVariant": "simplified"}


def test_notation_summary_is_one_public_line() -> None:
    line = GAME.notation(started())
    assert "\n" not in line
    assert line.startswith("standard players=2 turn turn=1 seat=1 market=P20:fertilizer:R20,")
    assert line.endswith("decks=54/54 bag=86 pots=3/3/3")


def test_decision_notation_round_trips() -> None:
    for text in (
        "north", "P07", "R60", "red-bed", "watering-can", "collector", "pass",
        "cards:0p+1r", "tokens:0+3", "split/pick:2r:1/place@1,0/use:taken@1,0",
        "grow@-1,2/pick:0p/place@1,1/store/use:stored@0,0+2,0+1,1/discard:taken",
    ):  # fmt: skip
        assert format_decision(parse_decision(text)) == text
    for bad in ("", "pick:2x", "place@1", "fly", "north/", "use:mine@0,0"):
        with pytest.raises(RuleError):
            parse_decision(bad)


def test_observe_shows_everything_and_views_hide_the_decks() -> None:
    state = started()
    decision = parse_decision("pick:1r/place@-1,0")
    assert GAME.observe(state, 0, decision, 1) == decision
    view = GAME.view(state, 1)
    assert isinstance(view, VerdantView) and view.seat == 1
    assert view.plant_deck == state.plant_deck.bit_count() == 54
    assert state_from_view(view) == state


def test_outcome_only_at_the_end() -> None:
    assert GAME.outcome(started()) is None
    state, _ = random_game(2, seed=1)
    assert GAME.to_decide(state) is None and GAME.outcome(state) is not None
    with pytest.raises(IllegalDecision, match="§5: the game is over"):
        GAME.apply(state, 0, ())


def test_v11_a_record_replays_without_a_generator() -> None:
    final, record = random_game(3, seed=11, variant="advanced")
    state = new(3, "advanced")
    for actor, word in record:
        assert GAME.to_decide(state) == actor
        decision = GAME.parse_decision(word)
        if actor == CHANCE:
            assert decision in GAME.chance_outcomes(state)
        state = GAME.apply(state, actor, decision)
    assert state == final and GAME.outcome(state) == GAME.outcome(final)


def test_no_refill_after_the_last_turn() -> None:
    final, record = random_game(2, seed=3)
    assert record[-1][0] != CHANCE  # the game ends on a seat's decision
    assert final.turn == 26 and final.pending == ()


# --- random games -------------------------------------------------------------------


def token_total(state: VerdantState) -> int:
    m = state.market
    in_play = sum(1 for token in m.tokens if token >= 0)
    stored = sum(1 for seat in state.seats if seat.storage >= 0)
    placed = sum(1 for seat in state.seats for item in seat.home.items if item >= 0)
    part = state.part
    hand = 0
    if part is not None:
        hand = (part.taken_at == 1) + (part.old_at == 3)
    return sum(state.bag) + in_play + stored + placed + state.spent + len(state.limbo_tokens) + hand


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(1, 5),
    variant=st.sampled_from(["standard", "simplified", "advanced"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_games_keep_the_invariants(players: int, variant: str, seed: int) -> None:
    rng = random.Random(seed)
    state = new(players, variant)
    while (actor := GAME.to_decide(state)) is not None:
        assert all(seat.thumbs >= 0 for seat in state.seats)
        assert token_total(state) == 90
        if actor == CHANCE:
            outcomes = GAME.chance_outcomes(state)
            assert outcomes
            state = GAME.apply(state, actor, rng.choice(outcomes))
            continue
        assert state_from_view(GAME.view(state, actor)) == state
        state = GAME.apply(state, actor, random_decision(state, rng))
    assert token_total(state) == 90
    for seat in state.seats:
        home = seat.home
        assert home.occupied.bit_count() == 15
        min_x, max_x, min_y, max_y = home.bounds
        assert (max_x - min_x, max_y - min_y) == (4, 2)
    outcome = GAME.outcome(state)
    assert outcome is not None and len(outcome.places) == players
    assert all(
        sum(p for _, p in b) == s for b, s in zip(outcome.breakdown, outcome.scores, strict=True)
    )


# --- the terminal -------------------------------------------------------------------


def test_render_draws_a_view_without_escapes_unless_asked() -> None:
    state = play(started(), "pick:3r/place@-1,0/use:taken@1,0")
    text = render_public(state, False)
    assert "\x1b" not in text and text.endswith("\n")
    assert "public view" in text and "chance deals" in text
    assert "R23 yellow" in text and "item red-bed" in text and "[trowel]" in text
    coloured = render(GAME.view(deal(state, "R50", "blue-dog"), 1), True)
    assert (
        "\x1b[33mP20\x1b[0m yellow" in coloured
        and "seat 2's view" in coloured
        and "Seat 2 (viewer, to play)" in coloured
    )
    setup = render(GAME.view(deal(new(2), "P05", "R07"), 0), False)
    assert "Setup: seat 1 was dealt R07" in setup


def test_steps_by_kind_groups_every_legal_step_under_its_kind_in_name_order() -> None:
    state = with_seat(started(), 0, thumbs=4)
    grouped = steps_by_kind(state)
    assert list(grouped) == sorted(grouped) and "ReplaceCards" in grouped
    assert all(type(step).__name__ == kind for kind, steps in grouped.items() for step in steps)
    flat = [step for steps in grouped.values() for step in steps]
    assert sorted(map(repr, flat)) == sorted(map(repr, legal_steps(state)))
