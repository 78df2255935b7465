"""verdant-random: random legal steps, seeded — the baseline every Verdant bot must beat.

A decision is built one step at a time: the bot draws a kind of step uniformly among
the kinds it may take now (replace cards, replace tokens, split, grow, pick, place,
store, use, discard, or ending the turn once that is allowed), then a step of that kind
uniformly among the legal ones (:func:`~referee.games.verdant.rules.legal_steps`), and
goes on until it ends the turn or takes a revealing step (1a, 1b): then the referee
reveals the new cards or tokens and asks it again, in the same turn. Drawing the kind
first keeps the 255 ways to replace cards from drowning out everything else.
"""

from __future__ import annotations

from collections.abc import Sequence

from bots.sdk import Clock, Situation, VerdantBot, main
from referee.games.verdant import rules
from referee.games.verdant.steps import REVEALING, Setup, Step

END = "end"
"""The kind that ends the turn (no more steps)."""


class RandomBot(VerdantBot):
    """Builds each decision from uniformly drawn legal steps."""

    name = "verdant-random"
    author = "ivy-referee"
    version = "1.0"

    def choose(self, situation: Situation, clock: Clock) -> Sequence[Step]:
        """Random legal steps up to the end of the turn or a revealing step."""
        rng = self.rng
        state = situation.state
        steps: list[Step] = []
        while True:
            kinds = rules.steps_by_kind(state)
            if rules.can_finish(state):
                kinds[END] = []
            kind = rng.choice(sorted(kinds))
            if kind == END:
                return steps
            step = rng.choice(kinds[kind])
            steps.append(step)
            if isinstance(step, (Setup, *REVEALING)):
                return steps
            state = rules.advance(state, step)


if __name__ == "__main__":
    main(RandomBot)
