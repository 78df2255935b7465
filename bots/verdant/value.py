"""What a Verdant home is worth beyond its points now: a linear value, fitted on playouts.

:func:`future` predicts how many more points a seat's home will have scored by the end of
the game, from a few :func:`features` of the home (the verdancy its incomplete plants
have gathered toward their points and pots, its thumbs and stored token, empty item
slots, motifs and colours collected, how many more rooms than plants it holds: a seat
holds as many cards as it has played turns, plus two), with one set of
:data:`WEIGHTS` per number of turns the seat has left (the same home promises more with
more turns to go).

The weights come from :func:`fit`: games of four players on the fast policy of
:mod:`bots.verdant.playout`, where after every turn each seat's features are paired with
the points it went on to gain, and least squares does the rest. ``python -m
bots.verdant.value`` fits them again and prints the table.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from typing import Final

from referee.games.base import CHANCE
from referee.games.verdant import rules
from referee.games.verdant.cards import (
    FIRST_NURTURE,
    PLANT_COLOUR,
    PLANT_NEEDS,
    PLANT_POINTS,
    ROOM_COLOUR,
    TOKEN_MOTIF,
)
from referee.games.verdant.scoring import MOTIF_POINTS, SIMPLIFIED_PLANT_POINTS, breakdown
from referee.games.verdant.state import (
    IS_PLANT_CELL,
    PLAY,
    SIMPLIFIED,
    STANDARD,
    TURNS_EACH,
    VerdantState,
)

FEATURES: Final = (
    "one",
    "progress",
    "growing",
    "thumbs",
    "stored_nurture",
    "stored_item",
    "free_slots",
    "next_motif",
    "plant_colours",
    "room_colours",
    "rooms_over_plants",
)
"""The names of :func:`features`, in order."""


def next_pot(state: VerdantState) -> int:
    """The value of the pot the next plant to complete would take (0 in the simplified game)."""
    if state.variant == SIMPLIFIED:
        return 0
    three, two, one = state.pots
    return 3 if three else 2 if two else 1 if one else 0


def points(state: VerdantState, seat: int) -> int:
    """``seat``'s score if the game ended now (spec §5, objectives included)."""
    return sum(value for _, value in breakdown(state, seat))


def turns_to_go(state: VerdantState, seat: int) -> int:
    """The turns ``seat`` will still play after the current one (when it is in its turn)."""
    left = rules.turns_left(state)[seat]
    if state.phase == PLAY and state.part is not None and state.seat == seat:
        left -= 1
    return max(0, left)


def features(state: VerdantState, seat: int) -> tuple[float, ...]:
    """The numbers :func:`future` weighs, for ``seat`` (see :data:`FEATURES`)."""
    mine = state.seats[seat]
    home = mine.home
    pot = next_pot(state)
    simplified = state.variant == SIMPLIFIED
    progress = 0.0
    growing = plants = rooms = free = 0
    plant_colours: set[int] = set()
    room_colours: set[int] = set()
    motifs: set[int] = set()
    occupied = home.occupied
    while occupied:
        low = occupied & -occupied
        cell = low.bit_length() - 1
        occupied ^= low
        card = home.cards[cell]
        if IS_PLANT_CELL[cell]:
            plants += 1
            plant_colours.add(PLANT_COLOUR[card])
            if not home.complete >> cell & 1:
                growing += 1
                worth = SIMPLIFIED_PLANT_POINTS if simplified else PLANT_POINTS[card] + pot
                progress += home.verdancy[cell] / PLANT_NEEDS[card] * worth
        else:
            rooms += 1
            room_colours.add(ROOM_COLOUR[card])
            item = home.items[cell]
            if item >= 0:
                motifs.add(TOKEN_MOTIF[item])
            else:
                free += 1
    storage = mine.storage
    count = len(motifs)
    next_motif = (
        MOTIF_POINTS[count + 1] - MOTIF_POINTS[count] if count + 1 < len(MOTIF_POINTS) else 0
    )
    return (
        1.0,
        progress,
        float(growing),
        float(mine.thumbs),
        float(storage >= FIRST_NURTURE),
        float(0 <= storage < FIRST_NURTURE and TOKEN_MOTIF[storage] not in motifs),
        float(free),
        float(next_motif),
        float(len(plant_colours)),
        float(len(room_colours)),
        float(rooms - plants),
    )


WEIGHTS: Final[tuple[tuple[float, ...], ...]] = (
    (0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000),
    (3.894, 0.344, 0.229, 0.027, 0.162, 0.620, 0.027, -0.000, 0.008, -0.013, 0.112),
    (7.330, 0.477, 0.690, 0.046, 0.531, 0.956, 0.196, 0.214, 0.030, 0.002, 0.371),
    (10.722, 0.487, 1.185, 0.066, 0.481, 1.007, 0.402, 0.496, 0.095, 0.049, 0.467),
    (16.862, 0.457, 1.641, 0.090, 0.541, 1.225, 0.211, 0.211, 0.138, 0.145, 0.736),
    (23.030, 0.375, 2.125, 0.111, 0.633, 1.099, -0.006, -0.225, 0.258, 0.316, 1.116),
    (25.882, 0.317, 2.587, 0.122, 0.682, 1.016, 0.260, 0.154, 0.422, 0.521, 1.183),
    (28.527, 0.266, 2.997, 0.153, 0.757, 0.659, 0.581, 0.792, 0.584, 0.698, 1.238),
    (33.824, 0.307, 3.104, 0.179, 0.966, 0.355, 0.576, 0.726, 0.818, 0.790, 1.522),
    (41.097, 0.299, 3.472, 0.205, 1.162, 0.315, 0.291, 0.224, 0.803, 0.814, 1.802),
    (46.431, 0.338, 3.551, 0.243, 1.047, 0.157, 0.315, 0.695, 0.717, 0.780, 1.806),
    (51.867, 0.278, 4.188, 0.234, 1.291, 0.041, 0.525, 0.996, 0.643, 0.743, 2.016),
    (59.910, 0.450, 3.332, 0.237, 0.000, 0.000, 0.039, 0.807, 0.328, 0.760, 1.692),
    (73.003, 0.010, 0.000, -0.022, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000),
)
"""Per turns to go (0 to 13), the weight of each feature (``python -m bots.verdant.value
--games 6000 --seed 0``: see :func:`fit`)."""


def future(state: VerdantState, seat: int) -> float:
    """The points ``seat``'s home is expected to gain from now to the end of the game."""
    weights = WEIGHTS[min(turns_to_go(state, seat), TURNS_EACH)]
    return sum(w * f for w, f in zip(weights, features(state, seat), strict=True))


def value(state: VerdantState, seat: int) -> float:
    """``seat``'s points now plus :func:`future`."""
    return points(state, seat) + future(state, seat)


# --- fitting ---------------------------------------------------------------------------


def _solve(matrix: list[list[float]], vector: list[float], ridge: float) -> list[float]:
    """The ``x`` with ``(matrix + ridge) @ x = vector``, ``ridge`` added to the diagonal
    but for the constant feature (ridge regression: features that move together, as they
    do early in a game, share their weight instead of taking huge opposite ones).
    Gaussian elimination with partial pivoting."""
    size = len(vector)
    rows = [[*matrix[i], vector[i]] for i in range(size)]
    for i in range(1, size):
        rows[i][i] += ridge
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        lead = rows[column][column]
        for r in range(size):
            if r != column and rows[r][column]:
                factor = rows[r][column] / lead
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[column], strict=True)]
    return [rows[i][size] / rows[i][i] for i in range(size)]


RIDGE: Final = 0.01
"""The ridge of :func:`fit`, per sample."""


def fit(games: int, seed: int = 0, players: int = 4) -> tuple[tuple[float, ...], ...]:
    """Fit :data:`WEIGHTS` on ``games`` seeded games of the fast policy (see the module)."""
    from bots.verdant.playout import fast_decision  # the playouts judge by this module

    size = len(FEATURES)
    gram = [[[0.0] * size for _ in range(size)] for _ in range(TURNS_EACH + 1)]
    moment = [[0.0] * size for _ in range(TURNS_EACH + 1)]
    rng = random.Random(seed)
    for _ in range(games):
        state = rules.start(players, STANDARD)
        samples: list[tuple[int, int, tuple[float, ...], int]] = []
        while (actor := rules.to_decide(state)) is not None:
            if actor == CHANCE:
                outcomes = rules.chance_outcomes(state)
                (drawn,) = outcomes[rng.randrange(len(outcomes))]
                state = rules.reveal(state, drawn.id)  # type: ignore[union-attr]
                continue
            turn_before = state.turn
            state = rules.apply_decision(state, fast_decision(state, rng))
            if state.turn == turn_before or rules.to_decide(state) is None:
                continue
            for seat in range(players):
                togo = turns_to_go(state, seat)
                if togo:
                    samples.append((seat, togo, features(state, seat), points(state, seat)))
        final = [points(state, seat) for seat in range(players)]
        for seat, togo, row, now in samples:
            gain = final[seat] - now
            for i in range(size):
                moment[togo][i] += row[i] * gain
                for j in range(size):
                    gram[togo][i][j] += row[i] * row[j]
    weights = [tuple([0.0] * size)]
    for togo in range(1, TURNS_EACH + 1):
        ridge = RIDGE * gram[togo][0][0]  # the constant feature's square sums the samples
        weights.append(tuple(round(w, 3) for w in _solve(gram[togo], moment[togo], ridge)))
    return tuple(weights)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bots.verdant.value [--games N]``: fit and print :data:`WEIGHTS`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for row in fit(args.games, args.seed):
        print(f"    ({', '.join(f'{w:.3f}' for w in row)}),")


if __name__ == "__main__":
    main()
