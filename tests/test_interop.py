"""Other tools read our records exactly as we wrote them, whatever the bots put in them.

Records with hostile names, reasons and comments (brackets, quotes, backslashes,
braces, ``%``, ``;``, line breaks, NUL, ESC, a fake ``[Result "1/2-1/2"]``, very
long text) are written by the real writer, through the referee's own session and
through a real match against a hostile bot process, then read back by:

- python-chess (``chess.pgn.read_headers`` and ``read_game``), a strict reader;
- pgn-extract (Debian package ``pgn-extract``, installed by ``.ci/run``), a strict
  reader that also checks every move as chess, so it reads only the records whose turns
  are chess moves: on Ivy's records and those of games of chance it reports errors and
  does not read them as written (README, "Records");
- a scan of tag lines the way Ordo reads a PGN (any line holding ``[White "``,
  ``[Black "`` or ``[Result "``, its value running to the first ``"]`` of the line),
  the least careful reader there is.

Each must see every game once, with every tag and result as written: the records of
chess moves, of Ivy, and of a two-seat game of chance whose decisions name their actor
(``tests/tinygames.py``, Verdant's form). Ordo and BayesElo themselves are checked by
hand (``docs/records.md``).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import chess.pgn
import msgspec
import pytest
from click.testing import CliRunner
from fakebots import FAKEBOTS
from tinygames import dice_record

from protocol.messages import TurnReply
from referee.cli import main
from referee.clock import TimeControl
from referee.errors import BotCrashed, BotProtocolError
from referee.games import get_entry, get_game
from referee.games.base import GameSettings
from referee.pgn import ClockAnnotation, GameRecord, RecordedTurn, append_game, read_pgn_file
from referee.session import GameSession

HOSTILE = (
    'x"]\n[Result "1/2-1/2"]\n\n[White "forged"]\n} {nested} ;semi \\ "q" %pct\n%escape '
    "\x00NUL \x1b[2J\x1b]0;title\x07ESC \x9b31m \u202eRLO \r\n1-0 0-1 1/2-1/2 * "
    + "w" * 300
    + " tail" * 300
)
"""Text that tries every way out of a comment or a tag value."""

NAMES = ('al[Result "1/2-1/2"]ice', 'bo"b \\ {x} %y ;z\nq', "\x1b[31mred\x00")

CHESS_MOVES = ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6")

PURPLE_TO_MOVE = (
    "./.../...../.#...#./........./........./..#...#../........./........./....#..../"
    "....#..../..g...p.. p 4 5 10"
)


def chess_records() -> list[GameRecord]:
    """Records whose turns are chess moves, so that pgn-extract can read them too."""
    records = []
    for number, result in enumerate(("1-0", "0-1", "1/2-1/2", "*"), start=1):
        turns = [
            RecordedTurn(move, HOSTILE if ply == 3 else None, ClockAnnotation(60_000 - ply, ply))
            for ply, move in enumerate(CHESS_MOVES[: number + 2])
        ]
        white, black = NAMES[number % 3], NAMES[(number + 1) % 3]
        tags = {"Event": HOSTILE, "White": white, "Black": black, "Round": str(number)}
        records.append(GameRecord(tags=tags, turns=turns, result=result, comment=HOSTILE))
    return records


def session_records() -> list[GameRecord]:
    """Ivy records from the referee's session: hostile names, hostile forfeit reasons."""
    faults = [
        BotProtocolError(f"invalid message: {HOSTILE}"),
        BotCrashed(f"exited (exit code 3); stderr ends: {HOSTILE}"),
    ]
    records = []
    for number, fault in enumerate(faults):
        start = PURPLE_TO_MOVE if number else None
        session = GameSession(
            get_game("ivy"),
            get_entry("ivy").codec,
            GameSettings(players=2, start=start, options={"turn_limit": 200}),
            players=(NAMES[number], NAMES[number + 1]),
            control=TimeControl.parse("10+0.1"),
            tags={"Event": HOSTILE},
            max_line_bytes=1 << 20,
        )
        for request_id in (1, 2):
            request = session.next_request(request_id)
            reply = TurnReply(id=request_id, actions=msgspec.Raw(b"[]"))
            assert session.submit(request.seat, reply, 0.01) is None
        session.next_request(3)
        session.fault(session.deciding or 0, fault)
        records.append(session.record())
    return records


def chance_records() -> list[GameRecord]:
    """Two-seat games of chance between hostile names, written as Verdant's are: every
    decision names its actor, chance has no clock, the score tags follow the seat tags."""
    return [
        dice_record((NAMES[0], NAMES[1]), seed=3, tags={"Event": HOSTILE}),
        dice_record((NAMES[2], NAMES[0]), seed=4),
        dice_record((NAMES[1], NAMES[2]), seed=5, stop_after=5),
    ]


def ordo_like_results(text: str) -> list[tuple[str, str, str]]:
    """``(white, black, result)`` as a reader that scans tag lines the way Ordo does finds them."""
    found: list[tuple[str, str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        for tag in ("White", "Black", "Result"):
            start = line.find(f'[{tag} "')
            if start >= 0:
                current[tag] = line[start + len(tag) + 3 : line.find('"]')]
        if len(current) == 3:
            found.append((current["White"], current["Black"], current["Result"]))
            current = {}
    return found


def pgn_extract() -> str:
    """The pgn-extract program (Debian installs it in /usr/games)."""
    path = os.environ.get("PATH", os.defpath) + os.pathsep + "/usr/games"
    program = shutil.which("pgn-extract", path=path)
    if program is None:
        pytest.fail("pgn-extract is missing: apt-get install pgn-extract (.ci/run does)")
    return program


def write(path: Path, records: list[GameRecord]) -> str:
    for record in records:
        append_game(path, record)
    return path.read_text(encoding="utf-8")


# --- the readers -----------------------------------------------------------------------


def test_python_chess_reads_every_tag_and_clock_as_written(tmp_path: Path) -> None:
    records = chess_records() + session_records() + chance_records()
    text = write(tmp_path / "hostile.pgn", records)
    assert read_pgn_file(tmp_path / "hostile.pgn") == records

    handle = io.StringIO(text)
    headers = []
    while (found := chess.pgn.read_headers(handle)) is not None:
        headers.append(dict(found))
    assert headers == [record.tags for record in records]

    handle = io.StringIO(text)
    for record in chess_records():
        game = chess.pgn.read_game(handle)
        assert game is not None and game.errors == []
        assert dict(game.headers) == record.tags
        nodes = list(game.mainline())
        assert [node.san() for node in nodes] == [turn.token for turn in record.turns]
        for node, turn in zip(nodes, record.turns, strict=True):
            assert turn.clock is not None
            clock_ms, elapsed_ms = turn.clock.clock_ms, turn.clock.elapsed_ms
            assert clock_ms is not None and elapsed_ms is not None
            assert node.clock() == pytest.approx(clock_ms / 1000)
            assert node.emt() == pytest.approx(elapsed_ms / 1000)
            assert (turn.comment or "") in " ".join(node.comment.split())  # lines joined
    # Ivy's games and the games of chance follow: not chess, but each is read once, whole.
    for record in records[len(chess_records()) :]:
        game = chess.pgn.read_game(handle)
        assert game is not None and dict(game.headers) == record.tags
    assert chess.pgn.read_game(handle) is None


def test_pgn_extract_reads_every_game_tag_and_move_as_written(tmp_path: Path) -> None:
    records = chess_records()
    write(tmp_path / "hostile.pgn", records)
    run = subprocess.run(
        [pgn_extract(), "-s", "--json", str(tmp_path / "hostile.pgn")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stderr == ""  # not one complaint
    games = json.loads(run.stdout)
    assert [{k: v for k, v in game.items() if k != "Moves"} for game in games] == [
        record.tags for record in records
    ]
    assert [[move["move"] for move in game["Moves"]] for game in games] == [
        [turn.token for turn in record.turns] for record in records
    ]


@pytest.mark.parametrize("kind", ["ivy", "ivy set up", "chance"])
def test_pgn_extract_is_no_reader_of_the_referees_own_records(tmp_path: Path, kind: str) -> None:
    # README: on Ivy's and Verdant's records pgn-extract reports errors (Illegal FEN for a
    # set-up position) and does not read them as the games written.
    records = {
        "ivy": session_records()[:1],
        "ivy set up": session_records()[1:],
        "chance": chance_records(),
    }[kind]
    assert ("SetUp" in records[0].tags) == (kind == "ivy set up")
    write(tmp_path / "games.pgn", records)
    run = subprocess.run(
        [pgn_extract(), "-s", "--json", str(tmp_path / "games.pgn")],
        capture_output=True,
        text=True,
    )
    assert run.stderr.strip(), "pgn-extract read the records without a complaint"
    assert ("Illegal FEN" in run.stderr) == (kind == "ivy set up")
    read = json.loads(run.stdout) if run.stdout.strip() else []
    tags = [{k: v for k, v in game.items() if k != "Moves"} for game in read]
    assert tags != [record.tags for record in records]


def test_a_tag_line_scan_like_ordos_reads_every_result_once(tmp_path: Path) -> None:
    records = chess_records() + session_records() + chance_records()
    assert [record.result for record in chance_records()] == ["1/2-1/2", "1-0", "*"]
    text = write(tmp_path / "hostile.pgn", records)
    assert ordo_like_results(text) == [
        (record.tags["White"], record.tags["Black"], record.result) for record in records
    ]


# --- a real match against a hostile bot ------------------------------------------------

HOSTILE_BOT = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "new_game":
        name = "evil\u001b[31m [Result \"1/2-1/2\"]\n}{"
        print(json.dumps({"type": "ready", "id": message["id"], "name": name}), flush=True)
    elif message["type"] == "turn" and message["turn"] < 3:
        print(json.dumps({"type": "turn", "id": message["id"], "actions": []}), flush=True)
    elif message["type"] == "turn":
        sys.stderr.write("\x00\x1b[2J}{[Result \"1/2-1/2\"]\n%x\n")
        sys.stderr.flush()
        fake = {"type": '[Result "1/2-1/2"]', "id": message["id"], "text": "\x1b[2J}\n{"}
        print(json.dumps(fake, ensure_ascii=False), flush=True)
    elif message["type"] == "quit":
        break
"""


def test_a_hostile_bot_cannot_change_what_readers_see(tmp_path: Path) -> None:
    bot = tmp_path / "bot" / "hostile_bot.py"
    bot.parent.mkdir()
    bot.write_text(HOSTILE_BOT)
    pgn = tmp_path / "match.pgn"
    evil = f"name=evil cmd='{sys.executable} -u {bot.name}' dir={bot.parent}"
    good = f"name=pass cmd='{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}'"
    options = ["--games", "4", "--tc", "10+0.1", "--pgn", str(pgn)]
    logs = str(tmp_path / "logs")
    run = CliRunner().invoke(main, ["match", evil, good, *options, "--log-dir", logs])
    assert run.exit_code == 0, run.output
    assert "\x1b" not in run.output and "\x00" not in run.output
    assert all(line.isprintable() for line in run.output.splitlines())

    records = [game for game in read_pgn_file(pgn) if isinstance(game, GameRecord)]
    assert [record.result for record in records] == ["0-1", "1-0", "0-1", "1-0"]
    assert all(record.tags["Termination"] == "rules infraction" for record in records)
    text = pgn.read_text(encoding="utf-8")
    assert all(line.isprintable() for line in text.splitlines())

    handle = io.StringIO(text)
    headers = []
    while (found := chess.pgn.read_headers(handle)) is not None:
        headers.append(dict(found))
    assert headers == [record.tags for record in records]
    assert ordo_like_results(text) == [
        (record.tags["White"], record.tags["Black"], record.result) for record in records
    ]
    ratings = CliRunner().invoke(main, ["ratings", str(pgn), "--json"])
    assert ratings.exit_code == 0, ratings.output
    table = json.loads(ratings.stdout)
    assert {p["name"]: (p["wins"], p["losses"]) for p in table["players"]} == {
        "pass": (4, 0),
        "evil": (0, 4),
    }
    replay = CliRunner().invoke(main, ["replay", str(pgn)])
    assert replay.exit_code == 0, replay.output
