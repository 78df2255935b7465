"""Text from bots made safe to show: referee.untrusted and the terminal lines that use it."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.untrusted import ELLIPSIS, MAX_TEXT_LENGTH, clip, for_terminal, printable
from tournaments.pairings import Pairing
from tournaments.progress import describe_game
from tournaments.store import GameRecord
from tournaments.workers import GameDone


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text", "plain text"),
        ("  two\nlines\r\n\tand tabs  ", "two lines and tabs"),
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("\x9b2Jcleared", "cleared"),
        ("\x1b]0;window title\x07after", "after"),
        ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b]0;never ended", ""),
        ("\x1bcreset", "reset"),
        ("nul\x00bell\x07del\x7f", "nulbelldel"),
        ("next\x85line\u2028sep", "next line sep"),
        ("\u202egnp.exe \u2066iso\u2069 zero\u200bwidth", "gnp.exe iso zerowidth"),
        ("lone \ud800 surrogate", "lone surrogate"),
        ("émoji 🎉 and 中文", "émoji 🎉 and 中文"),
    ],
)
def test_printable_leaves_one_line_of_visible_characters(text: str, shown: str) -> None:
    assert printable(text) == shown


@given(st.text())
def test_printable_text_is_one_printable_line(text: str) -> None:
    shown = printable(text)
    controls = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    assert not any(unicodedata.category(c) in controls for c in shown)
    assert all(c == " " or not c.isspace() for c in shown)
    assert "  " not in shown and shown == shown.strip()
    shown.encode("utf-8")  # no lone surrogate left


def test_clip_bounds_the_length_and_says_so() -> None:
    assert clip("short", 10) == "short"
    clipped = clip("word " * 50, 20)
    assert len(clipped) <= 20 and clipped.endswith(ELLIPSIS)
    assert clip(clipped, 20) == clipped
    assert len(for_terminal("x" * 10_000)) == MAX_TEXT_LENGTH


def test_a_finished_game_line_shows_no_escape_codes() -> None:
    pairing = Pairing(index=6, round=2, players=("ann", "bea"))
    reason = 'Green (ann) forfeits: invalid message: "\x1b[2J\x1b]0;owned\x07\n[Result "1/2-1/2"]'
    stored = GameRecord(6, ("ann", "bea"), "0-1", (2, 1), (0.0, 1.0), "x", reason, 0, "", "")
    game = GameDone(game=stored, logs=(), page="")
    line = describe_game(pairing, game, 1.25)
    assert line == (
        'game 7 (round 2): ann - bea 0-1, Green (ann) forfeits: invalid message: " '
        '[Result "1/2-1/2"], 1.2 s'
    )
