"""The Verdant bots and the SDK's Verdant support: legal games for 1 to 5 players in every
variant, judged by the referee's own session; a turn over several requests through the
SDK's protocol loop; the state a bot rebuilds from its view; the example of
docs/verdant.md; one match of the bundled bots as processes through ``referee match``.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bots import BUNDLED, arena, make_bot
from bots.random import RandomBot as IvyRandomBot
from bots.sdk import Clock, GameBot, Situation, VerdantBot, run
from bots.verdant.greedy import GreedyBot
from bots.verdant.mc import MonteCarloBot
from bots.verdant.plans import greedy_key, points, turn_plans
from bots.verdant.random import RandomBot
from bots.verdant.value import FEATURES, WEIGHTS, features, fit, future
from protocol.messages import (
    BOT_TO_REFEREE,
    DEFAULT_MAX_LINE_BYTES,
    TurnReply,
    TurnRequest,
    encode_line,
)
from referee.cli import main as referee_main
from referee.clock import TimeControl
from referee.games import get_entry
from referee.games.base import GameSettings
from referee.games.verdant import Pick, Place, ReplaceCards, Setup, rules
from referee.games.verdant.steps import Step
from referee.pgn import read_pgn_file
from referee.replay import verify
from referee.session import GameSession

ROOT = Path(__file__).resolve().parents[1]
ENTRY = get_entry("verdant")
VARIANTS = ("standard", "simplified", "advanced")

AnyBot = GameBot[Any, Any, Any]
ROOMY = TimeControl(base=1000.0)
"""A clock no bot runs out of, however slow the machine."""


def session(players: int, variant: str = "standard", seed: int = 0) -> GameSession:
    """A Verdant game as the referee judges it, for tests that watch it closely."""
    return GameSession(
        ENTRY.rules,
        ENTRY.codec,
        GameSettings(players=players, seed=seed, options={"variant": variant}),
        players=tuple(f"p{seat + 1}" for seat in range(players)),
        control=ROOMY,
        max_line_bytes=DEFAULT_MAX_LINE_BYTES,
    )


Watch = Callable[[GameSession, int, TurnRequest, TurnReply], None]


def play(game: GameSession, bots: Sequence[AnyBot], watch: Watch | None = None) -> None:
    """Play ``game`` to its end with in-process ``bots``, through their message-level
    entry points; every decision must be accepted."""
    for seat, bot in enumerate(bots):
        bot.start(game.new_game(seat, 1))
    request_id = 2
    while (seat := game.deciding) is not None:
        request = game.next_request(request_id).message
        request_id += 1
        reply = bots[seat].answer(request)
        if watch is not None:
            watch(game, seat, request, reply)
        assert game.submit(seat, reply, 0.0) is None, (seat, bytes(reply.actions))
    ending = game.ending
    assert ending is not None and ending.termination == "normal", ending
    for seat, bot in enumerate(bots):
        bot.finish(game.game_over(request_id + seat))


def small_mc(seed: int) -> MonteCarloBot:
    """A Monte Carlo bot that thinks little and the same on every machine."""
    return MonteCarloBot(seed, rounds=2, candidates=3)


MAKERS: tuple[Callable[[int], AnyBot], ...] = (RandomBot, GreedyBot, small_mc)


# --- legal games --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_bundled_bots_play_legal_games(players: int, variant: str) -> None:
    bots = [MAKERS[(seat + players) % 3](seat) for seat in range(players)]
    played = arena.play_game(*bots, time_control=ROOMY, options={"variant": variant}, seed=players)
    assert played.ending.termination == "normal", played.ending.reason
    assert len(played.ending.places) == players
    report = verify(played.record)
    assert report.valid, report.reason


@pytest.mark.parametrize("maker", MAKERS)
def test_each_bot_plays_solo(maker: Callable[[int], AnyBot]) -> None:
    played = arena.play_game(maker(7), time_control=ROOMY, seed=7)
    assert played.ending.termination == "normal", played.ending.reason
    assert played.ending.scores[0] > 0


def test_the_state_a_bot_rebuilds_is_the_referees() -> None:
    seen = 0

    def check(game: GameSession, seat: int, request: TurnRequest, reply: TurnReply) -> None:
        nonlocal seen
        situation = GreedyBot().read_turn(request)
        assert situation.state == game.state
        assert situation.seat == seat
        seen += 1

    play(session(3, "advanced", seed=4), [RandomBot(1), GreedyBot(2), RandomBot(3)], check)
    assert seen >= 3 * 14  # a set-up and 13 turns each, more with replacements


def test_since_last_shows_chance_and_the_other_seats() -> None:
    lists: list[Situation] = []

    def keep(game: GameSession, seat: int, request: TurnRequest, reply: TurnReply) -> None:
        if seat == 1:
            lists.append(GreedyBot().read_turn(request))

    play(session(2, seed=9), [GreedyBot(1), GreedyBot(2)], keep)
    first = lists[0].since_last
    # Seat 0's plant and room, its set-up, then seat 1's own plant and room.
    assert [past.seat for past in first] == [None, None, 0, None, None]
    assert first[2].notation in {"north", "east", "south", "west"}
    assert all(past.turn == 1 for past in first)
    assert all(past.seat != 1 for situation in lists for past in situation.since_last)


def test_greedy_plays_the_plan_that_scores_most_now() -> None:
    game = session(3, seed=2)
    checked = 0

    def check(game: GameSession, seat: int, request: TurnRequest, reply: TurnReply) -> None:
        nonlocal checked
        state = game.state
        if seat != 0 or state.phase != 1:
            return
        best = max(points(plan.state, seat) for plan in turn_plans(state, greedy_key))
        after = state
        for step in ENTRY.codec.decode_actions(reply.actions):
            after = rules.advance(after, step)  # the home as the turn leaves it
        assert points(after, seat) == best
        checked += 1

    play(game, [GreedyBot(0), GreedyBot(1), GreedyBot(2)], check)
    assert checked == 13


def test_the_value_is_refitted_as_documented() -> None:
    weights = fit(2, seed=1)
    assert len(weights) == len(WEIGHTS) and all(len(row) == len(FEATURES) for row in weights)
    assert set(weights[0]) == {0.0}  # a seat with no turn to go gains nothing more
    state = session(2, seed=1).state
    assert future(state, 0) == pytest.approx(
        sum(w * f for w, f in zip(WEIGHTS[13], features(state, 0), strict=True))
    )


def test_random_bot_is_repeatable_with_a_seed() -> None:
    def record(seed: int) -> list[str]:
        game = session(2, seed=3)
        play(game, [RandomBot(seed), RandomBot(seed + 1)])
        return [turn.token for turn in game.record().turns]

    assert record(5) == record(5)


def test_bundled_verdant_bots_are_registered() -> None:
    for name in ("verdant-random", "verdant-greedy", "verdant-mc"):
        assert name in BUNDLED
        bot = make_bot(name, 1)
        assert bot.name == name and bot.game == "verdant"


# --- the SDK's protocol loop ----------------------------------------------------------------


class Replacer(VerdantBot):
    """Replaces the plant of column 0 on its first turn (then asks for nothing after it),
    and otherwise picks and places the first way it may; records what it was given."""

    name = "replacer"

    def __init__(self) -> None:
        super().__init__(0)
        self.situations: list[Situation] = []

    def choose(self, situation: Situation, clock: Clock) -> Sequence[Step]:
        self.situations.append(situation)
        if situation.setup:
            return [Setup("south")]
        mine = situation.view.homes[situation.seat]
        if not situation.continuing and mine.thumbs >= 2 and len(self.situations) == 2:
            return [ReplaceCards(((0, "plant"),)), Pick(0, "plant")]  # the pick is ignored
        state, steps = situation.state, []
        while not rules.can_finish(state):
            step = next(s for s in rules.legal_steps(state) if isinstance(s, (Pick, Place)))
            steps.append(step)
            state = rules.advance(state, step)
        return steps


def test_sdk_plays_a_turn_over_several_requests() -> None:
    game = session(2, seed=1)
    other, replacer = GreedyBot(0), Replacer()
    stdout = io.StringIO()

    def over_the_protocol(line: bytes) -> dict[str, Any]:
        """Hand the replacer one line through the SDK's loop; its reply, decoded."""
        before = len(stdout.getvalue())
        run(replacer, io.StringIO(line.decode()), stdout)
        written = stdout.getvalue()[before:].splitlines()
        replies = [json.loads(text) for text in written if json.loads(text)["type"] != "log"]
        assert len(replies) <= 1
        return replies[0] if replies else {}

    assert other.start(game.new_game(0, 1)).id == 1
    ready = over_the_protocol(encode_line(game.new_game(1, 1)))
    assert (ready["type"], ready["id"], ready["name"]) == ("ready", 1, "replacer")
    request_id = 2
    turns: list[int] = []
    while (seat := game.deciding) is not None and len(replacer.situations) < 4:
        request = game.next_request(request_id).message
        request_id += 1
        if seat == 0:
            assert game.submit(0, other.answer(request), 0.0) is None
            continue
        turns.append(request.turn)
        reply = over_the_protocol(encode_line(request))
        assert reply["id"] == request.id
        assert game.submit(1, BOT_TO_REFEREE.decode(json.dumps(reply)), 0.0) is None
    setup, first, again = replacer.situations[:3]
    assert setup.setup and not first.continuing and again.continuing
    assert turns[1] == turns[2], "the replacement continues the same turn"
    # The new card is the first chance event the continued request shows.
    (revealed,) = [past for past in again.since_last if past.seat is None]
    assert again.view.market[0].plant == revealed.notation
    assert first.view.market[0].plant in again.view.discards.plants
    assert again.view.this_turn is not None and again.view.this_turn.thumb_actions == 1


def test_an_ivy_bot_given_a_verdant_game_says_so_and_stops(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stdout = io.StringIO()
    lines = io.StringIO(encode_line(session(2).new_game(0, 1)).decode())
    assert run(IvyRandomBot(0), lines, stdout) is False
    assert stdout.getvalue() == ""
    assert "random plays ivy, not verdant" in capsys.readouterr().err


# --- the documentation's example --------------------------------------------------------------


def test_the_example_bot_of_the_docs_plays_a_game() -> None:
    text = (ROOT / "docs" / "verdant.md").read_text()
    (code,) = [
        block
        for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL)
        if "VerdantBot" in block
    ]
    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(code, "docs/verdant.md", "exec"), namespace)
    bot_class = namespace["FirstSpot"]
    play(session(2, seed=6), [bot_class(0), GreedyBot(1)])


# --- bundled bots as processes, through the referee ----------------------------------------------


@pytest.mark.slow
def test_referee_match_runs_the_bundled_verdant_bots(tmp_path: Path) -> None:
    pgn = tmp_path / "v.pgn"
    bots = [f"{sys.executable} -m bots.verdant.{name}" for name in ("random", "greedy", "mc")]
    result = CliRunner().invoke(
        referee_main,
        ["match", *bots, "--game", "verdant", "--tc", "2+0.05", "--seed", "1",
         "--pgn", str(pgn), "--log-dir", str(tmp_path / "logs")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    games = read_pgn_file(pgn)
    assert len(games) == 3
    for game in games:
        assert game.tags["Termination"] == "normal", game.tags
        assert verify(game).valid
