"""Game records: the PGN writer, the tolerant reader and clock comments."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.errors import RecordError
from referee.pgn import (
    ClockAnnotation,
    GameRecord,
    PgnError,
    RecordedTurn,
    append_game,
    clean_comment,
    format_game,
    read_games,
    read_pgn_file,
)

DATA = Path(__file__).parent / "data"


PURPLE_TO_MOVE = (
    "./.../...../.#...#./........./........./..#...#../........./........./....#..../....#..../"
    "..g...p.. p 4 5 10"
)
"""A set-up position with Purple to play turn 10."""


def only_records(text: str) -> list[GameRecord]:
    """Every game of ``text``, failing the test on any PgnError."""
    games = list(read_games(text))
    errors = [game for game in games if isinstance(game, PgnError)]
    assert not errors, errors
    return [game for game in games if isinstance(game, GameRecord)]


def clocked(token: str, clock_ms: int, elapsed_ms: int) -> RecordedTurn:
    return RecordedTurn(token, str(ClockAnnotation(clock_ms, elapsed_ms)))


# --- the record -------------------------------------------------------------------


def test_tags_put_the_roster_first_and_fill_unknown_values() -> None:
    record = GameRecord(tags={"Game": "Ivy", "Black": "bob", "White": "alice"}, result="0-1")
    assert list(record.tags) == [
        "Event",
        "Site",
        "Date",
        "Round",
        "White",
        "Black",
        "Result",
        "Game",
    ]
    assert record.tags["Date"] == "????.??.??"
    assert record.tags["Result"] == "0-1"
    assert record.tags["White"] == "alice"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: GameRecord(result="2-0"), "result '2-0'"),
        (lambda: GameRecord(tags={"Result": "1-0"}, result="0-1"), "does not match"),
        (lambda: GameRecord(tags={"Bad Name": "x"}), "tag name"),
        (lambda: GameRecord(tags={"Event": "two\nlines"}), "line break"),
        (lambda: RecordedTurn("c2", "a } in a comment"), "cannot contain '}'"),
        (lambda: RecordedTurn("c2 d2"), "not a PGN symbol"),
        (lambda: RecordedTurn("1-0"), "not a PGN symbol"),
    ],
)
def test_records_refuse_what_pgn_cannot_hold(make, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        make()


def test_clean_comment_makes_free_text_fit_and_round_trip() -> None:
    message = 'bad line {"type": "turn",\n  "id": 7}'
    cleaned = clean_comment(message)
    assert cleaned == 'bad line {"type": "turn", "id": 7)'
    record = GameRecord(turns=[RecordedTurn("c2", cleaned)])
    [read] = only_records(format_game(record))
    assert read.turns[0].comment == cleaned


def test_first_turn_comes_from_a_setup_position() -> None:
    assert GameRecord().first_turn == 1
    assert GameRecord(tags={"SetUp": "1", "Position": PURPLE_TO_MOVE}).first_turn == 10
    assert GameRecord(tags={"SetUp": "0", "Position": PURPLE_TO_MOVE}).first_turn == 1
    with pytest.raises(RecordError, match="does not end with a turn number"):
        _ = GameRecord(tags={"SetUp": "1", "Position": "garbage"}).first_turn


# --- clock comments ----------------------------------------------------------


@pytest.mark.parametrize(
    ("clock_ms", "elapsed_ms", "text"),
    [
        (39_500, 210, "[%clk 0:00:39.5] [%emt 0.21]"),
        (3_723_000, 5, "[%clk 1:02:03] [%emt 0.005]"),
        (600_000, 0, "[%clk 0:10:00] [%emt 0]"),
        (None, 1_500, "[%emt 1.5]"),
        (9_999, None, "[%clk 0:00:09.999]"),
    ],
)
def test_clock_annotations_format_and_parse_back(
    clock_ms: int | None, elapsed_ms: int | None, text: str
) -> None:
    annotation = ClockAnnotation(clock_ms, elapsed_ms)
    assert str(annotation) == text
    assert ClockAnnotation.parse(text) == annotation


def test_clock_annotations_are_found_among_other_text() -> None:
    parsed = ClockAnnotation.parse("slow! [%emt 0:00:01.25] then [%clk 12.5]")
    assert parsed == ClockAnnotation(clock_ms=12_500, elapsed_ms=1_250)
    assert ClockAnnotation.parse(None) == ClockAnnotation()
    assert ClockAnnotation.parse("no clocks here") == ClockAnnotation()


# --- the writer ----------------------------------------------------------------


def test_writer_reproduces_the_spec_example() -> None:
    text = (DATA / "spec_example.pgn").read_text()
    [record] = only_records(text)
    assert format_game(record) == text


def test_writer_numbers_a_game_that_starts_with_purple() -> None:
    record = GameRecord(
        tags={"SetUp": "1", "Position": PURPLE_TO_MOVE},
        turns=[RecordedTurn("h1"), RecordedTurn("b1"), RecordedTurn("--")],
    )
    assert format_game(record).split("\n\n")[1] == "5... h1 6. b1 -- *"


def test_writer_escapes_tags_and_wraps_long_movetext() -> None:
    record = GameRecord(
        tags={"Event": 'The "big" one \\ final', "White": "alice"},
        turns=[clocked(f"c{n % 9 + 1}+Lc2", 39_500 - n, 210) for n in range(40)],
        result="1/2-1/2",
        comment="a leading comment " * 10,
    )
    text = format_game(record)
    assert '[Event "The \\"big\\" one \\\\ final"]' in text
    assert text.endswith("1/2-1/2\n\n")
    movetext = text.split("\n\n")[1]
    for line in movetext.splitlines():
        assert len(line) < 80
        assert not line.startswith(("[", "%"))


# --- round trips ---------------------------------------------------------------


def sample_records() -> list[GameRecord]:
    """Records covering escaped tags, clock comments, Purple first, empty games."""
    return [
        GameRecord(
            tags={
                "Event": 'Quote " and backslash \\ test',
                "White": "alice",
                "Black": "bob",
                "Game": "Ivy",
                "TurnLimit": "200",
            },
            turns=[
                clocked("c2+Lc2", 39_500, 210),
                clocked("f1+f2+g2", 9_871, 1_002),
                RecordedTurn("xb2", "plain words; and [brackets] %percent"),
                RecordedTurn("--"),
            ],
            result="1-0",
            comment="before the first turn",
        ),
        GameRecord(
            tags={"White": "carol", "Black": "dave", "SetUp": "1", "Position": PURPLE_TO_MOVE},
            turns=[RecordedTurn("h1", ""), RecordedTurn("b1"), clocked("g2", 3_600_000, 0)],
            result="*",
        ),
        GameRecord(tags={"White": "eve", "Black": "frank"}, result="1/2-1/2"),
    ]


def test_round_trip_of_many_games_per_file() -> None:
    records = sample_records()
    text = "".join(format_game(record) for record in records)
    assert only_records(text) == records


_TAG_VALUES = st.text(
    st.characters(exclude_characters="\r\n", exclude_categories=["Cs"]), max_size=30
)
_COMMENTS = st.text(
    st.characters(exclude_characters="}", exclude_categories=["Cs"]), max_size=60
).map(lambda text: " ".join(text.split()))
_TAG_NAMES = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=12).filter(
    lambda name: name not in ("Result", "SetUp", "Position")
)
_TOKENS = st.just("--") | st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters),
    st.text(string.ascii_letters + string.digits + "_+#=:-", max_size=15),
)
_RECORDS = st.builds(
    GameRecord,
    tags=st.dictionaries(_TAG_NAMES, _TAG_VALUES, max_size=8),
    turns=st.lists(
        st.builds(
            RecordedTurn,
            token=_TOKENS,
            comment=st.none() | _COMMENTS,
        ),
        max_size=20,
    ),
    result=st.sampled_from(["1-0", "0-1", "1/2-1/2", "*"]),
    comment=st.none() | _COMMENTS,
)


@given(st.lists(_RECORDS, min_size=1, max_size=3))
def test_any_records_round_trip(records: list[GameRecord]) -> None:
    text = "".join(format_game(record) for record in records)
    assert only_records(text) == records


def test_append_game_writes_whole_games_to_a_file(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    records = sample_records()
    for record in records:
        append_game(path, record)
    assert read_pgn_file(path) == records


def test_read_pgn_file_reports_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"cannot read .*nothing\.pgn"):
        read_pgn_file(tmp_path / "nothing.pgn")


def test_read_pgn_file_falls_back_to_latin_1(tmp_path: Path) -> None:
    path = tmp_path / "latin.pgn"
    path.write_bytes('[White "Jos\xe9"]\n\n1. c2 *\n'.encode("latin-1"))
    [record] = read_pgn_file(path)
    assert isinstance(record, GameRecord)
    assert record.tags["White"] == "José"


# --- the reader ----------------------------------------------------------------


def test_reader_skips_numbers_nags_suffixes_and_line_comments() -> None:
    text = """% escape line
[White "a"]
[Black "b"]

{opening remark}
1.c2 $1 {first} {second} 1... f1!? ; ignored to the end of the line
2. d2 2... -- {
  spread over
  lines } 3.xb2 *
"""
    [record] = only_records(text)
    assert [turn.token for turn in record.turns] == ["c2", "f1", "d2", "--", "xb2"]
    assert record.comment == "opening remark"
    assert record.turns[0].comment == "first second"
    assert record.turns[3].comment == "spread over lines"
    assert record.result == "*"


def test_reader_accepts_a_game_without_tags() -> None:
    [record] = only_records("1. c2 f1 1-0\n")
    assert record.tags["White"] == "?"
    assert record.result == "1-0"


def test_broken_games_are_reported_and_the_others_read() -> None:
    games = read_pgn_file(DATA / "broken.pgn")
    assert len(games) == 5
    first, second, third, fourth, fifth = games
    assert isinstance(first, GameRecord)
    assert [t.token for t in first.turns] == ["c2", "f1", "d2", "f2"]
    assert first.turns[2].comment == "a comment that spans two lines"
    assert isinstance(second, PgnError)
    assert (second.game, second.line) == (2, 15)
    assert "unterminated comment" in second.reason
    assert isinstance(third, PgnError)
    assert (third.game, third.line) == (3, 18)
    assert "bad tag line" in third.reason
    assert isinstance(fourth, PgnError)
    assert (fourth.game, fourth.line) == (4, 29)
    assert "'d2@'" in fourth.reason
    assert isinstance(fifth, GameRecord)
    assert fifth.tags["Event"] == "Good two"
    assert [t.token for t in fifth.turns] == ["c2", "f1", "d2", "--"]
    assert str(fourth).startswith("game 4, line 29: ")


def test_a_missing_result_is_reported_and_the_next_game_read() -> None:
    text = """[Event "one"]

1. c2 f1
[Event "two"]

1. c2 1-0

[Event "three"]

1. c2 f1
"""
    games = list(read_games(text))
    assert len(games) == 3
    assert isinstance(games[0], PgnError)
    assert (games[0].game, games[0].line) == (1, 4)
    assert "before a result" in games[0].reason
    assert isinstance(games[1], GameRecord)
    assert games[1].tags["Event"] == "two"
    assert isinstance(games[2], PgnError)
    assert (games[2].game, games[2].line) == (3, 10)
    assert "without a result" in games[2].reason


@pytest.mark.parametrize(
    ("movetext", "reason"),
    [
        ("1. c2 ( f1 ) *", "variations"),
        ("1. c2 1-0", "does not match the Result tag '0-1'"),
        ("1. c2 ) *", "unexpected ')'"),
        ("1. c2 {never closed", "unterminated comment"),
    ],
)
def test_reader_reports_other_malformed_movetext(movetext: str, reason: str) -> None:
    text = f'[Result "0-1"]\n\n{movetext}\n\n[Event "next"]\n\n1. c2 *\n'
    first, second = read_games(text)
    assert isinstance(first, PgnError)
    assert reason in first.reason
    assert (first.game, first.line) == (1, 3)
    assert isinstance(second, GameRecord)
    assert second.tags["Event"] == "next"
