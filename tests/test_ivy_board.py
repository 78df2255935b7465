"""The geometry of the Ivy house (spec §1, C1): cells, names, neighbours, glass, roots."""

from __future__ import annotations

import pytest

from referee.errors import RuleError
from referee.games.ivy.board import (
    ABOVE,
    BELOW,
    CELL_COUNT,
    CELL_NAMES,
    GLASS,
    NEIGHBOURS,
    ROOTS,
    ROW_MASKS,
    TOP,
    Player,
    bit,
    cell_at,
    cell_name,
    column_of,
    iter_cells,
    mask_of,
    parse_cell,
    row_of,
    spread,
)


def names(mask: int) -> set[str]:
    return {cell_name(c) for c in iter_cells(mask)}


def test_the_house_narrows_at_the_roof() -> None:
    """C1: rows 1–8 a–i, row 9 b–h, row 10 c–g, row 11 d–f, row 12 e alone; 88 cells."""
    assert CELL_COUNT == 88
    assert [ROW_MASKS[row].bit_count() for row in range(1, 13)] == [9] * 8 + [7, 5, 3, 1]
    assert names(ROW_MASKS[9]) == {f"{c}9" for c in "bcdefgh"}
    assert names(ROW_MASKS[10]) == {f"{c}10" for c in "cdefg"}
    assert names(ROW_MASKS[11]) == {"d11", "e11", "f11"}
    assert names(ROW_MASKS[12]) == {"e12"}
    for outside in ("a9", "i9", "b10", "h10", "c11", "g11", "d12", "f12", "e13", "j1", "a0"):
        with pytest.raises(RuleError, match=f"unknown cell '{outside}'"):
            parse_cell(outside)


@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("a1", 0),
        ("i1", 8),
        ("a2", 9),
        ("i8", 71),
        ("b9", 72),
        ("h9", 78),
        ("c10", 79),
        ("g10", 83),
        ("d11", 84),
        ("f11", 86),
        ("e12", 87),
    ],
)
def test_cells_are_numbered_row_by_row_from_the_soil(name: str, index: int) -> None:
    assert parse_cell(name) == index
    assert cell_name(index) == name
    assert CELL_NAMES[index] == name
    assert cell_at(column_of(index), row_of(index)) == index


def test_names_and_places_round_trip() -> None:
    for cell in range(CELL_COUNT):
        assert parse_cell(cell_name(cell)) == cell
        assert cell_at(column_of(cell), row_of(cell)) == cell
    assert cell_at(0, 9) is None
    assert cell_at(4, 13) is None
    assert cell_at(9, 1) is None


def test_parse_cell_refuses_anything_else() -> None:
    for text in ("", "C1", "c 1", "c01", "L"):
        with pytest.raises(RuleError, match="unknown cell"):
            parse_cell(text)


def test_neighbours_share_an_edge_and_are_symmetric() -> None:
    for cell in range(CELL_COUNT):
        assert not NEIGHBOURS[cell] & bit(cell)
        for other in iter_cells(NEIGHBOURS[cell]):
            assert NEIGHBOURS[other] & bit(cell)
    assert names(NEIGHBOURS[parse_cell("d4")]) == {"c4", "e4", "d3", "d5"}
    assert names(NEIGHBOURS[parse_cell("a1")]) == {"b1", "a2"}
    assert names(NEIGHBOURS[parse_cell("e12")]) == {"e11"}
    assert names(NEIGHBOURS[parse_cell("d11")]) == {"e11", "d10"}
    assert names(NEIGHBOURS[parse_cell("a8")]) == {"a7", "b8"}
    assert names(NEIGHBOURS[parse_cell("b9")]) == {"b8", "c9"}


def test_the_tunnel_joins_a5_and_i5_and_nothing_else_wraps() -> None:
    assert names(NEIGHBOURS[parse_cell("a5")]) == {"a4", "a6", "b5", "i5"}
    assert names(NEIGHBOURS[parse_cell("i5")]) == {"i4", "i6", "h5", "a5"}
    for row in (1, 4, 6, 8):
        assert not NEIGHBOURS[parse_cell(f"a{row}")] & bit(parse_cell(f"i{row}"))


def test_glass_roots_and_top() -> None:
    assert names(GLASS) == {"c6", "c9", "g6", "g9", "e2", "e3"}
    assert [cell_name(c) for c in ROOTS] == ["c1", "g1"]
    assert ROOTS[Player.GREEN] == parse_cell("c1")
    assert cell_name(TOP) == "e12"


def test_above_skips_glass_and_below_is_the_rest_of_the_column() -> None:
    assert names(ABOVE[parse_cell("c5")]) == {"c7", "c8", "c10"}
    assert names(ABOVE[parse_cell("e11")]) == {"e12"}
    assert ABOVE[TOP] == 0
    assert names(BELOW[parse_cell("a3")]) == {"a1", "a2"}
    assert names(BELOW[parse_cell("e4")]) == {"e1", "e2", "e3"}


def test_masks_and_iteration() -> None:
    cells = [parse_cell(n) for n in ("e12", "a1", "c6")]
    mask = mask_of(cells)
    assert list(iter_cells(mask)) == sorted(cells)
    assert list(iter_cells(0)) == []
    assert bit(5) == 32


def test_players() -> None:
    assert Player.GREEN == 0 and Player.PURPLE == 1
    assert Player.GREEN.other is Player.PURPLE
    assert Player.PURPLE.other is Player.GREEN
    assert (Player.GREEN.title, Player.PURPLE.title) == ("Green", "Purple")
    assert (Player.GREEN.letter, Player.PURPLE.letter) == ("g", "p")
    assert Player.from_letter("p") is Player.PURPLE
    with pytest.raises(RuleError, match="unknown player 'x'"):
        Player.from_letter("x")


def test_spread_is_the_union_of_the_neighbours() -> None:
    for cell in range(CELL_COUNT):
        assert spread(bit(cell)) == NEIGHBOURS[cell], cell_name(cell)
    masks = [GLASS, ROW_MASKS[8] | ROW_MASKS[12], (1 << CELL_COUNT) - 1, 0x5555_5555_5555_5555_5555]
    for mask in masks:
        union = 0
        for cell in iter_cells(mask):
            union |= NEIGHBOURS[cell]
        assert spread(mask) == union
