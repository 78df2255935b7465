"""How fast the Verdant rules play random games: ``python bench/bench_verdant.py``.

A random player builds each decision step by step: it picks a kind of step uniformly
(or ending the turn, when allowed), then one step of that kind, applies it with
:func:`~referee.games.verdant.rules.advance`, and stops after a revealing step; the
driver's part (``VerdantGame.apply`` of the whole decision, every chance draw from
``chance_outcomes``) is then done as the referee does it. It prints, for 2, 3 and 5
players, random games per second beside a *floor*: the same number of random choices
among lists of the same sizes without any rules, and their ratio. Then the cost of one
``apply`` (a state copy with one step), of listing the legal steps, and of a view.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from referee.games.base import CHANCE, GameSettings
from referee.games.verdant import (
    ReplaceCards,
    ReplaceTokens,
    Setup,
    VerdantGame,
    VerdantState,
    advance,
    can_finish,
    legal_steps,
    steps_by_kind,
)
from referee.games.verdant.steps import Decision, Step

GAME = VerdantGame()


def random_decision(state: VerdantState, rng: random.Random, sizes: list[int]) -> Decision:
    """A random decision for the deciding seat (see the module docstring); ``sizes``
    collects the size of every list a choice was made from."""
    steps: list[Step] = []
    while True:
        by_kind = steps_by_kind(state)
        kinds: list[str | None] = list(by_kind)
        if can_finish(state):
            kinds.append(None)
        sizes.append(len(kinds))
        kind = rng.choice(kinds)
        if kind is None:
            return tuple(steps)
        options = by_kind[kind]
        sizes.append(len(options))
        step = rng.choice(options)
        steps.append(step)
        state = advance(state, step)
        if isinstance(step, Setup | ReplaceCards | ReplaceTokens):
            return tuple(steps)


def random_game(
    players: int, seed: int, variant: str = "standard"
) -> tuple[VerdantState, list[int]]:
    """One random game to the end; the final state and the sizes of every choice list."""
    rng = random.Random(seed)
    sizes: list[int] = []
    state = GAME.start(GameSettings(players=players, seed=seed, options={"variant": variant}))
    while (actor := GAME.to_decide(state)) is not None:
        if actor == CHANCE:
            outcomes = GAME.chance_outcomes(state)
            sizes.append(len(outcomes))
            decision = rng.choice(outcomes)
        else:
            decision = random_decision(state, rng, sizes)
        state = GAME.apply(state, actor, decision)
    return state, sizes


def floor(sizes: list[int], seed: int) -> None:
    """The random choices of a game alone, from lists of the same sizes."""
    rng = random.Random(seed)
    lists = {size: list(range(size)) for size in set(sizes)}
    for size in sizes:
        rng.choice(lists[size])


def timed(action: Callable[[], object], repeat: int) -> float:
    """Seconds per call of ``action``."""
    start = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per player count")
    args = parser.parse_args()
    print(f"{'players':>7} {'games/s':>9} {'ms/game':>8} {'floor/s':>9} {'ratio':>6}")
    for players in (2, 3, 5):
        all_sizes = []
        start = time.perf_counter()
        for seed in range(args.games):
            _, sizes = random_game(players, seed)
            all_sizes.append(sizes)
        elapsed = time.perf_counter() - start
        start = time.perf_counter()
        for seed, sizes in enumerate(all_sizes):
            floor(sizes, seed)
        floor_elapsed = time.perf_counter() - start
        print(
            f"{players:>7} {args.games / elapsed:>9.0f} {1000 * elapsed / args.games:>8.2f}"
            f" {args.games / floor_elapsed:>9.0f} {elapsed / floor_elapsed:>6.1f}"
        )
    # One mid-game position of 4 players: the costs a searching bot pays per node.
    rng = random.Random(1)
    state = GAME.start(GameSettings(players=4))
    while GAME.turn_number(state) < 20 or GAME.to_decide(state) == CHANCE:
        actor = GAME.to_decide(state)
        assert actor is not None
        if actor == CHANCE:
            decision = rng.choice(GAME.chance_outcomes(state))
        else:
            decision = random_decision(state, rng, [])
        state = GAME.apply(state, actor, decision)
    legal = legal_steps(state)
    pick = next(step for step in legal if type(step).__name__ == "Pick")
    repeat = 20_000
    print(f"mid-game, 4 players, {len(legal)} legal steps:")
    print(
        f"  advance (copy + one step): {1e6 * timed(lambda: advance(state, pick), repeat):7.2f} µs"
    )
    print(f"  legal_steps:               {1e6 * timed(lambda: legal_steps(state), repeat):7.2f} µs")
    print(f"  can_finish:                {1e6 * timed(lambda: can_finish(state), repeat):7.2f} µs")
    print(
        f"  view:                      {1e6 * timed(lambda: GAME.view(state, 0), repeat):7.2f} µs"
    )
    print(f"  floor (one rng.choice):    {1e6 * timed(lambda: rng.choice(legal), repeat):7.2f} µs")


if __name__ == "__main__":
    main()
