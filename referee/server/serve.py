"""``referee serve``: a tournament whose remote players connect over the network.

:func:`serve_tournament` opens the listeners of the tournament's ``[server]`` table
(:class:`~referee.server.settings.ServerSettings`): bots over TCP and over WebSocket
(:class:`~referee.server.lobby.Lobby`), spectators over HTTP
(:class:`~referee.server.spectate.Spectators`, in a process of their own fed by
:class:`~referee.server.spectator_process.SpectatorFeed`), all over TLS with a certificate. Then
it runs the tournament (:func:`~tournaments.runner.run_tournament`) with its games in
this process (:func:`~tournaments.workers.task_pool`), local players as bot processes
and remote ones as :class:`~referee.server.remote.RemotePlayer`\\ s, so both play
under the same referee, records and ratings. When the tournament is over, every
connected bot is told to ``quit`` and the server stops.

A remote player plays one game at a time: a game waits until each of its remote
players has finished the one it is playing (the locks are taken in name order, so two
games never wait for each other). Remote players are not in the preflight, which
only starts the local bots: a remote bot shows it works by connecting.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from referee.match import BotPlayer
from referee.pgn import GameRecord
from referee.server.lobby import Lobby
from referee.server.remote import RemotePlayer, quit_all
from referee.server.settings import ServerError, ServerSettings
from referee.server.spectator_process import SpectatorFeed, start_spectators
from referee.server.tokens import TOKENS, TokenBook
from tournaments.config import TournamentConfig
from tournaments.pairings import Pairing
from tournaments.progress import Progress
from tournaments.ratings import RatingTable
from tournaments.runner import run_tournament
from tournaments.workers import GameDone, GameJob, Pool, PoolFactory, Warn, Work, task_pool

logger = logging.getLogger("referee.server")


@dataclass(frozen=True, slots=True)
class Listening:
    """Where the server listens (``None``: that listener is off)."""

    host: str
    tcp: int | None
    websocket: int | None
    http: int | None
    tls: bool

    def lines(self) -> list[str]:
        """One line per listener, as ``referee serve`` prints them."""
        secure = "s" if self.tls else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        lines = []
        if self.tcp is not None:
            lines.append(f"bots (TCP{'+TLS' if self.tls else ''}): {host}:{self.tcp}")
        if self.websocket is not None:
            lines.append(f"bots (WebSocket): ws{secure}://{host}:{self.websocket}/")
        if self.http is not None:
            lines.append(f"spectators: http{secure}://{host}:{self.http}/")
        return lines


def token_book(config: TournamentConfig) -> TokenBook:
    """The tournament's tokens (``tokens.json`` in its output directory)."""
    return TokenBook(config.output / TOKENS)


def issue_tokens(config: TournamentConfig, names: Sequence[str] | None = None) -> dict[str, str]:
    """New tokens for ``names`` (each must be a remote player; their old tokens stop
    working at once), or else for every remote player that has none yet; → the tokens by
    name, which are stored nowhere."""
    remote = config.remote_names
    book = token_book(config)
    if names is None:
        return {name: book.issue(name) for name in book.missing(remote)}
    for name in names:
        if name not in remote:
            listed = ", ".join(remote) or "none"
            raise ServerError(f"{name!r} is not a remote player of this tournament ({listed})")
    return {name: book.issue(name) for name in dict.fromkeys(names)}


async def serve_tournament(
    config: TournamentConfig,
    *,
    progress: Progress | None = None,
    warn: Warn | None = None,
    listening: Callable[[Listening], None] | None = None,
) -> RatingTable:
    """Serve the tournament until it is over (or stopped); → its ratings.

    ``listening`` hears where the server listens once it does. Raises what
    :func:`~tournaments.runner.run_tournament` raises, and
    :class:`~referee.server.settings.ServerError` when a listener cannot be opened or a
    remote player has no token (issue them first: :func:`issue_tokens`).
    """
    settings = config.server or ServerSettings()
    context = settings.ssl_context()
    book = token_book(config)
    missing = book.missing(config.remote_names)
    if missing:
        raise ServerError(f"no token for {', '.join(missing)}: issue them first")
    lobby = Lobby(
        config.remote_names,
        book,
        max_line_bytes=config.match_config().max_line_bytes,
        hello_timeout=settings.hello_timeout,
        max_pending=settings.max_pending,
    )
    hub = SpectatorFeed() if settings.http_port is not None else None
    failure: Exception | None = None
    table: RatingTable | None = None
    async with trio.open_nursery() as nursery:
        try:  # every failure is raised below, outside the nursery (not in a group)
            tcp = await _listen(nursery, lobby, settings, settings.port, context, websocket=False)
            ws = await _listen(
                nursery, lobby, settings, settings.websocket_port, context, websocket=True
            )
            http = None
            if hub is not None and settings.http_port is not None:
                try:
                    http = await start_spectators(nursery, hub, config.output, settings)
                except OSError as error:
                    raise _cannot_listen(settings.host, settings.http_port, error) from None
            if listening is not None:
                listening(Listening(settings.host, tcp, ws, http, context is not None))
            shown = _Spectated(progress or Progress(), hub)
            table = await run_tournament(
                config,
                progress=shown,
                warn=warn,
                pool=serving_pool(lobby, hub, settings.wait_for_players, gathered=shown.gathered),
            )
        except Exception as error:
            failure = error
        else:
            await quit_all(list(lobby.remotes.values()))
        nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    assert table is not None
    return table


async def _listen(
    nursery: trio.Nursery,
    lobby: Lobby,
    settings: ServerSettings,
    port: int | None,
    context: ssl.SSLContext | None,
    *,
    websocket: bool,
) -> int | None:
    """Start one bots' listener; → the port it listens on (``None``: off)."""
    if port is None:
        return None
    handler = functools.partial(lobby.handle, ssl_context=context, websocket=websocket)
    try:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, handler, port, host=settings.host)
        )
    except OSError as error:
        raise _cannot_listen(settings.host, port, error) from None
    bound: int = listeners[0].socket.getsockname()[1]
    return bound


def _cannot_listen(host: str, port: int, error: OSError) -> ServerError:
    return ServerError(f"cannot listen on {host} port {port}: {error.strerror or error}")


def serving_pool(
    lobby: Lobby,
    hub: SpectatorFeed | None,
    wait: float = 0.0,
    *,
    gathered: Callable[[], None] | None = None,
) -> PoolFactory:
    """The pool ``referee serve`` plays with: the games in this process
    (:func:`~tournaments.workers.task_pool`), remote players through ``lobby``; before
    its first game it waits up to ``wait`` seconds for every remote player to connect,
    then calls ``gathered``."""

    @contextlib.asynccontextmanager
    async def open_pool(work: Work, slots: int) -> AsyncIterator[Pool]:
        def make(name: str, nursery: trio.Nursery, log_dir: Path | None) -> BotPlayer:
            remote = lobby.remotes.get(name)
            if remote is not None:
                return RemotePlayer(remote, nursery)
            return work.player(name, nursery, log_dir)

        watch = None if hub is None else functools.partial(_progressed, hub)
        async with task_pool(make, watch)(work, slots) as pool:
            yield _ServingPool(pool, lobby, hub, wait, gathered or (lambda: None))

    return open_pool


class _ServingPool:
    """A pool that plays each remote player in one game at a time and shows the games to
    the spectators."""

    def __init__(
        self,
        pool: Pool,
        lobby: Lobby,
        hub: SpectatorFeed | None,
        wait: float,
        gathered: Callable[[], None],
    ) -> None:
        self.pool = pool
        self.lobby = lobby
        self.hub = hub
        self.wait = wait
        self.gathered = gathered
        self._gathering = trio.Lock()
        self._gathered = False

    async def _gather(self) -> None:
        """Before the first game: wait (up to :attr:`wait`) for every remote player."""
        async with self._gathering:
            if self._gathered:
                return
            self._gathered = True
            try:
                absent = self.lobby.absent()
                if self.wait <= 0 or not absent:
                    return
                logger.info("waiting up to %g s for %s to connect", self.wait, ", ".join(absent))
                with trio.move_on_after(self.wait):
                    await self.lobby.everyone()
                if self.lobby.absent():
                    logger.info("starting without %s", ", ".join(self.lobby.absent()))
                else:  # the waiting line is over: say so before the games show as running
                    logger.info("%s connected: starting", ", ".join(absent))
            finally:
                self.gathered()

    @property
    def slots(self) -> int:
        return self.pool.slots

    async def check(self, names: Sequence[str], start: str | None) -> None:
        local = [name for name in names if name not in self.lobby.remotes]
        if local:
            await self.pool.check(local, start)

    async def play(self, slot: int, job: GameJob) -> GameDone:
        await self._gather()
        remotes = [
            self.lobby.remotes[name]
            for name in sorted(set(job.players) & self.lobby.remotes.keys())
        ]
        async with contextlib.AsyncExitStack() as held:
            for remote in remotes:  # in name order: two games never wait for each other
                await held.enter_async_context(remote.playing)
            for remote in remotes:
                if not remote.connected:
                    logger.info(
                        "game %d: %s is not connected; it has the start-up allowance to connect",
                        job.index + 1,
                        remote.name,
                    )
            if self.hub is not None:
                self.hub.game_started(job.index, job.players)
            return await self.pool.play(slot, job)


def _progressed(hub: SpectatorFeed, index: int, record: GameRecord) -> None:
    """Show the game so far, without its seed while it goes on (from it a bot watching
    could tell every card still to come)."""
    if record.result == "*" and "Seed" in record.tags:
        tags = {name: value for name, value in record.tags.items() if name != "Seed"}
        record = GameRecord(
            tags=tags, turns=record.turns, result=record.result, comment=record.comment
        )
    hub.game_progressed(index, record)


class _Spectated(Progress):
    """Passes on what a run reports, and tells the spectators of each saved game. A game
    the runner starts while the server still waits for its remote players is shown as
    running only once that wait is over (:meth:`gathered`): until then it is not played."""

    def __init__(self, inner: Progress, hub: SpectatorFeed | None) -> None:
        self.inner = inner
        self.hub = hub
        self._held: list[Pairing] | None = []  # None once the players are gathered

    def gathered(self) -> None:
        """The wait for the remote players is over: the games held start now."""
        held, self._held = self._held or [], None
        for pairing in held:
            self.inner.game_started(pairing)

    def begin(self, *, event: str, total: int, done: int, standings: RatingTable) -> None:
        self.inner.begin(event=event, total=total, done=done, standings=standings)

    def game_started(self, pairing: Pairing) -> None:
        if self._held is None:
            self.inner.game_started(pairing)
        else:
            self._held.append(pairing)

    def game_finished(self, pairing: Pairing, game: GameDone, standings: RatingTable) -> None:
        self.inner.game_finished(pairing, game, standings)
        if self.hub is not None:
            self.hub.game_finished(pairing.index)
            self.hub.standings_changed()

    def refresh(self) -> None:
        self.inner.refresh()

    def close(self) -> None:
        self.inner.close()
