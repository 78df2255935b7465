"""The ladder's next table (tournaments/ladder/matchmaking.py): pure, no processes."""

from __future__ import annotations

from collections import Counter

from tournaments.ladder.matchmaking import Candidate, History, choose_table


def field(*specs: tuple[str, float, float, int]) -> list[Candidate]:
    return [Candidate(name, mu, sigma, games) for name, mu, sigma, games in specs]


def test_a_version_in_its_placement_games_is_seated_first() -> None:
    players = field(("old", 30, 1.0, 50), ("new", 25, 8.3, 0), ("mid", 26, 2.0, 40))
    table = choose_table(players, set(), History(2), placement_games=5)
    assert table is not None and "new" in table


def test_past_placement_the_least_certain_meets_the_closest_rating() -> None:
    players = field(("a", 10, 1.0, 50), ("b", 20, 3.0, 50), ("c", 21, 1.0, 50), ("d", 35, 1.0, 50))
    table = choose_table(players, set(), History(2), placement_games=5)
    assert table is not None and set(table) == {"b", "c"}


def test_busy_players_are_not_seated_and_too_few_free_gives_none() -> None:
    players = field(("a", 10, 1.0, 9), ("b", 20, 3.0, 9), ("c", 21, 1.0, 9))
    table = choose_table(players, {"c"}, History(2), placement_games=0)
    assert table is not None and set(table) == {"a", "b"}
    assert choose_table(players, {"a", "b"}, History(2), placement_games=0) is None


def test_tables_have_the_ladders_seats_and_each_player_sits_each_seat_evenly() -> None:
    history = History(3)
    players = field(*((f"p{n}", 25.0, 5.0, 0) for n in range(3)))
    seated: Counter[tuple[str, int]] = Counter()
    for _ in range(30):
        table = choose_table(players, set(), history, placement_games=0)
        assert table is not None and len(table) == 3 and len(set(table)) == 3
        history.note(table)
        for seat, name in enumerate(table):
            seated[name, seat] += 1
    assert set(seated.values()) == {10}


def test_no_pairing_is_repeated_more_often_than_needed() -> None:
    """The anchor meets others than its nearest neighbour as meetings pile up."""
    history = History(2)
    players = field(("x", 25.0, 5.0, 0), *((f"o{n}", 25.0 + n, 1.0, 0) for n in range(1, 6)))
    met: Counter[str] = Counter()
    for games in range(40):
        players[0].games = games
        table = choose_table(players, set(), history, placement_games=0)
        assert table is not None and "x" in table
        history.note(table)
        met.update(name for name in table if name != "x")
    counts = [met[f"o{n}"] for n in range(1, 6)]
    assert counts == sorted(counts, reverse=True)  # closer ratings more often,
    assert counts[0] < 20 and len(met) >= 4  # but not the closest one forty times
