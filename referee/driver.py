"""The game driver: one loop that runs any game between any kinds of seats.

The judgement is the sans-I/O :class:`~referee.session.GameSession`; what varies is
who sits in each seat, behind the small :class:`Seat` interface:

- a bot process (:mod:`referee.match`): requests go down a pipe, under a deadline;
- a person at the terminal (:mod:`referee.play`): the view is drawn, a decision typed;
- a bot in the referee's own process (:mod:`bots.arena`): a function is called.

:func:`drive` plays one game::

    start every seat at once (the handshake; the start is judged as a whole)
    while a seat must decide:
        ask it (its request carries what it may see of the decisions since its last one)
        a fault (timeout, crash, bad line) ends the game: the seat is told, if it can be
        a refused decision ends it too, except for a forgiving seat (a person), asked again
    every seat hears how the game ended (bots: ``game_over``)

Chance never sits in a seat: the session draws and records chance's decisions itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import trio

from protocol.messages import ErrorMessage, TurnReply
from referee.clock import Spent
from referee.errors import BotFault
from referee.session import Ending, GameSession, Request


class SeatStopped(Exception):
    """The seat's person stopped the game (``quit``): it is left unfinished."""


class Seat(Protocol):
    """Who sits in one seat of a game, as the driver sees them.

    ``forgiving`` seats (a person) are asked again after a decision the rules
    refuse instead of losing the game; bots are not. Each method is given the
    seat's number, since one object may serve several seats over several games.
    """

    @property
    def name(self) -> str:
        """The player's name (the record's and the other seats')."""
        ...

    @property
    def forgiving(self) -> bool:
        """Whether a refused decision is explained and asked for again."""
        ...

    @property
    def next_id(self) -> int:
        """The id the next request to this seat carries."""
        ...

    async def start(self, session: GameSession, seat: int) -> None:
        """The seat's handshake (a bot: ``new_game`` → ``ready``); raises ``BotFault``."""
        ...

    async def decide(self, request: Request) -> tuple[TurnReply, float | Spent]:
        """The reply to ``request`` and the seconds it took to come (a
        :class:`~referee.clock.Spent` when the CPU time was measured too); raises
        ``BotFault`` (or :class:`SeatStopped` when a person stops)."""
        ...

    async def refused(self, seat: int, error: ErrorMessage) -> None:
        """The seat's last decision was refused (for a bot the game is then lost)."""
        ...

    async def forfeited(self, seat: int, fault: BotFault, error: ErrorMessage | None) -> None:
        """The seat lost the game by ``fault``; ``error`` is what to tell it (``None``: it
        cannot be told)."""
        ...

    async def pending_fault(self, seat: int) -> BotFault | None:
        """A fault the seat has committed without being asked (a bot that exited or wrote
        out of turn), found without waiting; ``None`` when there is none."""
        ...

    async def finish(self, session: GameSession, seat: int) -> None:
        """The game is over (or stopped, ``session.ending`` ``None``): tell the seat."""
        ...


async def drive(
    session: GameSession,
    seats: Sequence[Seat],
    *,
    on_end: Callable[[GameSession], None] | None = None,
) -> Ending | None:
    """Play ``session``'s game, ``seats`` in seat order; → its ending (``None`` if stopped).

    A seat's fault is a lost game, never an exception. ``on_end`` (if given) sees the
    session once the game is decided or stopped, before any seat hears of it.
    """
    if len(seats) != len(session.players):
        raise ValueError("one seat per player")
    failed: dict[int, BotFault] = {}

    async def handshake(seat: int) -> None:
        try:
            await seats[seat].start(session, seat)
        except BotFault as fault:
            failed[seat] = fault

    async with trio.open_nursery() as nursery:
        for place in range(len(seats)):
            nursery.start_soon(handshake, place)
    if failed:
        await _charge(session, seats, failed)
    try:
        while (deciding := session.deciding) is not None:
            await _ask(session, seats, deciding)
    except SeatStopped:
        pass  # the game stays unfinished: the record says "*"
    if on_end is not None:
        on_end(session)
    for place, player in enumerate(seats):
        await player.finish(session, place)
    return session.ending


async def _ask(session: GameSession, seats: Sequence[Seat], seat: int) -> None:
    """Get one accepted decision from ``seat``, or end the game for its fault."""
    player = seats[seat]
    request = session.next_request(player.next_id)
    while True:
        try:
            reply, elapsed = await player.decide(request)
        except BotFault as fault:
            await _charge(session, seats, {seat: fault}, primary=seat)
            return
        error = session.submit(seat, reply, elapsed, forfeit=not player.forgiving)
        if error is None:
            return
        await player.refused(seat, error)
        if session.ending is not None:
            await _charge_waiting(session, seats)
            return


async def _charge(
    session: GameSession,
    seats: Sequence[Seat],
    faults: Mapping[int, BotFault],
    *,
    primary: int | None = None,
) -> None:
    """End the game for the seats at fault (``primary``: the one asked) and tell each what
    it did, if it can be told; then :func:`_charge_waiting`."""
    errors = session.faults(faults, primary=primary)
    for seat, fault in faults.items():
        await seats[seat].forfeited(seat, fault, errors[seat])
    await _charge_waiting(session, seats)


async def _charge_waiting(session: GameSession, seats: Sequence[Seat]) -> None:
    """Once a fault has ended the game, however it was found: a seat that had already
    crashed (or broken the protocol) while it waited for its turn is at fault in this
    game too, and must not share the places of those who are still playing."""
    ending = session.ending
    assert ending is not None
    found: dict[int, BotFault] = {}
    for seat, player in enumerate(seats):
        if seat not in ending.faulty_seats and (fault := await player.pending_fault(seat)):
            found[seat] = fault
    if found:
        errors = session.more_faults(found)
        for seat, fault in found.items():
            await seats[seat].forfeited(seat, fault, errors[seat])


def play_in_process(
    session: GameSession,
    seats: Sequence[Seat],
    *,
    on_end: Callable[[GameSession], None] | None = None,
) -> Ending | None:
    """:func:`drive` from synchronous code (seats that never wait: in-process bots)."""
    return trio.run(lambda: drive(session, seats, on_end=on_end))
