"""Verdant's board view: the public table (``assets/verdant.js`` draws it).

Everything of a Verdant state is public but the order of the decks (spec §3), so
the table a spectator sees is what every seat sees: the view a bot receives, in the
protocol's own shape (:func:`referee.games.verdant.codec.encode_view`), with each
home's score so far by category. The layout carries the catalogue of cards and
tokens (colour, lights, verdancy needed, points; a room's light on each side), so
the page can describe a card from its id alone.

A decision's changes are read off the states before and after it: the cards that
appeared in a home, the tokens that appeared in rooms, and the market columns whose
plant, token or room changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from referee.games import CHANCE, Game
from referee.games.verdant.cards import PLANTS, ROOMS, TOKENS
from referee.games.verdant.codec import encode_view
from referee.games.verdant.rules import view_of
from referee.games.verdant.scoring import home_breakdown
from referee.games.verdant.sentences import describe_decision
from referee.games.verdant.state import CELL_X, CELL_Y, VerdantState
from referee.viewer.views import Json


def _state(state: Any) -> VerdantState:
    assert isinstance(state, VerdantState)
    return state


@dataclass(frozen=True, slots=True)
class VerdantBoardView:
    """Verdant's :class:`~referee.viewer.views.BoardView`."""

    script: str = "verdant.js"

    def layout(self, game: Game[Any, Any], first: Any) -> Json:
        """The catalogue of plants, rooms and tokens, by id."""
        return {
            "plants": {
                plant.id: {
                    "colour": plant.colour,
                    "lights": sorted(plant.lights, key=("low", "medium", "bright").index),
                    "needs": plant.needs,
                    "points": plant.points,
                }
                for plant in PLANTS
            },
            "rooms": {
                room.id: {"colour": room.colour, "sides": list(room.sides)} for room in ROOMS
            },
            "tokens": {
                token.id: {"colour": token.colour, "motif": token.motif, "nurture": token.nurture}
                for token in TOKENS
            },
        }

    def state(self, game: Game[Any, Any], state: Any) -> Json:
        """The public table (a seat's view without the seat) and each home's score."""
        verdant = _state(state)
        table: Json = msgspec.to_builtins(encode_view(view_of(verdant, 0)))
        del table["seat"]
        table["bag"] = sum(table["bag"].values())  # its size: which tokens, anyone can count
        table["scores"] = [
            [list(part) for part in home_breakdown(seat.home, verdant.variant, verdant.objectives)]
            for seat in verdant.seats
        ]
        return table

    def changes(
        self, game: Game[Any, Any], before: Any, actor: int, decision: Any, after: Any
    ) -> Json:
        """Cards placed and items furnished in each home; market columns that changed."""
        start, end = _state(before), _state(after)
        placed: list[list[int]] = []
        furnished: list[list[int]] = []
        for seat, (old, new) in enumerate(zip(start.seats, end.seats, strict=True)):
            fresh = new.home.occupied & ~old.home.occupied
            for cell in range(len(new.home.cards)):
                if fresh >> cell & 1:
                    placed.append([seat, CELL_X[cell], CELL_Y[cell]])
                if new.home.items[cell] >= 0 and old.home.items[cell] != new.home.items[cell]:
                    furnished.append([seat, CELL_X[cell], CELL_Y[cell]])
        old_market, new_market = start.market, end.market
        columns = [
            column
            for column in range(len(new_market.plants))
            if (old_market.plants[column], old_market.tokens[column], old_market.rooms[column])
            != (new_market.plants[column], new_market.tokens[column], new_market.rooms[column])
        ]
        return {
            "chance": actor == CHANCE,
            "placed": placed,
            "furnished": furnished,
            "market": columns,
        }

    def sentence(self, game: Game[Any, Any], before: Any, actor: int, decision: Any) -> str | None:
        """The decision in words (:func:`~referee.games.verdant.sentences.describe_decision`),
        naming the cards and tokens of the table it was made on."""
        return describe_decision(decision, encode_view(view_of(_state(before), 0)))


VIEW = VerdantBoardView()
"""Verdant's board view, as :func:`referee.viewer.views.view_for` finds it."""
