"""The Verdant codec: how Verdant's views and decisions look inside protocol messages.

Seats are numbered from 0 (as ``new_game.seat``); coordinates are ``[x, y]`` in a home
(the first plant at ``[0, 0]``, x east, y north); market columns 0–3, left to right.
Cards and tokens are named by id (``P07``, ``R12``, ``red-bed``, ``watering-can``); a
card's colour, lights, needs and points follow from its id by spec V1.

A view (``TurnRequest.view``)::

    {"seat": 1, "players": 3, "variant": "standard", "phase": "turn", "to_decide": 1,
     "turn": 5, "current": 1, "turns_left": [11, 12, 12],
     "homes": [{"seat": 0, "thumbs": 1, "storage": "trowel",
                "cards": [{"kind": "plant", "id": "P07", "at": [0, 0], "verdancy": 2,
                           "complete": false, "pot": null},
                          {"kind": "room", "id": "R12", "at": [1, 0], "item": "red-bed"}]},
               ...],
     "market": [{"plant": "P03", "plant_thumbs": 0, "token": "fertilizer", "room": "R11",
                 "room_thumbs": 1}, ... 4 columns],
     "decks": {"plants": 48, "rooms": 49}, "discards": {"plants": ["P01"], "rooms": []},
     "bag": {"red-bed": 1, "fertilizer": 13, ...}, "tokens_out": 3,
     "pots": {"3": 3, "2": 4, "1": 4}, "objectives": [],
     "setup_room": null,
     "this_turn": {"thumb_actions": 1, "split": true, "picked": null, "placed": null,
                   "taken": null, "taken_at": "none", "stored": "trowel",
                   "stored_at": "storage"}}

- ``to_decide`` is the deciding seat, -1 for chance, ``null`` once the game is over;
  ``current`` the seat in setup or in its turn; ``turn`` counts turns over all seats
  from 1 (the setup belongs to turn 1); ``turns_left`` is per seat (13 each).
- ``homes`` lists every seat in seat order; a plant's ``pot`` is its pot's value once
  complete (0 terracotta; ``null`` while incomplete and in the simplified game);
  ``verdancy`` is 0 once complete. ``storage`` is the stored token or ``null``.
- ``bag`` counts the tokens still in the bag by kind (kinds with none left omitted);
  ``tokens_out`` counts the used and discarded tokens (items placed stay in homes).
- ``pots``: the pots left of value 3, 2 and 1 (terracotta never runs out).
- ``setup_room``: in setup, the room dealt to ``current`` (the seat chooses its side).
- ``this_turn`` (``null`` outside a turn): what ``current`` has done this turn so far:
  thumb actions, ``split`` used, ``picked`` (``{"column", "kind", "id",
  "token_column"}``) and ``placed`` (``[x, y]``), the ``taken`` token and where it is
  (``none``, ``hand``, ``storage``, ``gone``), the token that was ``stored`` when the
  turn began and where it is (``none``, ``storage``, ``displaced`` — pushed out by
  ``store``, V5 — or ``gone``). Between decisions a turn can only have done thumb
  actions, so ``picked`` and ``placed`` are ``null`` in every request.

A decision (``actions``) is a list of steps tagged by ``"type"`` (docs/verdant.md)::

    [{"type": "setup", "side": "north"}]                   (setup, a decision alone)
    {"type": "replace_cards", "cards": [{"column": 0, "kind": "plant"}]}    1a, reveals
    {"type": "replace_tokens", "columns": [0, 3]}                           1b, reveals
    {"type": "split"}   {"type": "grow", "plant": [1, 0]}                   1c, 1d
    {"type": "pick", "column": 2, "kind": "room", "token_column": 1}   (token_column
                                                       optional: null = same column)
    {"type": "place", "at": [1, 0]}   {"type": "store"}
    {"type": "use", "token": "taken", "at": [[1, 0]]}   {"type": "discard", "token": "stored"}

The empty list ends a turn without a pick (a pass, legal only when no legal pick
exists). A chance event in ``since_last`` (``seat`` null) is ``[{"type": "reveal",
"id": "P07"}]``; a seat may not send it.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, TypeAlias

import msgspec

from protocol.messages import GameCodec, ProtocolViolation, invalid_message
from referee.games.verdant import steps as engine
from referee.games.verdant.cards import PLANTS, ROOMS, TOKEN_BY_ID, TOKENS
from referee.games.verdant.state import (
    CELL_X,
    CELL_Y,
    EMPTY_CELLS,
    IS_PLANT_CELL,
    NOWHERE,
    PHASE_NAMES,
    PLACE_NAMES,
    VARIANTS,
    Home,
    Market,
    SeatState,
    TurnPart,
    VerdantView,
    cell_of,
)
from referee.games.verdant.steps import CHANCE_IDS

Coord: TypeAlias = tuple[int, int]
KindName: TypeAlias = Literal["plant", "room"]
TokenName: TypeAlias = Literal["taken", "stored"]
SideName: TypeAlias = Literal["north", "east", "south", "west"]


class _Record(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the view's plain objects."""


# --- the view --------------------------------------------------------------------


class PlantCard(_Record, tag_field="kind", tag="plant", frozen=True, kw_only=True):
    """A plant in a home."""

    id: str
    at: Coord
    verdancy: int
    complete: bool
    pot: int | None


class RoomCard(_Record, tag_field="kind", tag="room", frozen=True, kw_only=True):
    """A room in a home, with the item in its slot."""

    id: str
    at: Coord
    item: str | None


class HomeView(_Record, frozen=True, kw_only=True):
    """One seat's home, thumbs and storage."""

    seat: int
    thumbs: int
    storage: str | None
    cards: tuple[PlantCard | RoomCard, ...]


class Column(_Record, frozen=True, kw_only=True):
    """A market column: plant, token, room (``null`` for an empty slot), thumbs on cards."""

    plant: str | None
    plant_thumbs: int
    token: str | None
    room: str | None
    room_thumbs: int


class Piles(_Record, frozen=True, kw_only=True):
    """Per card type: deck sizes or discard piles."""

    plants: int
    rooms: int


class Discards(_Record, frozen=True, kw_only=True):
    """The discard piles, ids in ascending order."""

    plants: tuple[str, ...]
    rooms: tuple[str, ...]


class Picked(_Record, frozen=True, kw_only=True):
    """The card picked this turn."""

    column: int
    kind: KindName
    id: str
    token_column: int


class ThisTurn(_Record, frozen=True, kw_only=True):
    """What the seat in its turn has done so far this turn."""

    thumb_actions: int
    split: bool
    picked: Picked | None
    placed: Coord | None
    taken: str | None
    taken_at: Literal["none", "hand", "storage", "gone"]
    stored: str | None
    stored_at: Literal["none", "storage", "displaced", "gone"]


class VerdantWireView(_Record, frozen=True, kw_only=True):
    """What a Verdant bot sees before a decision (everything but the decks' order)."""

    seat: int
    players: int
    variant: Literal["standard", "simplified", "advanced"]
    phase: Literal["setup", "turn", "over"]
    to_decide: int | None
    turn: int
    current: int
    turns_left: tuple[int, ...]
    homes: tuple[HomeView, ...]
    market: tuple[Column, ...]
    decks: Piles
    discards: Discards
    bag: dict[str, int]
    tokens_out: int
    pots: dict[str, int]
    objectives: tuple[str, ...]
    setup_room: str | None
    this_turn: ThisTurn | None


def _token(kind: int) -> str | None:
    return TOKENS[kind].id if kind >= 0 else None


def _home(seat: int, mine: SeatState) -> HomeView:
    home = mine.home
    cards: list[PlantCard | RoomCard] = []
    occupied = home.occupied
    for cell in range(len(home.cards)):
        if not occupied >> cell & 1:
            continue
        at = (CELL_X[cell], CELL_Y[cell])
        card = home.cards[cell]
        if IS_PLANT_CELL[cell]:
            complete = bool(home.complete >> cell & 1)
            pot = home.pots[cell]
            cards.append(
                PlantCard(
                    id=PLANTS[card].id,
                    at=at,
                    verdancy=home.verdancy[cell],
                    complete=complete,
                    pot=pot if pot >= 0 else None,
                )
            )
        else:
            cards.append(RoomCard(id=ROOMS[card].id, at=at, item=_token(home.items[cell])))
    return HomeView(seat=seat, thumbs=mine.thumbs, storage=_token(mine.storage), cards=tuple(cards))


def _this_turn(view: VerdantView) -> ThisTurn | None:
    part = view.part
    if part is None or PHASE_NAMES[view.phase] != "turn":
        return None
    picked = None
    if part.kind >= 0:
        card = (PLANTS if part.kind == 0 else ROOMS)[part.card]
        picked = Picked(
            column=part.column,
            kind="plant" if part.kind == 0 else "room",
            id=card.id,
            token_column=part.token_column,
        )
    return ThisTurn(
        thumb_actions=part.thumb_actions,
        split=part.split,
        picked=picked,
        placed=None if part.placed < 0 else (CELL_X[part.placed], CELL_Y[part.placed]),
        taken=_token(part.taken),
        taken_at=PLACE_NAMES[part.taken_at],  # type: ignore[arg-type]
        stored=_token(part.old),
        stored_at=PLACE_NAMES[part.old_at],  # type: ignore[arg-type]
    )


def encode_view(view: VerdantView) -> VerdantWireView:
    """The view sent in a ``turn`` request (see the module docstring)."""
    m = view.market
    setup_room = None
    if PHASE_NAMES[view.phase] == "setup" and view.part is not None and view.part.card >= 0:
        setup_room = ROOMS[view.part.card].id
    return VerdantWireView(
        seat=view.seat,
        players=view.players,
        variant=VARIANTS[view.variant],
        phase=PHASE_NAMES[view.phase],
        to_decide=view.to_decide,
        turn=view.turn,
        current=view.current,
        turns_left=view.turns_left,
        homes=tuple(_home(seat, mine) for seat, mine in enumerate(view.seats)),
        market=tuple(
            Column(
                plant=PLANTS[m.plants[c]].id if m.plants[c] >= 0 else None,
                plant_thumbs=m.plant_thumbs[c],
                token=_token(m.tokens[c]),
                room=ROOMS[m.rooms[c]].id if m.rooms[c] >= 0 else None,
                room_thumbs=m.room_thumbs[c],
            )
            for c in range(len(m.plants))
        ),
        decks=Piles(plants=view.plant_deck, rooms=view.room_deck),
        discards=Discards(
            plants=tuple(PLANTS[card].id for card in view.plant_discard),
            rooms=tuple(ROOMS[card].id for card in view.room_discard),
        ),
        bag={TOKENS[kind].id: count for kind, count in enumerate(view.bag) if count},
        tokens_out=view.spent,
        pots={"3": view.pots[0], "2": view.pots[1], "1": view.pots[2]},
        objectives=view.objectives,
        setup_room=setup_room,
        this_turn=_this_turn(view),
    )


_VIEW_DECODER = msgspec.json.Decoder(VerdantWireView)


def decode_view(raw: msgspec.Raw) -> VerdantWireView:
    """A view as a bot reads it from ``TurnRequest.view``."""
    return _VIEW_DECODER.decode(raw)


_PLACES = {name: index for index, name in enumerate(PLACE_NAMES)}
_CARD_NUMBER = {card.id: card.index for card in PLANTS + ROOMS}


def view_from_wire(wire: VerdantWireView) -> VerdantView:
    """The rules' :class:`VerdantView` of a wire view, for bots that search with the rules
    (:func:`~referee.games.verdant.rules.state_from_view` then rebuilds the state).

    A wire view holds no draws in flight (none is, when a seat decides)."""
    seats = []
    for home_view in wire.homes:
        cards, verdancy, pots, items = (
            list(EMPTY_CELLS),
            [0] * len(EMPTY_CELLS),
            list(EMPTY_CELLS),
            list(EMPTY_CELLS),
        )
        occupied = complete = 0
        xs, ys = [], []
        for card in home_view.cards:
            cell = cell_of(*card.at)
            occupied |= 1 << cell
            xs.append(card.at[0])
            ys.append(card.at[1])
            cards[cell] = _CARD_NUMBER[card.id]
            if isinstance(card, PlantCard):
                verdancy[cell] = card.verdancy
                if card.complete:
                    complete |= 1 << cell
                    pots[cell] = -1 if card.pot is None else card.pot
            elif card.item is not None:
                items[cell] = TOKEN_BY_ID[card.item].index
        bounds = (min(xs), max(xs), min(ys), max(ys)) if xs else (0, 0, 0, 0)
        home = Home(
            tuple(cards), tuple(verdancy), tuple(pots), tuple(items), occupied, complete, bounds
        )
        storage = -1 if home_view.storage is None else TOKEN_BY_ID[home_view.storage].index
        seats.append(SeatState(home, home_view.thumbs, storage))
    market = Market(
        tuple(_CARD_NUMBER[c.plant] if c.plant else -1 for c in wire.market),
        tuple(TOKEN_BY_ID[c.token].index if c.token else -1 for c in wire.market),
        tuple(_CARD_NUMBER[c.room] if c.room else -1 for c in wire.market),
        tuple(c.plant_thumbs for c in wire.market),
        tuple(c.room_thumbs for c in wire.market),
    )
    part: TurnPart | None = None
    if wire.setup_room is not None:
        part = TurnPart(kind=1, card=_CARD_NUMBER[wire.setup_room])
    elif wire.phase == "setup":
        part = TurnPart()
    elif wire.this_turn is not None:
        t = wire.this_turn
        picked = t.picked
        part = TurnPart(
            thumb_actions=t.thumb_actions,
            split=t.split,
            kind=-1 if picked is None else (0 if picked.kind == "plant" else 1),
            card=-1 if picked is None else _CARD_NUMBER[picked.id],
            column=-1 if picked is None else picked.column,
            token_column=-1 if picked is None else picked.token_column,
            placed=-1 if t.placed is None else cell_of(*t.placed),
            taken=-1 if t.taken is None else TOKEN_BY_ID[t.taken].index,
            taken_at=_PLACES.get(t.taken_at, NOWHERE),
            old=-1 if t.stored is None else TOKEN_BY_ID[t.stored].index,
            old_at=_PLACES.get(t.stored_at, NOWHERE),
        )
    bag = tuple(wire.bag.get(token.id, 0) for token in TOKENS)
    return VerdantView(
        seat=wire.seat,
        players=wire.players,
        variant=VARIANTS.index(wire.variant),
        phase=PHASE_NAMES.index(wire.phase),
        to_decide=wire.to_decide,
        turn=wire.turn,
        current=wire.current,
        turns_left=wire.turns_left,
        seats=tuple(seats),
        market=market,
        plant_deck=wire.decks.plants,
        room_deck=wire.decks.rooms,
        plant_discard=tuple(_CARD_NUMBER[card] for card in wire.discards.plants),
        room_discard=tuple(_CARD_NUMBER[card] for card in wire.discards.rooms),
        bag=bag,
        pots=(wire.pots["3"], wire.pots["2"], wire.pots["1"]),
        objectives=wire.objectives,
        part=part,
        pending=(),
        limbo_plants=(),
        limbo_rooms=(),
        limbo_tokens=(),
        spent=wire.tokens_out,
    )


# --- the steps -------------------------------------------------------------------


class _Step(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Base of the steps, tagged by ``"type"``."""


class SetupStep(_Step, tag="setup", frozen=True, kw_only=True):
    side: SideName


class CardRef(_Record, frozen=True, kw_only=True):
    column: int
    kind: KindName


class ReplaceCardsStep(_Step, tag="replace_cards", frozen=True, kw_only=True):
    cards: tuple[CardRef, ...]


class ReplaceTokensStep(_Step, tag="replace_tokens", frozen=True, kw_only=True):
    columns: tuple[int, ...]


class SplitStep(_Step, tag="split", frozen=True, kw_only=True):
    pass


class GrowStep(_Step, tag="grow", frozen=True, kw_only=True):
    plant: Coord


class PickStep(_Step, tag="pick", frozen=True, kw_only=True, omit_defaults=True):
    column: int
    kind: KindName
    token_column: int | None = None


class PlaceStep(_Step, tag="place", frozen=True, kw_only=True):
    at: Coord


class StoreStep(_Step, tag="store", frozen=True, kw_only=True):
    pass


class UseStep(_Step, tag="use", frozen=True, kw_only=True):
    token: TokenName
    at: tuple[Coord, ...]


class DiscardStep(_Step, tag="discard", frozen=True, kw_only=True):
    token: TokenName


RevealId: TypeAlias = Annotated[
    str, msgspec.Meta(pattern="^(?:" + "|".join(map(re.escape, sorted(CHANCE_IDS))) + ")$")
]
"""A card, token or objective id (anything else could not be written in a record)."""


class RevealStep(_Step, tag="reveal", frozen=True, kw_only=True):
    id: RevealId


WireStep: TypeAlias = (
    SetupStep
    | ReplaceCardsStep
    | ReplaceTokensStep
    | SplitStep
    | GrowStep
    | PickStep
    | PlaceStep
    | StoreStep
    | UseStep
    | DiscardStep
    | RevealStep
)

_STEPS_DECODER = msgspec.json.Decoder(tuple[WireStep, ...])
MAX_STEPS = 256
"""The most steps one decision may hold (more is a protocol violation, not a rules matter)."""


def _to_engine(step: WireStep) -> engine.Step:
    match step:
        case SetupStep(side=side):
            return engine.Setup(side)
        case ReplaceCardsStep(cards=cards):
            return engine.ReplaceCards(tuple((card.column, card.kind) for card in cards))
        case ReplaceTokensStep(columns=columns):
            return engine.ReplaceTokens(columns)
        case SplitStep():
            return engine.Split()
        case GrowStep(plant=plant):
            return engine.Grow(plant)
        case PickStep(column=column, kind=kind, token_column=token_column):
            return engine.Pick(column, kind, token_column)
        case PlaceStep(at=at):
            return engine.Place(at)
        case StoreStep():
            return engine.Store()
        case UseStep(token=token, at=at):
            return engine.Use(token, at)
        case DiscardStep(token=token):
            return engine.Discard(token)
        case RevealStep(id=revealed):
            return engine.Reveal(revealed)
    raise TypeError(f"not a wire step: {step!r}")


def decode_actions(raw: msgspec.Raw) -> engine.Decision:
    """The decision in a reply's ``actions``; raises :class:`ProtocolViolation`
    (``invalid_message``) with the path of the bad part (``$.actions[1].at``).

    Only the shape is checked here; whether the steps are legal is the rules' business.
    """
    try:
        steps = _STEPS_DECODER.decode(raw)
    except msgspec.ValidationError as error:
        raise invalid_message(error, at="$.actions") from None
    if len(steps) > MAX_STEPS:
        raise ProtocolViolation(
            "invalid_message",
            f"a decision holds at most {MAX_STEPS} steps, got {len(steps)} - at `$.actions`",
            "$.actions",
        )
    return engine.applied_part(tuple(_to_engine(step) for step in steps))


def _from_engine(step: engine.Step) -> WireStep:
    match step:
        case engine.Setup(side):
            return SetupStep(side=side)
        case engine.ReplaceCards(cards):
            return ReplaceCardsStep(
                cards=tuple(CardRef(column=column, kind=kind) for column, kind in cards)
            )
        case engine.ReplaceTokens(columns):
            return ReplaceTokensStep(columns=columns)
        case engine.Split():
            return SplitStep()
        case engine.Grow(plant):
            return GrowStep(plant=plant)
        case engine.Pick(column, kind, token_column):
            return PickStep(column=column, kind=kind, token_column=token_column)
        case engine.Place(at):
            return PlaceStep(at=at)
        case engine.Store():
            return StoreStep()
        case engine.Use(token, at):
            return UseStep(token=token, at=at)
        case engine.Discard(token):
            return DiscardStep(token=token)
        case engine.Reveal(revealed):
            return RevealStep(id=revealed)
    raise TypeError(f"not a Verdant step: {step!r}")


def encode_actions(decision: engine.Decision) -> list[WireStep]:
    """``decision`` as the list of steps a reply (or ``since_last``) carries."""
    return [_from_engine(step) for step in decision]


CODEC: GameCodec[VerdantView, engine.Decision] = GameCodec(
    game="verdant",
    encode_view=encode_view,
    decode_view=decode_view,
    encode_actions=encode_actions,
    decode_actions=decode_actions,
)
"""Verdant's wire codec, in its :data:`~referee.games.verdant.ENTRY`."""
