"""The Monte Carlo bot's playouts: a fast policy for every seat, and games played on with it.

A playout takes a state, draws every card and token still to come uniformly from what is
unseen (exactly as the referee's chance seat does: the rules list the equally likely
draws), and lets every seat play :func:`fast_decision` for a number of turns or to the
end. The policy must be cheap (a four-player game takes it a few milliseconds), so it
judges each pick and spot with table lookups instead of trying them on the rules: the
verdancy the card's light matches give (a plant that completes is worth its points and
the next pot), the rooms next to plants of their colour, a colour new to the home (the
fifth completes a set), the thumbs on the card, and what the column's token can do (an
item in the room just placed included). Then it uses the stored token and the taken one
where they do most, or stores the taken one, and spends its thumbs on grows that complete
plants. A little seeded noise breaks ties, so that playouts differ.
"""

from __future__ import annotations

import random
from typing import Final

from bots.verdant.value import next_pot, points, value
from referee.games.base import CHANCE
from referee.games.verdant import rules
from referee.games.verdant.cards import (
    FERTILIZER,
    FIRST_NURTURE,
    PLANT_COLOUR,
    PLANT_LIGHTS,
    PLANT_NEEDS,
    PLANT_POINTS,
    ROOM_COLOUR,
    ROOM_SIDE_LIGHT,
    TOKEN_COLOUR,
    TOKEN_MOTIF,
    TROWEL,
    WATERING_CAN,
    Side,
)
from referee.games.verdant.scoring import (
    COLOUR_SET_POINTS,
    MOTIF_POINTS,
    SIMPLIFIED_PLANT_POINTS,
)
from referee.games.verdant.state import (
    CELL_X,
    CELL_Y,
    IS_PLANT_CELL,
    NEIGHBOURS,
    PLANT_CELLS_MASK,
    ROOM_CELLS_MASK,
    SETUP,
    SIMPLIFIED,
    Home,
    VerdantState,
    cells_of,
)
from referee.games.verdant.steps import Decision, Grow, Pick, Place, Reveal, Setup, Step, Store, Use

NOISE: Final = 0.3
"""Up to this much seeded noise is added to each option, so that playouts differ."""
PROGRESS: Final = 0.6
"""The share of a plant's points (and pot) that reaching a share of its needs is worth."""
THUMB: Final = 0.5
"""What a green thumb taken with a card is worth."""
THUMB_COST: Final = 2
"""Green thumbs a thumb action costs (§4.1)."""
NEW_COLOUR: Final = 0.3
"""What a card of a colour not yet in the home is worth toward the five colours."""
USE_THRESHOLD: Final = 0.5
"""The least gain for which the policy spends a token rather than keep it (or let it go)."""
VERDANCY_POINT: Final = 0.5
"""What one verdancy on an incomplete plant scores at the end (1 point per 2, V6)."""


class _Home:
    """One seat's home as the fast policy reads it, with the numbers of its turn."""

    __slots__ = ("home", "motifs", "plant_colours", "pot", "room_colours", "simplified")

    def __init__(self, state: VerdantState, home: Home) -> None:
        self.home = home
        self.pot = next_pot(state)
        self.simplified = state.variant == SIMPLIFIED
        self.motifs = {TOKEN_MOTIF[item] for item in home.items if item >= 0}
        self.plant_colours: set[int] = set()
        self.room_colours: set[int] = set()
        for cell in cells_of(home.occupied):
            if IS_PLANT_CELL[cell]:
                self.plant_colours.add(PLANT_COLOUR[home.cards[cell]])
            else:
                self.room_colours.add(ROOM_COLOUR[home.cards[cell]])

    def motif_gain(self, token: int) -> int:
        """What placing the item ``token`` adds to the motifs' score (V7)."""
        count = len(self.motifs)
        if TOKEN_MOTIF[token] in self.motifs or count + 1 >= len(MOTIF_POINTS):
            return 0
        return MOTIF_POINTS[count + 1] - MOTIF_POINTS[count]

    @staticmethod
    def colour_gain(colours: set[int], colour: int) -> float:
        """What one more card of ``colour`` is worth toward the five colours (§5.6)."""
        if colour in colours:
            return 0.0
        return COLOUR_SET_POINTS if len(colours) == 4 else NEW_COLOUR

    def worth(self, plant: int) -> int:
        """What the plant card ``plant`` scores once complete, with its pot."""
        if self.simplified:
            return SIMPLIFIED_PLANT_POINTS
        return PLANT_POINTS[plant] + self.pot

    def grow(self, cell: int, amount: int) -> float:
        """What ``amount`` verdancy on the plant at ``cell`` is worth (0 when complete)."""
        home = self.home
        if home.complete >> cell & 1:
            return 0.0
        plant = home.cards[cell]
        return self.grow_card(plant, home.verdancy[cell], amount)

    def grow_card(self, plant: int, verdancy: int, amount: int) -> float:
        """What ``amount`` verdancy is worth to ``plant`` holding ``verdancy``."""
        needs = PLANT_NEEDS[plant]
        worth = self.worth(plant)
        if verdancy + amount >= needs:
            return worth - VERDANCY_POINT * verdancy
        return amount * (VERDANCY_POINT + PROGRESS * worth / needs)

    def place(self, cell: int, card: int, plant: bool) -> float:
        """What putting ``card`` on ``cell`` gains: light matches and matching colours."""
        home = self.home
        cards, items = home.cards, home.items
        gain = 0.0
        if plant:
            lights, colour, matches = PLANT_LIGHTS[card], PLANT_COLOUR[card], 0
            for direction, neighbour in NEIGHBOURS[cell]:
                room = cards[neighbour]
                if room < 0:
                    continue
                if ROOM_SIDE_LIGHT[room][(direction + 2) % 4] & lights:
                    matches += 1
                if ROOM_COLOUR[room] == colour:
                    item = items[neighbour]
                    gain += 2 if item >= 0 and TOKEN_COLOUR[item] == colour else 1
            if matches:
                gain += self.grow_card(card, 0, matches)
            return gain + self.colour_gain(self.plant_colours, colour)
        sides, colour = ROOM_SIDE_LIGHT[card], ROOM_COLOUR[card]
        for direction, neighbour in NEIGHBOURS[cell]:
            other = cards[neighbour]
            if other < 0:
                continue
            if sides[direction] & PLANT_LIGHTS[other]:
                gain += self.grow(neighbour, 1)
            if PLANT_COLOUR[other] == colour:
                gain += 1
        return gain + self.colour_gain(self.room_colours, colour)

    def item_in_new_room(self, cell: int, room: int, token: int) -> float:
        """What the item ``token`` gains in the room card ``room`` about to go to ``cell``."""
        gain = float(self.motif_gain(token))
        colour = ROOM_COLOUR[room]
        if TOKEN_COLOUR[token] == colour:
            cards = self.home.cards
            gain += sum(
                1
                for _, neighbour in NEIGHBOURS[cell]
                if cards[neighbour] >= 0 and PLANT_COLOUR[cards[neighbour]] == colour
            )
        return gain

    def growing(self) -> list[int]:
        """The cells of the incomplete plants."""
        home = self.home
        return cells_of(home.occupied & PLANT_CELLS_MASK & ~home.complete)

    def use(self, token: int) -> tuple[float, tuple[tuple[int, int], ...]]:
        """The best use of ``token`` in the home: what it gains, and where (``()``: none)."""
        home = self.home
        best: tuple[float, tuple[tuple[int, int], ...]] = (0.0, ())
        if token < FIRST_NURTURE:
            new_motif = self.motif_gain(token)
            colour = TOKEN_COLOUR[token]
            for room in cells_of(home.occupied & ROOM_CELLS_MASK):
                if home.items[room] >= 0:
                    continue
                gain = float(new_motif)
                if ROOM_COLOUR[home.cards[room]] == colour:
                    gain += sum(
                        1
                        for _, neighbour in NEIGHBOURS[room]
                        if home.cards[neighbour] >= 0
                        and PLANT_COLOUR[home.cards[neighbour]] == colour
                    )
                if gain > best[0]:
                    best = (gain, ((CELL_X[room], CELL_Y[room]),))
            return best
        growing = self.growing()
        if not growing:
            return best
        if self.simplified:
            cell = max(growing, key=lambda c: self.grow(c, 99))
            return self.grow(cell, 99), ((CELL_X[cell], CELL_Y[cell]),)
        if token == FERTILIZER:
            cell = max(growing, key=lambda c: self.grow(c, 3))
            return self.grow(cell, 3), ((CELL_X[cell], CELL_Y[cell]),)
        if token == TROWEL:
            ranked = sorted(growing, key=lambda c: -self.grow(c, 1))[:3]
            gain = sum(self.grow(c, 1) for c in ranked)
            return gain, tuple((CELL_X[c], CELL_Y[c]) for c in ranked)
        assert token == WATERING_CAN
        for room in cells_of(home.occupied & ROOM_CELLS_MASK):
            gain = sum(
                self.grow(neighbour, 1)
                for _, neighbour in NEIGHBOURS[room]
                if home.cards[neighbour] >= 0
            )
            if gain > best[0]:
                best = (gain, ((CELL_X[room], CELL_Y[room]),))
        return best


def _side(state: VerdantState, rng: random.Random) -> Decision:
    """A side whose light matches the first plant (§2.2), if any."""
    part = state.part
    assert part is not None
    home = state.seats[state.seat].home
    plant = home.cards[_origin(home)]
    sides = ROOM_SIDE_LIGHT[part.card]
    names: tuple[Side, ...] = ("north", "east", "south", "west")
    matching = [
        name
        for direction, name in enumerate(names)
        if sides[(direction + 2) % 4] & PLANT_LIGHTS[plant]
    ]
    if not matching:
        return (Setup(rng.choice(names)),)
    return (Setup(rng.choice(matching)),)


def _origin(home: Home) -> int:
    return cells_of(home.occupied & PLANT_CELLS_MASK)[0]


def fast_decision(state: VerdantState, rng: random.Random) -> Decision:
    """A cheap, sensible decision for the seat deciding in ``state`` (never revealing)."""
    if state.phase == SETUP:
        return _side(state, rng)
    mine = state.seats[state.seat]
    reader = _Home(state, mine.home)
    market = state.market
    token_worth = [0.0 if t < 0 else reader.use(t)[0] for t in market.tokens]
    best_value, best = -1.0, None
    for plant in (True, False):
        spots = cells_of(rules.legal_spots(mine.home, plant))
        if not spots:
            continue
        cards, thumbs = (
            (market.plants, market.plant_thumbs) if plant else (market.rooms, market.room_thumbs)
        )
        for column in range(4):
            card = cards[column]
            if card < 0:
                continue
            token = market.tokens[column]
            item = not plant and 0 <= token < FIRST_NURTURE
            extra = thumbs[column] * THUMB
            for cell in spots:
                worth = token_worth[column]
                if item:
                    worth = max(worth, reader.item_in_new_room(cell, card, token))
                value = reader.place(cell, card, plant) + worth + extra + rng.random() * NOISE
                if value > best_value:
                    best_value, best = value, (column, plant, cell)
    if best is None:
        return ()
    column, plant, cell = best
    steps: list[Step] = [
        Pick(column, "plant" if plant else "room"),
        Place((CELL_X[cell], CELL_Y[cell])),
    ]
    after = rules.advance(rules.advance(state, steps[0]), steps[1])
    part = after.part
    assert part is not None
    if mine.storage >= 0:
        gain, where = _Home(after, after.seats[after.seat].home).use(mine.storage)
        if where and gain > USE_THRESHOLD:
            steps.append(Use("stored", where))
            after = rules.advance(after, steps[-1])
    if part.taken >= 0:
        mine = after.seats[after.seat]
        gain, where = _Home(after, mine.home).use(part.taken)
        if where and gain > USE_THRESHOLD:
            steps.append(Use("taken", where))
            after = rules.advance(after, steps[-1])
        elif mine.storage < 0:
            steps.append(Store())
            after = rules.advance(after, steps[-1])
    steps += _grows(after)
    return tuple(steps)


def _grows(state: VerdantState) -> list[Step]:
    """Grows (1d) while the thumbs last and each completes a plant, the best plants first."""
    if state.variant == SIMPLIFIED:
        return []
    mine = state.seats[state.seat]
    home, thumbs = mine.home, mine.thumbs
    ready = [
        cell
        for cell in cells_of(home.occupied & PLANT_CELLS_MASK & ~home.complete)
        if home.verdancy[cell] + 1 >= PLANT_NEEDS[home.cards[cell]]
    ]
    ready.sort(key=lambda cell: -PLANT_POINTS[home.cards[cell]])
    return [Grow((CELL_X[cell], CELL_Y[cell])) for cell in ready[: thumbs // THUMB_COST]]


def play_out(state: VerdantState, rng: random.Random, turns: int | None = None) -> VerdantState:
    """The game played on from ``state``, draws from ``rng``, every seat on the fast policy:
    to its end, or until ``turns`` more turns are finished (then before the next seat's
    decision, the refill dealt)."""
    last = None if turns is None else state.turn + turns
    while (actor := rules.to_decide(state)) is not None:
        if actor == CHANCE:
            outcomes = rules.chance_outcomes(state)
            (drawn,) = outcomes[int(rng.random() * len(outcomes))]
            assert isinstance(drawn, Reveal)
            state = rules.reveal(state, drawn.id)
        elif last is not None and state.turn >= last:
            break
        else:
            state = rules.apply_decision(state, fast_decision(state, rng))
    return state


def outlook(state: VerdantState, seat: int) -> float:
    """What ``seat`` can count on where a playout stopped: its points when the game is
    over, else its points and what its home promises (:func:`~bots.verdant.value.value`).

    Only the seat's own outlook: what a decision changes for the others is small beside
    the noise their playouts add, so judging by one's own points compares decisions more
    sharply (and the most points is what takes first place)."""
    return (points if rules.to_decide(state) is None else value)(state, seat)
