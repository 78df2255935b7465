"""random: random legal turns, seeded — the baseline every other bot must beat.

Each turn it passes now and then; otherwise it makes a few random creeps and leaves it
can afford, in a random order, and sometimes ends with a random choke. Every action is
taken from the engine's :class:`~referee.games.ivy.TurnBuilder` as the turn goes, so
the turn is always legal.
"""

from __future__ import annotations

from bots.sdk import Bot, Clock, main
from referee.games.ivy import Action, Choke, Creep, Leaf, Position, Turn

PASS_CHANCE = 0.05
"""How often the bot passes outright."""
CHOKE_CHANCE = 0.3
"""How often a turn ends with a choke (when there is something to choke)."""
MAX_GROWTH = 4
"""The most creeps and leaves in one turn."""


class RandomBot(Bot):
    """Plays random legal turns drawn from its seeded generator."""

    name = "random"
    author = "ivy-referee"
    version = "1.0"

    def choose(self, position: Position, clock: Clock) -> Turn:
        """A random legal turn."""
        rng = self.rng
        if rng.random() < PASS_CHANCE:
            return Turn.PASS
        builder = position.begin()
        for _ in range(rng.randint(0, MAX_GROWTH)):
            options: list[Action] = [Creep(cell) for cell in builder.creep_targets()]
            options += [Leaf(cell) for cell in builder.leaf_targets()]
            if not options:
                break
            builder.apply(rng.choice(options))
        targets = builder.choke_targets()
        if targets and rng.random() < CHOKE_CHANCE:
            builder.apply(Choke(rng.choice(targets)))
        return builder.turn()


if __name__ == "__main__":
    main(RandomBot)
