"""The match server (``referee serve``): settings, tokens, a tournament of remote and
local bots, and remote bots in games: resuming after a dropped connection, vanishing,
misbehaving. Real sockets on loopback throughout."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner
from test_server_helpers import (
    connect,
    eof,
    match_config,
    open_lobby,
    played,
    remote_game,
    write_tournament,
)

from referee.cli import main
from referee.pgn import GameRecord, read_pgn_file
from referee.replay import check_games
from referee.server.client import play
from referee.server.serve import Listening, _progressed, issue_tokens, serve_tournament
from referee.server.settings import ServerError, ServerSettings
from referee.server.tokens import TOKENS, TokenBook, digest
from tournaments.config import ConfigError, load_config
from tournaments.store import DATABASE, ResultStore

REPO = Path(__file__).resolve().parents[1]

# --- settings and tokens ---------------------------------------------------------------


def test_a_file_with_remote_players_and_a_server_table(tmp_path: Path) -> None:
    path = write_tournament(
        tmp_path, local=("local",), server='host = "::1"\ncertificate = "c.pem"\nkey = "k.pem"'
    )
    config = load_config(path)
    assert config.remote_names == ("alice", "bob")
    assert set(config.commands) == {"local"}
    assert config.server == ServerSettings(
        host="::1",
        port=0,
        websocket_port=0,
        http_port=0,
        certificate=tmp_path / "c.pem",
        key=tmp_path / "k.pem",
        wait_for_players=10,
    )
    players = json.loads(config.to_json())["players"]
    assert players[0] == {"name": "alice", "remote": True}
    assert "server" not in json.loads(config.to_json())


@pytest.mark.parametrize(
    ("table", "complaint"),
    [
        ('[[players]]\nname = "x"\nremote = true\ncmd = "y"', "a remote player has only a name"),
        ("[[players]]\nremote = true", "a remote player needs a name"),
        ('[[players]]\nname = "x"\nremote = "yes"', "remote must be true or false"),
        ("[server]\nport = 70000", "port must be from 0 to 65535"),
        ("[server]\nbogus = 1", "unknown key 'bogus' in [server]"),
        ('[server]\ncertificate = "c.pem"', "certificate and key go together"),
        ("[server]\nport = false\nwebsocket_port = false", "bots could not connect"),
        ("[server]\nhello_timeout = 0", "hello_timeout must be more than 0"),
    ],
)
def test_bad_server_settings_are_one_line(tmp_path: Path, table: str, complaint: str) -> None:
    path = tmp_path / "t.toml"
    players = '[[players]]\nname = "a"\nremote = true\n[[players]]\nname = "b"\nremote = true\n'
    path.write_text(f"{players}\n{table}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=complaint.replace("[", r"\[").replace("]", r"\]")):
        load_config(path)


def test_the_tournament_command_refuses_remote_players(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["tournament", str(write_tournament(tmp_path))])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert "referee serve" in result.output and "alice, bob" in result.output


def test_tokens_are_kept_hashed_and_replaced_when_issued_again(tmp_path: Path) -> None:
    book = TokenBook(tmp_path / TOKENS)
    token = book.issue("alice")
    text = (tmp_path / TOKENS).read_text()
    assert token not in text and digest(token) in text
    assert stat.S_IMODE(os.stat(tmp_path / TOKENS).st_mode) == 0o600
    assert book.check("alice", token)
    assert not book.check("alice", token + "x") and not book.check("bob", token)
    # Issued again by another command (another book on the same file): the old one is dead.
    newer = TokenBook(tmp_path / TOKENS).issue("alice")
    assert not book.check("alice", token) and book.check("alice", newer)
    assert book.missing(["alice", "bob"]) == ["bob"]


def test_serve_issue_prints_a_new_token_and_exits(tmp_path: Path) -> None:
    path = write_tournament(tmp_path)
    result = CliRunner().invoke(main, ["serve", str(path), "--issue", "bob"])
    assert result.exit_code == 0, result.output
    word, token, for_, name = result.output.split()
    assert (word, for_, name) == ("token", "for", "bob")
    assert TokenBook(tmp_path / "out" / TOKENS).check("bob", token)
    refused = CliRunner().invoke(main, ["serve", str(path), "--issue", "carol"])
    assert refused.exit_code == 1 and "'carol' is not a remote player" in refused.output


# --- a tournament ----------------------------------------------------------------------


async def test_a_tournament_of_remote_bots_over_tcp_and_websocket_and_a_local_bot(
    tmp_path: Path,
) -> None:
    config = load_config(
        write_tournament(tmp_path, local=("local",), head="concurrency = 2\ngames = 1")
    )
    tokens = issue_tokens(config)
    assert set(tokens) == {"alice", "bob"}
    assert issue_tokens(config) == {}  # printed once: only new players get one
    where: list[Listening] = []
    endings: dict[str, str] = {}

    async def bot(name: str, websocket: bool) -> None:
        while not where:
            await trio.sleep(0.01)
        port = where[0].websocket if websocket else where[0].tcp
        assert port is not None
        async with trio.open_nursery() as nursery:
            client = await connect(port, name, tokens[name], nursery=nursery, websocket=websocket)
            endings[name] = await play(client)
            await client.aclose()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot, "alice", False)
            nursery.start_soon(bot, "bob", True)
            table = await serve_tournament(config, listening=where.append)
    assert endings == {"alice": "quit", "bob": "quit"}
    assert {row.name: row.games for row in table.players} == {"alice": 2, "bob": 2, "local": 2}
    with ResultStore.open(config.output / DATABASE, read_only=True) as store:
        games = list(store.games())
    assert len(games) == 3 and all(game.termination == "normal" for game in games)
    records = read_pgn_file(config.output / "games.pgn")
    assert all(check.valid for check in check_games(records)), "remote games replay like local ones"


# --- remote bots in games --------------------------------------------------------------


async def test_a_dropped_connection_resumes_its_seat_with_the_pending_request(
    tmp_path: Path,
) -> None:
    async with open_lobby(tmp_path) as (lobby, port, tokens):
        seen: list[dict[str, object]] = []

        async def alice() -> None:
            client = await connect(port, "alice", tokens["alice"])
            try:
                while True:
                    message = await client.receive()
                    if message["type"] == "new_game":
                        await client.send({"type": "ready", "id": message["id"], "name": "a"})
                    elif message["type"] == "turn":
                        seen.append(message)
                        if len(seen) == 2:  # vanish mid-game, half a reply sent, come back
                            await client.send_raw(b'{"type": "turn", "id": ')
                            await client.aclose()
                            client = await connect(port, "alice", tokens["alice"])
                            continue
                        reply = {"type": "turn", "id": message["id"], "actions": []}
                        await client.send(reply)
            finally:
                with trio.CancelScope(shield=True):
                    await client.aclose()

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(alice)
                nursery.start_soon(played, port, "bob", tokens["bob"])
                result = await remote_game(lobby, ("alice", "bob"), match_config())
                assert result.ending.termination == "normal", result.ending
                nursery.cancel_scope.cancel()
    assert seen[1]["id"] == seen[2]["id"], "the pending request was sent again, same id"
    assert seen[1]["view"] == seen[2]["view"]


async def test_a_bot_that_vanishes_mid_game_loses_on_time(tmp_path: Path) -> None:
    async with open_lobby(tmp_path) as (lobby, port, tokens):

        async def vanishing() -> None:
            client = await connect(port, "bob", tokens["bob"])
            turns = 0
            try:
                while True:
                    message = await client.receive()
                    if message["type"] == "new_game":
                        await client.send({"type": "ready", "id": message["id"], "name": "b"})
                    elif message["type"] == "turn":
                        turns += 1
                        if turns == 2:
                            return  # gone for good, its request unanswered
                        await client.send({"type": "turn", "id": message["id"], "actions": []})
            finally:
                await client.aclose()

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(played, port, "alice", tokens["alice"])
                nursery.start_soon(vanishing)
                result = await remote_game(lobby, ("alice", "bob"), match_config("0.5+0"))
                nursery.cancel_scope.cancel()
    assert result.ending.termination == "time forfeit"
    assert result.ending.places == (1, 2)


async def test_a_player_who_never_connects_fails_the_start(tmp_path: Path) -> None:
    async with open_lobby(tmp_path) as (lobby, port, tokens):
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(played, port, "alice", tokens["alice"])
                result = await remote_game(lobby, ("alice", "bob"), match_config(startup=0.3))
                nursery.cancel_scope.cancel()
    assert result.ending.places == (1, 2)
    assert "start-up allowance" in result.ending.reason


async def test_a_violation_ends_the_session_and_the_next_one_starts_afresh(
    tmp_path: Path,
) -> None:
    async with open_lobby(tmp_path, max_line_bytes=4096) as (lobby, port, tokens):
        lines: list[bytes] = []

        async def flooder() -> None:
            client = await connect(port, "bob", tokens["bob"])
            message = await client.receive()
            await client.send({"type": "ready", "id": message["id"], "name": "b"})
            await client.receive()  # its first turn
            await client.send_raw(b"x" * 100_000)  # a line far longer than 4096 bytes
            lines.extend(await eof(client))
            await client.aclose()
            # A new session, on a new connection.
            await played(
                port,
                "bob",
                tokens["bob"],
                on_message=lambda m: lines.append(json.dumps(m).encode()),
            )

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(played, port, "alice", tokens["alice"])
                nursery.start_soon(flooder)
                config = match_config(max_line_bytes=4096)
                first = await remote_game(lobby, ("bob", "alice"), config)
                second = await remote_game(lobby, ("bob", "alice"), config, round_="2")
                nursery.cancel_scope.cancel()
    assert first.ending.termination == "rules infraction" and first.ending.places == (2, 1)
    assert second.ending.termination == "normal"
    told = [json.loads(line) for line in lines[:3]]
    assert [m["type"] for m in told] == ["error", "game_over", "quit"]
    assert told[0]["code"] == "line_too_long"
    assert json.loads(lines[3])["id"] == 1, "a new session counts its ids from 1 again"


async def test_a_second_connection_takes_over_and_the_first_is_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    async with open_lobby(tmp_path) as (lobby, port, tokens):
        with trio.fail_after(10):
            first = await connect(port, "alice", tokens["alice"])
            second = await connect(port, "alice", tokens["alice"])
            assert await eof(first) == []
            await first.aclose()
            assert lobby.remotes["alice"].connection is not None
            async with trio.open_nursery() as nursery:

                async def keep_playing() -> None:
                    try:
                        await play(second)
                    finally:
                        await second.aclose()

                nursery.start_soon(keep_playing)
                nursery.start_soon(played, port, "bob", tokens["bob"])
                result = await remote_game(lobby, ("alice", "bob"), match_config())
                nursery.cancel_scope.cancel()
    assert result.ending.termination == "normal"
    assert any("took over" in record.message for record in caplog.records)


async def test_the_serve_command_prints_tokens_and_ports_then_plays(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, head="concurrency = 1")
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "referee.cli", "serve", str(path), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert process.stdout is not None and process.stderr is not None
    tokens: dict[str, str] = {}
    ports: dict[str, int] = {}
    buffer = b""
    try:
        with trio.fail_after(30):
            while "TCP" not in ports:
                data = await process.stdout.receive_some(4096)
                assert data, "the server ended early"
                buffer += data
                *lines, rest = buffer.split(b"\n")
                buffer = rest
                for line in map(bytes.decode, lines):
                    if line.startswith("token "):
                        _, token, _, name = line.split(" ", 3)
                        tokens[name] = token
                    elif line.startswith("listening: bots (TCP"):
                        ports["TCP"] = int(line.rsplit(":", 1)[1])
            assert set(tokens) == {"alice", "bob"}
            async with trio.open_nursery() as nursery:
                for name in tokens:
                    nursery.start_soon(played, ports["TCP"], name, tokens[name])
            assert await process.wait() == 0
            errors = await process.stderr.receive_some(65536)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.stdout.aclose()
        await process.stderr.aclose()
    said = errors.decode()
    assert "server: alice: connected from 127.0.0.1:" in said, said
    assert "Traceback" not in said
    assert (tmp_path / "out" / "games.pgn").exists()


async def test_the_first_game_waits_a_while_for_absent_players_then_starts_without(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    path = write_tournament(tmp_path, startup=0.3, wait=0.2, head="games = 1")
    config = load_config(path)
    tokens = issue_tokens(config)
    where: list[Listening] = []

    async def alice() -> None:
        while not where:
            await trio.sleep(0.01)
        assert where[0].tcp is not None
        await played(where[0].tcp, "alice", tokens["alice"])

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(alice)
            table = await serve_tournament(config, listening=where.append)
    assert {row.name: row.points for row in table.players} == {"alice": 1.0, "bob": 0.0}
    said = [record.getMessage() for record in caplog.records]
    assert "waiting up to 0.2 s for bob to connect" in said or (
        "waiting up to 0.2 s for alice, bob to connect" in said
    )
    assert "starting without bob" in said
    assert any("bob is not connected" in line for line in said)


def test_the_seed_is_not_shown_while_a_game_goes_on() -> None:
    shown: list[GameRecord] = []

    class Hub:
        def game_progressed(self, index: int, record: GameRecord) -> None:
            shown.append(record)

    tags = {"Event": "x", "Seed": "12345"}
    _progressed(Hub(), 0, GameRecord(tags=tags))  # type: ignore[arg-type]
    _progressed(Hub(), 0, GameRecord(tags=tags, result="1-0"))  # type: ignore[arg-type]
    assert "Seed" not in shown[0].tags and shown[1].tags["Seed"] == "12345"


def test_serve_refuses_a_file_without_remote_players(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, remote=(), local=("one", "two"))
    result = CliRunner().invoke(main, ["serve", str(path)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "referee tournament" in result.output


async def test_a_connection_that_takes_over_mid_game_gets_the_pending_request(
    tmp_path: Path,
) -> None:
    async with open_lobby(tmp_path) as (lobby, port, tokens):
        got: list[dict[str, object]] = []

        async def alice() -> None:
            first = await connect(port, "alice", tokens["alice"])
            second = None
            try:
                message = await first.receive()
                await first.send({"type": "ready", "id": message["id"], "name": "a"})
                got.append(await first.receive())  # a turn, left unanswered here
                second = await connect(port, "alice", tokens["alice"])  # the first is not closed
                assert await eof(first) == []
                await play(second, on_message=got.append)
            finally:
                with trio.CancelScope(shield=True):
                    await first.aclose()
                    if second is not None:
                        await second.aclose()

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(alice)
                nursery.start_soon(played, port, "bob", tokens["bob"])
                result = await remote_game(lobby, ("alice", "bob"), match_config())
                nursery.cancel_scope.cancel()
    assert result.ending.termination == "normal"
    assert got[0]["type"] == "turn" and got[1] == got[0], "sent again, on the new connection"


async def test_a_port_in_use_is_one_error(tmp_path: Path) -> None:
    taken = trio.socket.socket()
    await taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    path = write_tournament(tmp_path)
    path.write_text(re.sub(r"(?m)^port = 0$", f"port = {port}", path.read_text()))
    config = load_config(path)
    issue_tokens(config)
    with pytest.raises(ServerError, match=f"cannot listen on 127.0.0.1 port {port}: "):
        await serve_tournament(config)
    taken.close()
