"""The bot SDK and the bundled bots: legal turns, strength, clocks and the protocol loop.

Everything runs in-process (the arena, the SDK over ``io.StringIO``) except the Node.js
bot, which is driven over a pipe when ``node`` is installed.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from bots import BUNDLED, make_bot
from bots.arena import play_game, play_match
from bots.climber import ClimberBot
from bots.greedy import GreedyBot, candidate_turns, cut_sets, flood, spread
from bots.random import RandomBot
from bots.sdk import Bot, Clock, GameInfo, GameResult, run
from protocol.messages import (
    ClockInfo,
    GameOver,
    NewGame,
    Quit,
    TimeControlInfo,
    TurnRequest,
    encode_line,
)
from referee.clock import TimeControl
from referee.games.ivy import NEIGHBOURS, ROOTS, TOP, Player, Position, Turn, iter_cells
from referee.games.ivy.codec import CODEC, decode_actions
from referee.replay import verify

ROOT = Path(__file__).resolve().parents[1]
ROOMY = Clock(10.0, 0.1)


def sample_positions(games: int = 6, turns: int = 60) -> list[Position]:
    """Positions from seeded games of random against greedy, in both colours."""
    positions: list[Position] = []
    for seed in range(games):
        players = (RandomBot(seed), GreedyBot(seed))
        if seed % 2:
            players = players[::-1]
        position = Position.START
        while position.winner_at_feed() is None and position.turn <= turns:
            positions.append(position)
            position = position.play(players[1 - position.turn % 2].choose(position, ROOMY))
    return positions


POSITIONS = sample_positions()


# --- the heuristic's mask helpers --------------------------------------------------


def test_spread_adds_exactly_the_neighbours() -> None:
    for cell in range(88):
        assert spread(1 << cell) == NEIGHBOURS[cell] | 1 << cell
    every_other = sum(1 << cell for cell in range(0, 88, 2))
    expected = every_other
    for cell in iter_cells(every_other):
        expected |= NEIGHBOURS[cell]
    assert spread(every_other) == expected


def test_cut_sets_match_a_flood_without_the_cell() -> None:
    for position in POSITIONS:
        for player in Player:
            cells, root = position.vines(player), ROOTS[player]
            cuts = cut_sets(cells, root)
            for cell in iter_cells(cells & ~(1 << root)):
                rest = cells & ~(1 << cell)
                assert cuts.lost.get(cell, 0) == rest & ~flood(1 << root, rest)


# --- legal turns ---------------------------------------------------------------------


@pytest.mark.parametrize("bot_class", [RandomBot, GreedyBot])
def test_bots_play_legal_turns(bot_class: type[Bot]) -> None:
    for seed, position in enumerate(POSITIONS):
        bot = bot_class(seed)
        turn = bot.choose(position, ROOMY)
        position.play(turn)  # raises IllegalDecision if the rules refuse it


def test_candidate_turns_are_legal_and_distinct() -> None:
    for position in POSITIONS[::3]:
        candidates = candidate_turns(position)
        assert candidates
        assert Turn.PASS in [turn for turn, _ in candidates]
        afters = [after for _, after in candidates]
        assert len(set(afters)) == len(afters)
        for turn, after in candidates:
            assert position.play(turn) == after


def test_random_bot_is_repeatable_with_a_seed() -> None:
    position = POSITIONS[10]
    assert RandomBot(7).choose(position, ROOMY) == RandomBot(7).choose(position, ROOMY)


def test_climber_answers_legally_within_its_budget() -> None:
    clock = Clock(1.0, 0.05)
    for position in POSITIONS[::12]:
        bot = ClimberBot(0)
        started = time.perf_counter()
        turn = bot.choose(position, clock)
        spent = time.perf_counter() - started
        position.play(turn)
        assert spent < 0.25, f"{spent:.3f} s in {position}"


# Green climbs c1-c5, d5-d11, e11; Purple has its root alone and no sun to reach it.
CLIMBED = (
    "./gg./.g.../.#g..#./...g...../...g...../..#g..#../..gg...../..g....../"
    "..g.#..../..g.#..../..g...p.. g 5 0 21"
)


@pytest.mark.parametrize("bot_class", [GreedyBot, ClimberBot])
@pytest.mark.parametrize("top", [".", "g"])
def test_bots_put_a_leaf_on_e12_when_nothing_can_stop_it(bot_class: type[Bot], top: str) -> None:
    position = Position.from_string(top + CLIMBED[1:])
    turn = bot_class(0).choose(position, Clock(1.0, 0.05))
    assert "Le12" in str(turn)
    assert position.play(turn).leaves(Player.GREEN) >> TOP & 1


# --- clocks and the arena --------------------------------------------------------------


def test_clock_budget_shares_the_remaining_time() -> None:
    assert Clock(1.0, 0.05).budget(turns_to_go=20, increment_share=0.8) == pytest.approx(0.09)
    assert Clock(0.1, 0.05).budget(turns_to_go=20, increment_share=0.8) == pytest.approx(0.045)
    assert Clock(100.0, 0.0).budget(cap=2.0) == 2.0
    assert Clock(0.5, 0.0, per_turn=0.5).budget() == pytest.approx(0.25)


class Sleeper(Bot):
    """Passes, slowly."""

    name = "sleeper"

    def choose(self, position: Position, clock: Clock) -> Turn:
        time.sleep(0.03)
        return Turn.PASS


class Cheater(Bot):
    """Creeps where it has no vine."""

    name = "cheater"

    def choose(self, position: Position, clock: Clock) -> Turn:
        return Turn.parse("e12")


def test_arena_forfeits_a_bot_out_of_time() -> None:
    played = play_game(Sleeper(), RandomBot(0), time_control=TimeControl(base=0.05), margin=0.0)
    assert played.ending.scores == (0.0, 1.0)
    assert played.ending.termination == "time forfeit"
    assert played.ending.reason.startswith("Green (sleeper) forfeits: Green ran out of time")


def test_arena_forfeits_an_illegal_turn() -> None:
    played = play_game(RandomBot(0), Cheater(), time_control=TimeControl(base=5.0))
    assert played.ending.scores == (1.0, 0.0)
    assert played.ending.termination == "rules infraction"
    assert "turn 2 (Purple): creep e12" in played.ending.reason


def test_arena_tells_bots_about_the_game() -> None:
    seen: list[object] = []

    class Watcher(RandomBot):
        def new_game(self, info: GameInfo) -> None:
            seen.append(info)

        def game_over(self, result: GameResult) -> None:
            seen.append(result)

    played = play_game(
        Watcher(1),
        GreedyBot(1),
        time_control=TimeControl(base=5.0, increment=0.1),
        options={"turn_limit": 6},
    )
    info, result = seen
    assert isinstance(info, GameInfo) and info.player is Player.GREEN and info.turn_limit == 6
    assert isinstance(result, GameResult) and result.scores == played.ending.scores
    assert len(played.record.turns) <= 6
    assert verify(played.record).valid


def test_greedy_beats_random() -> None:
    match = play_match(
        lambda seed: GreedyBot(seed),
        lambda seed: RandomBot(seed),
        games=6,
        time_control=TimeControl(base=5.0, increment=0.1),
    )
    assert match.wins >= 5, match.summary()


def test_bundled_bots_are_registered() -> None:
    for name in BUNDLED:
        assert make_bot(name, 1).name == name
    with pytest.raises(KeyError, match="unknown bot"):
        make_bot("nobody")


# --- the SDK's protocol loop --------------------------------------------------------------


def referee_lines(*messages: NewGame | TurnRequest | GameOver | Quit) -> io.StringIO:
    """The referee's side of a conversation, as the bot's stdin."""
    return io.StringIO("".join(encode_line(message).decode() for message in messages))


def new_game(seat: int = 0) -> NewGame:
    return NewGame(
        id=1,
        game="ivy",
        seat=seat,
        seat_name=("green", "purple")[seat],
        players=("me", "you"),
        time_control=TimeControlInfo(
            kind="fischer", base_ms=1000, increment_ms=50, per_turn_ms=None
        ),
        startup_ms=1000,
        settings={"turn_limit": 50},
        position=str(Position.START),
    )


def turn_request(id: int, position: Position) -> TurnRequest:
    return TurnRequest(
        id=id,
        turn=position.turn,
        view=CODEC.view_raw(position),
        clock=ClockInfo(remaining_ms=900, increment_ms=50, per_turn_ms=None, last_turn_ms=None),
    )


class Recorder(Bot):
    """Logs once, records what the SDK hands it, and plays a creep from c1."""

    name = "recorder"
    author = "tests"
    version = "0.1"

    def __init__(self) -> None:
        super().__init__(0)
        self.calls: list[object] = []

    def new_game(self, info: GameInfo) -> None:
        self.calls.append(info)

    def choose(self, position: Position, clock: Clock) -> Turn:
        self.calls.append((position, clock))
        self.log("thinking")
        return Turn.parse("c2+Lc2")

    def game_over(self, result: GameResult) -> None:
        self.calls.append(result)


def test_sdk_answers_new_game_turn_and_quits() -> None:
    bot = Recorder()
    stdin = referee_lines(
        new_game(),
        turn_request(2, Position.START),
        GameOver(id=3, result="1-0", scores=(1.0, 0.0), termination="normal", reason="x"),
        Quit(),
        turn_request(4, Position.START),  # after quit: never read
    )
    stdout = io.StringIO()
    run(bot, stdin, stdout)
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert replies == [
        {"type": "ready", "id": 1, "name": "recorder", "author": "tests", "version": "0.1"},
        {"type": "log", "message": "thinking"},
        {
            "type": "turn",
            "id": 2,
            "actions": [{"type": "creep", "cell": "c2"}, {"type": "leaf", "cell": "c2"}],
        },
    ]
    info, (position, clock), result = bot.calls
    assert isinstance(info, GameInfo)
    assert (info.player, info.players, info.turn_limit) == (Player.GREEN, ("me", "you"), 50)
    assert info.clock == Clock(1.0, 0.05)
    assert position == Position.START
    assert clock == Clock(0.9, 0.05)
    assert isinstance(result, GameResult) and result.reason == "x"


def test_sdk_stops_at_end_of_input_and_skips_noise() -> None:
    stdin = io.StringIO("\n" + encode_line(new_game(1)).decode() + "not json\n")
    stdout = io.StringIO()
    run(Recorder(), stdin, stdout)
    assert json.loads(stdout.getvalue())["type"] == "ready"


def test_bot_modules_run_as_processes_over_the_protocol() -> None:
    lines = referee_lines(new_game(), turn_request(2, Position.START), Quit()).getvalue()
    done = subprocess.run(
        [sys.executable, "-m", "bots.greedy", "--seed", "3"],
        input=lines,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=20,
        check=True,
    )
    ready, reply = (json.loads(line) for line in done.stdout.splitlines())
    assert ready["name"] == "greedy"
    Position.START.play(decode_actions(msgspec.Raw(json.dumps(reply["actions"]).encode())))


# --- the Node.js bot -------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_bot_answers_with_legal_turns() -> None:
    positions = [Position.START, *POSITIONS[5::15]]
    requests = [new_game(), *(turn_request(10 + i, p) for i, p in enumerate(positions)), Quit()]
    done = subprocess.run(
        ["node", str(ROOT / "bots" / "ivy_bot.js")],
        input=referee_lines(*requests).getvalue(),
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[0]["type"] == "ready" and replies[0]["id"] == 1
    assert sum(reply["type"] == "log" for reply in replies) == 1
    turns = [reply for reply in replies if reply["type"] == "turn"]
    assert [reply["id"] for reply in turns] == [10 + i for i in range(len(positions))]
    for position, reply in zip(positions, turns, strict=True):
        turn = decode_actions(msgspec.Raw(json.dumps(reply["actions"]).encode()))
        position.play(turn)
    assert turns[0]["actions"], "with 4 sun at the start it creeps"
