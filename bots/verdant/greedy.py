"""verdant-greedy: the decision with the best immediate score.

Every turn it tries each pick (with and, when it has the thumbs, without a split) on each
spot the card may take, then, one after the other, what to do with the taken token
(store, use it, or let it go), with the stored one (use or keep), and grows (1d) while
one raises the score; it plays the plan whose home scores most right now (spec §5, as
the referee scores it). Ties go to the home that promises more (verdancy toward
complete plants, a token in storage, thumbs kept, free item slots:
:func:`~bots.verdant.value.future`), then to its seeded generator. It never replaces
market cards or tokens (that gains nothing at once). In setup it takes the side whose
light match scores.
"""

from __future__ import annotations

from collections.abc import Sequence

from bots.sdk import Clock, Situation, VerdantBot, main
from bots.verdant.plans import best_plan, greedy_key, plans_for
from referee.games.verdant.steps import Step


class GreedyBot(VerdantBot):
    """Plays the plan with the highest score now (ties: the better promise, then the seed)."""

    name = "verdant-greedy"
    author = "ivy-referee"
    version = "1.0"

    def choose(self, situation: Situation, clock: Clock) -> Sequence[Step]:
        """The best plan by immediate score."""
        return best_plan(plans_for(situation.state, greedy_key), self.rng.random)


if __name__ == "__main__":
    main(GreedyBot)
