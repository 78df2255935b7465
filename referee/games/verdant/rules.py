"""The rules of Verdant (spec §2–§4, §6, §7) as pure functions of :class:`VerdantState`.

- :func:`start` — the state before the first card is dealt;
- :func:`to_decide` — a seat, :data:`~referee.games.base.CHANCE` or ``None``;
- :func:`reveal` / :func:`chance_outcomes` — one chance event and the outcomes it may have;
- :func:`advance` — one seat step; :func:`finish` — end the turn;
- :func:`legal_steps`, :func:`can_finish`, :func:`legal_picks`, :func:`legal_spots` — what
  a seat may do now (for bots and tests);
- :func:`view_of` / :func:`state_from_view` — a seat's view, and the state rebuilt from it
  (decks hold no order here, so everything visible determines the state).

Every refusal is an :class:`~referee.errors.IllegalDecision` naming the rule.

Decisions the spec leaves open, as settled here:

- Chance order: per seat in setup its plant, then its room, then its ``Setup``; the market
  column by column (plant, token, room); advanced: the objectives of the plants, rooms and
  items categories. 1a draws its new cards column by column (plant before room), 1b its
  tokens column by column; the replaced ones reach the discard piles / the bag once all
  are drawn. At the end of a turn the card slot, then the token slot, then (solo) the
  shift and the new right column (plant, token, room). After the game's last turn nothing
  is dealt (no one could see it).
- A draw from an empty deck first turns the discard pile into the deck (no chance event:
  the deck has no order); if both are empty, or the bag is, the slot stays empty. The
  token slot of a pick is refilled even when the pick took no token (it was empty).
- Order within a turn: 1a–1c before the pick; 1d any time; ``Place`` after ``Pick``;
  store/use/discard after ``Place``. 1a/1b need at least one card/token. A pass (the turn
  ends without a pick) is allowed only when no legal pick exists when the turn ends.
- ``taken`` is the token taken this turn, ``stored`` the token that was in storage when
  the turn began, wherever they are now. Storing into a full storage displaces the old
  token (V5): it may still be used or discarded this turn, else it is discarded.
- Several verdancy gains at once (light matches of one card, the watering can) are
  applied north, east, south, west; the trowel in the order of its plants: this decides
  which plant takes which pot. A watering can may go on a room without incomplete
  neighbours (no effect); the simplified game's nurture token needs an incomplete plant.
- A 1a/1b step lists each card/column once; thumbs on the market's cards belong to no
  one until picked (a solo shift returns them to the supply).
- A pass is the empty decision (notation ``pass``): a decision without 1a/1b ends the
  turn, so ``()`` ends it with whatever was done before (thumb actions, grows).
- The taken token may be used or discarded from storage in the turn it was stored; the
  old token can never return to storage (only the taken token can be stored).
- The simplified game hands out no thumbs at all (none at setup, none on market cards).
- Turn numbers count every seat's turns from 1 (:func:`turn_number`): the setup is part
  of turn 1, a turn's refill part of that turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from itertools import combinations
from typing import Any, Final

from referee.errors import IllegalDecision
from referee.games.base import CHANCE
from referee.games.verdant.cards import (
    FIRST_NURTURE,
    OBJECTIVES,
    PLANT_BY_ID,
    PLANT_LIGHTS,
    PLANT_NEEDS,
    PLANTS,
    ROOM_BY_ID,
    ROOM_SIDE_LIGHT,
    ROOMS,
    SIDES,
    TOKEN_BY_ID,
    TOKEN_COUNTS,
    TOKENS,
    TROWEL,
    WATERING_CAN,
    Kind,
)
from referee.games.verdant.state import (
    ADVANCED,
    CELL_X,
    CELL_Y,
    CELLS,
    COLUMNS,
    DEAL_PLANT,
    DEAL_ROOM,
    DISPLACED,
    DRAW_OBJECTIVE,
    DRAW_PLANT,
    DRAW_ROOM,
    DRAW_TOKEN,
    EMPTY_HOME,
    EMPTY_MARKET,
    GONE,
    HAND,
    IS_PLANT_CELL,
    NEIGHBOURS,
    NO_PART,
    NOWHERE,
    ORIGIN,
    OVER,
    PLANT_CELLS_MASK,
    PLAY,
    ROOM_CELLS_MASK,
    SETUP,
    SHIFT,
    SIMPLIFIED,
    STORED,
    TURNS_EACH,
    WIDTH,
    Home,
    Market,
    SeatState,
    TurnPart,
    VerdantState,
    VerdantView,
    cell_of,
)
from referee.games.verdant.steps import (
    Decision,
    Discard,
    Grow,
    Pick,
    Place,
    ReplaceCards,
    ReplaceTokens,
    Reveal,
    Setup,
    Split,
    Step,
    Store,
    TokenRef,
    Use,
)

ALL_CARDS: Final = (1 << 60) - 1
THUMB_COST: Final = 2
KINDS: Final[tuple[Kind, Kind]] = ("plant", "room")
_FULL: Final = (1 << CELLS) - 1
_FIRST_COLUMN: Final = sum(1 << c for c in range(CELLS) if CELL_X[c] == -4)
_LAST_COLUMN: Final = sum(1 << c for c in range(CELLS) if CELL_X[c] == 4)
_NOT_FIRST: Final = _FULL & ~_FIRST_COLUMN
_NOT_LAST: Final = _FULL & ~_LAST_COLUMN


def _range_mask(axis: tuple[int, ...], low: int, high: int) -> int:
    return sum(1 << c for c in range(CELLS) if low <= axis[c] <= high)


_X_WINDOW: Final = {
    (low, high): _range_mask(CELL_X, low, high) for low in range(-8, 5) for high in range(-4, 9)
}
_Y_WINDOW: Final = {
    (low, high): _range_mask(CELL_Y, low, high) for low in range(-4, 3) for high in range(-2, 5)
}


def _byte_table(values: Sequence[Any]) -> tuple[tuple[tuple[Any, ...], ...], ...]:
    """For each byte ``k`` of a mask and each value ``b`` of it, the ``values`` at the
    set bits of ``b << 8k``: a mask's values are then eight lookups joined."""
    return tuple(
        tuple(
            tuple(
                values[8 * k + bit]
                for bit in range(8)
                if b >> bit & 1 and 8 * k + bit < len(values)
            )
            for b in range(256)
        )
        for k in range((len(values) + 7) // 8)
    )


def _select(mask: int, table: tuple[tuple[tuple[Any, ...], ...], ...]) -> tuple[Any, ...]:
    """The values of ``table`` (see :func:`_byte_table`) at the set bits of ``mask``."""
    out: tuple[Any, ...] = ()
    for k, row in enumerate(table):
        part = mask >> (8 * k) & 255
        if part:
            out += row[part]
    return out


_INDEX_BYTES: Final = _byte_table(range(64))


def _bits(mask: int) -> tuple[int, ...]:
    """The set bits of ``mask`` (below 64), lowest first."""
    return _select(mask, _INDEX_BYTES)


def _set(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _coord(cell: int) -> tuple[int, int]:
    return CELL_X[cell], CELL_Y[cell]


def legal_spots(home: Home, plant: bool) -> int:
    """The cells where a plant (``plant``) or a room may be placed (§4.3), as a bit mask:
    empty, next to a card, of the chessboard colour of its type, keeping 5×3."""
    occupied = home.occupied
    if not occupied:
        return 0
    spread = (
        ((occupied << 1) & _NOT_FIRST)
        | ((occupied >> 1) & _NOT_LAST)
        | ((occupied << WIDTH) & _FULL)
        | (occupied >> WIDTH)
    )
    min_x, max_x, min_y, max_y = home.bounds
    window = _X_WINDOW[max_x - 4, min_x + 4] & _Y_WINDOW[max_y - 2, min_y + 2]
    return spread & ~occupied & (PLANT_CELLS_MASK if plant else ROOM_CELLS_MASK) & window


def _put(home: Home, cell: int, card: int) -> Home:
    """``home`` with ``card`` on ``cell`` (no verdancy yet)."""
    x, y = CELL_X[cell], CELL_Y[cell]
    if home.occupied:
        min_x, max_x, min_y, max_y = home.bounds
        bounds = (min(min_x, x), max(max_x, x), min(min_y, y), max(max_y, y))
    else:
        bounds = (x, x, y, y)
    return Home(
        _set(home.cards, cell, card),
        home.verdancy,
        home.pots,
        home.items,
        home.occupied | 1 << cell,
        home.complete,
        bounds,
    )


def _fresh_part(storage: int) -> TurnPart:
    return TurnPart(old=storage, old_at=STORED if storage >= 0 else NOWHERE)


# --- the builder: one decision applied to mutable fields, frozen once -------------


class _Build:
    """A state taken apart for one decision; :meth:`freeze` puts it together again.

    ``home``/``thumbs``/``storage`` are those of ``seat`` (the seat in setup, in its
    turn, or being dealt to), written back by :meth:`_commit`.
    """

    __slots__ = (
        "bag",
        "home",
        "limbo_plants",
        "limbo_rooms",
        "limbo_tokens",
        "market",
        "objectives",
        "part",
        "pending",
        "phase",
        "plant_deck",
        "plant_discard",
        "players",
        "pots",
        "room_deck",
        "room_discard",
        "seat",
        "seats",
        "spent",
        "storage",
        "thumbs",
        "turn",
        "variant",
    )

    def __init__(self, state: VerdantState) -> None:
        (
            self.players,
            self.variant,
            self.seats,
            self.market,
            self.plant_deck,
            self.room_deck,
            self.plant_discard,
            self.room_discard,
            self.bag,
            self.pots,
            self.objectives,
            self.phase,
            self.seat,
            self.turn,
            self.part,
            self.pending,
            self.limbo_plants,
            self.limbo_rooms,
            self.limbo_tokens,
            self.spent,
        ) = state
        self.home, self.thumbs, self.storage = self.seats[self.seat]

    def freeze(self) -> VerdantState:
        self._commit()
        return VerdantState(
            self.players,
            self.variant,
            self.seats,
            self.market,
            self.plant_deck,
            self.room_deck,
            self.plant_discard,
            self.room_discard,
            self.bag,
            self.pots,
            self.objectives,
            self.phase,
            self.seat,
            self.turn,
            self.part,
            self.pending,
            self.limbo_plants,
            self.limbo_rooms,
            self.limbo_tokens,
            self.spent,
        )

    def _commit(self) -> None:
        seat = self.seat
        old = self.seats[seat]
        if old.home is not self.home or old.thumbs != self.thumbs or old.storage != self.storage:
            mine = SeatState(self.home, self.thumbs, self.storage)
            self.seats = (*self.seats[:seat], mine, *self.seats[seat + 1 :])

    def _switch(self, seat: int) -> None:
        self._commit()
        self.seat = seat
        self.home, self.thumbs, self.storage = self.seats[seat]

    # --- verdancy -------------------------------------------------------------

    def _gain(self, cell: int, amount: int) -> None:
        """``amount`` verdancy to the plant on ``cell`` if incomplete; completes it at its
        requirement (surplus lost, verdancy cleared, the best pot left)."""
        home = self.home
        if home.complete >> cell & 1:
            return
        verdancy = home.verdancy[cell] + amount
        if verdancy < PLANT_NEEDS[home.cards[cell]]:
            self.home = home._replace(verdancy=_set(home.verdancy, cell, verdancy))
            return
        self._complete(cell)

    def _complete(self, cell: int) -> None:
        home = self.home
        pot = -1
        if self.variant != SIMPLIFIED:
            three, two, one = self.pots
            if three:
                pot, self.pots = 3, (three - 1, two, one)
            elif two:
                pot, self.pots = 2, (three, two - 1, one)
            elif one:
                pot, self.pots = 1, (three, two, one - 1)
            else:
                pot = 0  # terracotta pots never run out
        self.home = home._replace(
            verdancy=_set(home.verdancy, cell, 0),
            pots=_set(home.pots, cell, pot),
            complete=home.complete | 1 << cell,
        )

    def _place(self, cell: int, card: int) -> None:
        """Put ``card`` on ``cell`` and score the light matches it forms (§4.3)."""
        self.home = _put(self.home, cell, card)
        cards = self.home.cards
        plant_here = IS_PLANT_CELL[cell]
        for direction, neighbour in NEIGHBOURS[cell]:
            other = cards[neighbour]
            if other < 0:
                continue
            if plant_here:
                plant, room, plant_cell = card, other, cell
                side = (direction + 2) % 4  # the room's side facing back to the plant
            else:
                plant, room, plant_cell = other, card, neighbour
                side = direction
            if ROOM_SIDE_LIGHT[room][side] & PLANT_LIGHTS[plant]:
                self._gain(plant_cell, 1)

    # --- chance ---------------------------------------------------------------

    def reveal(self, revealed: str) -> None:
        op, arg = divmod(self.pending[0], 8)
        if op in (DEAL_PLANT, DRAW_PLANT):
            plant = PLANT_BY_ID.get(revealed)
            if plant is None or not self.plant_deck >> plant.index & 1:
                raise IllegalDecision(f"V11: {revealed!r} is not a plant in the plant deck")
            self.plant_deck &= ~(1 << plant.index)
            if op == DEAL_PLANT:
                self.home = _put(EMPTY_HOME, ORIGIN, plant.index)
            else:
                m = self.market
                self.market = m._replace(plants=_set(m.plants, arg, plant.index))
        elif op in (DEAL_ROOM, DRAW_ROOM):
            room = ROOM_BY_ID.get(revealed)
            if room is None or not self.room_deck >> room.index & 1:
                raise IllegalDecision(f"V11: {revealed!r} is not a room in the room deck")
            self.room_deck &= ~(1 << room.index)
            if op == DEAL_ROOM:
                self.part = NO_PART._replace(kind=1, card=room.index)
            else:
                m = self.market
                self.market = m._replace(rooms=_set(m.rooms, arg, room.index))
        elif op == DRAW_TOKEN:
            token = TOKEN_BY_ID.get(revealed)
            if token is None or not self.bag[token.index]:
                raise IllegalDecision(f"V11: {revealed!r} is not a token in the bag")
            self.bag = _set(self.bag, token.index, self.bag[token.index] - 1)
            m = self.market
            self.market = m._replace(tokens=_set(m.tokens, arg, token.index))
        else:
            if revealed not in OBJECTIVES[arg] or revealed in self.objectives:
                raise IllegalDecision(
                    f"V9: {revealed!r} is not an objective of the"
                    f" {('plants', 'rooms', 'items')[arg]} category"
                )
            self.objectives = (*self.objectives, revealed)
        self.pending = self.pending[1:]
        self._settle()

    def _settle(self) -> None:
        """Do the pending operations that need no chance; when none is left, put 1a/1b's
        replaced cards and tokens away and, after a turn's refill, start the next turn."""
        while self.pending:
            op = self.pending[0] >> 3
            if op == SHIFT:
                self._shift()
            elif op in (DEAL_PLANT, DRAW_PLANT):
                if self.plant_deck:
                    return
                if self.plant_discard:
                    self.plant_deck, self.plant_discard = self.plant_discard, 0
                    return
            elif op in (DEAL_ROOM, DRAW_ROOM):
                if self.room_deck:
                    return
                if self.room_discard:
                    self.room_deck, self.room_discard = self.room_discard, 0
                    return
            elif op == DRAW_TOKEN:
                if any(self.bag):
                    return
            else:
                return
            self.pending = self.pending[1:]
        if self.limbo_plants or self.limbo_rooms:
            self.plant_discard |= self.limbo_plants
            self.room_discard |= self.limbo_rooms
            self.limbo_plants = self.limbo_rooms = 0
        if self.limbo_tokens:
            bag = list(self.bag)
            for token in self.limbo_tokens:
                bag[token] += 1
            self.bag = tuple(bag)
            self.limbo_tokens = ()
        if self.phase == PLAY and self.part is None:
            self._switch((self.seat + 1) % self.players)
            self.part = _fresh_part(self.storage)

    def _shift(self) -> None:
        """V10: the leftmost column leaves whole, the others move left."""
        m = self.market
        if m.plants[0] >= 0:
            self.plant_discard |= 1 << m.plants[0]
        if m.rooms[0] >= 0:
            self.room_discard |= 1 << m.rooms[0]
        if m.tokens[0] >= 0:
            self.bag = _set(self.bag, m.tokens[0], self.bag[m.tokens[0]] + 1)
        self.market = Market(
            (*m.plants[1:], -1),
            (*m.tokens[1:], -1),
            (*m.rooms[1:], -1),
            (*m.plant_thumbs[1:], 0),
            (*m.room_thumbs[1:], 0),
        )

    # --- seat steps -----------------------------------------------------------

    def step(self, step: Step) -> None:
        if self.phase == SETUP:
            if not isinstance(step, Setup):
                raise IllegalDecision(
                    f"§2.2: seat {self.seat + 1} chooses where its first room lies"
                    " (a setup step), nothing else"
                )
            self._setup(step)
            return
        handler = _HANDLERS.get(type(step))
        if handler is None:
            if isinstance(step, Setup):
                raise IllegalDecision("§2.2: the setup is over")
            if isinstance(step, Reveal):
                raise IllegalDecision("§2: only chance reveals cards and tokens")
            raise IllegalDecision(f"not a Verdant step: {step!r}")
        handler(self, step)

    def _setup(self, step: Setup) -> None:
        if step.side not in SIDES:
            raise IllegalDecision(
                f"§2.2: the room lies north, east, south or west, not {step.side!r}"
            )
        direction = SIDES.index(step.side)
        cell = NEIGHBOURS[ORIGIN][direction][1]
        assert self.part is not None
        self._place(cell, self.part.card)
        if self.seat + 1 < self.players:
            self._switch(self.seat + 1)
            self.part = NO_PART
            self.pending = (DEAL_PLANT * 8 + self.seat, DEAL_ROOM * 8 + self.seat)
        else:
            self._switch(0)
            self.phase = PLAY
            self.part = _fresh_part(self.storage)
            deal = []
            for column in range(COLUMNS):
                deal += [DRAW_PLANT * 8 + column, DRAW_TOKEN * 8 + column, DRAW_ROOM * 8 + column]
            if self.variant == ADVANCED:
                deal += [DRAW_OBJECTIVE * 8 + category for category in range(3)]
            self.pending = tuple(deal)

    def _thumb_action(self, rule: str) -> None:
        if self.variant == SIMPLIFIED:
            raise IllegalDecision(f"§6.1: no thumb actions in the simplified game ({rule})")
        if self.thumbs < THUMB_COST:
            raise IllegalDecision(
                f"{rule}: a thumb action costs {THUMB_COST} green thumbs, seat {self.seat + 1}"
                f" has {self.thumbs}"
            )
        assert self.part is not None
        if self.part.kind >= 0 and rule != "§4.1d":
            raise IllegalDecision(f"{rule}: this thumb action comes before the pick")

    def _replace_cards(self, step: ReplaceCards) -> None:
        self._thumb_action("§4.1a")
        if not step.cards:
            raise IllegalDecision("§4.1a: name at least one market card to replace")
        if len(set(step.cards)) != len(step.cards):
            raise IllegalDecision("§4.1a: each card is replaced once")
        m = self.market
        plants, rooms = list(m.plants), list(m.rooms)
        pending = []
        for column, kind in sorted(step.cards, key=lambda card: (card[0], card[1] != "plant")):
            _check_column(column, "§4.1a")
            if kind == "plant":
                card, thumbs = plants[column], m.plant_thumbs[column]
            elif kind == "room":
                card, thumbs = rooms[column], m.room_thumbs[column]
            else:
                raise IllegalDecision(f"§4.1a: a card is a plant or a room, not {kind!r}")
            if card < 0:
                raise IllegalDecision(f"§4.1a: column {column} has no {kind} card")
            if thumbs:
                raise IllegalDecision(
                    f"§4.1a: the {kind} of column {column} carries thumbs and cannot be replaced"
                )
            if kind == "plant":
                plants[column] = -1
                self.limbo_plants |= 1 << card
                pending.append(DRAW_PLANT * 8 + column)
            else:
                rooms[column] = -1
                self.limbo_rooms |= 1 << card
                pending.append(DRAW_ROOM * 8 + column)
        self._pay()
        self.market = m._replace(plants=tuple(plants), rooms=tuple(rooms))
        self.pending = tuple(pending)
        self._settle()

    def _replace_tokens(self, step: ReplaceTokens) -> None:
        self._thumb_action("§4.1b")
        if not step.columns:
            raise IllegalDecision("§4.1b: name at least one market token to replace")
        if len(set(step.columns)) != len(step.columns):
            raise IllegalDecision("§4.1b: each token is replaced once")
        tokens = list(self.market.tokens)
        limbo = []
        for column in sorted(step.columns):
            _check_column(column, "§4.1b")
            if tokens[column] < 0:
                raise IllegalDecision(f"§4.1b: column {column} has no token")
            limbo.append(tokens[column])
            tokens[column] = -1
        self._pay()
        self.market = self.market._replace(tokens=tuple(tokens))
        self.limbo_tokens = tuple(limbo)
        self.pending = tuple(DRAW_TOKEN * 8 + column for column in sorted(step.columns))
        self._settle()

    def _split(self, step: Split) -> None:
        self._thumb_action("§4.1c")
        assert self.part is not None
        if self.part.split:
            raise IllegalDecision("§4.1c: once a turn")
        self._pay()
        self.part = self.part._replace(split=True)

    def _grow(self, step: Grow) -> None:
        self._thumb_action("§4.1d")
        cell = self._own_plant(step.plant, "§4.1d")
        self._pay()
        self._gain(cell, 1)

    def _pay(self) -> None:
        self.thumbs -= THUMB_COST
        assert self.part is not None
        self.part = self.part._replace(thumb_actions=self.part.thumb_actions + 1)

    def _pick(self, step: Pick) -> None:
        part = self.part
        assert part is not None
        if part.kind >= 0:
            raise IllegalDecision("§4.2: one pick a turn")
        _check_column(step.column, "§4.2")
        token_column = step.column if step.token_column is None else step.token_column
        _check_column(token_column, "§4.2")
        if token_column != step.column and not part.split:
            raise IllegalDecision(
                "§4.2: the token comes from the card's column (another column needs 1c, split)"
            )
        m = self.market
        if step.kind == "plant":
            kind, card, thumbs, other = 0, m.plants[step.column], m.plant_thumbs, m.rooms
        elif step.kind == "room":
            kind, card, thumbs, other = 1, m.rooms[step.column], m.room_thumbs, m.plants
        else:
            raise IllegalDecision(f"§4.2: a card is a plant or a room, not {step.kind!r}")
        if card < 0:
            raise IllegalDecision(f"§4.2: column {step.column} has no {step.kind} card")
        if not legal_spots(self.home, kind == 0):
            raise IllegalDecision(
                f"§4.2: the {step.kind} of column {step.column} cannot be placed in your home"
            )
        self.thumbs += thumbs[step.column]
        taken_thumbs = _set(thumbs, step.column, 0)
        other_thumbs = m.room_thumbs if kind == 0 else m.plant_thumbs
        if other[step.column] >= 0 and self.variant != SIMPLIFIED:
            other_thumbs = _set(other_thumbs, step.column, other_thumbs[step.column] + 1)
        token = m.tokens[token_column]
        tokens = _set(m.tokens, token_column, -1) if token >= 0 else m.tokens
        if kind == 0:
            self.market = Market(
                _set(m.plants, step.column, -1), tokens, m.rooms, taken_thumbs, other_thumbs
            )
        else:
            self.market = Market(
                m.plants, tokens, _set(m.rooms, step.column, -1), other_thumbs, taken_thumbs
            )
        self.part = part._replace(
            kind=kind,
            card=card,
            column=step.column,
            token_column=token_column,
            taken=token,
            taken_at=HAND if token >= 0 else NOWHERE,
        )

    def _place_step(self, step: Place) -> None:
        part = self.part
        assert part is not None
        if part.kind < 0:
            raise IllegalDecision("§4.3: pick a card before placing it")
        if part.placed >= 0:
            raise IllegalDecision("§4.3: the picked card is placed already")
        cell = _cell(step.at)
        kind = ("plant", "room")[part.kind]
        if cell < 0 or not legal_spots(self.home, part.kind == 0) >> cell & 1:
            raise IllegalDecision(
                f"§4.3: the {kind} cannot go to {_text(step.at)}: {self._why(cell, part.kind == 0)}"
            )
        self._place(cell, part.card)  # verdancy only: the turn part stays as it was
        self.part = part._replace(placed=cell)

    def _why(self, cell: int, plant: bool) -> str:
        home = self.home
        if cell < 0:
            return "the home would not fit 5 columns × 3 rows"
        if home.occupied >> cell & 1:
            return "the spot is taken"
        if IS_PLANT_CELL[cell] != plant:
            return "plants and rooms alternate like a chessboard"
        if not any(home.occupied >> n & 1 for _, n in NEIGHBOURS[cell]):
            return "it must lie orthogonally next to one of your cards"
        return "the home would not fit 5 columns × 3 rows"

    def _token_steps_allowed(self, rule: str) -> TurnPart:
        part = self.part
        assert part is not None
        if part.placed < 0:
            raise IllegalDecision(
                f"{rule}: tokens are stored, used or discarded after placing the card"
            )
        return part

    def _store(self, step: Store) -> None:
        part = self._token_steps_allowed("§4.4")
        if part.taken_at != HAND:
            raise IllegalDecision("§4.4: no taken token to store")
        old_at = part.old_at
        if self.storage >= 0:
            old_at = DISPLACED  # V5: it must be used this turn or is discarded
        self.storage = part.taken
        self.part = part._replace(taken_at=STORED, old_at=old_at)

    def _token(self, part: TurnPart, ref: str) -> tuple[int, int]:
        """The token ``ref`` names and where it is; raises when it is not at hand."""
        if ref == "taken":
            if part.taken_at not in (HAND, STORED):
                raise IllegalDecision(
                    "§4.4: no taken token left this turn"
                    if part.taken >= 0
                    else "§4.4: no token was taken this turn"
                )
            return part.taken, part.taken_at
        if ref == "stored":
            if part.old_at not in (STORED, DISPLACED):
                raise IllegalDecision(
                    "V5: the token stored before this turn is gone"
                    if part.old >= 0
                    else "V5: no token was in storage when the turn began"
                )
            return part.old, part.old_at
        raise IllegalDecision(f"§4.4: a token is 'taken' or 'stored', not {ref!r}")

    def _drop(self, part: TurnPart, ref: str, where: int) -> None:
        if where == STORED:
            self.storage = -1
        if ref == "taken":
            self.part = part._replace(taken_at=GONE)
        else:
            self.part = part._replace(old_at=GONE)

    def _discard(self, step: Discard) -> None:
        part = self._token_steps_allowed("§4.4")
        _, where = self._token(part, step.token)
        self._drop(part, step.token, where)
        self.spent += 1

    def _use(self, step: Use) -> None:
        part = self._token_steps_allowed("§4.4")
        token, where = self._token(part, step.token)
        name = TOKENS[token].id
        at = step.at
        if token < FIRST_NURTURE:
            if len(at) != 1:
                raise IllegalDecision(f"§4.4: the item {name} goes into one room")
            cell = self._own_room(at[0], "§4.4")
            if self.home.items[cell] >= 0:
                raise IllegalDecision(f"§4.4: the room at {_text(at[0])} holds an item already")
            self.home = self.home._replace(items=_set(self.home.items, cell, token))
        elif self.variant == SIMPLIFIED:
            if len(at) != 1:
                raise IllegalDecision(f"§6.1: {name} completes one plant")
            self._complete(self._own_plant(at[0], "§6.1"))
            self.spent += 1
        elif token == TROWEL:
            if not 1 <= len(at) <= 3 or len(set(at)) != len(at):
                raise IllegalDecision("§4.4: the trowel grows one, two or three different plants")
            cells = [self._own_plant(spot, "§4.4") for spot in at]
            for cell in cells:
                self._gain(cell, 1)
            self.spent += 1
        elif token == WATERING_CAN:
            if len(at) != 1:
                raise IllegalDecision("§4.4: the watering can waters around one room")
            room = self._own_room(at[0], "§4.4")
            for _, neighbour in NEIGHBOURS[room]:
                if self.home.cards[neighbour] >= 0:
                    self._gain(neighbour, 1)
            self.spent += 1
        else:
            if len(at) != 1:
                raise IllegalDecision("§4.4: the fertilizer grows one plant")
            self._gain(self._own_plant(at[0], "§4.4"), 3)
            self.spent += 1
        self._drop(part, step.token, where)  # the effects above never change the turn part

    def _own_plant(self, at: tuple[int, int], rule: str) -> int:
        cell = _cell(at)
        home = self.home
        if cell < 0 or not home.occupied >> cell & 1 or not IS_PLANT_CELL[cell]:
            raise IllegalDecision(f"{rule}: there is no plant of yours at {_text(at)}")
        if home.complete >> cell & 1:
            raise IllegalDecision(f"{rule}: the plant at {_text(at)} is complete (§4 verdancy)")
        return cell

    def _own_room(self, at: tuple[int, int], rule: str) -> int:
        cell = _cell(at)
        if cell < 0 or not self.home.occupied >> cell & 1 or IS_PLANT_CELL[cell]:
            raise IllegalDecision(f"{rule}: there is no room of yours at {_text(at)}")
        return cell

    # --- the end of a turn ----------------------------------------------------

    def finish(self) -> None:
        part = self.part
        assert part is not None
        if part.placed < 0:
            if part.kind >= 0:
                raise IllegalDecision("§4.3: the picked card must be placed before the turn ends")
            if _any_pick(self.market, self.home):
                raise IllegalDecision(
                    "§4.2: the turn needs a pick (a pass is allowed only when no legal pick exists)"
                )
        if part.taken_at == HAND:
            self.spent += 1
        if part.old_at == DISPLACED:
            self.spent += 1
        self.turn += 1
        self.part = None
        if self.turn == self.players * TURNS_EACH:
            self.phase = OVER
            return
        pending = []
        if part.kind >= 0:
            pending.append((DRAW_PLANT if part.kind == 0 else DRAW_ROOM) * 8 + part.column)
            pending.append(DRAW_TOKEN * 8 + part.token_column)
        if self.players == 1:
            pending += [SHIFT * 8, DRAW_PLANT * 8 + 3, DRAW_TOKEN * 8 + 3, DRAW_ROOM * 8 + 3]
        self.pending = tuple(pending)
        self._settle()


_HANDLERS: dict[type, Callable[[_Build, Any], None]] = {
    ReplaceCards: _Build._replace_cards,
    ReplaceTokens: _Build._replace_tokens,
    Split: _Build._split,
    Grow: _Build._grow,
    Pick: _Build._pick,
    Place: _Build._place_step,
    Store: _Build._store,
    Use: _Build._use,
    Discard: _Build._discard,
}


def _check_column(column: object, rule: str) -> None:
    if type(column) is not int or not 0 <= column < COLUMNS:
        raise IllegalDecision(f"{rule}: market columns are 0 to 3, not {column!r}")


def _cell(at: object) -> int:
    if isinstance(at, tuple) and len(at) == 2 and type(at[0]) is int and type(at[1]) is int:
        return cell_of(at[0], at[1])
    raise IllegalDecision(f"a spot is (x, y), not {at!r}")


def _text(at: tuple[int, int]) -> str:
    return f"({at[0]}, {at[1]})"


def _any_pick(market: Market, home: Home) -> bool:
    return bool(
        (legal_spots(home, True) and any(card >= 0 for card in market.plants))
        or (legal_spots(home, False) and any(card >= 0 for card in market.rooms))
    )


# --- the public functions -------------------------------------------------------


def start(players: int, variant: int) -> VerdantState:
    """The state before anything is dealt (§2): full decks and bag, pots, thumbs (§2.4)."""
    thumbs = [1] if players == 1 else [0] + [1] * (players - 2) + [2]
    if variant == SIMPLIFIED:
        thumbs = [0] * players  # §6.1: no green thumbs
    seats = tuple(SeatState(EMPTY_HOME, count, -1) for count in thumbs)
    return VerdantState(
        players=players,
        variant=variant,
        seats=seats,
        market=EMPTY_MARKET,
        plant_deck=ALL_CARDS,
        room_deck=ALL_CARDS,
        plant_discard=0,
        room_discard=0,
        bag=TOKEN_COUNTS,
        pots=(players + 1,) * 3,
        objectives=(),
        phase=SETUP,
        seat=0,
        turn=0,
        part=NO_PART,
        pending=(DEAL_PLANT * 8, DEAL_ROOM * 8),
        limbo_plants=0,
        limbo_rooms=0,
        limbo_tokens=(),
        spent=0,
    )


def to_decide(state: VerdantState) -> int | None:
    """The seat that decides next, ``CHANCE``, or ``None`` once the game is over."""
    if state.pending:
        return CHANCE
    if state.phase == OVER:
        return None
    return state.seat


_PLANT_REVEALS: Final = tuple((Reveal(plant.id),) for plant in PLANTS)
_ROOM_REVEALS: Final = tuple((Reveal(room.id),) for room in ROOMS)
_PLANT_REVEAL_BYTES: Final = _byte_table(_PLANT_REVEALS)
_ROOM_REVEAL_BYTES: Final = _byte_table(_ROOM_REVEALS)
_TOKEN_REVEALS: Final = tuple((Reveal(token.id),) for token in TOKENS)
_OBJECTIVE_REVEALS: Final = tuple(
    tuple((Reveal(name),) for name in category) for category in OBJECTIVES
)


def chance_outcomes(state: VerdantState) -> tuple[Decision, ...]:
    """The equally likely outcomes of the next chance event, in a fixed order: the deck's
    cards by number, one entry per physical token of the bag (items, then fertilizer,
    trowel, watering can), the category's two objectives. Empty unless chance decides."""
    if not state.pending:
        return ()
    op, arg = divmod(state.pending[0], 8)
    if op in (DEAL_PLANT, DRAW_PLANT):
        return _select(state.plant_deck, _PLANT_REVEAL_BYTES)
    if op in (DEAL_ROOM, DRAW_ROOM):
        return _select(state.room_deck, _ROOM_REVEAL_BYTES)
    if op == DRAW_TOKEN:
        outcomes: list[Decision] = []
        for token, count in enumerate(state.bag):
            if count:
                outcomes.extend((_TOKEN_REVEALS[token],) * count)
        return tuple(outcomes)
    return tuple(
        reveal for reveal in _OBJECTIVE_REVEALS[arg] if reveal[0].id not in state.objectives
    )


def reveal(state: VerdantState, revealed: str) -> VerdantState:
    """The state after chance reveals ``revealed`` (a card, token or objective id)."""
    if not state.pending:
        raise IllegalDecision("§2: no card or token is being drawn now")
    build = _Build(state)
    build.reveal(revealed)
    return build.freeze()


def _check_seat_turn(state: VerdantState) -> None:
    if state.pending:
        raise IllegalDecision("§3: a card or token is being drawn; chance decides now")
    if state.phase == OVER:
        raise IllegalDecision("§5: the game is over")


def advance(state: VerdantState, step: Step) -> VerdantState:
    """The state after the deciding seat's one ``step`` (the turn goes on; see :func:`finish`)."""
    _check_seat_turn(state)
    build = _Build(state)
    build.step(step)
    return build.freeze()


def finish(state: VerdantState) -> VerdantState:
    """The state after the deciding seat ends its turn (raises when it may not yet)."""
    _check_seat_turn(state)
    if state.phase == SETUP:
        raise IllegalDecision("§2.2: choose where your first room lies")
    build = _Build(state)
    build.finish()
    return build.freeze()


def apply_decision(state: VerdantState, decision: Sequence[Step]) -> VerdantState:
    """A seat's whole decision: its steps up to and including the first revealing one
    (the rest ignored, spec §3); without one the decision ends the turn. A failing step
    raises ``IllegalDecision`` with its ``index``."""
    _check_seat_turn(state)
    build = _Build(state)
    setup = state.phase == SETUP
    if setup and len(decision) != 1:
        raise IllegalDecision("§2.2: the setup decision is one step: where the room lies")
    for index, step in enumerate(decision):
        try:
            build.step(step)
        except IllegalDecision as error:
            raise IllegalDecision(str(error), index=index) from None
        if setup or type(step) in (ReplaceCards, ReplaceTokens):
            return build.freeze()
    build.finish()
    return build.freeze()


def legal_picks(state: VerdantState) -> tuple[Pick, ...]:
    """The picks the deciding seat may make now (§4.2), token columns after a split included."""
    part = state.part
    if state.pending or state.phase != PLAY or part is None or part.kind >= 0:
        return ()
    home = state.seats[state.seat].home
    m = state.market
    picks: list[Pick] = []
    for kind, cards in ((0, m.plants), (1, m.rooms)):
        if not legal_spots(home, kind == 0):
            continue
        for column in range(COLUMNS):
            if cards[column] < 0:
                continue
            picks.append(_PICKS[column][kind][column])
            if part.split:
                picks.extend(
                    _PICKS[column][kind][other] for other in range(COLUMNS) if other != column
                )
    return tuple(picks)


_PICKS: Final = tuple(
    tuple(
        tuple(
            Pick(column, KINDS[kind], None if other == column else other)
            for other in range(COLUMNS)
        )
        for kind in range(2)
    )
    for column in range(COLUMNS)
)
_PLACES: Final = tuple(Place(_coord(cell)) for cell in range(CELLS))
_GROWS: Final = tuple(Grow(_coord(cell)) for cell in range(CELLS))
_PLACE_BYTES: Final = _byte_table(_PLACES)
_GROW_BYTES: Final = _byte_table(_GROWS)
_SETUP_STEPS: Final = tuple(Setup(side) for side in SIDES)
_SPLIT: Final = Split()
_STORE: Final = Store()
_DISCARDS: Final = {"taken": Discard("taken"), "stored": Discard("stored")}


@cache
def _card_subsets(cards: tuple[tuple[int, Kind], ...]) -> tuple[ReplaceCards, ...]:
    return tuple(
        ReplaceCards(tuple(card for bit, card in enumerate(cards) if subset >> bit & 1))
        for subset in range(1, 1 << len(cards))
    )


@cache
def _token_subsets(columns: tuple[int, ...]) -> tuple[ReplaceTokens, ...]:
    return tuple(
        ReplaceTokens(tuple(column for bit, column in enumerate(columns) if subset >> bit & 1))
        for subset in range(1, 1 << len(columns))
    )


def _uses(state: VerdantState, home: Home, ref: TokenRef, token: int) -> list[Use]:
    """Every use of ``token`` (named ``ref``) on ``home``."""
    rooms = _bits(home.occupied & ROOM_CELLS_MASK)
    if token < FIRST_NURTURE:
        return [Use(ref, (_coord(c),)) for c in rooms if home.items[c] < 0]
    growing = [_coord(c) for c in _bits(home.occupied & PLANT_CELLS_MASK & ~home.complete)]
    if token == WATERING_CAN and state.variant != SIMPLIFIED:
        return [Use(ref, (_coord(c),)) for c in rooms]
    if token == TROWEL and state.variant != SIMPLIFIED:
        return [Use(ref, spots) for size in (1, 2, 3) for spots in combinations(growing, size)]
    return [Use(ref, (spot,)) for spot in growing]


def legal_steps(state: VerdantState) -> tuple[Step, ...]:
    """Every step the deciding seat may take next (empty when chance decides or the game
    is over). 1a/1b list every subset. Whether the turn may end now: :func:`can_finish`."""
    if state.pending or state.phase == OVER:
        return ()
    if state.phase == SETUP:
        return _SETUP_STEPS
    part = state.part
    assert part is not None
    mine = state.seats[state.seat]
    home = mine.home
    steps: list[Step] = []
    thumbs = state.variant != SIMPLIFIED and mine.thumbs >= THUMB_COST
    if part.kind < 0:
        if thumbs:
            m = state.market
            cards = []
            for column in range(COLUMNS):
                if m.plants[column] >= 0 and not m.plant_thumbs[column]:
                    cards.append((column, KINDS[0]))
                if m.rooms[column] >= 0 and not m.room_thumbs[column]:
                    cards.append((column, KINDS[1]))
            if cards:
                steps.extend(_card_subsets(tuple(cards)))
            columns = tuple(column for column in range(COLUMNS) if m.tokens[column] >= 0)
            if columns:
                steps.extend(_token_subsets(columns))
            if not part.split:
                steps.append(_SPLIT)
        steps.extend(legal_picks(state))
    elif part.placed < 0:
        steps.extend(_select(legal_spots(home, part.kind == 0), _PLACE_BYTES))
    else:
        if part.taken_at in (HAND, STORED):
            if part.taken_at == HAND:
                steps.append(_STORE)
            steps.extend(_uses(state, home, "taken", part.taken))
            steps.append(_DISCARDS["taken"])
        if part.old_at in (STORED, DISPLACED):
            steps.extend(_uses(state, home, "stored", part.old))
            steps.append(_DISCARDS["stored"])
    if thumbs:
        steps.extend(_select(home.occupied & PLANT_CELLS_MASK & ~home.complete, _GROW_BYTES))
    return tuple(steps)


def steps_by_kind(state: VerdantState) -> dict[str, list[Step]]:
    """:func:`legal_steps` grouped by the kind of step (its type's name), the kinds in name
    order: a policy that draws a kind first is not drowned by the 255 ways of 1a."""
    grouped: dict[str, list[Step]] = {}
    for step in legal_steps(state):
        grouped.setdefault(type(step).__name__, []).append(step)
    return dict(sorted(grouped.items()))


def can_finish(state: VerdantState) -> bool:
    """Whether the deciding seat's turn may end now: its card is placed, or it picked
    nothing and no legal pick exists (a pass)."""
    part = state.part
    if state.pending or state.phase != PLAY or part is None:
        return False
    if part.placed >= 0:
        return True
    return part.kind < 0 and not _any_pick(state.market, state.seats[state.seat].home)


def turns_left(state: VerdantState) -> tuple[int, ...]:
    """Each seat's turns still to play (13 each, §4)."""
    players, done = state.players, state.turn
    return tuple(
        TURNS_EACH - max(0, (done - seat + players - 1) // players) for seat in range(players)
    )


def turn_number(state: VerdantState) -> int:
    """The turn being played, counted from 1 over all seats; the setup belongs to turn 1 and
    a turn's refill to that turn."""
    if state.phase == PLAY and state.part is not None:
        return state.turn + 1
    return max(state.turn, 1)


def view_of(state: VerdantState, seat: int) -> VerdantView:
    """What ``seat`` may see (spec §3): everything but the decks' contents."""
    return VerdantView(
        seat=seat,
        players=state.players,
        variant=state.variant,
        phase=state.phase,
        to_decide=to_decide(state),
        turn=turn_number(state),
        current=state.seat,
        turns_left=turns_left(state),
        seats=state.seats,
        market=state.market,
        plant_deck=state.plant_deck.bit_count(),
        room_deck=state.room_deck.bit_count(),
        plant_discard=tuple(_bits(state.plant_discard)),
        room_discard=tuple(_bits(state.room_discard)),
        bag=state.bag,
        pots=state.pots,
        objectives=state.objectives,
        part=state.part,
        pending=state.pending,
        limbo_plants=tuple(_bits(state.limbo_plants)),
        limbo_rooms=tuple(_bits(state.limbo_rooms)),
        limbo_tokens=state.limbo_tokens,
        spent=state.spent,
    )


def _mask(cards: Sequence[int]) -> int:
    mask = 0
    for card in cards:
        if card >= 0:
            mask |= 1 << card
    return mask


def state_from_view(view: VerdantView) -> VerdantState:
    """The state ``view`` was taken from: each deck holds exactly the cards of its type
    seen nowhere (homes, market, discard piles, replaced cards, a card in hand)."""
    seen_plants = _mask(view.market.plants) | _mask(view.plant_discard) | _mask(view.limbo_plants)
    seen_rooms = _mask(view.market.rooms) | _mask(view.room_discard) | _mask(view.limbo_rooms)
    for mine in view.seats:
        for cell in _bits(mine.home.occupied):
            if IS_PLANT_CELL[cell]:
                seen_plants |= 1 << mine.home.cards[cell]
            else:
                seen_rooms |= 1 << mine.home.cards[cell]
    part = view.part
    if part is not None and part.kind >= 0 and part.placed < 0:
        if part.kind == 0:
            seen_plants |= 1 << part.card
        else:
            seen_rooms |= 1 << part.card
    plant_deck = ALL_CARDS & ~seen_plants
    room_deck = ALL_CARDS & ~seen_rooms
    if plant_deck.bit_count() != view.plant_deck or room_deck.bit_count() != view.room_deck:
        raise ValueError("the view's deck sizes do not match the cards it shows")
    return VerdantState(
        players=view.players,
        variant=view.variant,
        seats=view.seats,
        market=view.market,
        plant_deck=plant_deck,
        room_deck=room_deck,
        plant_discard=_mask(view.plant_discard),
        room_discard=_mask(view.room_discard),
        bag=view.bag,
        pots=view.pots,
        objectives=view.objectives,
        phase=view.phase,
        seat=view.current,
        turn=_finished_turns(view),
        part=view.part,
        pending=view.pending,
        limbo_plants=_mask(view.limbo_plants),
        limbo_rooms=_mask(view.limbo_rooms),
        limbo_tokens=view.limbo_tokens,
        spent=view.spent,
    )


def _finished_turns(view: VerdantView) -> int:
    return view.players * TURNS_EACH - sum(view.turns_left)
