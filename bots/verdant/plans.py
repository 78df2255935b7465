"""Whole-turn plans for the Verdant bots, and the numbers they judge a home by.

A *plan* is one decision that ends a turn without revealing anything: perhaps a split
(1c), a pick, a place, what becomes of the taken token and of the stored one, then grows
(1d) while they pay. :func:`turn_plans` lists one plan per split, pick and spot, each
with its tokens and grows chosen one after the other to please a *key* (a number for a
state, higher is better), together with the state it leads to before the turn ends (the
seat's home is final then: the end of a turn only discards and refills the market).

The greedy bot's key is a seat's points now (spec §5, the referee's own scoring), with
what its home promises (:func:`~bots.verdant.value.future`) as a tie-break; the Monte
Carlo bot ranks its candidates by both added up (:func:`~bots.verdant.value.value`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bots.verdant.value import future, points
from referee.games.verdant import rules
from referee.games.verdant.state import SETUP, VerdantState
from referee.games.verdant.steps import Decision, Grow, Place, Split, Step, Store, Use

Key = Callable[[VerdantState, int], float]
"""How a bot likes a state for a seat (higher is better)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A decision that ends the turn, the state it leads to before the turn ends, and how
    much the key used to build it likes that state."""

    steps: Decision
    state: VerdantState
    value: float


def greedy_key(state: VerdantState, seat: int) -> float:
    """The greedy bot's key: the points now; what the home promises
    (:func:`~bots.verdant.value.future`) only breaks ties."""
    return points(state, seat) + future(state, seat) / 1000


def _improve(
    state: VerdantState, seat: int, steps: list[Step], options: Sequence[Step], key: Key
) -> VerdantState:
    """Take the one step of ``options`` that ``key`` likes better than taking none, if any;
    ``steps`` gets it appended."""
    best_state, best_value, best_step = state, key(state, seat), None
    for step in options:
        after = rules.advance(state, step)
        value = key(after, seat)
        if value > best_value:
            best_state, best_value, best_step = after, value, step
    if best_step is not None:
        steps.append(best_step)
    return best_state


def _finish_plan(state: VerdantState, seat: int, steps: list[Step], key: Key) -> Plan:
    """Complete a plan whose card is placed: the taken token (store, use or leave it to be
    discarded), then the stored one (use or keep), then grows one at a time while ``key``
    likes them better."""
    legal = rules.legal_steps(state)
    taken = [
        s for s in legal if isinstance(s, Store) or (isinstance(s, Use) and s.token == "taken")
    ]
    state = _improve(state, seat, steps, taken, key)
    stored = [s for s in rules.legal_steps(state) if isinstance(s, Use) and s.token == "stored"]
    state = _improve(state, seat, steps, stored, key)
    while True:
        grows = [s for s in rules.legal_steps(state) if isinstance(s, Grow)]
        before = len(steps)
        state = _improve(state, seat, steps, grows, key)
        if len(steps) == before:
            return Plan(tuple(steps), state, key(state, seat))


def turn_plans(state: VerdantState, key: Key) -> list[Plan]:
    """One plan per split (or none), pick and spot, tokens and grows chosen for ``key``
    (empty when the seat cannot pick: then its only decision is the pass ``()``)."""
    seat = state.seat
    starts: list[tuple[tuple[Step, ...], VerdantState]] = [((), state)]
    if Split() in rules.legal_steps(state):
        starts.append(((Split(),), rules.advance(state, Split())))
    plans: list[Plan] = []
    for prefix, start in starts:
        picks = rules.legal_picks(start)
        if prefix:  # a split is only worth its thumbs for a token from another column
            picks = tuple(pick for pick in picks if pick.token_column is not None)
        for pick in picks:
            picked = rules.advance(start, pick)
            for spot in _spots(picked):
                placed = rules.advance(picked, spot)
                plans.append(_finish_plan(placed, seat, [*prefix, pick, spot], key))
    return plans


def _spots(state: VerdantState) -> list[Place]:
    """Where the picked card may go."""
    return [step for step in rules.legal_steps(state) if isinstance(step, Place)]


def setup_plans(state: VerdantState, key: Key) -> list[Plan]:
    """The four setup choices (§2.2), each with the state after it."""
    seat = state.seat
    plans = []
    for step in rules.legal_steps(state):
        after = rules.apply_decision(state, (step,))
        plans.append(Plan((step,), after, key(after, seat)))
    return plans


def plans_for(state: VerdantState, key: Key) -> list[Plan]:
    """The plans of the seat deciding in ``state`` (setup or turn)."""
    if state.phase == SETUP:
        return setup_plans(state, key)
    return turn_plans(state, key)


def best_plan(plans: Sequence[Plan], tie: Callable[[], float]) -> Decision:
    """The steps of the plan with the highest value; ``tie()`` (a small random number)
    decides between equals. The pass ``()`` when there is no plan."""
    if not plans:
        return ()
    return max(plans, key=lambda plan: (plan.value, tie())).steps
