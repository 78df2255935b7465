"""The rules of an Ivy turn (spec §2–§5), one focused test per rule and clarification.

Positions are written as §6 strings by :func:`position`, which starts from the bare
house (glass and both roots) and puts the listed cells on it; the parser checks each
one is a legal position before the test uses it.
"""

from __future__ import annotations

import pytest

from referee.errors import IllegalDecision, PositionError, SettingsError
from referee.games import GameSettings, get_game
from referee.games.ivy import Choke, Creep, IvyGame, Leaf, Player, Position, Turn, parse_cell
from referee.games.ivy.board import COLUMNS, ROW_SPANS

GREEN, PURPLE = Player.GREEN, Player.PURPLE


def position(
    *,
    g: str = "",
    G: str = "",
    p: str = "",
    P: str = "",
    w: str = "",
    W: str = "",
    dead1: str = "",
    dead2: str = "",
    sun: tuple[int, int] = (0, 0),
    turn: int = 1,
) -> Position:
    """A checked position: the bare house plus the cells listed for each §6 character."""
    chars = {"e2": "#", "e3": "#", "c6": "#", "g6": "#", "c9": "#", "g9": "#"}
    chars |= {"c1": "g", "g1": "p"}
    for char, cells in zip("gGpPwW12", (g, G, p, P, w, W, dead1, dead2), strict=True):
        chars |= dict.fromkeys(cells.split(), char)
    rows = [
        "".join(chars.get(f"{COLUMNS[column]}{row}", ".") for column in range(first, last + 1))
        for row, (first, last) in sorted(ROW_SPANS.items(), reverse=True)
    ]
    mover = "g" if turn % 2 else "p"
    return Position.from_string(f"{'/'.join(rows)} {mover} {sun[0]} {sun[1]} {turn}")


def at(position: Position, cells: str) -> str:
    """The §6 characters of the listed cells, in order, read through the query methods."""
    return "".join(char_at(position, parse_cell(name)) for name in cells.split())


def char_at(position: Position, cell: int) -> str:
    if position.is_glass(cell):
        return "#"
    if marker := position.deadwood(cell):
        return str(marker)
    if position.is_empty(cell):
        return "."
    assert position.is_vine(cell)
    owner = position.owner(cell)
    char = "w" if owner is None else owner.letter
    assert (owner is None) == position.is_withering(cell)
    return char.upper() if position.has_leaf(cell) else char


def play(position: Position, token: str) -> Position:
    return position.play(Turn.parse(token))


def refused(position: Position, token: str, message: str, index: int | None) -> None:
    """Playing ``token`` raises IllegalDecision with exactly ``message`` and ``index``."""
    with pytest.raises(IllegalDecision) as caught:
        play(position, token)
    assert str(caught.value) == message
    assert caught.value.index == index


# --- setup and turn order (§3, §6) ---------------------------------------------------


def test_setup_green_moves_first_with_1_sun_purple_has_2() -> None:
    start = Position.START
    assert start.turn == 1 and start.to_move is GREEN
    assert (start.sun(GREEN), start.sun(PURPLE)) == (1, 2)
    assert start.owner(parse_cell("c1")) is GREEN and start.owner(parse_cell("g1")) is PURPLE
    assert start.vines(GREEN) == 1 << parse_cell("c1")


def test_a_pass_feeds_and_hands_the_turn_over() -> None:
    after = Position.START.play(Turn.PASS)
    assert (after.turn, after.to_move) == (2, PURPLE)
    assert (after.sun(GREEN), after.sun(PURPLE)) == (4, 2)
    again = after.play(Turn.PASS)
    assert (again.turn, again.to_move) == (3, GREEN)
    assert (again.sun(GREEN), again.sun(PURPLE)) == (4, 5)


def test_playing_never_changes_the_position_played_from() -> None:
    start = Position.from_string(str(Position.START))
    play(start, "c2+Lc2")
    assert start == Position.START


# --- Feed (§4.1) -------------------------------------------------------------------------


def test_feed_is_3_plus_lit_living_leaves_by_row() -> None:
    """1 sun in rows 2–4, 2 in 5–8, 4 in 9–11; shaded, withering and opponent's leaves: 0."""
    board = position(
        g="c1 c2 c3 c4 d5 d6 d8 d9 d10",
        G="b2 c5 d7 d11",  # b2 row 2, c5 row 5 (lit through glass), d7 shaded, d11 row 11
        P="g2",
        W="i8",
    )
    assert board.income(GREEN) == 3 + 1 + 2 + 4
    assert board.income(PURPLE) == 3 + 1
    after = play(board, "--")
    assert after.sun(GREEN) == 10
    assert after.sun(PURPLE) == 0  # Purple's Feed waits for Purple's turn


def test_sun_carries_over_without_limit() -> None:
    board = position(sun=(1000, 7))
    assert play(board, "--").sun(GREEN) == 1003


def test_a_living_leaf_on_e12_wins_at_feed() -> None:
    path = "c2 c3 c4 c5 d5 d6 d7 d8 d9 d10 d11 e11"
    won = position(g=path, G="e12", turn=7)
    assert won.winner_at_feed() is GREEN
    refused(
        won,
        "--",
        "turn 7 (Green): the game is over: Green holds a leaf on e12 and wins at Feed",
        None,
    )
    with pytest.raises(IllegalDecision, match="wins at Feed"):
        won.begin()
    waiting = position(g=path, G="e12", turn=8)
    assert waiting.winner_at_feed() is None  # Purple to move: Green wins at its own Feed
    assert play(waiting, "--").winner_at_feed() is GREEN


def test_a_bare_vine_or_a_withering_leaf_on_e12_does_not_win() -> None:
    path = "c2 c3 c4 c5 d5 d6 d7 d8 d9 d10 d11 e11"
    assert position(g=f"{path} e12").winner_at_feed() is None
    assert position(W="e12").winner_at_feed() is None


# --- lit (§2) ------------------------------------------------------------------------------


def test_vines_and_deadwood_cast_shade_glass_does_not() -> None:
    board = position(g="c2 c3 c4 c5", dead1="a6", w="h7", p="g2 g3 g4 g5")
    lit = {
        name
        for name in ("a5", "a7", "c5", "c4", "h6", "h8", "g5", "e1", "e4")
        if board.is_lit(parse_cell(name))
    }
    assert lit == {"a7", "c5", "h8", "g5", "e1", "e4"}


# --- Grow: creep (§4.2) -----------------------------------------------------------------


def test_creep_costs_one_per_living_own_neighbour() -> None:
    board = position(g="c2 c3 b2 a2 a3 a4 b4", sun=(1, 0))
    builder = board.begin()
    assert builder.sun == 4
    assert builder.creep_cost(parse_cell("b3")) == 4
    builder.apply(Creep(parse_cell("b3")))
    assert builder.sun == 0  # sun may reach 0, never below
    assert builder.owner(parse_cell("b3")) is GREEN
    refused(
        position(g="c2 c3 b2 a2 a3 a4 b4"),
        "b3",
        "turn 1 (Green): creep b3 costs 4 sun, Green has 3",
        0,
    )


def test_creep_cost_counts_neither_opponent_nor_withering_neighbours() -> None:
    board = position(g="d1", p="f1", w="b5")
    assert board.begin().creep_cost(parse_cell("e1")) == 1
    graft = position(g="c2 c3 c4 c5 d5", w="e6", W="e7")
    assert graft.begin().creep_cost(parse_cell("d6")) == 1


def test_creep_cost_message_names_the_sun_left_after_spending() -> None:
    board = position(p="g2 g3 h3", turn=18)
    refused(board, "h1+h2", "turn 18 (Purple): creep h2 costs 3 sun, Purple has 2", 1)


def test_creep_must_go_into_an_empty_cell() -> None:
    board = position(g="c2 c3 c4 d4 d3", p="f1 f2", dead1="d5", w="a8", turn=9)
    refused(board, "d5", "turn 9 (Green): creep d5: d5 is not empty (deadwood)", 0)
    refused(board, "e3", "turn 9 (Green): creep e3: e3 is not empty (glass)", 0)
    refused(board, "c2", "turn 9 (Green): creep c2: c2 is not empty (Green vine)", 0)
    refused(board, "d1+e1+f1", "turn 9 (Green): creep f1: f1 is not empty (Purple vine)", 2)
    refused(board, "a8", "turn 9 (Green): creep a8: a8 is not empty (withering vine)", 0)


def test_creep_must_touch_a_living_own_cell() -> None:
    board = position(p="f1 f2")
    refused(board, "e5", "turn 1 (Green): creep e5: e5 does not touch a living Green cell", 0)
    refused(board, "h1", "turn 1 (Green): creep h1: h1 does not touch a living Green cell", 0)


def test_the_tunnel_joins_a5_and_i5() -> None:
    board = position(g="b1 a1 a2 a3 a4 a5")
    builder = board.begin()
    assert builder.creep_cost(parse_cell("i5")) == 1
    assert parse_cell("i5") in builder.creep_targets()
    after = play(board, "i5+i4+h4")
    assert at(after, "a5 i5 i4 h4") == "gggg"
    cut = play(after, "--")
    cut = play(cut, "xa4")  # Green chokes a4: a5, i5, i4, h4 are cut off from c1
    assert at(cut, "a4 a5 i5 i4 h4") == "1.www"  # the branch sheds a5: row 5, an end


def test_creep_beyond_the_roof_is_impossible() -> None:
    """C1: a8 has nothing above it; b8 leads to b9."""
    board = position(g="b1 a1 a2 a3 a4 a5 a6 a7 a8 b8", sun=(5, 0))
    targets = {cell for cell in board.begin().creep_targets()}
    assert parse_cell("b9") in targets
    assert targets.isdisjoint({parse_cell("c9")})


# --- Grow: leaf (§4.2) --------------------------------------------------------------------


def test_leaf_costs_one_plus_lit_living_leaves_at_that_moment() -> None:
    board = position(g="c1 c3 c4 d5 d6 d8", G="b2 c2 c5 d7", sun=(10, 0))
    # lit: b2 (b3 above is empty) and c5; c2 and d7 are shaded
    builder = board.begin()
    assert builder.leaf_cost() == 3
    builder.apply(Leaf(parse_cell("d8")))  # lit: the next leaf costs one more
    assert builder.leaf_cost() == 4
    builder.apply(Creep(parse_cell("b3")))  # shades b2: one less
    assert builder.leaf_cost() == 3
    builder.apply(Leaf(parse_cell("c3")))  # in the shade of c4: adds nothing
    assert builder.leaf_cost() == 3
    assert builder.sun == 10 + (3 + 1 + 2) - 3 - 2 - 3


def test_leaf_cost_message() -> None:
    board = position(g="c3 c4", G="c2 b2")  # b2 lit: sun 3 + 1, a leaf costs 2
    refused(board, "Lc4+Lc3", "turn 1 (Green): leaf on c3 costs 3 sun, Green has 2", 1)


def test_a_root_never_has_a_leaf() -> None:
    board = position(g="c2", turn=5)
    refused(board, "Lc1", "turn 5 (Green): leaf on c1: a root never has a leaf", 0)
    refused(board, "Lg1", "turn 5 (Green): leaf on g1: a root never has a leaf", 0)


def test_no_leaf_in_row_1() -> None:
    board = position(g="d1")
    refused(board, "Ld1", "turn 1 (Green): leaf on d1: no leaf in row 1 (the soil)", 0)


def test_a_leaf_goes_on_a_living_own_vine_without_a_leaf() -> None:
    board = position(G="c2", p="g2", w="a7")
    refused(
        board, "Lg2", "turn 1 (Green): leaf on g2: g2 is not a living Green vine (Purple vine)", 0
    )
    refused(
        board,
        "La7",
        "turn 1 (Green): leaf on a7: a7 is not a living Green vine (withering vine)",
        0,
    )
    refused(board, "Ld4", "turn 1 (Green): leaf on d4: d4 is not a living Green vine (empty)", 0)
    refused(board, "Lc2", "turn 1 (Green): leaf on c2: c2 already has a leaf", 0)


def test_a_leaf_may_grow_on_e12() -> None:
    board = position(g="c2 c3 c4 c5 d5 d6 d7 d8 d9 d10 d11 e11 e12", sun=(5, 0))
    assert at(play(board, "Le12"), "e12") == "G"


# --- Choke (§4.3) ---------------------------------------------------------------------------


def test_at_most_one_choke() -> None:
    board = position(p="g2 h2", turn=4)
    refused(board, "xh2+xe3", "turn 4 (Purple): choke e3: only one choke per turn", 1)


def test_the_choke_comes_after_all_growing() -> None:
    board = position(p="g2 h2", turn=4)
    refused(board, "xh2+f1", "turn 4 (Purple): creep f1: no growing after the choke", 1)
    refused(board, "xh2+Lg2", "turn 4 (Purple): leaf on g2: no growing after the choke", 1)
    builder = board.begin()
    builder.apply(Choke(parse_cell("h2")))
    assert not builder.growing
    assert builder.creep_targets() == builder.leaf_targets() == builder.choke_targets() == []
    assert builder.creep_cost(parse_cell("f1")) is None


def test_a_root_can_never_be_choked() -> None:
    board = position(p="f1 e1 d1", turn=2)
    refused(board, "xc1", "turn 2 (Purple): choke c1: a root can never be choked", 0)
    refused(board, "xg1", "turn 2 (Purple): choke g1: a root can never be choked", 0)


def test_the_choke_target_is_a_vine_next_to_a_living_own_cell() -> None:
    board = position(g="d1", p="f1 f2", dead1="f3", turn=2)
    refused(board, "xe2", "turn 2 (Purple): choke e2: e2 is not a vine (glass)", 0)
    refused(board, "xh1", "turn 2 (Purple): choke h1: h1 is not a vine (empty)", 0)
    refused(board, "xf3", "turn 2 (Purple): choke f3: f3 is not a vine (deadwood)", 0)
    refused(board, "xc2", "turn 2 (Purple): choke c2: c2 is not a vine (empty)", 0)
    far = position(g="c2 c3", p="f1 f2", turn=2)
    refused(far, "xc3", "turn 2 (Purple): choke c3: c3 does not touch a living Purple cell", 0)


def test_a_choke_is_free_and_leaves_deadwood_for_two_turns() -> None:
    board = position(g="d1", G="c2", p="f1 f2", sun=(0, 0), turn=2)
    after = play(board, "e1+xd1")  # Purple chokes a Green cell
    assert after.sun(PURPLE) == 3 - 1
    assert at(after, "d1 e1") == "1p"
    assert after.deadwood(parse_cell("d1")) == 1
    refused(after, "d1", "turn 3 (Green): creep d1: d1 is not empty (deadwood)", 0)
    gone = play(after, "--")
    assert at(gone, "d1") == "." and gone.deadwood(parse_cell("d1")) == 0
    assert gone.is_empty(parse_cell("d1"))


def test_a_choke_takes_the_leaf_with_it() -> None:
    board = position(g="c2", G="c3")
    after = play(board, "xc3")
    assert at(after, "c3") == "1"
    assert not after.has_leaf(parse_cell("c3"))


def test_deadwood_markers_count_down_from_2() -> None:
    board = position(dead2="a5", dead1="b5")
    after = play(board, "--")
    assert at(after, "a5 b5") == "1."


# --- alive, withering, grafting (§2, C2, C3) ---------------------------------------------


def test_a_cut_vine_withers_keeping_its_leaves() -> None:
    board = position(g="c2 c3 c4 c5 d5", G="d6")
    after = play(board, "xc3")  # Green chokes its own c3
    # c4 c5 d5 d6 wither; Decay sheds d6 (highest row) at once, leaf and all
    assert at(after, "c3 c4 c5 d5 d6") == "1www."
    assert after.owner(parse_cell("c4")) is None and after.is_withering(parse_cell("c4"))
    assert after.vines(GREEN) == (1 << parse_cell("c1")) | (1 << parse_cell("c2"))


def test_withering_leaves_gather_nothing_but_cast_shade() -> None:
    board = position(g="b2", W="b4", G="c2")
    assert not board.is_lit(parse_cell("b2"))
    assert board.income(GREEN) == 3 + 1


def test_alive_runs_through_own_cells_only() -> None:
    """C2: once d4 is cut from c1, touching Purple's vine does not keep it alive."""
    board = position(g="c2 c3 c4 d4", p="g2 g3 g4 f4 e4 e5 d5 c5", turn=2)
    after = play(board, "xc4")  # Purple chokes c4; d4 touches Purple's e4 and d5 only
    assert after.owner(parse_cell("d4")) is PURPLE  # so it withers, and Purple grafts it (C3)


def test_a_creep_grafts_the_branches_it_touches() -> None:
    """C3: after a creep the creeper grafts, leaves and all, at once."""
    board = position(g="c2 c3 c4 c5 d5", w="e6 f6", W="e7", sun=(10, 0))
    builder = board.begin()
    builder.apply(Creep(parse_cell("d6")))
    assert builder.sun == 13 - 1
    assert [builder.owner(parse_cell(c)) for c in ("e6", "f6", "e7")] == [GREEN] * 3
    assert builder.leaf_cost() == 2  # the grafted e7 leaf is lit and counts at once
    after = builder.finish()
    assert at(after, "d6 e6 f6 e7") == "gggG"
    assert after.withering() == 0


def test_a_choke_of_the_opponent_grafts_its_cut_part_to_the_choker() -> None:
    """C3: Green chokes Purple's e4; the cut part (e5, d5, D6) touches Green's d4."""
    board = position(g="c2 c3 c4 d4", p="g2 g3 g4 f4 e4 e5 d5", P="d6")
    after = play(board, "xe4")
    assert at(after, "e4 e5 d5 d6") == "1ggG"
    assert after.withering() == 0


def test_a_choke_of_ones_own_vine_can_graft_it_to_the_opponent() -> None:
    """C3: after a choke that cut X's vine the branch goes to X's opponent, here not the choker."""
    board = position(g="c2 c3 c4 d4 e4", G="f4", p="g2 g3 g4")
    after = play(board, "xc3")  # Green chokes its own c3; c4–f4 touch Purple's g4
    assert at(after, "c3 c4 d4 e4 f4") == "1pppP"
    assert after.owner(parse_cell("f4")) is PURPLE
    assert after.leaves(PURPLE) == 1 << parse_cell("f4")


def test_a_cut_branch_touching_nobody_stays_withering() -> None:
    board = position(g="c2 c3 c4 d4 e4", p="g2 g3", turn=2)
    after = play(board, "--")
    assert after.withering() == 0
    choked = play(position(g="c2 c3 c4 d4 e4 f4", p="g2 g3 g4 h4 h5", turn=2), "xg4")
    # Purple's h4, h5 wither; they touch no Green cell, so nobody grafts them
    assert at(choked, "g4 h4 h5") == "1w."


# --- Decay (§4.4, C4) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("branch", "shed"),
    [
        ("i8", "i8"),  # a single cell
        ("b4 b5 b6", "b6"),  # the highest row
        ("d7 e7 f7", "d7"),  # e7 would split it; d7 and f7 level: nearer to a
        ("b8 c8 d8 e8", "e8"),  # ends b8 and e8: nearest to e first
        ("b7 c7", "c7"),  # nearest to e
        ("g7 h7", "g7"),  # nearest to e, right of it
        ("d5 d6 e6 f6 f5", "d5"),  # row 6 cells would all split the arch
        ("a4 a5 i5 i4", "a4"),  # through the tunnel: a5, i5 split it; a4, i4 level
    ],
)
def test_a_withering_branch_sheds_one_cell(branch: str, shed: str) -> None:
    after = play(position(w=branch), "--")
    kept = [cell for cell in branch.split() if cell != shed]
    assert at(after, shed) == "."
    assert at(after, " ".join(kept)) == "w" * len(kept)


def test_every_branch_sheds_a_cell_at_once() -> None:
    after = play(position(w="a7 a8", W="i7 i8 h8"), "--")
    assert at(after, "a7 a8 i7 i8 h8") == "w.WW."


def test_decay_takes_the_branch_as_it_stands_after_the_choke() -> None:
    board = position(p="g2 h2 h3 h4 h5 i5", turn=4)
    after = play(board, "xh4")
    assert at(after, "h4 h5 i5") == "1.w"


def test_deadwood_clears_before_withering_sheds_and_both_free_the_light() -> None:
    board = position(g="b2", G="c2", dead1="c7", w="c4 c5")
    assert not board.is_lit(parse_cell("c2"))
    after = play(board, "--")
    assert at(after, "c7 c4 c5") == ".w."
    assert not after.is_lit(parse_cell("c2"))
    later = play(play(after, "--"), "--")
    assert at(later, "c4") == "."
    assert later.is_lit(parse_cell("c2"))
    assert later.income(GREEN) == 3 + 1


# --- errors and the builder ---------------------------------------------------------------


def test_a_refused_action_leaves_the_turn_as_it_was() -> None:
    board = position(g="c2", sun=(0, 0))
    builder = board.begin()
    builder.apply(Creep(parse_cell("b2")))
    before = (builder.sun, builder.creep_targets(), builder.leaf_targets(), builder.choke_targets())
    for action in (Creep(parse_cell("e2")), Leaf(parse_cell("c1")), Choke(parse_cell("g1"))):
        with pytest.raises(IllegalDecision) as caught:
            builder.apply(action)
        assert caught.value.index == 1
    assert (
        builder.sun,
        builder.creep_targets(),
        builder.leaf_targets(),
        builder.choke_targets(),
    ) == before
    builder.apply(Leaf(parse_cell("b2")))
    assert builder.actions == (Creep(parse_cell("b2")), Leaf(parse_cell("b2")))
    assert str(builder.turn()) == "b2+Lb2"
    after = builder.finish()
    assert after == play(board, "b2+Lb2")
    with pytest.raises(IllegalDecision, match="already finished"):
        builder.finish()
    with pytest.raises(IllegalDecision, match="after the turn was finished"):
        builder.apply(Creep(parse_cell("d1")))


def test_the_builder_lists_what_can_be_done() -> None:
    builder = Position.START.begin()
    assert builder.player is GREEN and builder.income == 3 and builder.sun == 4
    assert builder.creep_targets() == [parse_cell(c) for c in ("b1", "d1", "c2")]
    assert builder.leaf_targets() == []
    assert builder.choke_targets() == []
    assert builder.creep_cost(parse_cell("e2")) is None
    assert builder.creep_cost(parse_cell("e5")) is None
    builder.apply(Creep(parse_cell("c2")))
    assert builder.leaf_targets() == [parse_cell("c2")]
    assert builder.choke_targets() == [parse_cell("c2")]
    assert builder.is_lit(parse_cell("c2")) and not builder.is_lit(parse_cell("c1"))
    poor = position(g="c2 c3", turn=1).begin()
    poor.apply(Creep(parse_cell("b2")))
    poor.apply(Creep(parse_cell("d2")))
    poor.apply(Creep(parse_cell("a2")))  # sun 0 now: nothing is affordable
    assert poor.sun == 0 and poor.creep_targets() == [] and poor.leaf_targets() == []


def test_an_unknown_action_is_refused() -> None:
    builder = Position.START.begin()
    with pytest.raises(IllegalDecision, match="is not a creep, leaf or choke") as caught:
        builder.apply("c2")  # type: ignore[arg-type]
    assert caught.value.index == 0
    with pytest.raises(IllegalDecision, match="is not a creep, leaf or choke"):
        Position.START.play(Turn(("c2",)))  # type: ignore[arg-type]


# --- the game (§5, C5) ------------------------------------------------------------------------

TO_THE_TOP = "c2 c3 c4 c5 d5 d6 d7 d8 d9 d10 d11 e11"
WON_AT_201 = position(g=TO_THE_TOP, G="e12", turn=201)


def test_the_game_runs_turns_for_the_seat_to_move() -> None:
    game = get_game("ivy")
    assert isinstance(game, IvyGame)
    assert (game.name, game.seat_names, game.min_players, game.max_players) == (
        "ivy",
        ("Green", "Purple"),
        2,
        2,
    )
    state = game.start(GameSettings(players=2))
    assert state.position == Position.START and state.turn_limit == 200
    assert game.settings_tags(state) == {"TurnLimit": "200"}
    assert game.to_decide(state) == 0 and game.outcome(state) is None
    assert game.view(state, 1) is state.position
    with pytest.raises(IllegalDecision, match="it is Green's turn"):
        game.apply(state, 1, Turn.PASS)
    state = game.apply(state, 0, game.parse_decision("c2+Lc2"))
    assert game.to_decide(state) == 1
    assert game.notation(state) == str(state.position)
    assert game.format_decision(Turn.parse("b2+xb2")) == "b2+xb2"
    with pytest.raises(IllegalDecision, match="a decision is an Ivy turn"):
        game.apply(state, 1, "--")  # type: ignore[arg-type]


def test_a_win_at_feed_ends_the_game() -> None:
    game = IvyGame()
    state = game.start(GameSettings(players=2, start=str(position(g=TO_THE_TOP, G="e12"))))
    outcome = game.outcome(state)
    assert outcome is not None and outcome.scores == (1.0, 0.0) and outcome.places == (1, 2)
    assert outcome.reason == "Green reached the top"
    assert game.to_decide(state) is None
    with pytest.raises(IllegalDecision, match=r"the game is over \(Green reached the top\)"):
        game.apply(state, 0, Turn.PASS)
    purple = position(p="g2 g3 g4 g5 f5 f6 f7 f8 f9 f10 f11 e11", P="e12", turn=2)
    outcome = game.outcome(game.start(GameSettings(players=2, start=str(purple))))
    assert outcome is not None and outcome.scores == (0.0, 1.0) and outcome.places == (2, 1)
    assert outcome.reason == "Purple reached the top"


def test_the_turn_limit_draws_before_a_feed_could_win() -> None:
    """C5: when turn L has been played, turn L+1's Feed does not happen."""
    game = IvyGame()
    state = game.start(GameSettings(players=2, start=str(WON_AT_201), options={"turn_limit": 200}))
    outcome = game.outcome(state)
    assert outcome is not None and outcome.scores == (0.5, 0.5) and outcome.places == (1, 1)
    assert outcome.reason == "turn limit 200 reached"
    with pytest.raises(IllegalDecision, match="the game is over"):
        game.apply(state, 0, Turn.PASS)
    longer = game.start(GameSettings(players=2, start=str(WON_AT_201), options={"turn_limit": 201}))
    assert game.outcome(longer).reason == "Green reached the top"  # type: ignore[union-attr]


def test_the_turn_limit_counts_turns_by_number() -> None:
    game = IvyGame()
    state = game.start(GameSettings(players=2, options={"turn_limit": 2}))
    assert game.settings_tags(state) == {"TurnLimit": "2"}
    state = game.apply(state, 0, Turn.PASS)
    assert game.outcome(state) is None
    state = game.apply(state, 1, Turn.PASS)
    assert game.outcome(state).reason == "turn limit 2 reached"  # type: ignore[union-attr]
    assert game.to_decide(state) is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (GameSettings(players=3), "Ivy is played by 2 players, not 3"),
        (GameSettings(players=2, options={"turn_limit": 0}), "turn_limit must be"),
        (GameSettings(players=2, options={"turn_limit": "200 turns"}), "turn_limit must be"),
        (GameSettings(players=2, options={"turn_limit": True}), "turn_limit must be"),
        (GameSettings(players=2, options={"turn_limit": 2.5}), "turn_limit must be"),
        (GameSettings(players=2, options={"limit": 5}), "unknown Ivy option 'limit'"),
    ],
)
def test_bad_settings_are_refused(settings: GameSettings, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        IvyGame().start(settings)


def test_a_bad_start_position_is_refused() -> None:
    with pytest.raises(PositionError):
        IvyGame().start(GameSettings(players=2, start="nonsense"))


def test_options_may_arrive_as_text() -> None:
    # --option turn_limit=50 gives text; a TOML [options] table gives an integer.
    assert IvyGame().check_options({"turn_limit": "50"}) == {"turn_limit": 50}
    assert IvyGame().check_options({}) == {"turn_limit": 200}
