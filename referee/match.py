"""Running games between bot processes (the trio layer).

This module only moves messages and keeps time: the judgement is the sans-I/O
:class:`~referee.session.GameSession`, the framing the sans-I/O
:class:`~protocol.connection.BotConnection`, the processes
:func:`~referee.process.open_bot`.

- :class:`BotPlayer` is one bot of a match or tournament. Its process runs as a
  task in the caller's nursery, is reused from game to game (as UCI engines are)
  and is restarted after a game in which it misbehaved.
- :func:`play_game` plays one game between players and returns its
  :class:`GameResult`; a bot fault is a lost game, never an exception.
- :func:`run_match` plays a series with colours alternating.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio

from protocol import codec_for
from protocol.connection import END_OF_STREAM, NEED_DATA, BotConnection
from protocol.messages import (
    DEFAULT_MAX_LINE_BYTES,
    ErrorMessage,
    Log,
    Quit,
    Ready,
    RefereeMessage,
    TurnReply,
)
from referee.clock import TimeControl
from referee.errors import BotCrashed, BotFault, BotTimeout, RefereeError
from referee.games import get_game
from referee.games.base import GameSettings
from referee.pgn import GameRecord, append_game
from referee.process import BotCommand, BotProcess, open_bot
from referee.session import Ending, GameSession
from referee.tally import Tally

GOODBYE_TIMEOUT = 0.5
"""How long writing a goodbye (error, game_over, quit) to a bot may take."""

QUIT_GRACE = 1.0
"""How long a bot told to quit may take to exit before it is stopped."""

EXIT_WAIT = 0.25
"""After a bot's stdout ends: how long to wait for its exit status."""

MAX_LOG_MESSAGES = 200
"""Bot ``log`` messages kept per bot per game; later ones are counted, not kept."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchConfig:
    """Settings shared by every game of a match or tournament."""

    game: str = "ivy"
    control: TimeControl = field(default_factory=lambda: TimeControl.parse("10+0.1"))
    options: dict[str, Any] = field(default_factory=dict)
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    log_dir: Path | None = None
    event: str = "?"
    site: str = "?"


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game: its record and how it ended."""

    record: GameRecord
    ending: Ending
    players: tuple[str, ...]
    logs: tuple[str, ...] = ()

    @property
    def result(self) -> str:
        return self.ending.result


# --- one bot --------------------------------------------------------------------


class _Link:
    """A running bot process with its protocol connection."""

    def __init__(self, process: BotProcess, max_line_bytes: int) -> None:
        self.process = process
        self.connection = BotConnection(max_line_bytes=max_line_bytes)
        self.ids = itertools.count(1)
        self.logs: list[str] = []
        self.dropped_logs = 0

    async def send(self, message: RefereeMessage) -> None:
        await self.process.send_all(self.connection.send(message))

    async def goodbye(self, message: RefereeMessage) -> None:
        """Send ``message`` if the bot still listens; never waits long, never raises."""
        with trio.move_on_after(GOODBYE_TIMEOUT):
            with contextlib.suppress(BotFault, RefereeError, RuntimeError):
                await self.send(message)

    async def ask(self, message: RefereeMessage, budget: float) -> tuple[Ready | TurnReply, float]:
        """Send a request, wait at most ``budget`` seconds for the reply; → (reply, seconds).

        The time runs from the moment the request is written until the reply's
        line has been read. Raises :class:`BotFault` for a timeout, a crash or a
        protocol violation.
        """
        with trio.move_on_after(budget) as sending:
            try:
                await self.send(message)
            except BotCrashed as crash:
                raise await self._crashed(str(crash)) from None
        if sending.cancelled_caught:
            raise BotTimeout(f"did not read its input for {budget:.3f} s")
        started = trio.current_time()
        with trio.move_on_at(started + budget):
            reply = await self._read_reply()
            return reply, trio.current_time() - started
        raise BotTimeout(f"no reply within {budget:.3f} s")

    async def _read_reply(self) -> Ready | TurnReply:
        connection = self.connection
        while True:
            event = connection.next_event()
            if event is NEED_DATA:
                connection.receive_data(await self.process.receive_some())
            elif event is END_OF_STREAM:
                raise await self._crashed("closed its stdout")
            elif isinstance(event, Log):
                self._keep_log(event.message)
            else:
                return event

    def _keep_log(self, text: str) -> None:
        if len(self.logs) < MAX_LOG_MESSAGES:
            self.logs.append(text)
        else:
            self.dropped_logs += 1

    async def _crashed(self, what: str) -> BotCrashed:
        """A :class:`BotCrashed` naming the exit status and the end of stderr."""
        with trio.move_on_after(EXIT_WAIT):
            await self.process.wait()
        status = self.process.exit_description()
        detail = f"exited ({status})" if status else what
        tail = [line for line in self.process.stderr_tail(3) if line.strip()]
        if tail:
            detail += "; stderr ends: " + " | ".join(tail)
        return BotCrashed(detail)


class BotPlayer:
    """One bot of a match or tournament: its command line and, while it runs, its process.

    The process runs as a task in ``nursery`` so that it can outlive a game and be
    reused. :meth:`link` starts it when needed; :meth:`retire` stops it (the next
    :meth:`link` starts a fresh one); :meth:`close` tells it to quit and stops it.
    """

    def __init__(
        self,
        command: BotCommand,
        name: str,
        nursery: trio.Nursery,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        log_dir: Path | None = None,
    ) -> None:
        self.command = command
        self.name = name
        self._nursery = nursery
        self._max_line_bytes = max_line_bytes
        self._log_dir = log_dir
        self._starts = 0
        self._current: _Link | None = None
        self._stop: trio.Event | None = None
        self._stopped: trio.Event | None = None

    async def link(self) -> _Link:
        """The running process (started now if it is not running)."""
        if self._current is None:
            self._starts += 1
            stderr_path = None
            if self._log_dir is not None:
                stderr_path = self._log_dir / f"{_slug(self.name)}-{self._starts}.stderr.log"
            self._stop, self._stopped = trio.Event(), trio.Event()
            process = await self._nursery.start(
                self._supervise, stderr_path, self._stop, self._stopped
            )
            self._current = _Link(process, self._max_line_bytes)
        return self._current

    async def _supervise(
        self,
        stderr_path: Path | None,
        stop: trio.Event,
        stopped: trio.Event,
        task_status: trio.TaskStatus[BotProcess] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            async with open_bot(self.command, stderr_path=stderr_path) as process:
                task_status.started(process)
                await stop.wait()
        finally:
            stopped.set()

    async def retire(self, *, quit_first: bool = False) -> None:
        """Stop the process (if any) and wait until it is reaped."""
        link, self._current = self._current, None
        if link is None or self._stop is None or self._stopped is None:
            return
        if quit_first:
            await link.goodbye(Quit())
            with trio.move_on_after(QUIT_GRACE):
                await link.process.wait()
        self._stop.set()
        await self._stopped.wait()

    async def close(self) -> None:
        """Tell the bot to quit, then make sure it is gone."""
        await self.retire(quit_first=True)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "bot"


# --- one game -------------------------------------------------------------------


async def play_game(
    players: Sequence[BotPlayer],
    config: MatchConfig,
    *,
    round_: str = "?",
    seed: int = 0,
    start: str | None = None,
) -> GameResult:
    """Play one game, ``players`` in seat order; bot faults become lost games."""
    game = get_game(config.game)
    session = GameSession(
        game,
        codec_for(config.game),
        GameSettings(players=len(players), seed=seed, start=start, options=config.options),
        players=[p.name for p in players],
        control=config.control,
        tags={
            "Event": config.event,
            "Site": config.site,
            "Date": datetime.now(UTC).strftime("%Y.%m.%d"),
            "Round": round_,
        },
        max_line_bytes=config.max_line_bytes,
    )
    links: list[_Link | None] = [None] * len(players)

    async def handshake(seat: int) -> None:
        player = players[seat]
        try:
            link = await player.link()
            links[seat] = link
            link.logs.clear()
            link.dropped_logs = 0
            message = session.new_game(seat, next(link.ids))
            await link.ask(message, config.control.startup)
        except BotFault as fault:
            if session.ending is None:
                error = session.fault(seat, _at_start(fault))
                link = links[seat]
                if error is not None and link is not None:
                    await link.goodbye(error)

    async with trio.open_nursery() as nursery:
        for seat in range(len(players)):
            nursery.start_soon(handshake, seat)

    while (seat := session.deciding) is not None:
        link = links[seat]
        assert link is not None
        request = session.next_request(next(link.ids))
        error: ErrorMessage | None
        try:
            reply, elapsed = await link.ask(request.message, request.budget)
            assert isinstance(reply, TurnReply), "the connection only accepts a turn reply here"
            error = session.submit(request.seat, reply, elapsed)
        except BotFault as fault:
            error = session.fault(request.seat, fault)
        if error is not None:
            await link.goodbye(error)

    ending = session.ending
    assert ending is not None
    for link in links:
        if link is not None:
            await link.goodbye(session.game_over(next(link.ids)))
    logs = _collect_logs(session, links)
    if ending.faulty_seat is not None:
        await players[ending.faulty_seat].retire()
    return GameResult(
        record=session.record(), ending=ending, players=session.players, logs=tuple(logs)
    )


def _at_start(fault: BotFault) -> BotFault:
    """A fault during the handshake, said so."""
    if isinstance(fault, BotTimeout):
        return BotTimeout(f"no ready within the start-up allowance ({fault})")
    return fault


def _collect_logs(session: GameSession, links: Sequence[_Link | None]) -> list[str]:
    lines = []
    for seat, link in enumerate(links):
        if link is None:
            continue
        who = f"{session.seat_name(seat)} ({session.players[seat]})"
        lines.extend(f"{who}: {text}" for text in link.logs)
        if link.dropped_logs:
            lines.append(f"{who}: … {link.dropped_logs} more log messages not kept")
    return lines


# --- a match --------------------------------------------------------------------


@dataclass(slots=True)
class MatchScore(Tally):
    """The running score of a match, from the first player's point of view."""

    names: tuple[str, str]
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, result: GameResult) -> None:
        first = result.players.index(self.names[0])
        score = result.ending.scores[first]
        if score == 1:
            self.wins += 1
        elif score == 0:
            self.losses += 1
        else:
            self.draws += 1


def unique_names(commands: Sequence[BotCommand]) -> list[str]:
    """Display names for ``commands``, made distinct (``random``, ``random-2``)."""
    names: list[str] = []
    for command in commands:
        base = command.display_name
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names


async def run_match(
    commands: Sequence[BotCommand],
    config: MatchConfig,
    *,
    games: int = 1,
    pgn: Path | None = None,
    seed: int = 0,
    on_game: Callable[[int, GameResult, MatchScore], Awaitable[None] | None] | None = None,
) -> MatchScore:
    """Play ``games`` games between two bots, colours alternating.

    Each finished game is appended to ``pgn`` as it ends (and its bot logs
    written under ``config.log_dir``); ``on_game`` is called after each.
    """
    names = unique_names(commands)
    score = MatchScore((names[0], names[1]))
    if config.log_dir is not None:
        config.log_dir.mkdir(parents=True, exist_ok=True)
    async with trio.open_nursery() as nursery:
        players = [
            BotPlayer(
                command,
                name,
                nursery,
                max_line_bytes=config.max_line_bytes,
                log_dir=config.log_dir,
            )
            for command, name in zip(commands, names, strict=True)
        ]
        try:
            for index in range(games):
                seats = players if index % 2 == 0 else players[::-1]
                result = await play_game(seats, config, round_=str(index + 1), seed=seed + index)
                if pgn is not None:
                    append_game(pgn, result.record)
                if config.log_dir is not None and result.logs:
                    log_path = config.log_dir / f"game-{index + 1:04d}.log"
                    log_path.write_text("\n".join(result.logs) + "\n", encoding="utf-8")
                score.add(result)
                if on_game is not None:
                    maybe = on_game(index + 1, result, score)
                    if maybe is not None:
                        await maybe
        finally:
            with trio.CancelScope(shield=True):
                for player in players:
                    await player.close()
    return score
