"""The replay viewer: its data agrees with the rules, its pages are safe and work in a browser.

The unit tests check the embedded document against :func:`referee.replay.replay`
and the page's safety (escaped data, its Content Security Policy, no network).
The browser tests open pages in headless Chromium (``tests/browser.py``) and read
the drawn board back from the DOM: each cell's §6 character, the suns, the turn,
compared with the position ``referee replay`` computes after that turn.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser, browser_session
from click.testing import CliRunner

from referee.cli import main
from referee.games import CHANCE, GameSettings, get_game
from referee.games.ivy.board import COLUMNS, ROW_SPANS
from referee.games.ivy.position import Position
from referee.games.ivy.turns import Choke, Creep, Leaf, Turn
from referee.pgn import (
    ClockAnnotation,
    GameRecord,
    RecordedTurn,
    format_game,
    outcome_tags,
    read_game,
    result_token,
    seat_tags,
)
from referee.replay import replay
from referee.session import ChanceDraws
from referee.viewer import embed_json, game_document, game_page

DATA = Path(__file__).parent / "data"

HOSTILE = '</script><script>window.pwned = 1</script><!-- <img src=x onerror="window.pwned=2">'
"""Text a bot could put in its name or in a comment of its record."""


# --- games to show -------------------------------------------------------------------


def random_turn(position: Position, rng: random.Random) -> Turn:
    """A legal turn that climbs more often than not, chokes now and then."""
    builder = position.begin()
    for _ in range(rng.randint(0, 5)):
        options = [Creep(c) for c in builder.creep_targets()]
        options += [Leaf(c) for c in builder.leaf_targets()]
        if not options:
            break
        weights = [1 + (c.cell // 9) ** 2 for c in options]  # higher rows first
        builder.apply(rng.choices(options, weights)[0])
    targets = builder.choke_targets()
    if targets and rng.random() < 0.4:
        builder.apply(Choke(rng.choice(targets)))
    return builder.turn()


def random_game(
    seed: int,
    *,
    turn_limit: int = 60,
    names: tuple[str, str] = ("alice", "bob"),
    start: str | None = None,
) -> GameRecord:
    """A whole recorded game of random legal turns, with clocks, ended by the rules
    (from the position ``start`` when given, §6 notation)."""
    rng = random.Random(seed)
    position = Position.START if start is None else Position.from_string(start)
    turns = []
    clocks = [10_000, 10_000]
    winner = None
    while position.turn <= turn_limit:
        winner = position.winner_at_feed()
        if winner is not None:
            break
        turn = random_turn(position, rng)
        mover = int(position.to_move)
        elapsed = rng.randint(5, 400)
        clocks[mover] += 100 - elapsed
        turns.append(RecordedTurn(str(turn), clock=ClockAnnotation(clocks[mover], elapsed)))
        position = position.play(turn)
    if winner is not None:
        result, reason = (
            ("1-0", "Green reached the top") if winner == 0 else ("0-1", "Purple reached the top")
        )
    else:
        result, reason = "1/2-1/2", f"turn limit {turn_limit} reached"
    turns[-1] = RecordedTurn(turns[-1].token, reason, turns[-1].clock)
    tags = {
        "Event": "Viewer test",
        "Round": "1",
        "White": names[0],
        "Black": names[1],
        "Game": "Ivy",
        "Green": names[0],
        "Purple": names[1],
        "TurnLimit": str(turn_limit),
        "TimeControl": "10+0.1",
        "Termination": "normal",
        "PlyCount": str(len(turns)),
        "Variant": "Ivy",
    }
    if start is not None:
        tags.update(SetUp="1", FEN=start)
    return GameRecord(tags=tags, turns=turns, result=result)


def verdant_game(seed: int, players: int = 3) -> GameRecord:
    """A whole recorded Verdant game: chance drawn from a seeded generator, the seats'
    decisions from the bundled bots' fast playout policy."""
    from bots.verdant.playout import fast_decision

    game = get_game("verdant")
    chance, rng = ChanceDraws(seed), random.Random(seed)  # the referee's draws, the bots' own
    state = game.start(GameSettings(players=players, seed=seed, options=game.check_options({})))
    turns = []
    while (actor := game.to_decide(state)) is not None:
        if actor == CHANCE:
            decision, clock = chance.draw(game, state), None
        else:
            decision, clock = fast_decision(state, rng), ClockAnnotation(5000, 20)
        token = game.format_decision(decision)
        turns.append(RecordedTurn(token, clock=clock, actor=actor, turn=game.turn_number(state)))
        state = game.apply(state, actor, decision)
    outcome = game.outcome(state)
    assert outcome is not None
    last = turns[-1]
    turns[-1] = RecordedTurn(last.token, outcome.reason, last.clock, last.actor, last.turn)
    tags = {
        "Event": "Viewer test",
        "Game": "Verdant",
        **seat_tags(None, [f"bot{seat + 1}" for seat in range(players)]),
        "Seed": str(seed),
        **outcome_tags(outcome.places, outcome.scores, outcome.breakdown),
        **game.settings_tags(state),
        "TimeControl": "5+0.1",
        "Termination": "normal",
        "PlyCount": str(len(turns)),
        "Variant": "Verdant",
    }
    return GameRecord(tags=tags, turns=turns, result=result_token(outcome.places, outcome.scores))


def notation_from_cells(cells: dict[str, str], to_move: str, sun: list[str], turn: str) -> str:
    """A §6 position string from the characters the page drew in each cell."""
    rows = []
    for row in range(12, 0, -1):
        first, last = ROW_SPANS[row]
        rows.append("".join(cells[f"{COLUMNS[column]}{row}"] for column in range(first, last + 1)))
    return f"{'/'.join(rows)} {to_move} {sun[0]} {sun[1]} {turn}"


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Recorded games, each in a PGN file of its own: random ones, the spec's example,
    a won game, and a record broken at turn 5."""
    folder = tmp_path_factory.mktemp("games")
    records = [random_game(seed) for seed in (1, 2, 3)]
    records += [read_game(DATA / "spec_example.pgn"), read_game(DATA / "mixed.pgn", 5)]
    records.append(read_game(DATA / "mixed.pgn", 2))
    paths = []
    for number, record in enumerate(records):
        path = folder / f"game{number}.pgn"
        path.write_text(format_game(record), encoding="utf-8")
        paths.append(path)
    return paths


# --- the document -----------------------------------------------------------------------


def test_every_frame_is_a_state_the_rules_reached(games: list[Path]) -> None:
    for path in games:
        record = read_game(path)
        played = replay(record)
        document = game_document(record)
        frames = document["frames"]
        assert len(frames) == len(played.states)
        for frame, state in zip(frames, played.states, strict=True):
            position = state.position
            assert frame["state"]["turn"] == position.turn
            assert frame["state"]["sun"] == [position.sun(0), position.sun(1)]
            rows = str(position).split(" ")[0]
            drawn = notation_from_cells(
                {
                    name: frame["state"]["cells"][cell]
                    for cell, (name, _, _) in enumerate(document["layout"]["cells"])
                },
                "g" if frame["state"]["toMove"] == 0 else "p",
                [str(s) for s in frame["state"]["sun"]],
                str(frame["state"]["turn"]),
            )
            assert drawn.split(" ")[0] == rows
            assert drawn == str(position)


def test_a_turn_shows_its_actions_and_their_effects() -> None:
    document = game_document(read_game(DATA / "spec_example.pgn"))
    last = document["frames"][8]
    assert last["turn"] == 8 and last["decision"]["token"] == "h4+h5+i5+Lh3+g3+xh4"
    changes = last["changes"]
    assert [(a["kind"], a["cell"], a["cost"]) for a in changes["actions"]] == [
        ("creep", "h4", 1),
        ("creep", "h5", 1),
        ("creep", "i5", 1),
        ("leaf", "h3", 2),
        ("creep", "g3", 2),
        ("choke", "h4", 0),
    ]
    # The choke at h4 cut h5 and i5 off: both withered, and Decay shed h5 at once.
    assert changes["withered"] == ["i5"]
    assert changes["shed"] == ["h5"]
    assert changes["feed"] == 4 and changes["spent"] == 7
    # Turn 5 choked b2: b3 and b4 withered and b4 was shed at once; turn 4's deadwood
    # f2 cleared. Turn 6's Decay shed b3, the rest of that branch.
    turn5, turn6 = document["frames"][5]["changes"], document["frames"][6]["changes"]
    assert (turn5["withered"], turn5["shed"], turn5["cleared"]) == (["b3"], ["b4"], ["f2"])
    assert (turn6["shed"], turn6["cleared"]) == (["b3"], ["b2"])


def test_a_broken_record_shows_the_turns_before_the_illegal_one() -> None:
    document = game_document(read_game(DATA / "mixed.pgn", 2))
    assert len(document["frames"]) == 5  # the start and turns 1-4
    assert document["broken"]["turn"] == 5
    assert "does not touch a living Green cell" in document["broken"]["reason"]


def test_clocks_follow_each_seat() -> None:
    record = random_game(7, turn_limit=10)
    frames = game_document(record)["frames"]
    assert frames[0]["clocks"] == [10_000, 10_000]
    for index, turn in enumerate(record.turns, start=1):
        mover = (index - 1) % 2
        assert frames[index]["clocks"][mover] == turn.clock.clock_ms
        assert frames[index]["clocks"][1 - mover] == frames[index - 1]["clocks"][1 - mover]


# --- the page -------------------------------------------------------------------------


def test_embedded_json_cannot_close_its_element() -> None:
    text = embed_json({"name": HOSTILE, "line": "a\u2028b"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"name": HOSTILE, "line": "a\u2028b"}


def hostile_record() -> GameRecord:
    record = random_game(4, turn_limit=12, names=(HOSTILE, "bob"))
    turns = list(record.turns)
    turns[2] = RecordedTurn(turns[2].token, HOSTILE, turns[2].clock)
    tags = dict(record.tags, Event=HOSTILE)
    return GameRecord(tags=tags, turns=turns, result=record.result)


def test_text_from_the_record_is_never_markup() -> None:
    page = game_page(hostile_record())
    # Our one script and one JSON element; the hostile text is only inside the JSON, escaped.
    assert page.count("<script") == 2
    assert page.lower().count("</script") == 2
    assert "<img" not in page and "<!--" not in page and "pwned = 1</" not in page
    assert re.search(r"https?://(?!www\.w3\.org/2000/svg)", page) is None  # nothing to fetch


def test_the_policy_allows_exactly_the_page_s_own_script_and_style() -> None:
    import base64
    import hashlib

    page = game_page(read_game(DATA / "spec_example.pgn"))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)[1]
    script = re.search(r"<script>(.*)</script>", page, re.DOTALL)[1]
    style = re.search(r"<style>(.*)</style>", page, re.DOTALL)[1]

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert f"script-src {digest(script)};" in policy
    assert f"style-src {digest(style)};" in policy
    assert "default-src 'none'" in policy


def test_view_command_writes_a_page(tmp_path: Path, games: list[Path]) -> None:
    out = tmp_path / "out.html"
    result = CliRunner().invoke(main, ["view", str(games[3]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    copy = tmp_path / "mixed.pgn"
    copy.write_bytes((DATA / "mixed.pgn").read_bytes())
    default = CliRunner().invoke(main, ["view", str(copy), "--game", "4"])
    assert default.exit_code == 0, default.output
    assert (tmp_path / "mixed-4.html").is_file()
    missing = CliRunner().invoke(main, ["view", str(DATA / "mixed.pgn"), "--game", "9"])
    assert missing.exit_code == 1 and "holds 5 games, not game 9" in missing.output


# --- in a browser -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    yield from browser_session(tmp_path_factory)


@pytest.fixture(scope="module")
def pages(games: list[Path], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("pages")
    paths = []
    for number, path in enumerate(games):
        page = folder / f"game{number}.html"
        page.write_text(game_page(read_game(path)), encoding="utf-8")
        paths.append(page)
    return paths


READ_BOARD = """
const board = document.querySelector("svg[data-board]");
const cells = {};
for (const node of board.querySelectorAll("[data-cell]")) {
  cells[node.dataset.cell] = node.dataset.state;
}
return {cells, toMove: board.dataset.toMove, sun: board.dataset.sun.split(" "),
        turn: board.dataset.turn, frame: document.body.dataset.frame, hash: location.hash};
"""


def drawn_position(browser: Browser) -> str:
    board = browser.run(READ_BOARD)
    return notation_from_cells(board["cells"], board["toMove"], board["sun"], board["turn"])


def test_the_board_after_turn_n_is_the_replayed_position(
    browser: Browser, games: list[Path], pages: list[Path]
) -> None:
    for path, page in zip(games, pages, strict=True):
        record = read_game(path)
        played = replay(record)
        first = played.first_turn
        last = first + len(played.states) - 2
        for turn in sorted({first - 1, first, (first + last) // 2, last - 1, last}):
            if turn < first - 1:
                continue
            browser.open(page, f"#turn={turn}")
            expected = played.notation_before(turn + 1)
            assert drawn_position(browser) == expected, (path.name, turn)
            assert browser.errors() == []


def test_the_final_board_is_what_replay_prints(
    browser: Browser, games: list[Path], pages: list[Path]
) -> None:
    for path, page in zip(games, pages, strict=True):
        result = CliRunner().invoke(main, ["replay", str(path), "--final-position"])
        line = result.output.strip()
        browser.open(page)  # a page opens at the last legal position
        if line.startswith("ILLEGAL"):
            assert drawn_position(browser) == replay(read_game(path)).notation_before()
        else:
            assert drawn_position(browser) == line


def test_keyboard_steps_through_the_game(
    browser: Browser, pages: list[Path], games: list[Path]
) -> None:
    from selenium.webdriver.common.keys import Keys

    played = replay(read_game(games[0]))
    last = len(played.states) - 1
    browser.open(pages[0])
    frame = lambda: int(browser.run("return document.body.dataset.frame"))  # noqa: E731
    assert frame() == last
    browser.keys(Keys.HOME)
    assert frame() == 0 and browser.run("return location.hash") == "#turn=0"
    assert drawn_position(browser) == played.notation_before(1)
    browser.keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    assert frame() == 3 and browser.run("return location.hash") == "#turn=3"
    assert drawn_position(browser) == played.notation_before(4)
    browser.keys(Keys.ARROW_LEFT)
    assert frame() == 2
    browser.keys(Keys.END)
    assert frame() == last
    browser.keys(Keys.HOME, Keys.SPACE)
    assert (
        browser.run("return document.getElementById('play').getAttribute('aria-pressed')") == "true"
    )
    browser.driver.implicitly_wait(0)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser.driver, 10).until(lambda _: frame() >= 2)
    browser.keys(Keys.SPACE)
    assert (
        browser.run("return document.getElementById('play').getAttribute('aria-pressed')")
        == "false"
    )
    stopped = frame()
    assert stopped >= 2
    # The slider and the list of moves go to a frame too.
    browser.run(
        "const s = document.getElementById('slider'); s.value = '5';"
        " s.dispatchEvent(new Event('input'));"
    )
    assert frame() == 5
    browser.run("document.querySelector('#moves button[data-frame=\"7\"]').click()")
    assert frame() == 7
    assert (
        browser.run("return document.querySelector('#moves [aria-current=step]').dataset.frame")
        == "7"
    )
    # A link to a turn opens there, and changing the hash moves the board.
    browser.open(pages[0], "#turn=4")
    assert frame() == 4
    browser.run("location.hash = '#turn=6'")
    WebDriverWait(browser.driver, 5).until(lambda _: frame() == 6)
    assert browser.errors() == []


def test_a_hostile_record_injects_nothing(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    record = hostile_record()
    page.write_text(game_page(record), encoding="utf-8")
    browser.open(page, "#turn=3")
    assert browser.run("return window.pwned === undefined")
    assert browser.run("return document.querySelectorAll('img, script:not([type])').length") == 1
    title = browser.run("return document.getElementById('title').textContent")
    assert record.tags["White"] in title  # the record's text, shown as text (" became ')
    assert record.turns[2].comment == HOSTILE
    assert HOSTILE in browser.run("return document.getElementById('detail').textContent")
    assert browser.errors() == []


def test_the_page_loads_nothing_from_anywhere(browser: Browser, pages: list[Path]) -> None:
    browser.open(pages[0])
    assert browser.run("return performance.getEntriesByType('resource').length") == 0


CONTRAST = """
function rgb(text) { return text.match(/[\\d.]+/g).map(Number); }
function luminance([r, g, b]) {
  const channel = (c) => {
    c /= 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}
function background(node) {
  for (; node; node = node.parentElement) {
    const colour = rgb(getComputedStyle(node).backgroundColor);
    if (colour.length < 4 || colour[3] > 0) return colour;
  }
  return [255, 255, 255];
}
const worst = [];
for (const node of document.querySelectorAll("body *:not(svg *)")) {
  const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
  const style = getComputedStyle(node);
  if (!own || style.visibility === "hidden" || node.offsetParent === null) continue;
  const a = luminance(rgb(style.color)), b = luminance(background(node));
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  if (ratio < 4.5) {
    worst.push(node.tagName + " " + node.textContent.trim().slice(0, 30) + " " + ratio.toFixed(2));
  }
}
return worst;
"""


def test_text_has_enough_contrast_and_controls_have_names(
    browser: Browser, pages: list[Path]
) -> None:
    browser.open(pages[0], "#turn=5")
    assert browser.run(CONTRAST) == []
    unnamed = browser.run(
        "return [...document.querySelectorAll('button, input, a')]"
        ".filter((n) => !(n.textContent.trim() || n.getAttribute('aria-label')"
        " || n.labels?.length))"
        ".map((n) => n.outerHTML.slice(0, 60))"
    )
    assert unnamed == []
    assert (
        browser.run("return document.querySelector('svg[data-board]').getAttribute('role')")
        == "img"
    )
    assert browser.run("return document.getElementById('board-summary').textContent").startswith(
        "The house"
    )


def test_a_phone_sized_screen_shows_the_whole_board(browser: Browser, pages: list[Path]) -> None:
    browser.size(390, 844)
    try:
        browser.open(pages[0], "#turn=9")
        width = browser.run("return document.documentElement.scrollWidth")
        assert width <= 390
        board = browser.run(
            "const r = document.querySelector('svg[data-board]').getBoundingClientRect();"
            " return [r.left, r.right, r.width]"
        )
        assert board[0] >= 0 and board[1] <= 390 and board[2] >= 300
        assert browser.errors() == []
    finally:
        browser.size(1280, 1000)


# --- Verdant ------------------------------------------------------------------------------

READ_TABLE = """
return [...document.querySelectorAll(".verdant-home .verdant-card")].map((card) =>
  [Number(card.dataset.seat), card.dataset.card, Number(card.dataset.x), Number(card.dataset.y)]);
"""


def public_cards(state: object) -> list[list[object]]:
    """Every card in every home of a Verdant state, as the page should draw them."""
    from referee.games.verdant.codec import encode_view
    from referee.games.verdant.rules import view_of

    view = encode_view(view_of(state, 0))  # type: ignore[arg-type]
    return sorted(
        [home.seat, card.id, card.at[0], card.at[1]] for home in view.homes for card in home.cards
    )


def test_a_verdant_table_is_the_replayed_state(browser: Browser, tmp_path: Path) -> None:
    record = verdant_game(5)
    played = replay(record)
    assert played.broken is None  # a genuine record: every draw is the seed's
    frames = game_document(record)["frames"]
    assert len(frames) == len(played.states)
    page = tmp_path / "verdant.html"
    page.write_text(game_page(record), encoding="utf-8")
    turns = sorted({frame["turn"] for frame in frames[1:]})
    for turn in (turns[0], turns[len(turns) // 2], turns[-1]):
        browser.open(page, f"#turn={turn}")
        index = int(browser.run("return document.body.dataset.frame"))
        assert frames[index]["turn"] == turn and frames[index]["last"]
        assert sorted(browser.run(READ_TABLE)) == public_cards(played.states[index])
        assert browser.errors() == []
    result = browser.run("return document.getElementById('result').textContent")
    assert result.startswith(record.result) and "Places: Seat 1 place" in result
    from selenium.webdriver.common.keys import Keys

    browser.keys(Keys.ARROW_LEFT)
    index = int(browser.run("return document.body.dataset.frame"))
    assert sorted(browser.run(READ_TABLE)) == public_cards(played.states[index])


def test_a_game_without_a_view_shows_each_state_s_notation(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee.viewer import views

    monkeypatch.setattr(views, "_VIEWS", {})
    record = read_game(DATA / "spec_example.pgn")
    page = tmp_path / "notation.html"
    page.write_text(game_page(record), encoding="utf-8")
    played = replay(record)
    for turn in (0, 4, 8):
        browser.open(page, f"#turn={turn}")
        shown = browser.run("return document.querySelector('[data-notation]').textContent")
        assert shown == played.notation_before(turn + 1)
    assert browser.errors() == []


# --- Verdant decisions in words, its axes, the controls in view -------------------------------


def test_each_verdant_step_kind_has_its_sentence() -> None:
    from referee.games.verdant.sentences import describe_decision
    from referee.games.verdant.steps import parse_decision

    def said(token: str) -> str:
        return describe_decision(parse_decision(token))

    assert said("pass") == "passes (ends the turn without a pick)"
    assert said("P07") == "deals P07, a plant card"
    assert said("R12") == "deals R12, a room card"
    assert said("red-bed") == "deals red-bed, a token"
    assert said("collector") == "deals collector, an objective"
    assert said("north") == "lays its first room north of its first plant, at 0,1"
    assert said("west") == "lays its first room west of its first plant, at -1,0"
    assert said("cards:0p+1r") == (
        "replaces the plant of column 0 and the room of column 1 with new ones (2 thumbs)"
    )
    assert (
        said("tokens:3") == "replaces the token of column 3 with new ones from the bag (2 thumbs)"
    )
    assert said("tokens:0+1+3") == (
        "replaces the tokens of columns 0, 1 and 3 with new ones from the bag (2 thumbs)"
    )
    assert said("pick:1r/place@0,1") == (
        "picks the room of column 1 with its column's token and places it at 0,1"
    )
    assert said("split/pick:2p:1/place@-1,0/store") == (
        "splits its pick: card and token from different columns (2 thumbs), picks the plant"
        " of column 2 with the token of column 1, places it at -1,0 and stores the taken token"
    )
    assert said("grow@1,0") == "grows the plant at 1,0 by 1 verdancy (2 thumbs)"
    assert said("pick:0p/place@1,1/use:taken@0,0+1,1/discard:stored") == (
        "picks the plant of column 0 with its column's token, places it at 1,1, uses the"
        " taken token on the cards at 0,0 and 1,1 and discards the stored token"
    )


def test_a_verdant_sentence_names_what_the_table_shows() -> None:
    from referee.games.verdant.codec import encode_view
    from referee.games.verdant.rules import view_of
    from referee.games.verdant.sentences import describe_decision

    record = verdant_game(5)
    played = replay(record)
    game = played.game
    frames = game_document(record)["frames"]
    picks = 0
    for index, frame in enumerate(frames[1:]):
        before = played.states[index]
        decision = game.parse_decision(frame["decision"]["token"])
        table = encode_view(view_of(before, 0))
        assert frame["decision"]["text"] == describe_decision(decision, table)
        pick = next((step for step in decision if type(step).__name__ == "Pick"), None)
        if pick is not None:
            picks += 1
            column = table.market[pick.column]
            card = column.plant if pick.kind == "plant" else column.room
            assert (
                f"picks the {pick.kind} {card} of column {pick.column}" in frame["decision"]["text"]
            )
    assert picks > 10
    # Ivy's decisions keep their notation: "This step" lists their actions in words.
    ivy = game_document(read_game(DATA / "spec_example.pgn"))["frames"]
    assert all(frame["decision"]["text"] is None for frame in ivy[1:])


CONTROLS = """
const boxes = {};
for (const id of ["first", "prev", "play", "next", "last", "slider"]) {
  const node = document.getElementById(id);
  const r = node.getBoundingClientRect();
  const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  boxes[id] = {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
               width: r.width, height: r.height, reachable: node.contains(hit)};
}
return {boxes, width: innerWidth, height: innerHeight};
"""


def assert_controls_in_view(browser: Browser) -> None:
    seen = browser.run(CONTROLS)
    for name, box in seen["boxes"].items():
        assert box["width"] > 0 and box["height"] > 0, name
        assert box["top"] >= 0 and box["bottom"] <= seen["height"], (name, box)
        assert box["left"] >= 0 and box["right"] <= seen["width"], (name, box)
        assert box["reachable"], name  # nothing drawn over it


@pytest.mark.parametrize("table", ["ivy", "verdant-3", "verdant-5"])
def test_the_controls_are_in_view_at_1280_by_900(
    browser: Browser, pages: list[Path], tmp_path: Path, table: str
) -> None:
    if table == "ivy":
        page = pages[0]
    else:
        page = tmp_path / f"{table}.html"
        page.write_text(game_page(verdant_game(9, players=int(table[-1]))), encoding="utf-8")
    browser.size(1280, 900)
    try:
        for fragment in ("", "#turn=1", "#turn=0"):
            browser.open(page, fragment)
            assert_controls_in_view(browser)
        # A table taller than the window scrolls under the controls, which stay in view.
        browser.run("window.scrollTo(0, document.documentElement.scrollHeight)")
        assert browser.run("return window.scrollY") > 0 or table == "ivy"
        assert_controls_in_view(browser)
        assert browser.errors() == []
    finally:
        browser.size(1280, 1000)


AXES = """
const result = [];
for (const home of document.querySelectorAll(".verdant-home")) {
  const labels = (axis) => [...home.querySelectorAll(`.axis[data-axis=${axis}]`)].map((label) => {
    const r = label.getBoundingClientRect();
    return {value: Number(label.dataset.value), text: label.textContent,
            middle: axis === "x" ? (r.left + r.right) / 2 : (r.top + r.bottom) / 2};
  });
  const cards = [...home.querySelectorAll(".verdant-card")].map((card) => {
    const r = card.getBoundingClientRect();
    return {x: Number(card.dataset.x), y: Number(card.dataset.y), left: r.left, right: r.right,
            top: r.top, bottom: r.bottom, title: card.title};
  });
  result.push({xs: labels("x"), ys: labels("y"), cards});
}
return result;
"""


def test_verdant_homes_are_labelled_with_the_notation_s_axes(
    browser: Browser, tmp_path: Path
) -> None:
    record = verdant_game(5)
    page = tmp_path / "verdant-axes.html"
    page.write_text(game_page(record), encoding="utf-8")
    browser.open(page)  # the last position: every home is full
    homes = browser.run(AXES)
    assert len(homes) == 3
    for home in homes:
        xs = [label["value"] for label in home["xs"]]
        ys = [label["value"] for label in home["ys"]]
        assert [label["text"] for label in home["xs"]] == [f"x={x}" for x in xs]
        assert [label["text"] for label in home["ys"]] == [f"y={y}" for y in ys]
        cards = home["cards"]
        assert xs == list(range(min(c["x"] for c in cards), max(c["x"] for c in cards) + 1))
        assert ys == list(range(max(c["y"] for c in cards), min(c["y"] for c in cards) - 1, -1))
        x_at = {label["value"]: label["middle"] for label in home["xs"]}
        y_at = {label["value"]: label["middle"] for label in home["ys"]}
        for card in cards:
            # The card sits under its x label and beside its y label (north on top).
            assert card["left"] < x_at[card["x"]] < card["right"], card
            assert card["top"] < y_at[card["y"]] < card["bottom"], card
            assert card["title"].endswith(f", at {card['x']},{card['y']}")
    # The step's title tells the decision in words, its notation beside it.
    frames = game_document(record)["frames"]
    last = frames[-1]["decision"]
    label = browser.run("return document.getElementById('frame-label').textContent")
    assert last["text"] in label and label.endswith(last["token"])
    titles = browser.run(
        "return [...document.querySelectorAll('#moves button')]"
        ".map((b) => [b.title, b.textContent])"
    )
    assert titles[-1][0] == last["token"] and last["text"] in titles[-1][1]
    assert browser.errors() == []
