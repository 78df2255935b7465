"""Verdant behind the generic :class:`~referee.games.base.Game` interface.

Seats are 0…N-1 in turn order (the spec's seats 1…N); chance is the
:data:`~referee.games.base.CHANCE` seat and reveals every card, token and objective
(:func:`~referee.games.verdant.rules.chance_outcomes`). A decision is a tuple of
steps (:mod:`~referee.games.verdant.steps`), written as one word by
:meth:`VerdantGame.format_decision`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from referee.errors import IllegalDecision, SettingsError
from referee.games.base import CHANCE, GameSettings, Outcome
from referee.games.verdant import rules, scoring
from referee.games.verdant.cards import PLANTS, ROOMS, TOKENS
from referee.games.verdant.state import (
    OVER,
    PHASE_NAMES,
    VARIANTS,
    VerdantState,
    VerdantView,
)
from referee.games.verdant.steps import Decision, Reveal, format_decision, parse_decision

DEFAULT_VARIANT = "standard"


class VerdantGame:
    """The Verdant rules for the driver (see :class:`referee.games.base.Game`)."""

    name: ClassVar[str] = "verdant"
    seat_names: ClassVar[tuple[str, ...] | None] = None
    min_players: ClassVar[int] = 1
    max_players: ClassVar[int] = 5
    scored_in_points: ClassVar[bool] = True
    alternating: ClassVar[bool] = False

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Verdant's one option, ``variant``: ``standard`` (default), ``simplified`` or
        ``advanced`` (spec §6)."""
        unknown = sorted(set(options) - {"variant"})
        if unknown:
            raise SettingsError(f"unknown Verdant option {unknown[0]!r} (known: variant)")
        variant = options.get("variant", DEFAULT_VARIANT)
        if isinstance(variant, str):
            variant = variant.strip().lower()
        if variant not in VARIANTS:
            raise SettingsError(
                f"variant must be standard, simplified or advanced, got {variant!r}"
            )
        return {"variant": variant}

    def start(self, settings: GameSettings) -> VerdantState:
        """The state before the first deal (the driver's chance seat deals everything)."""
        if not self.min_players <= settings.players <= self.max_players:
            raise SettingsError(f"Verdant is played by 1 to 5 players, not {settings.players}")
        if settings.start is not None:
            raise SettingsError("Verdant has no start positions")
        variant = self.check_options(settings.options)["variant"]
        return rules.start(settings.players, VARIANTS.index(variant))

    def to_decide(self, state: VerdantState) -> int | None:
        """The deciding seat, ``CHANCE`` while something is dealt, ``None`` at the end."""
        return rules.to_decide(state)

    def chance_outcomes(self, state: VerdantState) -> Sequence[Decision]:
        """The equally likely reveals of the next draw (one per card, one per token)."""
        return rules.chance_outcomes(state)

    def view(self, state: VerdantState, seat: int) -> VerdantView:
        """Everything public (spec §3): the decks only as their sizes."""
        return rules.view_of(state, seat)

    def observe(
        self, state: VerdantState, actor: int, decision: Decision, observer: int
    ) -> Decision:
        """Every decision in full: all Verdant decisions and reveals are public."""
        return decision

    def apply(self, state: VerdantState, seat: int, decision: Decision) -> VerdantState:
        """The state after ``seat``'s decision (or chance's reveal)."""
        actor = rules.to_decide(state)
        if actor is None:
            raise IllegalDecision("§5: the game is over")
        if seat != actor:
            who = "chance" if actor == CHANCE else f"seat {actor + 1}"
            raise IllegalDecision(f"§3: {who} decides now, not {_who(seat)}")
        if not isinstance(decision, tuple):
            raise IllegalDecision(
                f"a Verdant decision is a tuple of steps, not {type(decision).__name__}"
            )
        if seat == CHANCE:
            if len(decision) != 1 or not isinstance(decision[0], Reveal):
                raise IllegalDecision("V11: a chance decision is one revealed card or token")
            return rules.reveal(state, decision[0].id)
        return rules.apply_decision(state, decision)

    def turn_number(self, state: VerdantState) -> int:
        """The turn being played, counted from 1 over all seats (setup: turn 1)."""
        return rules.turn_number(state)

    def outcome(self, state: VerdantState) -> Outcome | None:
        """Scores, places (V8) and each seat's breakdown once all turns are played."""
        if state.phase != OVER:
            return None
        breakdowns = tuple(scoring.breakdown(state, seat) for seat in range(state.players))
        totals = tuple(sum(points for _, points in breakdown) for breakdown in breakdowns)
        if state.players == 1:
            return Outcome(
                scores=totals,
                places=(1,),
                reason=f"solo score {totals[0]}",
                breakdown=breakdowns,
            )
        completes = tuple(scoring.complete_plants(seat.home) for seat in state.seats)
        places = scoring.places(totals, completes)
        winners = [seat for seat, place in enumerate(places) if place == 1]
        best = totals[winners[0]]
        if len(winners) == 1:
            reason = f"seat {winners[0] + 1} wins with {best} points"
        else:
            named = ", ".join(str(seat + 1) for seat in winners[:-1])
            reason = f"seats {named} and {winners[-1] + 1} share first place with {best} points"
        return Outcome(scores=totals, places=places, reason=reason, breakdown=breakdowns)

    def format_decision(self, decision: Decision) -> str:
        """The decision in the record notation (:mod:`~referee.games.verdant.steps`)."""
        return format_decision(decision)

    def parse_decision(self, text: str) -> Decision:
        """Inverse of :meth:`format_decision` (raises ``RuleError`` on bad notation)."""
        return parse_decision(text)

    def notation(self, state: VerdantState) -> str:
        """One line of public facts: variant, players, phase, turn, the market, deck sizes,
        bag size and pots left, e.g. ``standard players=3 turn=4 seat=1 market=P03:trowel:R11,
        … decks=48/49 bag=79 pots=4/4/4``."""
        m = state.market
        columns = ",".join(
            ":".join(
                (
                    PLANTS[m.plants[c]].id if m.plants[c] >= 0 else "-",
                    TOKENS[m.tokens[c]].id if m.tokens[c] >= 0 else "-",
                    ROOMS[m.rooms[c]].id if m.rooms[c] >= 0 else "-",
                )
            )
            for c in range(4)
        )
        phase = PHASE_NAMES[state.phase]
        return (
            f"{VARIANTS[state.variant]} players={state.players} {phase}"
            f" turn={rules.turn_number(state)} seat={state.seat + 1} market={columns}"
            f" decks={state.plant_deck.bit_count()}/{state.room_deck.bit_count()}"
            f" bag={sum(state.bag)} pots={'/'.join(map(str, state.pots))}"
        )

    def rule_settings(self, state: VerdantState) -> Mapping[str, Any]:
        """The settings in force: the variant."""
        return {"variant": VARIANTS[state.variant]}

    def settings_tags(self, state: VerdantState) -> Mapping[str, str]:
        """The record tag of the variant (``VerdantVariant``: PGN's ``Variant`` names the game)."""
        return {"VerdantVariant": VARIANTS[state.variant]}


def _who(seat: int) -> str:
    return "chance" if seat == CHANCE else f"seat {seat + 1}"
