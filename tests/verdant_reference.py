"""A deliberately naive Verdant engine, written from ``../shared/spec/verdant.md`` alone.

It shares no code with ``referee/games/verdant`` and was written before that existed;
only its published API was read afterwards, to align three readings where the spec is
silent (the order of 1a/1b draws, no refill after the last turn, the taken token usable
from storage; marked "adopted" below). The property tests feed both the same
trajectory (chance events and seat decisions in the wire format of docs/verdant.md)
and demand the same verdicts and scores. Speed does not matter here; every rule is a
plain loop over dicts and lists, in the order the spec states it, so that a reader can
check each line against the spec.

The game runs as a generator (:meth:`Reference._flow`) that reads like §2, §4 and §7
in order and yields what it needs next: a chance draw or a seat's decision. All state
lives in a :class:`Table` that is deep-copied before a decision is tried, so a refused
decision changes nothing.

Readings of the spec where it is silent (kept in one place, the docstring, so a
disagreement can be judged):

- chance order: setup deals seat by seat (plant, room, then that seat's side choice);
  the market column by column (plant, token, room); then the advanced objectives in the
  order plants, rooms, items (§2). 1a draws the new cards by column, a plant before a
  room, and 1b the new tokens by column (adopted); the refill draws the card before the
  token (§4.5); solo then deals the new right column as plant, token, room (§7). After
  the game's very last turn nothing is refilled or dealt (adopted): no seat could ever
  see it, and no score depends on it.
- a turn's tokens are named ``taken`` (this turn's, wherever it is now) and ``stored``
  (the one in storage when the turn began). The taken one may be stored, and used or
  discarded (from the hand or, adopted, from storage); the stored one used or discarded. Storing
  over a full storage displaces the old token, which may still be used or discarded this
  turn, never stored again, and is discarded at the end of the turn (V5). Token steps
  come after the place step (§4.4).
- thumbs taken with a card may be spent on 1d in the same turn; 1d may come anywhere in
  the turn, even between pick and place. In the simplified game no thumbs exist at all
  (none are put on market cards either).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# --- §1 components -------------------------------------------------------------------

COLOURS = ("red", "yellow", "green", "blue", "purple")
LIGHTS = ("low", "medium", "bright")
LIGHTSETS = (
    ("low",),
    ("medium",),
    ("bright",),
    ("low", "medium"),
    ("medium", "bright"),
    ("low", "bright"),
)
OFF = ((0, 1, 2, 1), (0, 2, 1, 2), (0, 1, 1, 2), (0, 2, 2, 1))
FURNITURE = ("bed", "chair", "lamp", "shelf", "table")
PETS = ("bird", "cat", "dog", "fish")
NURTURE = ("fertilizer", "trowel", "watering-can")
OBJECTIVES = {
    "plants": ("collector", "big-growers"),
    "rooms": ("outer-ring", "matched-rows"),
    "items": ("pet-lover", "furnished"),
}
VARIANTS = ("standard", "simplified", "advanced")
CATEGORIES = ("plants", "verdancy", "pots", "rooms", "motifs", "colours", "objectives")
MOTIF_POINTS = (0, 1, 3, 5, 8, 11, 15, 20, 25)
TURNS = 13
COLUMNS = 4

# Side d of a room (0 north, 1 east, 2 south, 3 west) and the step that leads out of it.
SIDE_NAMES = ("north", "east", "south", "west")
SIDE_STEPS = ((0, 1), (1, 0), (0, -1), (-1, 0))

Pos = tuple[int, int]


@dataclass(frozen=True)
class PlantCard:
    id: str
    colour: str
    lights: tuple[str, ...]
    need: int
    points: int


@dataclass(frozen=True)
class RoomCard:
    id: str
    colour: str
    sides: tuple[str, str, str, str]  # light on the north, east, south, west side


def _plant_cards() -> dict[str, PlantCard]:
    cards = {}
    for c, colour in enumerate(COLOURS):
        for k in range(12):
            card_id = f"P{12 * c + k + 1:02d}"
            lights = LIGHTSETS[k % 6]
            v = k // 6
            if len(lights) == 1:
                need, points = 3 + 2 * v, 4 + 3 * v
            else:
                need, points = 4 + 2 * v, 4 + 2 * v
            cards[card_id] = PlantCard(card_id, colour, lights, need, points)
    return cards


def _room_cards() -> dict[str, RoomCard]:
    cards = {}
    for c, colour in enumerate(COLOURS):
        for k in range(12):
            card_id = f"R{12 * c + k + 1:02d}"
            north, east, south, west = (LIGHTS[(k + c + OFF[k // 3][d]) % 3] for d in range(4))
            cards[card_id] = RoomCard(card_id, colour, (north, east, south, west))
    return cards


PLANTS = _plant_cards()
ROOMS = _room_cards()
ITEMS = tuple(f"{colour}-{motif}" for colour in COLOURS for motif in FURNITURE + PETS)
ALL_TOKENS = Counter({**dict.fromkeys(ITEMS, 1), **dict.fromkeys(NURTURE, 15)})


def item_colour(token: str) -> str:
    return token.split("-", 1)[0]


def item_motif(token: str) -> str:
    return token.split("-", 1)[1]


def is_item(token: str) -> bool:
    return token not in NURTURE


# --- state ---------------------------------------------------------------------------


class RefIllegal(Exception):
    """The reference refuses a decision or a chance event; ``index`` names the step."""

    def __init__(self, reason: str, index: int | None = None) -> None:
        super().__init__(f"{reason} (step {index})" if index is not None else reason)
        self.reason = reason
        self.index = index


@dataclass
class Spot:
    """One card in a home."""

    card: str
    verdancy: int = 0
    complete: bool = False
    pot: int | None = None  # the pot's value (0 terracotta), None when no pot
    item: str | None = None


@dataclass
class Player:
    home: dict[Pos, Spot] = field(default_factory=dict)
    thumbs: int = 0
    storage: str | None = None
    setup_room: str | None = None  # dealt at setup, until the seat chooses its side


@dataclass
class Column:
    plant: str | None = None
    room: str | None = None
    token: str | None = None
    plant_thumbs: int = 0
    room_thumbs: int = 0


@dataclass
class Turn:
    """What happened so far in the turn being played."""

    phase: str = "start"  # start → picked → placed
    split: bool = False
    card: str | None = None
    card_column: int | None = None
    token_column: int | None = None
    taken: str | None = None
    taken_fate: str = "pending"  # pending, stored, used, discarded
    old: str | None = None
    old_fate: str = "kept"  # kept, displaced, used, discarded
    reveal: list[tuple[str, int]] = field(default_factory=list)  # (plant/room/token, column)
    reveal_old: list[str] = field(default_factory=list)


@dataclass
class Table:
    players: int
    variant: str
    seats: list[Player]
    market: list[Column]
    decks: dict[str, set[str]]
    discards: dict[str, set[str]]
    bag: Counter[str]
    pots: dict[int, int]
    objectives: list[str] = field(default_factory=list)
    turn: Turn = field(default_factory=Turn)
    turns_played: list[int] = field(default_factory=list)


def is_plant(card: str) -> bool:
    return card.startswith("P")


def kind_of(card: str) -> str:
    return "plant" if is_plant(card) else "room"


# --- the reference -------------------------------------------------------------------


@dataclass(frozen=True)
class Final:
    """Every seat's score by category (CATEGORIES order), total and place."""

    breakdowns: tuple[tuple[tuple[str, int], ...], ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]
    complete_plants: tuple[int, ...]


# What the flow asks for next: ("draw", "plant"/"room"/"token"/objective category) or
# ("seat", seat).
Request = tuple[str, Any]


class Reference:
    """Plays one game from its trajectory: :meth:`chance` and :meth:`decide` in turn."""

    def __init__(self, players: int, variant: str = "standard") -> None:
        if not 1 <= players <= 5:
            raise ValueError(f"V4: 1 to 5 players, not {players}")
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}")
        special = players + 1
        self.table = Table(
            players=players,
            variant=variant,
            seats=[Player() for _ in range(players)],
            market=[Column() for _ in range(COLUMNS)],
            decks={"plant": set(PLANTS), "room": set(ROOMS)},
            discards={"plant": set(), "room": set()},
            bag=Counter(ALL_TOKENS),
            pots={3: special, 2: special, 1: special},
        )
        self._flow_gen = self._flow()
        self.request: Request | None = next(self._flow_gen)

    # --- what the trajectory feeds in ----------------------------------------------

    def to_decide(self) -> int | None:
        """The seat asked next, -1 for chance, None when the game is over."""
        if self.request is None:
            return None
        return -1 if self.request[0] == "draw" else self.request[1]

    def chance_candidates(self) -> Counter[str]:
        """The ids the next draw may reveal, with their multiplicity."""
        assert self.request is not None and self.request[0] == "draw"
        what = self.request[1]
        if what in OBJECTIVES:
            return Counter(OBJECTIVES[what])
        if what == "token":
            return +self.table.bag
        pile = self.table.decks[what] or self.table.discards[what]
        return Counter(pile)

    def chance(self, outcome: str) -> None:
        """Reveal ``outcome`` for the draw the game is waiting for."""
        if self.request is None or self.request[0] != "draw":
            raise RefIllegal(f"no draw is due now (due: {self.request})")
        what = self.request[1]
        if outcome not in self.chance_candidates():
            raise RefIllegal(f"§2: {outcome!r} cannot be drawn for {what}")
        table = self.table
        if what == "token":
            table.bag[outcome] -= 1
        elif what in ("plant", "room"):
            if not table.decks[what]:
                # §4.5: an empty deck is refilled by shuffling its discard pile.
                table.decks[what], table.discards[what] = table.discards[what], set()
            table.decks[what].remove(outcome)
        self._advance(outcome)

    def decide(self, seat: int, steps: Sequence[dict[str, Any]]) -> bool:
        """Apply ``seat``'s decision; True when it ended at a revealing step.

        Raises :class:`RefIllegal` (and changes nothing) when a step breaks a rule.
        """
        trial, revealed = self._try(seat, steps)
        self.table = trial
        self._advance(revealed)
        return revealed

    def refusal(
        self, seat: int, steps: Sequence[dict[str, Any]], *, partial: bool = False
    ) -> RefIllegal | None:
        """Why ``seat``'s decision would be refused now (None: it is legal); applies nothing.

        ``partial``: judge the steps as the start of a decision, which need not end the turn.
        """
        try:
            self._try(seat, steps, partial=partial)
        except RefIllegal as refused:
            return refused
        return None

    def _try(
        self, seat: int, steps: Sequence[dict[str, Any]], *, partial: bool = False
    ) -> tuple[Table, bool]:
        if self.request != ("seat", seat):
            raise RefIllegal(f"seat {seat} is not asked now (due: {self.request})")
        trial = copy.deepcopy(self.table)
        if self.table.turns_played[seat] < 0:
            _apply_setup(trial, seat, steps)
            return trial, False
        return trial, _apply_turn(trial, seat, steps, partial=partial)

    def final(self) -> Final:
        if self.request is not None:
            raise RefIllegal("the game is not over")
        return score(self.table)

    # --- the order of play (§2, §4, §7) --------------------------------------------

    def _advance(self, answer: Any) -> None:
        try:
            self.request = self._flow_gen.send(answer)
        except StopIteration:
            self.request = None

    def _draw(self, what: str) -> Generator[Request, Any, str | None]:
        """One draw, or None when the deck, its discard pile (or the bag) is empty."""
        table = self.table
        if what == "token" and not +table.bag:
            return None
        if what in ("plant", "room") and not (table.decks[what] or table.discards[what]):
            return None
        outcome = yield ("draw", what)
        assert isinstance(outcome, str)
        return outcome

    def _flow(self) -> Generator[Request, Any, None]:
        # The flow reads self.table afresh after every yield: decide() swaps it.
        n = self.table.players
        self.table.turns_played = [-1] * n
        for seat in range(n):
            plant = yield from self._draw("plant")
            room = yield from self._draw("room")
            assert plant is not None and room is not None
            self.table.seats[seat].home = {(0, 0): Spot(plant)}
            self.table.seats[seat].setup_room = room
            yield ("seat", seat)
            self.table.turns_played[seat] = 0
        for column in range(COLUMNS):
            yield from self._deal_column(column)
        simplified = self.table.variant == "simplified"
        for seat in range(n):
            if simplified:
                thumbs = 0
            elif n == 1:
                thumbs = 1
            else:
                thumbs = 0 if seat == 0 else 2 if seat == n - 1 else 1
            self.table.seats[seat].thumbs = thumbs
        if self.table.variant == "advanced":
            for category in OBJECTIVES:
                objective = yield from self._draw(category)
                assert objective is not None
                self.table.objectives.append(objective)
        for round_number in range(TURNS):
            for seat in range(n):
                self.table.turn = Turn(old=self.table.seats[seat].storage)
                while (yield ("seat", seat)) is True:
                    yield from self._reveal()
                self._end_turn()
                if round_number < TURNS - 1 or seat < n - 1:
                    yield from self._refill()
                    if n == 1:
                        yield from self._solo_shift()
                self.table.turns_played[seat] += 1
                self.table.turn = Turn()

    def _deal_column(self, column: int) -> Generator[Request, Any, None]:
        slot = self.table.market[column]
        slot.plant = yield from self._draw("plant")
        slot.token = yield from self._draw("token")
        slot.room = yield from self._draw("room")

    def _reveal(self) -> Generator[Request, Any, None]:
        """1a/1b: draw the new cards or tokens first, then put the old ones away."""
        turn = self.table.turn
        for what, column in turn.reveal:
            new = yield from self._draw(what)
            setattr(self.table.market[column], what, new)
        for old in turn.reveal_old:
            if old in PLANTS or old in ROOMS:
                self.table.discards[kind_of(old)].add(old)
            else:
                self.table.bag[old] += 1
        turn.reveal, turn.reveal_old = [], []

    def _end_turn(self) -> None:
        turn = self.table.turn
        # §4.4/V5: a taken token left alone is discarded, so is a displaced stored one.
        if turn.taken is not None and turn.taken_fate == "pending":
            turn.taken_fate = "discarded"
        if turn.old_fate == "displaced":
            turn.old_fate = "discarded"

    def _refill(self) -> Generator[Request, Any, None]:
        turn = self.table.turn
        if turn.card_column is None:
            return  # a pass takes nothing
        assert turn.card is not None and turn.token_column is not None
        what = kind_of(turn.card)
        new = yield from self._draw(what)
        setattr(self.table.market[turn.card_column], what, new)
        token_slot = self.table.market[turn.token_column]
        if token_slot.token is None:
            token_slot.token = yield from self._draw("token")

    def _solo_shift(self) -> Generator[Request, Any, None]:
        """V10: the leftmost column leaves whole, the rest move left, a new one comes."""
        table = self.table
        gone = table.market[0]
        if gone.plant is not None:
            table.discards["plant"].add(gone.plant)
        if gone.room is not None:
            table.discards["room"].add(gone.room)
        if gone.token is not None:
            table.bag[gone.token] += 1
        table.market = [*table.market[1:], Column()]
        yield from self._deal_column(COLUMNS - 1)


# --- decisions -----------------------------------------------------------------------


def _field(step: Any, name: str, index: int) -> Any:
    if not isinstance(step, dict) or name not in step:
        raise RefIllegal(f"step lacks {name!r}", index)
    return step[name]


def _pos(value: Any, index: int) -> Pos:
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise RefIllegal(f"not a coordinate: {value!r}", index)
    return (value[0], value[1])


def _column(value: Any, index: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < COLUMNS:
        raise RefIllegal(f"no market column {value!r}", index)
    return value


def _apply_setup(table: Table, seat: int, steps: Sequence[dict[str, Any]]) -> None:
    if not isinstance(steps, (list, tuple)) or len(steps) != 1:
        raise RefIllegal("§2.2: the setup decision is one setup step")
    if _field(steps[0], "type", 0) != "setup":
        raise RefIllegal("§2.2: the setup decision is one setup step", 0)
    side = _field(steps[0], "side", 0)
    if side not in SIDE_NAMES:
        raise RefIllegal(f"§2.2: no side {side!r}", 0)
    player = table.seats[seat]
    assert player.setup_room is not None
    dx, dy = SIDE_STEPS[SIDE_NAMES.index(side)]
    player.home[(dx, dy)] = Spot(player.setup_room)
    player.setup_room = None
    _check_light(table, seat, (dx, dy))


def _apply_turn(
    table: Table, seat: int, steps: Sequence[dict[str, Any]], *, partial: bool = False
) -> bool:
    """Apply steps up to the first revealing one; True when one revealed something."""
    if not isinstance(steps, (list, tuple)):
        raise RefIllegal("a decision is a list of steps")
    for index, step in enumerate(steps):
        kind = _field(step, "type", index)
        handler = _STEPS.get(kind)
        if handler is None:
            raise RefIllegal(f"unknown step {kind!r}", index)
        handler(table, seat, step, index)
        if kind in ("replace_cards", "replace_tokens"):
            return True  # §3: the rest of the list is ignored, the seat is asked again
    turn = table.turn
    if turn.phase == "placed" or partial:
        return False
    if turn.phase == "start" and not _any_legal_pick(table, seat):
        return False  # §4.2: no legal pick exists, the player passes
    raise RefIllegal("§4: a decision that reveals nothing must pick and place a card")


def _spend_thumbs(table: Table, seat: int, index: int) -> None:
    if table.variant == "simplified":
        raise RefIllegal("§6.1: the simplified game has no thumb actions", index)
    player = table.seats[seat]
    if player.thumbs < 2:
        raise RefIllegal(f"§4.1: a thumb action costs 2 thumbs, seat has {player.thumbs}", index)
    player.thumbs -= 2


def _before_pick(table: Table, what: str, index: int) -> None:
    if table.turn.phase != "start":
        raise RefIllegal(f"§4.1: {what} only before the pick", index)


def _step_replace_cards(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    _before_pick(table, "1a", index)
    cards = _field(step, "cards", index)
    if not isinstance(cards, list) or not cards:
        raise RefIllegal("§4.1a: name at least one card to replace", index)
    chosen: list[tuple[str, int]] = []
    for entry in cards:
        column = _column(_field(entry, "column", index), index)
        kind = _field(entry, "kind", index)
        if kind not in ("plant", "room"):
            raise RefIllegal(f"no card kind {kind!r}", index)
        if (kind, column) in chosen:
            raise RefIllegal("§4.1a: a card is named twice", index)
        slot = table.market[column]
        if getattr(slot, kind) is None:
            raise RefIllegal("§4.1a: that market slot is empty", index)
        if getattr(slot, f"{kind}_thumbs") > 0:
            raise RefIllegal("§4.1a: a card that carries thumbs cannot be replaced", index)
        chosen.append((kind, column))
    _spend_thumbs(table, seat, index)
    turn = table.turn
    for kind, column in sorted(chosen, key=lambda kc: (kc[1], kc[0] == "room")):
        turn.reveal.append((kind, column))
        turn.reveal_old.append(getattr(table.market[column], kind))
        setattr(table.market[column], kind, None)


def _step_replace_tokens(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    _before_pick(table, "1b", index)
    columns = _field(step, "columns", index)
    if not isinstance(columns, list) or not columns:
        raise RefIllegal("§4.1b: name at least one token to replace", index)
    chosen: list[int] = []
    for value in columns:
        column = _column(value, index)
        if column in chosen:
            raise RefIllegal("§4.1b: a token is named twice", index)
        if table.market[column].token is None:
            raise RefIllegal("§4.1b: that column has no token", index)
        chosen.append(column)
    _spend_thumbs(table, seat, index)
    turn = table.turn
    for column in sorted(chosen):
        turn.reveal.append(("token", column))
        turn.reveal_old.append(table.market[column].token)  # type: ignore[arg-type]
        table.market[column].token = None


def _step_split(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    _before_pick(table, "1c", index)
    if table.turn.split:
        raise RefIllegal("§4.1c: once a turn", index)
    _spend_thumbs(table, seat, index)
    table.turn.split = True


def _step_grow(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    at = _pos(_field(step, "plant", index), index)
    spot = table.seats[seat].home.get(at)
    if spot is None or not is_plant(spot.card):
        raise RefIllegal(f"§4.1d: no plant of yours at {at}", index)
    if spot.complete:
        raise RefIllegal("§4.1d: that plant is complete", index)
    _spend_thumbs(table, seat, index)
    _grow(table, seat, at, 1)


def _step_pick(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    turn = table.turn
    if turn.phase != "start":
        raise RefIllegal("§4.2: one pick a turn", index)
    column = _column(_field(step, "column", index), index)
    kind = _field(step, "kind", index)
    if kind not in ("plant", "room"):
        raise RefIllegal(f"no card kind {kind!r}", index)
    token_column = step.get("token_column")
    token_column = column if token_column is None else _column(token_column, index)
    if token_column != column and not turn.split:
        raise RefIllegal("§4.1c: card and token from different columns need a split", index)
    slot = table.market[column]
    card = getattr(slot, kind)
    if card is None:
        raise RefIllegal("§4.2: that market slot is empty", index)
    if not _free_spots(table.seats[seat].home, kind):
        raise RefIllegal("§4.2: that card cannot be placed in your home", index)
    player = table.seats[seat]
    player.thumbs += getattr(slot, f"{kind}_thumbs")
    setattr(slot, kind, None)
    setattr(slot, f"{kind}_thumbs", 0)
    other = "room" if kind == "plant" else "plant"
    if table.variant != "simplified" and getattr(slot, other) is not None:
        setattr(slot, f"{other}_thumbs", getattr(slot, f"{other}_thumbs") + 1)
    turn.taken = table.market[token_column].token
    table.market[token_column].token = None
    turn.card, turn.card_column, turn.token_column = card, column, token_column
    turn.phase = "picked"


def _step_place(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    turn = table.turn
    if turn.phase != "picked":
        raise RefIllegal("§4.3: place comes right after the pick, once", index)
    at = _pos(_field(step, "at", index), index)
    assert turn.card is not None
    home = table.seats[seat].home
    if at not in _free_spots(home, kind_of(turn.card)):
        raise RefIllegal(f"§4.3: {kind_of(turn.card)} cannot go to {at}", index)
    home[at] = Spot(turn.card)
    _check_light(table, seat, at)
    turn.phase = "placed"


def _token_ref(table: Table, step: dict[str, Any], index: int) -> str:
    """Which of the turn's tokens a step names; it must still await its fate."""
    turn = table.turn
    if turn.phase != "placed":
        raise RefIllegal("§4.4: tokens are handled after the card is placed", index)
    which = _field(step, "token", index)
    if which == "taken":
        if turn.taken is None:
            raise RefIllegal("§4.4: no token was taken this turn", index)
        if turn.taken_fate not in ("pending", "stored"):
            raise RefIllegal(f"§4.4: the taken token was already {turn.taken_fate}", index)
    elif which == "stored":
        if turn.old is None:
            raise RefIllegal("§4.4: storage held no token at the start of the turn", index)
        if turn.old_fate not in ("kept", "displaced"):
            raise RefIllegal(f"§4.4: the stored token was already {turn.old_fate}", index)
    else:
        raise RefIllegal(f"no token {which!r}", index)
    return str(which)


def _set_fate(table: Table, seat: int, which: str, fate: str) -> None:
    turn = table.turn
    if which == "taken":
        if turn.taken_fate == "stored":
            table.seats[seat].storage = None
        turn.taken_fate = fate
    else:
        if turn.old_fate == "kept":
            table.seats[seat].storage = None
        turn.old_fate = fate


def _step_store(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    turn = table.turn
    if turn.phase != "placed":
        raise RefIllegal("§4.4: tokens are handled after the card is placed", index)
    if turn.taken is None:
        raise RefIllegal("§4.4: no token was taken this turn", index)
    if turn.taken_fate != "pending":
        raise RefIllegal(f"§4.4: the taken token was already {turn.taken_fate}", index)
    player = table.seats[seat]
    if player.storage is not None and turn.old_fate == "kept":
        turn.old_fate = "displaced"  # V5: use it this turn or it is discarded
    player.storage = turn.taken
    turn.taken_fate = "stored"


def _step_discard(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    which = _token_ref(table, step, index)
    _set_fate(table, seat, which, "discarded")


def _step_use(table: Table, seat: int, step: dict[str, Any], index: int) -> None:
    which = _token_ref(table, step, index)
    turn = table.turn
    token = turn.taken if which == "taken" else turn.old
    assert token is not None
    raw = _field(step, "at", index)
    if not isinstance(raw, list):
        raise RefIllegal("use: 'at' is a list of coordinates", index)
    targets = [_pos(value, index) for value in raw]
    home = table.seats[seat].home

    def rooms_only(count: int) -> Pos:
        if len(targets) != count:
            raise RefIllegal(f"§4.4: {token} takes one room", index)
        spot = home.get(targets[0])
        if spot is None or is_plant(spot.card):
            raise RefIllegal(f"§4.4: no room of yours at {targets[0]}", index)
        return targets[0]

    def incomplete_plants(low: int, high: int) -> list[Pos]:
        if not low <= len(targets) <= high or len(set(targets)) != len(targets):
            raise RefIllegal(f"§4.4: {token} takes {low}–{high} different plants", index)
        for at in targets:
            spot = home.get(at)
            if spot is None or not is_plant(spot.card):
                raise RefIllegal(f"§4.4: no plant of yours at {at}", index)
            if spot.complete:
                raise RefIllegal(f"§4.4: the plant at {at} is complete", index)
        return targets

    if is_item(token):
        at = rooms_only(1)
        if home[at].item is not None:
            raise RefIllegal(f"§4.4: the room at {at} already holds an item", index)
        home[at].item = token
    elif table.variant == "simplified":
        (at,) = incomplete_plants(1, 1)
        _complete(table, seat, at)  # §6.1: a nurture token completes the plant at once
    elif token == "fertilizer":
        (at,) = incomplete_plants(1, 1)
        _grow(table, seat, at, 3)
    elif token == "trowel":
        for at in incomplete_plants(1, 3):
            _grow(table, seat, at, 1)
    else:  # watering-can
        room = rooms_only(1)
        for dx, dy in SIDE_STEPS:
            near = (room[0] + dx, room[1] + dy)
            spot = home.get(near)
            if spot is not None and is_plant(spot.card) and not spot.complete:
                _grow(table, seat, near, 1)
    _set_fate(table, seat, which, "used")


_STEPS = {
    "replace_cards": _step_replace_cards,
    "replace_tokens": _step_replace_tokens,
    "split": _step_split,
    "grow": _step_grow,
    "pick": _step_pick,
    "place": _step_place,
    "store": _step_store,
    "use": _step_use,
    "discard": _step_discard,
}


# --- homes, light and growth (§4.3) --------------------------------------------------


def _neighbours(at: Pos) -> list[Pos]:
    return [(at[0] + dx, at[1] + dy) for dx, dy in SIDE_STEPS]


def _free_spots(home: dict[Pos, Spot], kind: str) -> list[Pos]:
    """Where a card of ``kind`` may go: empty, next to a card, every neighbour of the other
    type, and the home still inside 5 columns × 3 rows."""
    found = []
    candidates = {near for at in home for near in _neighbours(at)} - set(home)
    for at in sorted(candidates):
        if any(kind_of(home[n].card) == kind for n in _neighbours(at) if n in home):
            continue
        xs = [x for x, _ in home] + [at[0]]
        ys = [y for _, y in home] + [at[1]]
        if max(xs) - min(xs) + 1 > 5 or max(ys) - min(ys) + 1 > 3:
            continue
        found.append(at)
    return found


def _any_legal_pick(table: Table, seat: int) -> bool:
    home = table.seats[seat].home
    return any(
        getattr(slot, kind) is not None and _free_spots(home, kind)
        for slot in table.market
        for kind in ("plant", "room")
    )


def _check_light(table: Table, seat: int, at: Pos) -> None:
    """Each plant–room pair the card at ``at`` forms: a light match grows the plant."""
    home = table.seats[seat].home
    for near in _neighbours(at):
        if near not in home:
            continue
        plant_at, room_at = (at, near) if is_plant(home[at].card) else (near, at)
        step = (plant_at[0] - room_at[0], plant_at[1] - room_at[1])
        light = ROOMS[home[room_at].card].sides[SIDE_STEPS.index(step)]
        if light in PLANTS[home[plant_at].card].lights and not home[plant_at].complete:
            _grow(table, seat, plant_at, 1)


def _grow(table: Table, seat: int, at: Pos, amount: int) -> None:
    spot = table.seats[seat].home[at]
    if spot.complete:
        return  # only incomplete plants gain verdancy
    spot.verdancy += amount
    if spot.verdancy >= PLANTS[spot.card].need:
        _complete(table, seat, at)


def _complete(table: Table, seat: int, at: Pos) -> None:
    spot = table.seats[seat].home[at]
    spot.complete, spot.verdancy = True, 0
    if table.variant == "simplified":
        return  # §6.1: no pots are taken
    for value in (3, 2, 1):
        if table.pots[value] > 0:
            table.pots[value] -= 1
            spot.pot = value
            return
    spot.pot = 0  # terracotta never runs out


# --- §5 scoring ----------------------------------------------------------------------


def _seat_score(table: Table, seat: int) -> dict[str, int]:
    home = table.seats[seat].home
    plants = {at: s for at, s in home.items() if is_plant(s.card)}
    rooms = {at: s for at, s in home.items() if not is_plant(s.card)}
    complete = [s for s in plants.values() if s.complete]
    simplified = table.variant == "simplified"
    points: dict[str, int] = dict.fromkeys(CATEGORIES, 0)
    points["plants"] = sum(5 if simplified else PLANTS[s.card].points for s in complete)
    points["verdancy"] = sum(s.verdancy for s in plants.values() if not s.complete) // 2
    points["pots"] = sum(s.pot or 0 for s in complete)
    for at, room in rooms.items():
        colour = ROOMS[room.card].colour
        matches = sum(
            1 for n in _neighbours(at) if n in plants and PLANTS[plants[n].card].colour == colour
        )
        if room.item is not None and item_colour(room.item) == colour:
            matches *= 2
        points["rooms"] += matches
    items = [s.item for s in rooms.values() if s.item is not None]
    points["motifs"] = MOTIF_POINTS[len({item_motif(i) for i in items})]
    if len({PLANTS[s.card].colour for s in plants.values()}) == 5:
        points["colours"] += 3
    if len({ROOMS[s.card].colour for s in rooms.values()}) == 5:
        points["colours"] += 3
    for objective in table.objectives:
        points["objectives"] += _objective(objective, home, plants, rooms, complete)
    return points


def _objective(
    objective: str,
    home: dict[Pos, Spot],
    plants: dict[Pos, Spot],
    rooms: dict[Pos, Spot],
    complete: list[Spot],
) -> int:
    xs = [x for x, _ in home]
    ys = [y for _, y in home]
    if objective == "collector":
        return 2 * len({PLANTS[s.card].colour for s in complete})
    if objective == "big-growers":
        return 2 * sum(1 for s in complete if PLANTS[s.card].need >= 5)
    if objective == "outer-ring":
        middle_row = min(ys) + 1
        inner = {(min(xs) + i, middle_row) for i in (1, 2, 3)}
        return sum(1 for at, s in rooms.items() if s.item is not None and at not in inner)
    if objective == "matched-rows":
        total = 0
        for y in range(min(ys), max(ys) + 1):
            colours = {ROOMS[s.card].colour for (_, ry), s in rooms.items() if ry == y}
            if len(colours) == 1:
                total += 3
        return total
    if objective == "pet-lover":
        return 2 * sum(
            1 for s in rooms.values() if s.item is not None and item_motif(s.item) in PETS
        )
    assert objective == "furnished"
    return 2 * sum(
        1
        for s in rooms.values()
        if s.item is not None
        and item_motif(s.item) in FURNITURE
        and item_colour(s.item) == ROOMS[s.card].colour
    )


def score(table: Table) -> Final:
    """V8: breakdown, total, and places (more complete plants break ties; 1, 1, 3)."""
    points = [_seat_score(table, seat) for seat in range(table.players)]
    totals = tuple(sum(p.values()) for p in points)
    completes = tuple(
        sum(1 for s in player.home.values() if is_plant(s.card) and s.complete)
        for player in table.seats
    )
    keys = list(zip(totals, completes, strict=True))
    places = tuple(1 + sum(1 for other in keys if other > mine) for mine in keys)
    return Final(
        breakdowns=tuple(tuple((c, p[c]) for c in CATEGORIES) for p in points),
        totals=totals,
        places=places,
        complete_plants=completes,
    )


# --- whole trajectories --------------------------------------------------------------


def replay(
    players: int, variant: str, events: Iterable[tuple[int, Any]]
) -> tuple[Reference, Final | None]:
    """Feed ``(actor, decision)`` events (actor -1: chance id; else a seat's steps)."""
    reference = Reference(players, variant)
    for actor, decision in events:
        if actor == -1:
            reference.chance(decision)
        else:
            reference.decide(actor, decision)
    return reference, reference.final() if reference.to_decide() is None else None
