"""The tournament site: pages made from the results store, checked as HTML and in a browser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser, browser_session
from click.testing import CliRunner
from test_viewer import HOSTILE, drawn_position, random_game

from referee.cli import main
from referee.pgn import format_game, read_games, result_places
from referee.replay import replay
from tournaments.site import INDEX, RELOAD_SECONDS, build_site, game_page_path, update_site
from tournaments.store import DATABASE, ResultStore

PLAYERS = ("alice", "bob", HOSTILE)
PAIRINGS = [(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2)]
"""A double round-robin of three players: six games, of which five are played."""

SCORES = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


def config_json() -> str:
    players = [{"name": name, "argv": ["python", "-m", "bots.random"]} for name in PLAYERS]
    settings = {
        "event": "Site <test>",
        "game": "ivy",
        "time_control": {"tc": "10+0.1"},
        "players": players,
    }
    return json.dumps(settings)


def record_game(store: ResultStore, index: int) -> None:
    white, black = (PLAYERS[seat] for seat in PAIRINGS[index])
    record = random_game(100 + index, turn_limit=30 + 10 * index, names=(white, black))
    places = result_places(record.result, 2)
    assert places is not None
    store.record(
        index,
        players=(white, black),
        result=record.result,
        places=places,
        scores=SCORES[record.result],
        termination="normal",
        # A reason may quote a bot: a bidi override or an escape must not reach the page.
        reason=(record.turns[-1].comment or "") + " \u202e\x1b[31mspoof",
        plies=len(record.turns),
        pgn=format_game(record),
    )


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output directory whose store holds five of the six games, the site updated
    after each as a run would."""
    output = tmp_path_factory.mktemp("tournament")
    with ResultStore.open(output / DATABASE) as store:
        store.save_config(config_json())
        for index in range(5):
            record_game(store, index)
            update_site(output, store, index, total=len(PAIRINGS))
    return output


def test_each_finished_game_gets_its_page_and_a_line_in_the_index(tournament: Path) -> None:
    index = (tournament / INDEX).read_text(encoding="utf-8")
    for number in range(5):
        assert (tournament / game_page_path(number)).is_file()
        assert f'href="{game_page_path(number)}"' in index
    assert not (tournament / game_page_path(5)).exists()
    assert "5 of 6 games played" in index
    assert f'http-equiv="refresh" content="{RELOAD_SECONDS}"' in index  # still running


def test_the_index_escapes_every_text_and_runs_no_script(tournament: Path) -> None:
    index = (tournament / INDEX).read_text(encoding="utf-8")
    assert "<script" not in index and "<img" not in index and "<!--" not in index
    assert "\u202e" not in index and "\x1b" not in index and "spoof" in index
    assert "Site &lt;test&gt;" in index
    assert "script-src 'none'" in index


def test_a_finished_tournament_stops_reloading(tmp_path: Path) -> None:
    with ResultStore.open(tmp_path / DATABASE) as store:
        store.save_config(config_json())
        record_game(store, 0)
        update_site(tmp_path, store, 0, total=1)
    index = (tmp_path / INDEX).read_text(encoding="utf-8")
    assert "1 of 1 games played" in index and "refresh" not in index


def test_the_site_command_rebuilds_every_page(tournament: Path, tmp_path: Path) -> None:
    for page in (tournament / "games").iterdir():
        page.unlink()
    result = CliRunner().invoke(main, ["site", str(tournament)])
    assert result.exit_code == 0, result.output
    assert "5 game pages" in result.output
    assert sorted(p.name for p in (tournament / "games").iterdir()) == [
        f"{n:04d}.html" for n in range(1, 6)
    ]
    empty = CliRunner().invoke(main, ["site", str(tmp_path)])
    assert empty.exit_code == 1 and "Error:" in empty.output
    assert build_site(tournament) == 5


# --- in a browser -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    yield from browser_session(tmp_path_factory)


def test_the_index_lists_every_game_and_links_to_its_replay(
    browser: Browser, tournament: Path
) -> None:
    browser.open(tournament / INDEX)
    assert browser.errors() == []
    links = browser.run("return [...document.querySelectorAll('table.games a')].map((a) => a.href)")
    assert links == [(tournament / game_page_path(n)).resolve().as_uri() for n in range(5)]
    names = browser.run(
        "return [...document.querySelectorAll('table.standings td.player')]"
        ".map((td) => td.textContent)"
    )
    assert sorted(names) == sorted(PLAYERS)
    assert browser.run("return window.pwned === undefined")
    with ResultStore.open(tournament / DATABASE, read_only=True) as store:
        games = store.games()
    for game, link in zip(games, links, strict=True):
        browser.driver.get(link)
        assert browser.errors() == []
        (record,) = read_games(game.pgn)
        assert drawn_position(browser) == replay(record).notation_before()
        back = browser.run("return document.querySelector('#links a').href")
        assert back == (tournament / INDEX).resolve().as_uri()


def test_the_index_reads_on_a_phone(browser: Browser, tournament: Path) -> None:
    browser.size(390, 844)
    try:
        browser.open(tournament / INDEX)
        assert browser.run("return document.documentElement.scrollWidth") <= 390
        assert browser.errors() == []
    finally:
        browser.size(1280, 1000)


def test_the_index_has_headed_tables_and_named_links(browser: Browser, tournament: Path) -> None:
    browser.open(tournament / INDEX)
    headings = browser.run("return [...document.querySelectorAll('h2')].map((h) => h.textContent)")
    assert headings == [
        "Files",
        "Standings",
        "How the games ended",
        "Crosstable",
        "Games",
        "Each player's games",
    ]
    captions = browser.run("return document.querySelectorAll('table > caption').length")
    assert captions == browser.run("return document.querySelectorAll('table').length")
    bars = browser.run(
        "return [...document.querySelectorAll('svg.errorbar')]"
        ".map((s) => s.getAttribute('aria-label'))"
    )
    assert len(bars) == 3 and all(re.fullmatch(r"Elo -?\d+, 95% interval .*", b) for b in bars)


# --- what organisers look for first: files, endings, openings, durations ------------------

OPENINGS = Path(__file__).parent.parent / "examples" / "openings.txt"
RESULTS = {(1, 2): "1-0", (2, 1): "0-1", (1, 1): "1/2-1/2"}


def organised(output: Path) -> tuple[list[str], list[int]]:
    """A tournament of five games in ``output``: from opening 2, from the initial
    position, and lost on time (bob), by a crash (carol) and by an illegal decision
    (carol); ``games.pgn`` and ``ratings.json`` written, ``ratings.csv`` not. Returns
    the openings and each game's duration (the sum of its ``[%emt]`` times)."""
    from tournaments.config import read_openings

    openings = list(read_openings(OPENINGS))
    settings = json.loads(config_json())
    settings["openings"] = openings
    endings = [
        ("normal", ("alice", "bob"), (1, 2), openings[1]),
        ("normal", ("bob", "carol"), (1, 1), None),
        ("time forfeit", ("alice", "bob"), (1, 2), None),
        ("abandoned", ("carol", "alice"), (2, 1), openings[0]),
        ("rules infraction", ("bob", "carol"), (1, 2), None),
    ]
    durations = []
    with ResultStore.open(output / DATABASE) as store:
        store.save_config(json.dumps(settings))
        for index, (termination, players, places, start) in enumerate(endings):
            record = random_game(200 + index, turn_limit=20, names=players, start=start)
            durations.append(sum(turn.clock.elapsed_ms for turn in record.turns))
            store.record(
                index,
                players=players,
                result=RESULTS[places],
                places=places,
                scores=SCORES[RESULTS[places]],
                termination=termination,
                reason=f"{termination} in game {index + 1}",
                plies=len(record.turns),
                pgn=format_game(record),
            )
        (output / "games.pgn").write_text("".join(g.pgn for g in store.games()), "utf-8")
        (output / "ratings.json").write_text("{}\n", encoding="utf-8")
        update_site(output, store, 4, total=5)
    return openings, durations


def test_the_index_links_to_the_files_the_directory_holds(tmp_path: Path) -> None:
    organised(tmp_path)
    index = (tmp_path / INDEX).read_text(encoding="utf-8")
    assert '<a href="games.pgn" download>games.pgn</a>' in index
    assert '<a href="ratings.json" download>ratings.json</a> (the rating table, JSON, 3 bytes)' in (
        index
    )
    assert 'href="ratings.csv"' not in index  # not written yet: no dead link
    (tmp_path / "ratings.csv").write_text("rank\n", encoding="utf-8")
    build_site(tmp_path)
    assert '<a href="ratings.csv" download>' in (tmp_path / INDEX).read_text(encoding="utf-8")


def ending_rows(index: str) -> dict[str, list[str]]:
    """Each row of the "How the games ended" table: termination → its cells."""
    table = index.split('<table class="endings">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr data-termination="([^"]+)">(.*?)</tr>', table)
    return {name: re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", cells) for name, cells in rows}


def test_the_index_counts_how_the_games_ended_and_who_was_at_fault(tmp_path: Path) -> None:
    organised(tmp_path)
    rows = ending_rows((tmp_path / INDEX).read_text(encoding="utf-8"))
    assert list(rows) == ["normal", "time forfeit", "abandoned", "rules infraction"]
    assert rows["normal"] == ["normal", "ended by the rules", "2", "40.0%", "–"]
    assert rows["time forfeit"][2:] == ["1", "20.0%", "bob 1"]
    assert rows["abandoned"][1:] == [
        "a bot crashed, exited or closed its output",
        "1",
        "20.0%",
        "carol 1",
    ]
    assert rows["rules infraction"][1:] == [
        "a bot sent an illegal decision or broke the protocol",
        "1",
        "20.0%",
        "carol 1",
    ]


def game_rows(index: str) -> list[list[str]]:
    """The cells of each row of the list of games."""
    table = index.split('<table class="games">', 1)[1].split("</table>", 1)[0]
    body = table.split("<tbody>", 1)[1]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]


def test_each_game_shows_its_opening_and_duration(tmp_path: Path) -> None:
    from tournaments.site import format_duration

    openings, durations = organised(tmp_path)
    index = (tmp_path / INDEX).read_text(encoding="utf-8")
    rows = game_rows(index)
    assert [row[4] for row in rows] == [
        f'<a href="#opening-2" title="{openings[1]}">opening 2</a>',
        "initial position",
        "initial position",
        f'<a href="#opening-1" title="{openings[0]}">opening 1</a>',
        "initial position",
    ]
    assert [row[6] for row in rows] == [format_duration(ms) for ms in durations]
    assert all(re.fullmatch(r"\d+\.\d\d s", row[6]) for row in rows)  # under 10 s each
    # The openings played, each with its position and its games' results.
    assert f'<tr id="opening-1"><td class="num">1</td><td><code class="position">{openings[0]}' in (
        index
    )
    assert '<tr id="opening-2">' in index and '<tr id="opening-3">' not in index
    assert '<span class="tally">1-0: 1</span>' in index


def test_durations_read_as_a_clock_does() -> None:
    from tournaments.site import format_duration

    assert format_duration(None) == "–"
    assert format_duration(840) == "0.84 s"
    assert format_duration(12_345) == "12.3 s"
    assert format_duration(125_000) == "2:05"
    assert format_duration(3_725_000) == "1:02:05"


def test_the_organisers_sections_read_in_a_browser(browser: Browser, tmp_path: Path) -> None:
    organised(tmp_path)
    browser.open(tmp_path / INDEX)
    assert browser.errors() == []
    files = browser.run("return [...document.querySelectorAll('.downloads a')].map((a) => a.href)")
    assert files == [(tmp_path / name).resolve().as_uri() for name in ("games.pgn", "ratings.json")]
    browser.run("document.querySelector('table.games a[href=\"#opening-2\"]').click()")
    assert browser.run("return location.hash") == "#opening-2"
    counts = browser.run(
        "return [...document.querySelectorAll('table.endings tbody tr')]"
        ".map((tr) => [tr.dataset.termination, tr.cells[2].textContent])"
    )
    assert counts == [
        ["normal", "2"],
        ["time forfeit", "1"],
        ["abandoned", "1"],
        ["rules infraction", "1"],
    ]
