"""verdant-mc: Monte Carlo over the unseen cards — the strong bundled Verdant bot.

What a seat cannot see is only which unseen card or token comes next: the view holds
everything else, and the rules rebuild the exact state from it (the decks have no order;
:func:`~referee.games.verdant.rules.chance_outcomes` lists the equally likely draws). So
for each decision the bot:

1. lists its whole-turn plans (:func:`~bots.verdant.plans.turn_plans`: each split, pick
   and spot, with tokens and grows chosen to raise its points plus what its home
   promises, :func:`~bots.verdant.value.value`), and keeps the :data:`CANDIDATES` that
   promise most, with the greedy bot's choice among them (in set-up: the four sides);
2. plays each candidate on with sampled draws: every card and token still to come is
   drawn uniformly from the unseen ones, every seat (itself included) plays the fast
   policy of :mod:`bots.verdant.playout`, for two rounds of turns by default (every
   seat's next two turns; to the end of the game once that is near), and judges
   the candidate by the bot's points and promise where the playout stops
   (:func:`~bots.verdant.playout.outlook`). Candidates share each round's random
   numbers, so they are compared on the same luck;
3. halves the field after rounds 4, 8, 16, … (the worse half by mean result goes), and
   when the time is up plays the candidate with the best mean result.

Time: each decision gets ``remaining / (turns left + 1)`` plus most of the increment,
never more than half of what is left nor :data:`MAX_THINK` seconds
(:meth:`~bots.sdk.Clock.budget`). It never replaces market cards or tokens (1a, 1b).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Final

from bots.sdk import Clock, Situation, VerdantBot, main
from bots.verdant.plans import Plan, greedy_key, plans_for
from bots.verdant.playout import outlook, play_out
from bots.verdant.value import value
from referee.games.verdant import rules
from referee.games.verdant.state import SETUP, VerdantState
from referee.games.verdant.steps import Step

CANDIDATES: Final = 8
"""How many of the plans that promise most are played out (besides the greedy choice)."""
HORIZON: Final = 2
"""How many rounds of turns (one turn of every seat) a playout plays before it judges
(in four-player games against the greedy bot, two did better than one, three or the
whole game)."""
MAX_THINK: Final = 10.0
"""The most seconds one decision may take, however much time is left."""
INCREMENT_SHARE: Final = 0.8
"""How much of the increment a decision may spend on top of its share of the clock."""
FIRST_CUT: Final = 4
"""The round after which the field is first halved (then after every doubling)."""


def _after(state: VerdantState, plan: Plan) -> VerdantState:
    """The state once ``plan`` is played: its turn ended (set-up plans are whole already)."""
    return plan.state if state.phase == SETUP else rules.finish(plan.state)


def candidates(state: VerdantState, count: int) -> list[Plan]:
    """The ``count`` plans that promise most, best first, and the greedy bot's choice."""
    plans = sorted(plans_for(state, value), key=lambda plan: -plan.value)
    chosen = plans[:count]
    greedy = max(plans_for(state, greedy_key), key=lambda plan: plan.value, default=None)
    if greedy is not None and all(plan.steps != greedy.steps for plan in chosen):
        chosen.append(greedy)
    return chosen


class MonteCarloBot(VerdantBot):
    """Plays out its most promising plans with sampled draws and keeps the best on average.

    ``rounds`` fixes how many rounds of playouts each decision gets, whatever the clock
    says (``None``: as many as the time budget allows); seeded, that makes the bot's play
    the same on any machine, for tests and measurements. ``horizon`` is how many rounds
    of turns a playout plays (``None``: to the end of the game); ``candidates`` how many
    plans are played out.
    """

    name = "verdant-mc"
    author = "ivy-referee"
    version = "1.0"

    def __init__(
        self,
        seed: int | None = None,
        rounds: int | None = None,
        horizon: int | None = HORIZON,
        candidates: int = CANDIDATES,
    ) -> None:
        super().__init__(seed)
        self.rounds = rounds
        self.horizon = horizon
        self.candidates = candidates

    def choose(self, situation: Situation, clock: Clock) -> Sequence[Step]:
        """The candidate plan with the best mean result in playouts, within the budget."""
        started = time.perf_counter()
        state = situation.state
        seat = state.seat
        plans = candidates(state, self.candidates)
        if len(plans) < 2:
            return plans[0].steps if plans else ()
        budget = clock.budget(
            turns_to_go=situation.view.turns_left[seat] + 1,
            increment_share=INCREMENT_SHARE,
            cap=MAX_THINK,
        )
        deadline = started + budget
        turns = None if self.horizon is None else self.horizon * state.players
        starts = [_after(state, plan) for plan in plans]
        totals = [0.0] * len(plans)
        counts = [0] * len(plans)
        alive = list(range(len(plans)))
        rounds = 0
        while self._more(rounds, deadline):
            seed = self.rng.getrandbits(64)
            for index in alive:
                end = play_out(starts[index], random.Random(seed), turns)
                totals[index] += outlook(end, seat)
                counts[index] += 1
                if self.rounds is None and time.perf_counter() >= deadline:
                    break
            rounds += 1
            if rounds >= FIRST_CUT and rounds & (rounds - 1) == 0 and len(alive) > 2:
                alive.sort(key=lambda index: -totals[index] / counts[index])
                alive = alive[: max(2, len(alive) // 2)]
        sampled = [index for index in alive if counts[index]]
        if not sampled:
            return plans[0].steps
        best = max(sampled, key=lambda index: totals[index] / counts[index])
        self.log(
            f"{rounds} rounds, {sum(counts)} playouts in {time.perf_counter() - started:.2f} s;"
            f" best {totals[best] / counts[best]:.1f} points expected"
        )
        return plans[best].steps

    def _more(self, rounds: int, deadline: float) -> bool:
        """Whether to play another round of playouts."""
        if self.rounds is not None:
            return rounds < self.rounds
        return time.perf_counter() < deadline


if __name__ == "__main__":
    main(MonteCarloBot)
