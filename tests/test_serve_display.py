"""What ``referee serve`` shows: no game as running while it waits for its players, and
the same final line as ``referee tournament``."""

from __future__ import annotations

import logging
from pathlib import Path

import trio
from click.testing import CliRunner
from test_server_helpers import played, write_tournament

from referee.cli import main
from referee.server.serve import Listening, issue_tokens, serve_tournament
from tournaments.config import load_config
from tournaments.pairings import Pairing
from tournaments.progress import Progress

RESULTS = "/ (games.pgn, results.sqlite, ratings.json/.csv, index.html)"


class Said(logging.Handler):
    """Collects the server's log lines, and the display's games started, in one list."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []
        self.waiting = trio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        if record.getMessage().startswith("waiting up to"):
            self.waiting.set()


class Shown(Progress):
    def __init__(self, said: Said) -> None:
        self.said = said

    def game_started(self, pairing: Pairing) -> None:
        self.said.lines.append(f"display: game {pairing.index + 1} running")


async def test_no_game_shows_as_running_while_serve_waits_for_its_players(
    tmp_path: Path,
) -> None:
    config = load_config(write_tournament(tmp_path, head="concurrency = 1\ngames = 1"))
    tokens = issue_tokens(config)
    said = Said()
    log = logging.getLogger("referee.server")
    log.addHandler(said)
    level, log.level = log.level, logging.INFO
    listening = trio.Event()
    where: list[Listening] = []

    def heard(at: Listening) -> None:
        where.append(at)
        listening.set()

    async def players() -> None:
        await listening.wait()
        await said.waiting.wait()  # the server waits for both, and shows no game running
        assert not [line for line in said.lines if line.startswith("display:")]
        port = where[0].tcp
        assert port is not None
        async with trio.open_nursery() as nursery:
            for name in ("alice", "bob"):
                nursery.start_soon(played, port, name, tokens[name])

    try:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(players)
                await serve_tournament(config, progress=Shown(said), listening=heard)
    finally:
        log.removeHandler(said)
        log.setLevel(level)
    shown = [line for line in said.lines if not line.startswith("server: ")]
    start = shown.index("alice, bob connected: starting")
    assert shown[0] == "waiting up to 10 s for alice, bob to connect"
    assert shown.index("display: game 1 running") > start


def test_serve_ends_with_the_same_results_line_as_tournament(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, head="concurrency = 1\ngames = 1")
    config = load_config(path)
    tokens = issue_tokens(config)
    where: list[Listening] = []
    ready = trio.Event()

    def heard(at: Listening) -> None:
        where.append(at)
        ready.set()

    async def players() -> None:
        await ready.wait()
        port = where[0].tcp
        assert port is not None
        async with trio.open_nursery() as nursery:
            for name in ("alice", "bob"):
                nursery.start_soon(played, port, name, tokens[name])

    async def serve() -> None:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(players)
                await serve_tournament(config, listening=heard)

    trio.run(serve)
    # Served again once over, it shows the results and its last line names its files.
    shown = CliRunner().invoke(main, ["serve", str(path), "--quiet"])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[-1] == f"Results in {config.output}{RESULTS}"
    local = tmp_path / "local.toml"
    local.write_text(
        path.read_text()
        .replace("remote = true", 'cmd = "python -m bots.random"')
        .replace('output = "out"', 'output = "local"')
    )
    played_locally = CliRunner().invoke(main, ["tournament", str(local), "--quiet"])
    assert played_locally.exit_code == 0, played_locally.output
    assert played_locally.stdout.splitlines()[-1] == f"Results in {tmp_path / 'local'}{RESULTS}"
