"""Verdant: each player builds a 5×3 home of plants and rooms (rules: ``docs/verdant-rules.md``).

- :mod:`~referee.games.verdant.cards` — colours, lights, the cards of V1, tokens, objectives;
- :mod:`~referee.games.verdant.state` — the state and the view, small immutable tuples;
- :mod:`~referee.games.verdant.steps` — the steps of a decision and their notation;
- :mod:`~referee.games.verdant.rules` — setup, turns, chance, legal steps (for bots);
- :mod:`~referee.games.verdant.scoring` — scores by category and places (§5, V6–V9);
- :mod:`~referee.games.verdant.game` — the :class:`~referee.games.base.Game` for the driver;
- :mod:`~referee.games.verdant.codec` — views and decisions in protocol messages;
- :mod:`~referee.games.verdant.render` — a view drawn for the terminal.

:data:`ENTRY` is Verdant's entry in the game registry (:mod:`referee.games`).
"""

from __future__ import annotations

from referee.games import GameEntry
from referee.games.verdant.cards import (
    COLOURS,
    LIGHTS,
    MOTIFS,
    OBJECTIVES,
    PLANTS,
    ROOMS,
    TOKENS,
    Plant,
    Room,
    Token,
    plant_by_id,
    room_by_id,
    token_by_id,
)
from referee.games.verdant.codec import CODEC, view_from_wire
from referee.games.verdant.game import VerdantGame
from referee.games.verdant.render import moves, render, render_public
from referee.games.verdant.rules import (
    advance,
    apply_decision,
    can_finish,
    chance_outcomes,
    finish,
    legal_picks,
    legal_spots,
    legal_steps,
    reveal,
    state_from_view,
    steps_by_kind,
    to_decide,
    turn_number,
    turns_left,
    view_of,
)
from referee.games.verdant.scoring import CATEGORIES, breakdown, home_breakdown, places
from referee.games.verdant.state import Home, Market, SeatState, TurnPart, VerdantState, VerdantView
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
    Use,
    format_decision,
    parse_decision,
)

ENTRY = GameEntry(
    rules=VerdantGame(),
    codec=CODEC,
    render=render,
    render_public=render_public,
    person_help=(
        "Setup: type north, east, south or west (where your room lies). A turn: steps joined"
        " by '/', e.g. pick:2r/place@1,0/use:taken@1,0 (pick column 2's room, place it at"
        " x=1 y=0, use the taken token on the card at 1,0). Steps: pick:<col><p|r>[:<token"
        " col>], place@x,y, store, use:taken@x,y[+x,y…], use:stored@x,y, discard:taken,"
        " discard:stored; thumb actions cards:0p+1r, tokens:0+3, split, grow@x,y (after"
        " cards:/tokens: you are asked again). 'pass' when no pick is possible."
    ),
    person_moves=moves,
)

__all__ = [
    "CATEGORIES",
    "CODEC",
    "COLOURS",
    "ENTRY",
    "LIGHTS",
    "MOTIFS",
    "OBJECTIVES",
    "PLANTS",
    "ROOMS",
    "TOKENS",
    "Decision",
    "Discard",
    "Grow",
    "Home",
    "Market",
    "Pick",
    "Place",
    "Plant",
    "ReplaceCards",
    "ReplaceTokens",
    "Reveal",
    "Room",
    "SeatState",
    "Setup",
    "Split",
    "Step",
    "Store",
    "Token",
    "TurnPart",
    "Use",
    "VerdantGame",
    "VerdantState",
    "VerdantView",
    "advance",
    "apply_decision",
    "breakdown",
    "can_finish",
    "chance_outcomes",
    "finish",
    "format_decision",
    "home_breakdown",
    "legal_picks",
    "legal_spots",
    "legal_steps",
    "parse_decision",
    "places",
    "plant_by_id",
    "render",
    "render_public",
    "reveal",
    "room_by_id",
    "state_from_view",
    "steps_by_kind",
    "to_decide",
    "token_by_id",
    "turn_number",
    "turns_left",
    "view_from_wire",
    "view_of",
]
