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
