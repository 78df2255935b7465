"""`referee play`: a person's seat is untimed but its think time recorded, the record is
dated, and the commands (help, moves, quit) are said once."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import trio
import trio.testing
from fakebots import FAKEBOTS

from protocol.messages import DEFAULT_MAX_LINE_BYTES
from referee.clock import TimeControl
from referee.games import get_entry
from referee.games.base import GameSettings
from referee.pgn import ClockAnnotation, read_games
from referee.play import COMMANDS, PersonSeat
from referee.session import GameSession

PASS_BOT = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"


class _Typist:
    """A person who thinks ``seconds`` (on trio's clock) before typing each line."""

    def __init__(self, seconds: float, lines: list[str]) -> None:
        self._seconds = seconds
        self._lines = lines

    async def readline(self) -> str | None:
        await trio.sleep(self._seconds)
        return self._lines.pop(0) if self._lines else None


async def test_a_persons_think_time_is_recorded_without_a_clock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    entry = get_entry("ivy")
    session = GameSession(
        entry.rules,
        entry.codec,
        GameSettings(players=2),
        players=["human", "bot"],
        control=TimeControl.parse("1+0"),
        max_line_bytes=DEFAULT_MAX_LINE_BYTES,
        untimed=(0,),
    )
    said: list[str] = []
    # Three lines at 40 s each: a typo, a request for the moves, then the turn: 120 s in
    # all, far past the 1 s control, and no loss on time.
    person = PersonSeat(
        "human",
        entry,
        _Typist(40, ["zz9", "moves", "c2"]),  # type: ignore[arg-type]
        color=False,
        say=said.append,
    )
    request = session.next_request(person.next_id)
    reply, elapsed = await person.decide(request)
    assert elapsed == 120
    assert session.submit(0, reply, elapsed, forfeit=False) is None
    assert session.ending is None
    (turn,) = session.record().turns
    assert turn.clock == ClockAnnotation(clock_ms=None, elapsed_ms=120_000)
    assert "Legal actions to begin the turn with" in "\n".join(said)
    assert "  creep: b1 d1 c2" in said and "  pass: --" in said


def test_play_dates_its_record_says_each_command_once_and_lists_moves(tmp_path: Path) -> None:
    pgn = tmp_path / "played.pgn"
    completed = subprocess.run(
        [sys.executable, "-m", "referee.cli", "play", PASS_BOT, "--option", "turn_limit=4",
         "--no-color", "--pgn", str(pgn)],
        input="help\nmoves\nc2\n--\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    help_line = get_entry("ivy").person_help + " " + COMMANDS
    assert lines[0] == f"You play Green against pass_bot. {help_line}"
    assert completed.stdout.count("'quit'") == 2  # the intro and the one `help`
    assert help_line in lines
    start = lines.index("Green to play> ", lines.index(help_line)) + 1
    assert lines[start : start + 3] == [
        "Legal actions to begin the turn with (join actions with '+', e.g. c2+Lc2; each costs"
        " sun, and what may follow depends on what came before):",
        "  creep: b1 d1 c2",
        "  pass: --",
    ]
    (game,) = read_games(pgn.read_text())
    assert not isinstance(game, Exception)
    assert game.tags["Date"] == datetime.now(UTC).strftime("%Y.%m.%d")
    green = game.turns[0::2]  # the person's turns: the time taken, no clock
    purple = game.turns[1::2]
    assert all(t.clock is not None and t.clock.clock_ms is None for t in green)
    assert all(t.clock is not None and t.clock.elapsed_ms is not None for t in green)
    assert all(t.clock is not None and t.clock.clock_ms is not None for t in purple)


def test_verdant_moves_group_the_first_steps_and_count_a_long_kind() -> None:
    from test_verdant_rules import GAME, started, with_seat

    from referee.games.verdant.render import moves

    lines = moves(GAME.view(with_seat(started(), 0, thumbs=4), 0))
    assert lines[0] == (
        "Legal first steps (a decision joins steps with '/', each legal after the ones before it):"
    )
    by_kind = {line.split(":")[0].strip(): line for line in lines[1:]}
    assert set(by_kind) >= {"pick", "replace cards", "replace tokens"}
    assert by_kind["pick"].startswith("  pick: pick:0p pick:1p")
    assert by_kind["replace cards"].endswith(" … (255 in all)")
    assert len(by_kind["replace cards"].split(" … ")[0].split()) == 2 + 12  # label + 12
