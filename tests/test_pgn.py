"""Game records: the PGN writer, the tolerant reader and clock comments."""

from __future__ import annotations

import os
import re
import string
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.errors import RecordError
from referee.games import CHANCE
from referee.pgn import (
    MAX_COMMENT_LENGTH,
    MAX_TAG_VALUE_LENGTH,
    MAX_WORD_LENGTH,
    ClockAnnotation,
    GameHeaders,
    GameRecord,
    PgnError,
    RecordedTurn,
    append_game,
    clean_comment,
    clean_tag_value,
    format_game,
    is_ranking,
    iter_pgn_file,
    iter_pgn_headers,
    option_tag,
    outcome_tags,
    read_game,
    read_games,
    read_headers,
    read_pgn_file,
    result_places,
    result_token,
    seat_players,
    seat_tags,
    tagged_scores,
)
from referee.untrusted import printable

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
    return RecordedTurn(token, clock=ClockAnnotation(clock_ms, elapsed_ms))


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
        (lambda: RecordedTurn("c2 d2"), "not a PGN symbol"),
        (lambda: RecordedTurn("1-0"), "not a PGN symbol"),
    ],
)
def test_records_refuse_what_pgn_cannot_hold(make, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        make()


def test_clean_comment_makes_free_text_fit_and_round_trip() -> None:
    message = 'bad line {"type": "turn",\n  "id": 7} [Result "1/2-1/2"] 50%'
    cleaned = clean_comment(message)
    assert cleaned == 'bad line ("type": "turn", "id": 7) (Result "1/2-1/2") 50％'
    record = GameRecord(turns=[RecordedTurn("c2", message)])
    assert record.turns[0].comment == cleaned
    [read] = only_records(format_game(record))
    assert read.turns[0].comment == cleaned


def test_clean_comment_drops_controls_and_escape_sequences() -> None:
    text = "a\x00b \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 \u202egnp \x85end\ud800"
    assert clean_comment(text) == "ab red link gnp end"


def test_clean_comment_cuts_long_words_and_long_text() -> None:
    word = "x" * (2 * MAX_WORD_LENGTH + 5)
    assert clean_comment(word).split(" ") == [
        "x" * MAX_WORD_LENGTH,
        "x" * MAX_WORD_LENGTH,
        "xxxxx",
    ]
    long = clean_comment("word " * 1000)
    assert len(long) <= MAX_COMMENT_LENGTH
    assert long.endswith(" …")


def test_clean_tag_value_needs_no_escape_and_fits_a_line() -> None:
    assert clean_tag_value('The "big" one \\ final\n') == "The 'big' one / final"
    assert clean_tag_value("a\tb\x1b[2Jc") == "a bc"
    assert len(clean_tag_value("n" * 1000)) == MAX_TAG_VALUE_LENGTH


@given(st.text())
def test_cleaning_is_stable(text: str) -> None:
    assert clean_comment(clean_comment(text)) == clean_comment(text)
    assert clean_tag_value(clean_tag_value(text)) == clean_tag_value(text)
    assert printable(printable(text)) == printable(text)


def test_first_turn_comes_from_a_setup_position() -> None:
    assert GameRecord().first_turn == 1
    assert GameRecord(tags={"SetUp": "1", "FEN": PURPLE_TO_MOVE}).first_turn == 10
    assert GameRecord(tags={"SetUp": "1", "Position": PURPLE_TO_MOVE}).first_turn == 10
    assert GameRecord(tags={"SetUp": "0", "FEN": PURPLE_TO_MOVE}).first_turn == 1
    with pytest.raises(RecordError, match="does not end with a turn number"):
        _ = GameRecord(tags={"SetUp": "1", "FEN": "garbage"}).first_turn


def test_the_fen_tag_wins_over_an_old_position_tag() -> None:
    record = GameRecord(tags={"SetUp": "1", "FEN": PURPLE_TO_MOVE, "Position": "old 3"})
    assert record.start_position == PURPLE_TO_MOVE
    assert GameRecord(tags={"FEN": PURPLE_TO_MOVE}).start_position is None


# --- clock comments ----------------------------------------------------------


@pytest.mark.parametrize(
    ("clock_ms", "elapsed_ms", "text"),
    [
        (39_500, 210, "[%clk 0:00:39.5] [%emt 0:00:00.21]"),
        (3_723_000, 5, "[%clk 1:02:03] [%emt 0:00:00.005]"),
        (600_000, 0, "[%clk 0:10:00] [%emt 0:00:00]"),
        (None, 61_500, "[%emt 0:01:01.5]"),
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


def test_older_records_with_plain_seconds_still_read() -> None:
    text = '[White "a"]\n\n1. c2 {[%clk 0:00:39.5] [%emt 0.21]} f1 {[%emt 1.5] slow} *\n'
    [record] = only_records(text)
    assert record.turns[0] == RecordedTurn("c2", None, ClockAnnotation(39_500, 210))
    assert record.turns[1] == RecordedTurn("f1", "slow", ClockAnnotation(None, 1_500))
    assert "[%emt 0:00:00.21]" in format_game(record)


def test_a_comment_holds_the_clock_first_then_the_text() -> None:
    turn = RecordedTurn("c2", "Green (a) forfeits: x", ClockAnnotation(5_000, 120))
    text = format_game(GameRecord(turns=[turn]))
    assert "{[%clk 0:00:05] [%emt 0:00:00.12] Green (a) forfeits: x}" in text
    assert RecordedTurn("c2", "", ClockAnnotation(5_000, 1)).comment is None
    assert RecordedTurn("c2", None, ClockAnnotation()).clock is None


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


def test_writer_cleans_tags_and_wraps_long_movetext() -> None:
    record = GameRecord(
        tags={"Event": 'The "big" one \\ final', "White": "alice"},
        turns=[clocked(f"c{n % 9 + 1}+Lc2", 39_500 - n, 210) for n in range(40)],
        result="1/2-1/2",
        comment="a leading comment " * 10,
    )
    text = format_game(record)
    assert "[Event \"The 'big' one / final\"]" in text
    assert text.endswith("1/2-1/2\n\n")
    movetext = text.split("\n\n")[1]
    for line in movetext.splitlines():
        assert len(line) < 80
        assert not line.startswith(("[", "%"))
    assert movetext.count("[%clk ") == 40  # a clock annotation is never split


HOSTILE = (
    'x"]\n[Result "1/2-1/2"]\n\n[White "forged"] } {nested} ;semi \\ %pct\n%escape'
    "\x00NUL \x1b[2J\x1b]0;title\x07ESC \u202eRLO 1-0 0-1 * " + "w" * 300 + " tail" * 200
)
"""Bot text that tries every way out of a comment or a tag."""


def test_hostile_text_cannot_leave_its_comment_or_tag() -> None:
    record = GameRecord(
        tags={"White": HOSTILE, "Black": "bob", "Event": HOSTILE},
        turns=[clocked("c2", 1_000, 1), RecordedTurn("f1", HOSTILE, ClockAnnotation(2, 3))],
        result="0-1",
        comment=HOSTILE,
    )
    text = format_game(record)
    tags, movetext = text.rstrip("\n").split("\n\n")
    assert len(tags.splitlines()) == len(record.tags)
    assert [line for line in tags.splitlines() if line.startswith("[Result ")] == ['[Result "0-1"]']
    for line in movetext.splitlines():
        assert line.isprintable() and len(line) < 80
        assert not line.startswith(("[", "%"))
    assert movetext.count("{") == movetext.count("}") == 3
    assert movetext.count("[") == 4  # two clock annotations of two commands each
    assert only_records(text) == [record]
    [headers] = read_headers(text)
    assert isinstance(headers, GameHeaders)
    assert headers.tags == record.tags


# --- any number of seats -----------------------------------------------------------

THREE = {"Seat1": "ann", "Seat2": "bea", "Seat3": "cy"}


def decision(token: str, actor: int, turn: int, **extra: object) -> RecordedTurn:
    """A decision that names its actor; seats' decisions get a clock unless told."""
    if actor != CHANCE and "clock" not in extra:
        extra["clock"] = ClockAnnotation(9_000, 15)
    return RecordedTurn(token, actor=actor, turn=turn, **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("places", "scores", "result"),
    [
        ((1,), (47,), "47"),
        ((1,), (0,), "0"),
        ((1, 2), (1, 0), "1-0"),
        ((2, 1), (30, 41), "0-1"),
        ((1, 1), (0.5, 0.5), "1/2-1/2"),
        ((2, 1, 3), (40, 47, 12), "2-1-3"),
        ((1, 1, 3, 3, 5), (9, 9, 5, 5, 1), "1-1-3-3-5"),
    ],
)
def test_every_result_form_round_trips(
    places: tuple[int, ...], scores: tuple[float, ...], result: str
) -> None:
    assert result_token(places, scores) == result
    assert result_places(result, len(places)) == places
    tags = seat_tags(None, [f"p{seat}" for seat in range(len(places))])
    record = GameRecord(tags=tags, result=result)
    [read] = only_records(format_game(record))
    assert read == record and read.result == result
    assert read.seats == len(places)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("1-1-2", "does not give places"),
        ("2-1", "is not a result"),
        ("0-1-2", "is not a result"),
        ("1-2-3-4-5-6", "is not a result"),
        ("-3", "is not a result"),
        ("47.5", "is not a result"),
    ],
)
def test_results_that_no_game_gives_are_refused(result: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        GameRecord(result=result)


def test_a_result_is_checked_against_the_seats_the_tags_name() -> None:
    with pytest.raises(RecordError, match="'1-0' is not a result of 3 seats"):
        GameRecord(tags=THREE, result="1-0")
    with pytest.raises(RecordError, match="'2-1-3' is not a result of 1 seats"):
        GameRecord(tags={"Seat1": "solo"}, result="2-1-3")
    with pytest.raises(RecordError, match="'47' is not a result of 3 seats"):
        GameRecord(tags=THREE, result="47")
    assert GameRecord(result="2-1-3").seats is None  # no seat tags: nothing to check against
    assert result_places("2-1-3", 2) is None and result_places("*", 3) is None
    assert result_places("47", 1) == (1,) and result_places("1-0", 1) is None


def test_ranking_places_share_ties_and_skip_after_them() -> None:
    assert is_ranking((1, 1, 3)) and is_ranking((2, 1, 2)) and is_ranking((1,))
    assert not is_ranking((1, 1, 2)) and not is_ranking((2, 3)) and not is_ranking(())


def test_seat_tags_name_players_by_seat_and_white_black_for_two() -> None:
    assert seat_tags(None, ["a", "b", "c"]) == {"Seat1": "a", "Seat2": "b", "Seat3": "c"}
    assert seat_tags(None, ["a", "b"]) == {
        "White": "a",
        "Black": "b",
        "Seat1": "a",
        "Seat2": "b",
    }
    assert seat_tags(("Green", "Purple"), ["a", "b"]) == {
        "White": "a",
        "Black": "b",
        "Green": "a",
        "Purple": "b",
    }
    assert seat_players(GameRecord(tags=THREE).tags) == ("ann", "bea", "cy")
    assert seat_players(GameRecord(tags={"White": "a", "Black": "b"}).tags) == ("a", "b")
    assert seat_players({}) == ("?", "?")


def test_outcome_tags_give_places_scores_and_each_seats_breakdown() -> None:
    breakdown = ((("plants", 20), ("pots", 8)), (("plants", 11), ("pots", 0)))
    assert outcome_tags((1, 2), (28, 11.5), breakdown) == {
        "Places": "1-2",
        "Scores": "28-11.5",
        "Seat1Score": "plants=20 pots=8 total=28",
        "Seat2Score": "plants=11 pots=0 total=11.5",
    }
    assert outcome_tags((1, 2), (1, 0), ()) == {}
    assert tagged_scores({"Scores": "28-11.5"}) == (28.0, 11.5)
    assert tagged_scores({"Scores": "28--1"}) is None and tagged_scores({}) is None


def test_options_are_recorded_in_camel_case_tags_that_never_clash() -> None:
    assert option_tag("ivy", "turn_limit") == "TurnLimit"
    assert option_tag("verdant", "variant") == "VerdantVariant"
    assert option_tag("dice", "seed") == "DiceSeed"


def test_a_record_that_names_actors_numbers_each_turn_once() -> None:
    record = GameRecord(
        tags=THREE,
        turns=[
            decision("P07", CHANCE, 1),
            decision("R12", CHANCE, 1),
            decision("north", 0, 1),
            decision("cards:0p+3r", 1, 2),
            decision("P33", CHANCE, 2, comment="revealed"),
            decision("split/pick:2r:1/place@-1,0/use:taken@1,0", 1, 2),
            decision("red-bed", CHANCE, 2),
        ],
        result="2-1-3",
    )
    movetext = format_game(record).split("\n\n")[1]
    assert all(len(line) < 80 for line in movetext.splitlines())
    assert " ".join(movetext.split()) == (
        "1. c:P07 c:R12 s1:north {[%clk 0:00:09] [%emt 0:00:00.015]}"
        " 2. s2:cards:0p+3r {[%clk 0:00:09] [%emt 0:00:00.015]} c:P33 {revealed}"
        " s2:split/pick:2r:1/place@-1,0/use:taken@1,0 {[%clk 0:00:09] [%emt 0:00:00.015]}"
        " c:red-bed 2-1-3"
    )
    assert only_records(format_game(record)) == [record]
    assert record.names_actors and not GameRecord(turns=[RecordedTurn("c2")]).names_actors


def test_a_solo_game_ends_with_its_score_and_its_numbers_keep_their_period() -> None:
    record = GameRecord(
        tags={"Seat1": "solo"},
        turns=[decision("P01", CHANCE, 1), decision("north", 0, 1), decision("P02", CHANCE, 2)],
        result="2",
    )
    text = format_game(record)
    assert text.endswith("2. c:P02 2\n\n")
    assert only_records(text) == [record]
    # A bare number is a move number unless the Result tag holds it.
    [other] = only_records('[Result "5"]\n\n1 c:P01 2 s1:north 5\n')
    assert [(t.turn, t.word) for t in other.turns] == [(1, "c:P01"), (2, "s1:north")]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RecordedTurn("P01", clock=ClockAnnotation(1, 1), actor=CHANCE, turn=1), "clock"),
        (lambda: RecordedTurn("north", actor=0), "no turn number"),
        (lambda: RecordedTurn("north", actor=0, turn=0), "no turn number"),
        (lambda: RecordedTurn("north", turn=3), "goes with an actor"),
        (lambda: RecordedTurn("north", actor=-2, turn=1), "neither a seat"),
        (lambda: RecordedTurn("a b", actor=0, turn=1), "is not letters"),
        (lambda: RecordedTurn("a{b}", actor=0, turn=1), "is not letters"),
        (lambda: RecordedTurn("-a", actor=0, turn=1), "is not letters"),
        (lambda: RecordedTurn("a;b", actor=0, turn=1), "is not letters"),
        (lambda: RecordedTurn("a@1,2"), "not a PGN symbol"),
        (
            lambda: GameRecord(turns=[RecordedTurn("c2"), RecordedTurn("x", actor=0, turn=1)]),
            "some decisions name their actor",
        ),
        (
            lambda: GameRecord(
                turns=[RecordedTurn("x", actor=0, turn=2), RecordedTurn("x", actor=1, turn=1)]
            ),
            "turn 1 is recorded after turn 2",
        ),
    ],
)
def test_decisions_that_a_record_cannot_hold_are_refused(make, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        make()


@pytest.mark.parametrize(
    ("movetext", "reason"),
    [
        ("c:P01 1. s1:north *", "'c:P01' comes before any turn number"),
        ("1. c:P01 {[%clk 0:00:01]} *", "has a clock"),
        ("1. s1:north c2 *", "some decisions name their actor"),
        ("1. s1:,x *", "unexpected 's1:,x'"),
    ],
)
def test_reader_reports_broken_actor_records(movetext: str, reason: str) -> None:
    [game] = read_games(f'[Event "x"]\n\n{movetext}\n')
    assert isinstance(game, PgnError)
    assert re.search(reason, game.reason), game.reason


_DECISION_TOKENS = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + string.digits),
    st.text(string.ascii_letters + string.digits + "_+#=:-,/@.", max_size=30),
)
_ACTOR_RECORDS = st.builds(
    lambda seats, moves, comment: GameRecord(
        tags={f"Seat{seat + 1}": f"p{seat}" for seat in range(seats)},
        turns=[
            RecordedTurn(
                token,
                comment=text,
                clock=None if actor % (seats + 1) == seats else ClockAnnotation(clock, 7),
                actor=CHANCE if actor % (seats + 1) == seats else actor % (seats + 1),
                turn=1 + index // 3,
            )
            for index, (token, text, actor, clock) in enumerate(moves)
        ],
        result="*",
        comment=comment,
    ),
    st.integers(1, 5),
    st.lists(
        st.tuples(
            _DECISION_TOKENS,
            st.none() | st.text(max_size=20),
            st.integers(0, 5),
            st.integers(0, 10**7),
        ),
        max_size=12,
    ),
    st.none() | st.text(max_size=20),
)


@given(st.lists(_ACTOR_RECORDS, min_size=1, max_size=3))
def test_any_records_naming_actors_round_trip(records: list[GameRecord]) -> None:
    text = "".join(format_game(record) for record in records)
    assert only_records(text) == records
    for line in text.splitlines():
        assert not line.startswith("%") and (not line.startswith("[") or line.endswith('"]'))


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
                RecordedTurn("f1+f2+g2", "slow", ClockAnnotation(9_871, 1_002)),
                RecordedTurn("xb2", "plain words; and [brackets] %percent"),
                RecordedTurn("--"),
            ],
            result="1-0",
            comment="before the first turn",
        ),
        GameRecord(
            tags={"White": "carol", "Black": "dave", "SetUp": "1", "FEN": PURPLE_TO_MOVE},
            turns=[RecordedTurn("h1", ""), RecordedTurn("b1"), clocked("g2", 3_600_000, 0)],
            result="*",
        ),
        GameRecord(tags={"White": "eve", "Black": "frank"}, result="1/2-1/2"),
    ]


def test_round_trip_of_many_games_per_file() -> None:
    records = sample_records()
    text = "".join(format_game(record) for record in records)
    assert only_records(text) == records


_TAG_NAMES = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=12).filter(
    lambda name: name not in ("Result", "SetUp", "FEN", "Position")
)
_TOKENS = st.just("--") | st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters),
    st.text(string.ascii_letters + string.digits + "_+#=:-", max_size=15),
).filter(lambda token: not re.fullmatch(r"(c|s[1-9][0-9]?):.+", token))  # actor words
_CLOCKS = st.builds(
    ClockAnnotation,
    st.none() | st.integers(0, 10**9),
    st.none() | st.integers(0, 10**9),
)
_RECORDS = st.builds(
    GameRecord,
    tags=st.dictionaries(_TAG_NAMES, st.text(max_size=30), max_size=8),
    turns=st.lists(
        st.builds(
            RecordedTurn,
            token=_TOKENS,
            comment=st.none() | st.text(max_size=60),
            clock=st.none() | _CLOCKS,
        ),
        max_size=20,
    ),
    result=st.sampled_from(["1-0", "0-1", "1/2-1/2", "*"]),
    comment=st.none() | st.text(max_size=60),
)
"""Records of any text at all: the record types clean it."""


@given(st.lists(_RECORDS, min_size=1, max_size=3))
def test_any_records_round_trip(records: list[GameRecord]) -> None:
    text = "".join(format_game(record) for record in records)
    assert only_records(text) == records
    assert [h.tags for h in read_headers(text) if isinstance(h, GameHeaders)] == [
        r.tags for r in records
    ]


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


# --- headers only, and streaming ----------------------------------------------------------

CHESS_GAMES = """% a file written by other tools
[Event "variations"]
[White "alice"]
[Black "bob"]
[Result "1-0"]

1. e4 e5 (1... c5 {Sicilian} 2. Nf3 (2. c3)) 2. Nf3 $1 Nc6 3. Bb5!? a6 1-0

[Event "castling and a comment holding a tag line"]
[White "bob"]
[Black "carol"]
[Result "0-1"]

1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4. 0-0 {a comment
[White "not a game"]
that goes on} 0-0 ; a line comment with a { brace
0-1

[Event "an escape line in the movetext"]
[White "carol"]
[Black "alice"]
[Result "1/2-1/2"]

1. d4 d5
% [Result "1-0"] is ignored here
2. c4 1/2-1/2

[Event "unfinished"]
[White "alice"]
[Black "carol"]
[Result "*"]

1. e4 *
"""


def test_headers_reader_sees_every_game_whatever_its_movetext() -> None:
    headers = list(read_headers(CHESS_GAMES))
    assert [h.tags["White"] for h in headers if isinstance(h, GameHeaders)] == [
        "alice",
        "bob",
        "carol",
        "alice",
    ]
    assert [h.tags["Result"] for h in headers if isinstance(h, GameHeaders)] == [
        "1-0",
        "0-1",
        "1/2-1/2",
        "*",
    ]
    assert [h.line for h in headers if isinstance(h, GameHeaders)] == [2, 9, 19, 28]
    # The full reader finds the same four games, even where it cannot read one.
    games = list(read_games(CHESS_GAMES))
    assert len(games) == 4
    assert isinstance(games[0], PgnError) and "variations" in games[0].reason
    assert isinstance(games[2], GameRecord) and [t.token for t in games[2].turns] == [
        "d4",
        "d5",
        "c4",
    ]


def test_headers_reader_agrees_with_python_chess() -> None:
    import io

    import chess.pgn

    handle = io.StringIO(CHESS_GAMES)
    theirs = []
    while (found := chess.pgn.read_headers(handle)) is not None:
        theirs.append(dict(found))
    ours = [h.tags for h in read_headers(CHESS_GAMES) if isinstance(h, GameHeaders)]
    assert [{k: t[k] for k in ("White", "Black", "Result")} for t in theirs] == [
        {k: o[k] for k in ("White", "Black", "Result")} for o in ours
    ]


def test_a_broken_tag_section_is_an_error_in_both_readers() -> None:
    text = '[White alice]\n\n1. c2 *\n\n[White "bob"]\n\n1. c2 *\n'
    first, second = read_headers(text)
    assert isinstance(first, PgnError) and (first.game, first.line) == (1, 1)
    assert isinstance(second, GameHeaders) and second.number == 2
    first_game, second_game = read_games(text)
    assert isinstance(first_game, PgnError) and first_game.line == 1
    assert isinstance(second_game, GameRecord)


def _feed_through_a_pipe(tmp_path: Path, head: str, tail: str) -> tuple[Path, threading.Event]:
    """A FIFO that gets ``head`` at once and ``tail`` only once the returned event is set."""
    fifo = tmp_path / "games.pgn"
    os.mkfifo(fifo)
    release = threading.Event()

    def write() -> None:
        with open(fifo, "w", encoding="utf-8") as out:
            out.write(head)
            out.flush()
            release.wait(60)  # a hang guard only
            out.write(tail)

    threading.Thread(target=write, daemon=True).start()
    return fifo, release


@pytest.mark.parametrize("reader", [iter_pgn_file, iter_pgn_headers])
def test_files_are_read_a_game_at_a_time(tmp_path: Path, reader) -> None:
    first, second = (format_game(record) for record in sample_records()[:2])
    # Everything of the first game, and the line that starts the second one.
    split = len(first) + second.index("\n") + 1
    text = first + second
    fifo, release = _feed_through_a_pipe(tmp_path, text[:split], text[split:])
    games = reader(fifo)
    try:
        got = next(games)  # the rest of the file has not been written yet
        assert not isinstance(got, PgnError)
        assert got.tags["White"] == "alice"
    finally:
        release.set()
    assert [g.tags["White"] for g in games if not isinstance(g, PgnError)] == ["carol"]


def test_read_game_reads_one_game_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    for record in sample_records():
        append_game(path, record)
    assert read_game(path, 2) == sample_records()[1]
    with pytest.raises(RecordError, match="holds 3 games, not game 4"):
        read_game(path, 4)


def test_a_token_that_reads_as_an_actor_word_needs_its_actor() -> None:
    with pytest.raises(RecordError, match="reads as an actor word"):
        RecordedTurn("s2:pick")
    assert RecordedTurn("pick", actor=1, turn=1).token == "pick"


def test_a_line_longer_than_any_record_has_stops_reading_with_one_error(tmp_path) -> None:
    from referee.pgn import MAX_FILE_LINE

    path = tmp_path / "huge.pgn"
    path.write_text('[Event "' + "x" * (MAX_FILE_LINE + 5) + '"]\n')
    with pytest.raises(RecordError, match="line 1 is longer than 1048576 characters"):
        list(iter_pgn_file(path))
