"""A tiny game of chance for 1 to 5 seats, and records of it, for the record tests.

Dice: each turn chance rolls a die for the seat whose turn it is (``d1`` … ``d6``),
then that seat either keeps it (``keep``: its value counts as ``dice``) or flips it
(``flip@7,1/1.0``: seven minus its value counts as ``bonus``). After ``rounds``
rounds the highest total wins; ties share a place. It exercises what Ivy does not:
no seat names, a chance seat, decisions that do not alternate, tokens with ``@,/.``
and a score breakdown.

:func:`registered` adds it to the game registry for a test (``monkeypatch``);
:func:`dice_record` plays it the way the referee's session does and records it.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import pytest

import referee.games
from referee.errors import IllegalDecision, RuleError, SettingsError
from referee.games import CHANCE, GameEntry, GameSettings, Outcome
from referee.pgn import (
    ClockAnnotation,
    GameRecord,
    RecordedTurn,
    option_tag,
    outcome_tags,
    result_token,
    seat_tags,
)

FLIP = "flip@7,1/1.0"
DIE = tuple(f"d{pips}" for pips in range(1, 7))


@dataclasses.dataclass(frozen=True, slots=True)
class DiceState:
    seats: int
    rounds: int
    dice: tuple[int, ...]
    bonus: tuple[int, ...]
    turn: int = 1
    rolled: int | None = None


class DiceGame:
    name: ClassVar[str] = "dice"
    seat_names: ClassVar[tuple[str, ...] | None] = None
    min_players: ClassVar[int] = 1
    max_players: ClassVar[int] = 5
    scored_in_points: ClassVar[bool] = True
    alternating: ClassVar[bool] = False

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(options) - {"rounds"})
        if unknown:
            raise SettingsError(f"unknown dice option {unknown[0]!r}")
        rounds = options.get("rounds", 2)
        if isinstance(rounds, str) and rounds.isdigit():
            rounds = int(rounds)
        if type(rounds) is not int or not 1 <= rounds <= 50:
            raise SettingsError(f"rounds must be a whole number from 1 to 50, got {rounds!r}")
        return {"rounds": rounds}

    def start(self, settings: GameSettings) -> DiceState:
        rounds = self.check_options(settings.options)["rounds"]
        zeros = (0,) * settings.players
        return DiceState(settings.players, rounds, zeros, zeros)

    def to_decide(self, state: DiceState) -> int | None:
        if state.turn > state.rounds * state.seats:
            return None
        return CHANCE if state.rolled is None else (state.turn - 1) % state.seats

    def chance_outcomes(self, state: DiceState) -> Sequence[str]:
        return DIE

    def view(self, state: DiceState, seat: int) -> DiceState:
        return state

    def apply(self, state: DiceState, seat: int, decision: str) -> DiceState:
        if seat == CHANCE:
            if decision not in DIE:
                raise IllegalDecision(f"D1: a die has no face {decision}")
            return dataclasses.replace(state, rolled=int(decision[1:]))
        assert state.rolled is not None
        dice, bonus = list(state.dice), list(state.bonus)
        if decision == "keep":
            dice[seat] += state.rolled
        else:
            bonus[seat] += 7 - state.rolled
        return DiceState(state.seats, state.rounds, tuple(dice), tuple(bonus), state.turn + 1)

    def observe(self, state: DiceState, actor: int, decision: str, observer: int) -> str:
        return decision

    def turn_number(self, state: DiceState) -> int:
        return state.turn

    def outcome(self, state: DiceState) -> Outcome | None:
        if self.to_decide(state) is not None:
            return None
        scores = tuple(float(d + b) for d, b in zip(state.dice, state.bonus, strict=True))
        places = tuple(1 + sum(other > score for other in scores) for score in scores)
        breakdown = tuple(
            (("dice", d), ("bonus", b)) for d, b in zip(state.dice, state.bonus, strict=True)
        )
        return Outcome(
            scores=scores, places=places, reason="all rounds played", breakdown=breakdown
        )

    def format_decision(self, decision: str) -> str:
        return decision

    def parse_decision(self, text: str) -> str:
        if text not in (*DIE, "keep", FLIP):
            raise RuleError(f"{text!r} is not a dice decision")
        return text

    def notation(self, state: DiceState) -> str:
        dice = ",".join(map(str, state.dice))
        bonus = ",".join(map(str, state.bonus))
        return f"turn {state.turn} rolled {state.rolled or '-'} dice {dice} bonus {bonus}"

    def rule_settings(self, state: DiceState) -> Mapping[str, Any]:
        return {"rounds": state.rounds}

    def settings_tags(self, state: DiceState) -> Mapping[str, str]:
        return {option_tag(self.name, "rounds"): str(state.rounds)}


def _render(state: DiceState, color: bool) -> str:
    rows = [
        f"seat {seat + 1}: dice {d} bonus {b}"
        for seat, (d, b) in enumerate(zip(state.dice, state.bonus, strict=True))
    ]
    return "\n".join([f"turn {state.turn}", *rows]) + "\n"


ENTRY = GameEntry(
    rules=DiceGame(),
    codec=None,
    render=lambda view, color: "seat view\n" + _render(view, color),
    render_public=_render,
    person_help="Type keep or flip.",
)


def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the game ``dice`` known to the registry for one test."""
    monkeypatch.setitem(referee.games._ENTRIES, "dice", __name__)


Chooser = Callable[[random.Random, DiceState], str]


def dice_record(
    players: Sequence[str],
    *,
    seed: int = 7,
    rounds: int = 2,
    choose: Chooser | None = None,
    stop_after: int | None = None,
    tags: Mapping[str, str] | None = None,
) -> GameRecord:
    """A game of dice between ``players`` played as the session plays games: chance drawn
    from ``random.Random(seed)``, the seats' choices by ``choose`` (default: keep a die
    of 4 or more). ``stop_after`` decisions leaves the game unfinished (``*``)."""
    game = DiceGame()
    rng = random.Random(seed)
    choose = choose or (lambda rng, state: "keep" if (state.rolled or 0) >= 4 else FLIP)
    state = game.start(GameSettings(players=len(players), seed=seed, options={"rounds": rounds}))
    turns: list[RecordedTurn] = []
    while (actor := game.to_decide(state)) is not None and len(turns) != stop_after:
        if actor == CHANCE:
            decision = rng.choice(list(game.chance_outcomes(state)))
            clock = None
        else:
            decision = choose(rng, state)
            clock = ClockAnnotation(clock_ms=9_000, elapsed_ms=15)
        turns.append(RecordedTurn(decision, clock=clock, actor=actor, turn=game.turn_number(state)))
        state = game.apply(state, actor, decision)
    record_tags = {
        "Event": "Dice test",
        **seat_tags(None, players),
        "Game": "Dice",
        **game.settings_tags(state),
        "Seed": str(seed),
        "Variant": "Dice",
        "PlyCount": str(len(turns)),
        **(tags or {}),
    }
    outcome = game.outcome(state)
    result = "*"
    comment = None
    if outcome is None:
        record_tags.setdefault("Termination", "unterminated")
    else:
        result = result_token(outcome.places, outcome.scores)
        record_tags.setdefault("Termination", "normal")
        record_tags.update(outcome_tags(outcome.places, outcome.scores, outcome.breakdown))
        comment = outcome.reason
    if comment is not None and turns:
        last = turns[-1]
        turns[-1] = dataclasses.replace(last, comment=comment)
    return GameRecord(tags=record_tags, turns=turns, result=result)
