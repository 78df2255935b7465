"""Ivy notation: turn tokens (spec §7) and position strings (spec §6)."""

from __future__ import annotations

import pytest

from referee.errors import PositionError, RuleError
from referee.games.ivy import Choke, Creep, Leaf, Player, Position, Turn, parse_cell

START = (
    "./.../...../.#...#./........./........./..#...#../........./"
    "........./....#..../....#..../..g...p.. g 1 2 1"
)
EXAMPLE_TURNS = "c2+b2 f1+f2+g2 Lc2+b3+Lb2+b4 h2+Lg2+h3+xf2 xb2 h1+xh1 -- h4+h5+i5+Lh3+g3+xh4"
EXAMPLE_AFTER = (
    "./.../...../.#...#./........./........./..#...#../........w/"
    ".......1./....#.pP./..G.#.Pp./..g..pp.. g 8 0 9"
)


# --- turn tokens ---------------------------------------------------------------------


def test_actions_print_as_in_section_7() -> None:
    assert str(Creep(parse_cell("d2"))) == "d2"
    assert str(Leaf(parse_cell("d2"))) == "Ld2"
    assert str(Choke(parse_cell("g3"))) == "xg3"


@pytest.mark.parametrize("token", ["c2+Lc2", "d3+d4+Ld4+xf4", "xg2", "--", "e11+Le12", "a5+i5"])
def test_turn_tokens_round_trip(token: str) -> None:
    assert str(Turn.parse(token)) == token


def test_turn_parse_builds_the_actions() -> None:
    turn = Turn.parse("d3+Ld3+xf4")
    assert turn.actions == (
        Creep(parse_cell("d3")),
        Leaf(parse_cell("d3")),
        Choke(parse_cell("f4")),
    )
    assert Turn.parse("--") == Turn() == Turn.PASS
    assert str(Turn()) == "--"


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("", "empty turn token"),
        ("c2++d3", r"empty action between '\+' signs"),
        ("c2+", "empty action"),
        ("c2+z9", "unknown cell 'z9' in 'z9'"),
        ("Lq1", "unknown cell 'q1' in 'Lq1'"),
        ("xx3", "unknown cell 'x3' in 'xx3'"),
        ("c2+--", "unknown cell '--'"),
        ("C2", "unknown cell 'C2'"),
        ("lc2", "unknown cell 'lc2'"),
        ("c2 d2", "unknown cell 'c2 d2'"),
    ],
)
def test_bad_turn_tokens_are_refused_naming_the_bad_part(token: str, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        Turn.parse(token)


def test_actions_need_a_cell_of_the_house() -> None:
    for bad in (-1, 88, True, "c2"):
        with pytest.raises(RuleError, match="needs a cell from 0 to 87"):
            Creep(bad)  # type: ignore[arg-type]


def test_turns_accept_a_list_and_keep_a_tuple() -> None:
    turn = Turn([Creep(1)])  # type: ignore[arg-type]
    assert turn.actions == (Creep(1),)
    assert hash(turn) == hash(Turn((Creep(1),)))


# --- position strings ------------------------------------------------------------------


def test_the_start_position_is_the_spec_string() -> None:
    assert str(Position.START) == START
    assert Position.from_string(START) == Position.START
    assert Position.START.turn == 1
    assert Position.START.to_move is Player.GREEN
    assert (Position.START.sun(Player.GREEN), Position.START.sun(Player.PURPLE)) == (1, 2)


def test_the_spec_example_game() -> None:
    """§8's eight turns from the start lead to the position the spec prints."""
    position = Position.START
    for token in EXAMPLE_TURNS.split():
        position = position.play(Turn.parse(token))
    assert str(position) == EXAMPLE_AFTER
    assert position == Position.from_string(EXAMPLE_AFTER)


def test_every_cell_character_round_trips() -> None:
    text = (
        "./.../...../.#...#./........./........./..#...#../w......1./"
        ".......2./....#.pP./..G.#.Pp./..g..pp.. p 0 7 10"
    )
    position = Position.from_string(text)
    assert str(position) == text
    assert position.is_withering(parse_cell("a5"))
    assert position.deadwood(parse_cell("h5")) == 1
    assert position.deadwood(parse_cell("h4")) == 2
    withered = text.replace("/w......1./", "/W......1./")
    assert str(Position.from_string(withered)) == withered
    assert Position.from_string(withered).has_leaf(parse_cell("a5"))


def test_positions_are_values() -> None:
    again = Position.from_string(START)
    assert again == Position.START and hash(again) == hash(Position.START)
    assert again != Position.START.play(Turn())
    assert eval(repr(Position.START), {"Position": Position}) == Position.START
    assert Position.START != START
    with pytest.raises(AttributeError):
        Position.START.turn = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        Position()


def test_surrounding_whitespace_is_tolerated() -> None:
    assert Position.from_string(START + "\n") == Position.START


def bad(rows: str = START.split()[0], *rest: str) -> str:
    fields = [rows, *rest] if rest else [rows, "g", "1", "2", "1"]
    return " ".join(fields)


def with_row(row: int, text: str) -> str:
    rows = START.split()[0].split("/")
    rows[12 - row] = text
    return "/".join(rows)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "5 fields"),
        (START + " 9", "5 fields .* got 6"),
        (START.replace(" g ", "  g "), "got 6"),
        (bad(START.split()[0] + "/."), "12 rows"),
        (bad(with_row(9, ".#...#..")), r"row 9 has 8 cells, expected 7 \(b9-h9\)"),
        (bad(with_row(12, "..")), r"row 12 has 2 cells, expected 1 \(e12\)"),
        (bad(with_row(5, "....x....")), "bad character 'x' at e5"),
        (bad(with_row(6, "..#......")), "g6 is glass and must be written '#'"),
        (bad(with_row(7, "....#....")), "e7 is not glass"),
        (bad(with_row(1, ".....pp..")), "c1 is Green's root and must be written 'g'"),
        (bad(with_row(1, "..G...p..")), "c1 is Green's root"),
        (bad(with_row(1, "..g...1..")), "g1 is Purple's root and must be written 'p'"),
        (bad(with_row(1, "..gG..p..")), r"leaf on d1: no leaf in row 1"),
        (bad(with_row(4, "....g....")), "Green vine at e4 is not alive"),
        (bad(with_row(1, "..g.wwp..")), "withering vine at f1 touches a living cell"),
        (bad(START.split()[0], "x", "1", "2", "1"), "TO_MOVE must be 'g' or 'p'"),
        (bad(START.split()[0], "p", "1", "2", "1"), "TO_MOVE must be 'g' on turn 1"),
        (bad(START.split()[0], "g", "1", "2", "2"), "TO_MOVE must be 'p' on turn 2"),
        (bad(START.split()[0], "g", "-1", "2", "1"), "GREEN_SUN must be a whole number"),
        (bad(START.split()[0], "g", "1", "2.5", "1"), "PURPLE_SUN must be a whole number"),
        (bad(START.split()[0], "g", "1", "2", "x"), "TURN must be a whole number"),
        (bad(START.split()[0], "g", "1", "+2", "1"), "PURPLE_SUN must be a whole number"),
        (bad(START.split()[0], "g", "1", "٣", "1"), "PURPLE_SUN must be a whole number"),
        (bad(START.split()[0], "p", "1", "2", "0"), "TURN must be at least 1"),
    ],
)
def test_bad_positions_are_refused_naming_the_rule(text: str, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        Position.from_string(text)


def test_alive_means_linked_through_own_cells_only() -> None:
    """C2: a Green cell linked to c1 only through Purple cells is not alive."""
    text = (
        "./.../...../.#...#./........./........./..#...#../........./"
        "........./....#.pg./....#.pp./..g...p.. g 0 0 1"
    )
    with pytest.raises(PositionError, match="Green vine at h3 is not alive"):
        Position.from_string(text)
    assert Position.from_string(text.replace(".pg./", ".pp./")).owner(parse_cell("h3")) == 1
