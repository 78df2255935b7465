"""Shared helpers of the match server's tests (tests/test_server*.py): a lobby on
loopback, scripted clients, tournament files."""

from __future__ import annotations

import contextlib
import functools
import ssl
import subprocess
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import trio

from referee.clock import Allowances, TimeControl
from referee.match import GameResult, MatchConfig, play_game
from referee.server.client import BotClient, play
from referee.server.lobby import MIN_PENDING_AGE, PENDING_PER_ADDRESS, Lobby
from referee.server.remote import RemotePlayer, quit_all
from referee.server.tokens import TokenBook

HOST = "127.0.0.1"


@contextlib.asynccontextmanager
async def open_lobby(
    tmp_path: Path,
    names: Sequence[str] = ("alice", "bob"),
    *,
    hello_timeout: float = 2.0,
    max_pending: int = 16,
    max_pending_per_address: int = PENDING_PER_ADDRESS,
    min_pending_age: float = MIN_PENDING_AGE,
    max_line_bytes: int = 1 << 20,
    websocket: bool = False,
    ssl_context: ssl.SSLContext | None = None,
) -> AsyncIterator[tuple[Lobby, int, dict[str, str]]]:
    """A lobby listening on a free loopback port; → (lobby, port, tokens by name)."""
    book = TokenBook(tmp_path / "tokens.json")
    tokens = {name: book.issue(name) for name in names}
    lobby = Lobby(
        names,
        book,
        max_line_bytes=max_line_bytes,
        hello_timeout=hello_timeout,
        max_pending=max_pending,
        max_pending_per_address=max_pending_per_address,
        min_pending_age=min_pending_age,
    )
    handler = functools.partial(lobby.handle, ssl_context=ssl_context, websocket=websocket)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(trio.serve_tcp, handler, 0, host=HOST))
        yield lobby, listeners[0].socket.getsockname()[1], tokens
        with trio.CancelScope(shield=True), trio.move_on_after(3):
            await quit_all(list(lobby.remotes.values()))
        nursery.cancel_scope.cancel()


def match_config(
    tc: str = "5+0.1", *, startup: float = 2.0, turn_limit: int = 8, max_line_bytes: int = 1 << 20
) -> MatchConfig:
    return MatchConfig(
        control=TimeControl.parse(tc),
        allowances=Allowances(startup=startup, margin=0.1),
        options={"turn_limit": turn_limit},
        max_line_bytes=max_line_bytes,
    )


async def remote_game(
    lobby: Lobby, names: Sequence[str], config: MatchConfig, *, round_: str = "1"
) -> GameResult:
    """One game between remote players, as the server plays it."""
    async with trio.open_nursery() as nursery:
        players = [RemotePlayer(lobby.remotes[name], nursery) for name in names]
        result = await play_game(players, config, round_=round_)
        for player in players:
            await player.close()
    return result


async def connect(
    port: int,
    name: str | None = None,
    token: str | None = None,
    *,
    nursery: trio.Nursery | None = None,
    websocket: bool = False,
    ssl_context: ssl.SSLContext | None = None,
) -> BotClient:
    """A client connected to ``port``; with a ``name``, after its welcome."""
    client = await BotClient.connect(
        HOST, port, websocket=websocket, nursery=nursery, ssl_context=ssl_context
    )
    if name is not None:
        assert token is not None
        answer = await client.hello(name, token)
        assert answer == {"type": "welcome", "name": name, "protocol": 1}, answer
    return client


async def played(port: int, name: str, token: str, **kwargs: Any) -> str:
    """Connect as ``name`` and play until ``quit`` (or cancelled); the client is closed."""
    client = await connect(port, name, token)
    try:
        return await play(client, **kwargs)
    finally:
        with trio.CancelScope(shield=True):
            await client.aclose()


async def eof(client: BotClient) -> list[bytes]:
    """Every line the server still sends before it closes the connection."""
    lines: list[bytes] = []
    with contextlib.suppress(Exception):
        while True:
            lines.append(await client.receive_line())
    return lines


def write_tournament(
    folder: Path,
    *,
    remote: Sequence[str] = ("alice", "bob"),
    local: Sequence[str] = (),
    head: str = "",
    server: str = "",
    startup: float = 3,
    wait: float = 10,
) -> Path:
    """A tournament file with these players; ports 0 (any free port)."""
    players = "".join(f'[[players]]\nname = "{name}"\nremote = true\n\n' for name in remote)
    players += "".join(
        f'[[players]]\nname = "{name}"\ncmd = "python -m bots.random"\n\n' for name in local
    )
    text = "\n".join(
        [
            'event = "Server test"',
            'output = "out"',
            'tc = "5+0.1"',
            f"startup = {startup}",
            'sandbox = "off"',
            head,
            "[options]",
            "turn_limit = 8",
            "",
            players,
            "[server]",
            "port = 0",
            "websocket_port = 0",
            "http_port = 0",
            f"wait_for_players = {wait}",
            server,
            "",
        ]
    )
    path = folder / "t.toml"
    path.write_text(text, encoding="utf-8")
    return path


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, in ``folder`` (made with the openssl command)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key
