"""A person plays a bot in the terminal.

The person types turn tokens (§7: ``c2+Lc2``, ``--``); the board is drawn after
every turn. An illegal or malformed turn is explained and asked for again — a
person is not forfeited for a typo. The bot is refereed exactly as in a match
(same :class:`~referee.session.GameSession`, same clock rules); the person's
clock is not charged.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import trio

from protocol.messages import ErrorMessage, TurnReply
from referee.errors import BotFault, RuleError
from referee.games import get_entry, get_game
from referee.games.base import GameSettings
from referee.games.ivy.render import render
from referee.match import BotPlayer, MatchConfig
from referee.pgn import GameRecord, append_game
from referee.process import BotCommand
from referee.session import GameSession
from referee.untrusted import for_terminal

HELP = "Type a turn such as c2+Lc2 (creep c2, leaf on c2), xg3 (choke g3), -- (pass); 'quit' stops."


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


async def play_against(
    command: BotCommand,
    *,
    human_seat: int,
    config: MatchConfig,
    color: bool,
    say: Callable[[str], None] = print,
    human_name: str = "human",
    pgn: Path | None = None,
    input_fd: int = 0,
) -> GameRecord:
    """Play one game between the person at ``input_fd`` and the bot ``command``."""
    game = get_game(config.game)
    if game.name != "ivy":
        raise RuleError(f"the terminal board can only draw Ivy, not {game.name}")
    codec = get_entry(game.name).codec
    names = [command.display_name] * 2
    names[human_seat] = human_name if human_name != command.display_name else f"{human_name}-1"
    session = GameSession(
        game,
        codec,
        GameSettings(players=2, options=config.options),
        players=names,
        control=config.control,
        tags={"Event": "Human vs bot", "Site": config.site},
        max_line_bytes=config.max_line_bytes,
    )
    bot_seat = 1 - human_seat
    reader = _LineReader(input_fd)
    say(f"You play {session.seat_name(human_seat)} against {command.display_name}. {HELP}")
    try:
        async with trio.open_nursery() as nursery:
            player = BotPlayer(
                command,
                names[bot_seat],
                nursery,
                max_line_bytes=config.max_line_bytes,
                sandbox=config.sandbox.hiding(pgn),
            )
            try:
                link = await player.link()
                await link.ask(session.new_game(bot_seat, link.next_id), config.control.startup)
            except BotFault as fault:
                session.fault(bot_seat, fault)
            while (seat := session.deciding) is not None:
                say(render(game.view(session.state, seat), color))
                if seat == human_seat:
                    reply = await _ask_person(session, reader, say)
                    if reply is None:
                        say("Stopped; the game is left unfinished.")
                        break
                    session.submit(seat, reply, 0.0)
                    continue
                request = session.next_request(link.next_id)
                error: ErrorMessage | None
                try:
                    bot_reply, elapsed = await link.ask(request.message, request.budget)
                    assert isinstance(bot_reply, TurnReply)
                    error = session.submit(seat, bot_reply, elapsed)
                except BotFault as fault:
                    error = session.fault(seat, fault)
                if error is not None:
                    await link.goodbye(error)
                else:
                    say(f"{names[bot_seat]} plays {session.last_notation}")
            if session.ending is not None:
                say(render(game.view(session.state, 0), color))
                reason = for_terminal(session.ending.reason)  # it may quote the bot
                say(f"Game over: {session.ending.result} — {reason}")
            await player.close()
    finally:
        await reader.aclose()
    record = session.record()
    if pgn is not None:
        append_game(pgn, record)
    return record


async def _ask_person(
    session: GameSession, reader: _LineReader, say: Callable[[str], None]
) -> TurnReply | None:
    """Prompt until the person types a legal turn; ``None`` when they stop."""
    game = session.game
    seat = session.deciding
    assert seat is not None
    request = session.next_request(0)
    while True:
        say(f"{session.seat_name(seat)} to play> ")
        line = await reader.readline()
        if line is None or line.lower() in {"quit", "exit", "resign"}:
            return None
        if line.lower() in {"help", "?"}:
            say(HELP)
            continue
        try:
            decision = game.parse_decision(line)
            game.apply(session.state, seat, decision)
        except RuleError as error:
            say(f"Not a legal turn: {error}")
            continue
        return TurnReply(id=request.message.id, actions=session.codec.actions_raw(decision))
