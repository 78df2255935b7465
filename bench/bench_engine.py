"""How fast the Ivy engine replays games: ``python bench/bench_engine.py``.

It first plays a few thousand seeded random games with
:class:`~referee.games.ivy.position.TurnBuilder` — a few creeps and leaves a turn,
biased upward so the vines climb, and now and then a choke, mostly of the opponent —
and records their turns. Then it times replaying every recorded game from the start
with :meth:`Position.play` alone, which is what a referee does with every turn a bot
sends, and prints turns per second.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from referee.games.ivy import Choke, Creep, Leaf, Position, Turn, row_of
from referee.games.ivy.game import DEFAULT_TURN_LIMIT


@dataclass(frozen=True, slots=True)
class RecordedGame:
    """One random game: its turns, the position they lead to and how it ended."""

    turns: tuple[Turn, ...]
    final: Position
    ending: str
    withering: int
    """The number of turns after which some vine was withering."""


@dataclass(frozen=True, slots=True)
class Style:
    """How one random player plays: how hard it climbs, how often it chokes."""

    climb: int
    """Cells drawn per choice, the highest taken: 1 wanders, 3 climbs hard."""
    growth: int
    """The most creeps and leaves in one turn."""
    choke: float
    """Chance of a choke at the end of a turn."""
    guard: bool
    """Whether it always chokes the opponent's highest cell it can reach."""

    @classmethod
    def draw(cls, rng: random.Random) -> Style:
        """A random style, so that games range from quick races to long brawls."""
        return cls(
            climb=rng.choice((1, 1, 2, 3)),
            growth=rng.randint(2, 6),
            choke=rng.uniform(0.1, 0.6),
            guard=rng.random() < 0.5,
        )

    def pick(self, cells: list[int], rng: random.Random) -> int:
        """One of ``cells``: random, drifting upward as hard as the style climbs."""
        return max(rng.sample(cells, min(self.climb, len(cells))), key=row_of)


def random_turn(position: Position, style: Style, rng: random.Random) -> tuple[Turn, Position]:
    """A random legal turn for the player to move, and the position it leads to."""
    builder = position.begin()
    for _ in range(rng.randint(0, style.growth)):
        creeps = builder.creep_targets()
        leaves = [c for c in builder.leaf_targets() if builder.is_lit(c) or rng.random() < 0.2]
        if leaves and (not creeps or rng.random() < 0.35):
            builder.apply(Leaf(style.pick(leaves, rng)))
        elif creeps:
            builder.apply(Creep(style.pick(creeps, rng)))
        else:
            break
    targets = builder.choke_targets()
    theirs = [c for c in targets if builder.owner(c) not in (None, builder.player)]
    if style.guard and theirs and row_of(max(theirs, key=row_of)) >= 8:
        builder.apply(Choke(max(theirs, key=row_of)))
    elif targets and rng.random() < style.choke:
        pool = theirs if theirs and rng.random() < 0.8 else targets
        builder.apply(Choke(style.pick(pool, rng)))
    return builder.turn(), builder.finish()


def random_game(rng: random.Random, turn_limit: int) -> RecordedGame:
    """A whole random game from the start, up to a win at Feed or the turn limit."""
    styles = (Style.draw(rng), Style.draw(rng))
    position = Position.START
    turns: list[Turn] = []
    withering = 0
    while position.turn <= turn_limit:
        if position.winner_at_feed() is not None:
            return RecordedGame(tuple(turns), position, "win", withering)
        turn, position = random_turn(position, styles[position.to_move], rng)
        turns.append(turn)
        withering += position.withering() != 0
    return RecordedGame(tuple(turns), position, "turn limit", withering)


def replay(games: list[RecordedGame]) -> int:
    """Replay every game with ``Position.play``; the number of turns played."""
    played = 0
    for game in games:
        position = Position.START
        for turn in game.turns:
            position = position.play(turn)
        if position != game.final:
            raise AssertionError("a replay did not reach the recorded position")
        played += len(game.turns)
    return played


def main() -> None:
    """Generate the games, time the replay, print the figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="random games to play")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the random games")
    parser.add_argument("--turn-limit", type=int, default=DEFAULT_TURN_LIMIT)
    parser.add_argument("--repeat", type=int, default=3, help="timed replays; the best counts")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    started = time.perf_counter()
    games = [random_game(rng, args.turn_limit) for _ in range(args.games)]
    generated = time.perf_counter() - started
    endings = Counter(game.ending for game in games)
    total = sum(len(game.turns) for game in games)
    kinds = Counter(type(a).__name__ for g in games for t in g.turns for a in t.actions)
    withering = sum(game.withering for game in games)
    print(
        f"generated {len(games)} games, {total} turns in {generated:.1f} s"
        f" ({', '.join(f'{n} {e}' for e, n in sorted(endings.items()))});"
        f" {kinds['Creep']} creeps, {kinds['Leaf']} leaves, {kinds['Choke']} chokes;"
        f" withering vines after {withering} turns"
    )

    wall = cpu = float("inf")
    played = 0
    for _ in range(args.repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        played = replay(games)
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    print(
        f"replayed {played} turns in {wall:.2f} s: {played / wall:,.0f} turns/s"
        f" (best of {args.repeat}; by CPU time {played / cpu:,.0f} turns/s)"
    )


if __name__ == "__main__":
    main()
