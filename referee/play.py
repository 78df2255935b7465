"""A person plays bots in the terminal.

The person sits in one seat (:class:`PersonSeat`), bot processes in the others, and
the game driver (:func:`referee.driver.drive`) runs the game as in any match: the
bots are refereed exactly as there (same session, same bot seats, same clocks).
Before each of the person's decisions they are told what the others did since their
last one, as they may see it, and shown their view, drawn by the game's renderer;
they type the decision in the game's record notation (the game's ``person_help``
says how; ``moves`` lists the legal ones). A malformed or illegal decision is
explained and asked for again — a person is not forfeited for a typo. The person's
seat is untimed (the session's ``untimed``): no clock runs out, and the record keeps
each of their decisions' real think time, from the prompt to the accepted line, as
``[%emt]`` without a ``[%clk]``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import trio

from protocol.messages import ErrorMessage, PastTurn, TurnReply
from referee.driver import SeatStopped, drive
from referee.errors import BotFault, RuleError, SettingsError
from referee.games import GameEntry, get_entry
from referee.games.base import GameSettings
from referee.match import (
    BotPlayer,
    BotSeat,
    GameJournal,
    MatchConfig,
    record_date,
    unique_names,
)
from referee.pgn import GameRecord, append_game
from referee.process import BotCommand
from referee.session import GameSession, Request, check_players
from referee.untrusted import for_terminal, printable

STOP_WORDS = frozenset({"quit", "exit", "resign"})
"""What a person types to stop the game (it is left unfinished)."""

HELP_WORDS = frozenset({"help", "?"})
"""What a person types to be told how to write a decision."""

MOVES_WORDS = frozenset({"moves", "legal"})
"""What a person types to see the legal decisions now."""

COMMANDS = (
    "Commands: 'moves' lists your legal decisions now, 'help' shows this again,"
    " 'quit' stops (the game is left unfinished)."
)
"""The words a person may type besides a decision, said once in the intro and in ``help``."""


class _LineReader:
    """Lines from a file descriptor, read through trio (no threads)."""

    def __init__(self, fd: int) -> None:
        self._stream = trio.lowlevel.FdStream(os.dup(fd))
        self._buffer = bytearray()

    async def readline(self) -> str | None:
        """The next line without its newline, or ``None`` at end of input."""
        while (end := self._buffer.find(b"\n")) < 0:
            chunk = await self._stream.receive_some(4096)
            if not chunk:
                if not self._buffer:
                    return None
                line, self._buffer = bytes(self._buffer), bytearray()
                return line.decode("utf-8", "replace").strip()
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line.decode("utf-8", "replace").strip()

    async def aclose(self) -> None:
        await self._stream.aclose()


class PersonSeat:
    """A person at the terminal in one seat (the driver's :class:`~referee.driver.Seat`)."""

    forgiving = True

    def __init__(
        self,
        name: str,
        entry: GameEntry,
        reader: _LineReader,
        *,
        color: bool,
        say: Callable[[str], None],
    ) -> None:
        self._name = name
        self._entry = entry
        self._reader = reader
        self._color = color
        self._say = say
        self._requests = 0
        self._shown = 0  # the id of the last request whose news and view were shown
        self._asked_at = 0.0  # when that request was first shown (trio's clock)
        self._players: tuple[str, ...] = ()
        self._seat_name = ""

    @property
    def name(self) -> str:
        return self._name

    @property
    def next_id(self) -> int:
        return self._requests + 1

    def help(self) -> str:
        return f"{self._entry.person_help} {COMMANDS}"

    async def start(self, session: GameSession, seat: int) -> None:
        self._players = session.players
        self._seat_name = session.seat_name(seat)
        others = [printable(name) for place, name in enumerate(session.players) if place != seat]
        against = f" against {', '.join(others)}" if others else ""
        self._say(f"You play {self._seat_name}{against}. {self.help()}")

    async def decide(self, request: Request) -> tuple[TurnReply, float]:
        """Prompt until the person types a decision the game can read."""
        message = request.message
        self._requests = max(self._requests, message.id)
        if message.id != self._shown:  # asked again after a refusal: said already
            self._shown = message.id
            self._asked_at = trio.current_time()  # think time runs from the first prompt
            self._tell(message.since_last)
            self._say(self._entry.render(request.view, self._color))
        rules = self._entry.rules
        while True:
            self._say(f"{self._seat_name} to play> ")
            line = await self._reader.readline()
            word = "" if line is None else line.lower()
            if line is None or word in STOP_WORDS:
                raise SeatStopped
            if word in HELP_WORDS:
                self._say(self.help())
                continue
            if word in MOVES_WORDS:
                for listed in self._entry.person_moves(request.view):
                    self._say(listed)
                continue
            try:
                decision = rules.parse_decision(line)
            except RuleError as error:
                self._say(f"Not a legal turn: {for_terminal(str(error))}")
                continue
            reply = TurnReply(id=message.id, actions=self._entry.codec.actions_raw(decision))
            return reply, trio.current_time() - self._asked_at

    async def refused(self, seat: int, error: ErrorMessage) -> None:
        self._say(f"Not a legal turn: {for_terminal(error.message)}")

    async def forfeited(self, seat: int, fault: BotFault, error: ErrorMessage | None) -> None:
        self._say(f"You forfeit: {for_terminal(str(fault))}")

    async def pending_fault(self, seat: int) -> BotFault | None:
        return None  # a person is never at fault: a stop is asked for, not detected

    async def finish(self, session: GameSession, seat: int) -> None:
        """Tell the person the last decisions, show the final position and the result."""
        self._tell(session.news(seat))
        ending = session.ending
        if ending is None:
            self._say("Stopped; the game is left unfinished.")
            return
        self._say(self._entry.render_public(session.state, self._color))
        reason = for_terminal(ending.reason)  # it may quote a bot
        self._say(f"Game over: {ending.result} — {reason}")

    def _tell(self, news: Sequence[PastTurn]) -> None:
        """Say what the others did (as the person may see it), oldest first."""
        for past in news:
            if past.seat is None:
                self._say(f"Chance: {past.notation}")
            else:
                self._say(f"{printable(self._players[past.seat])} plays {past.notation}")


async def play_against(
    bots: Sequence[BotCommand],
    *,
    seat: int,
    config: MatchConfig,
    color: bool,
    seed: int = 0,
    say: Callable[[str], None] = print,
    person_name: str = "human",
    pgn: Path | None = None,
    input_fd: int = 0,
) -> GameRecord:
    """Play one game between the person at ``input_fd``, in ``seat``, and ``bots``.

    The bots take the other seats in the order given. ``seed`` seeds the game's
    chance. The finished (or stopped) game is appended to ``pgn``, if given.
    """
    entry = get_entry(config.game)
    players = len(bots) + 1
    check_players(entry.rules, players)
    if not 0 <= seat < players:
        raise SettingsError(f"seat {seat + 1} does not exist in a game of {players} players")
    bot_names = unique_names(bots)
    name = person_name
    while name in bot_names:
        name += "-1"
    names = [*bot_names[:seat], name, *bot_names[seat:]]
    session = GameSession(
        entry.rules,
        entry.codec,
        GameSettings(players=players, seed=seed, options=config.options),
        players=names,
        control=config.control,
        allowances=config.allowances,
        tags={"Event": "Human vs bot", "Site": config.site, "Date": record_date()},
        max_line_bytes=config.max_line_bytes,
        untimed=(seat,),
    )
    reader = _LineReader(input_fd)
    try:
        async with trio.open_nursery() as nursery:
            sandbox = config.sandbox.hiding(pgn, *(command.cwd for command in bots))
            bot_players = [
                BotPlayer(
                    command,
                    bot_name,
                    nursery,
                    max_line_bytes=config.max_line_bytes,
                    sandbox=sandbox,
                )
                for command, bot_name in zip(bots, bot_names, strict=True)
            ]
            journal = GameJournal(session)
            seats: list[BotSeat | PersonSeat] = [BotSeat(p, journal) for p in bot_players]
            seats.insert(seat, PersonSeat(name, entry, reader, color=color, say=say))
            try:
                await drive(session, seats)
            finally:
                with trio.CancelScope(shield=True):
                    for player in bot_players:
                        await player.close()
    finally:
        await reader.aclose()
    record = session.record()
    if pgn is not None:
        append_game(pgn, record)
    return record
