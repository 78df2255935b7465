"""climber: the strong bundled bot — a timed alpha-beta search over candidate turns.

It searches the game tree a whole turn per ply, with the greedy bot's move generator
(:func:`bots.greedy.candidate_turns`) for the branches and its heuristic
(:func:`bots.greedy.evaluate`) at the leaves, so it sees the opponent's best reply to
each of its turns: the choke that would cut its climb, the leaf on e12 it must stop.
Iterative deepening (1, 2, 3… turns) keeps the best turn of the deepest finished
search and orders each new search by the last one's results; killer turns (a reply
that refuted one move is tried first against the next) make the cut-offs come early.
A board that already occurred in the game is scored as a slightly bad draw, so the
bot breaks the circles a one-turn player can fall into.

Time: each turn gets a share of the remaining time plus most of the increment
(``remaining / 12 + 0.7 * increment``, never more than 30 % of what is left), and the
search stops as soon as it is spent. The cyclic garbage collector is paused while it
thinks (a full collection can outlast a turn's budget; the search makes no cycles).
"""

from __future__ import annotations

import gc
import time

from bots.greedy import WIN, candidate_turns, evaluate
from bots.sdk import Bot, Clock, GameInfo, main
from referee.games.ivy import Player, Position, Turn
from referee.games.ivy.game import DEFAULT_TURN_LIMIT

MAX_DEPTH = 8
"""The deepest search, in turns (it is the clock that usually stops it first)."""
TURNS_TO_GO = 12.0
"""The share of the remaining time a turn may spend: ``remaining / TURNS_TO_GO``."""
INCREMENT_SHARE = 0.7
"""How much of the increment a turn may spend on top of that."""
CONTEMPT = 10.0
"""How much sun worse than an even game the searcher scores a board that comes back."""
SAFETY = 0.3
"""Never plan to spend more than this share of the remaining time on one turn."""


class OutOfTime(Exception):
    """Raised inside the search when the turn's time is spent."""


BoardKey = tuple[int, ...]


def board_key(position: Position) -> BoardKey:
    """The board of ``position`` and who is to move, without the sun and the turn number.

    When a board comes back, the game went round in a circle (the sun grows on both
    sides, nothing else changes): the search scores such a position as a draw.
    """
    return (
        position.vines(Player.GREEN),
        position.vines(Player.PURPLE),
        position.withering(),
        position.leaves(Player.GREEN) | position.leaves(Player.PURPLE),
        position.deadwood_cells(),
        position.to_move,
    )


class Search:
    """One turn's search: the deadline, and what it learns on the way.

    ``history`` holds the boards of the game so far: one coming back is scored as a
    draw that the searching player (``me``) likes :data:`CONTEMPT` less than an even
    game, so that it breaks a circle unless every way out looks worse than that.

    ``statics`` caches the heuristic of every position seen (from the point of view of
    the player to move there), ``children`` the candidate turns of every position
    expanded, and ``killers`` the last turn that refuted a move at each ply, tried first
    at that ply since one choke often refutes many moves.
    """

    def __init__(
        self, deadline: float, turn_limit: int, history: set[BoardKey], me: Player
    ) -> None:
        self.deadline = deadline
        self.turn_limit = turn_limit
        self.history = history
        self.me = me
        self.statics: dict[Position, float] = {}
        self.children: dict[Position, list[tuple[Turn, Position]]] = {}
        self.killers: dict[int, Turn] = {}
        self.nodes = 0

    def static(self, position: Position) -> float:
        """The heuristic value of ``position`` for the player to move, cached."""
        score = self.statics.get(position)
        if score is None:
            score = self.statics[position] = evaluate(position, position.to_move)
        return score

    def moves(self, position: Position, ordered: bool) -> list[tuple[Turn, Position]]:
        """The candidate turns of ``position``, best first by the heuristic when ``ordered``.

        Unordered lists come in the generator's order: when only the leaves below are
        left to look at, evaluating them all just to sort them would cost as much as
        searching them.
        """
        moves = self.children.get(position)
        if moves is None:
            moves = self.children[position] = candidate_turns(position)
        if ordered:
            moves.sort(key=lambda move: self.static(move[1]))
        return moves

    def value(self, position: Position, depth: int, alpha: float, beta: float, ply: int) -> float:
        """Negamax value of ``position`` for the player to move, searched ``depth`` turns."""
        self.nodes += 1
        if time.perf_counter() > self.deadline:
            raise OutOfTime
        if position.winner_at_feed() is not None:
            return WIN - ply
        if position.turn > self.turn_limit:
            return 0.0
        if board_key(position) in self.history:
            return -CONTEMPT if position.to_move is self.me else CONTEMPT
        if depth == 0:
            return self.static(position)
        moves = self.moves(position, depth > 1)
        killer = self.killers.get(ply)
        if killer is not None:
            moves = sorted(moves, key=lambda move: move[0] != killer)
        best = -2 * WIN
        for turn, after in moves:
            score = -self.value(after, depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        self.killers[ply] = turn
                        break
        return best

    def choose(self, position: Position) -> tuple[Turn, int, float]:
        """The best turn found before the deadline, the depth finished and its score."""
        moves = list(self.moves(position, True))
        best_turn, best_score, finished = moves[0][0], -self.static(moves[0][1]), 0
        try:
            for depth in range(1, MAX_DEPTH + 1):
                alpha = -2 * WIN
                scores: dict[Position, float] = {}
                for turn, after in moves:
                    score = -self.value(after, depth - 1, -2 * WIN, -alpha, 1)
                    scores[after] = score
                    if score > alpha:
                        # The first move searched is the last iteration's best, so a
                        # move beating it at this depth is better even if time runs out.
                        alpha = score
                        best_turn, best_score = turn, score
                moves.sort(key=lambda move: -scores[move[1]])
                finished = depth
                if abs(best_score) >= WIN / 2:
                    break
        except OutOfTime:
            pass
        return best_turn, finished, best_score


class ClimberBot(Bot):
    """Searches as deep as its clock allows and plays the best turn it found."""

    name = "climber"
    author = "ivy-referee"
    version = "1.0"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.turn_limit = DEFAULT_TURN_LIMIT
        self.history: set[BoardKey] = set()

    def new_game(self, info: GameInfo) -> None:
        """Remember the turn limit (a position past it is a draw) and forget the last game."""
        self.turn_limit = info.turn_limit
        self.history = set()

    def choose(self, position: Position, clock: Clock) -> Turn:
        """The best turn the search finds within this turn's time budget."""
        budget = min(
            clock.budget(turns_to_go=TURNS_TO_GO, increment_share=INCREMENT_SHARE),
            clock.remaining * SAFETY,
        )
        self.history.add(board_key(position))
        search = Search(
            time.perf_counter() + budget, self.turn_limit, self.history, position.to_move
        )
        collecting = gc.isenabled()
        gc.disable()  # a full collection can take longer than a whole turn's budget
        try:
            turn, depth, score = search.choose(position)
        finally:
            gc.freeze()  # what survives (the caches) is never scanned again
            if collecting:
                gc.enable()
        self.history.add(board_key(position.play(turn)))
        self.log(f"depth {depth}, {search.nodes} nodes, score {score:+.1f}: {turn}")
        return turn


if __name__ == "__main__":
    main(ClimberBot)
