"""The preflight: every bot is started once and must answer a handshake before play.

A typo in a command line, a missing executable, a wrong ``dir`` or a bot that
crashes at start-up would otherwise show only as forfeits, game after game, once
the games have begun (and have been recorded). :func:`preflight` starts each
player's bot, sends it the ``new_game`` of a first game, waits for ``ready``
within the start-up allowance, then tells it to ``quit``. Every failure is
collected, and they are raised together as one :class:`PreflightError` line.

Bots are started through the caller's own factory, so that they run exactly as
they will in the games (same sandbox, limits and log files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import trio

from referee.errors import BotFault, RefereeError
from referee.games import get_entry, get_game
from referee.games.base import GameSettings
from referee.match import BotPlayer, MatchConfig
from referee.session import GameSession
from referee.untrusted import clip, printable

MAX_REASON = 400
"""The most characters said about one player's failure (room for a path and what to do
about it; what a bot wrote is cut shorter where it is quoted)."""

MakePlayer = Callable[[str, trio.Nursery], BotPlayer]
"""Makes the :class:`BotPlayer` of the named player, its process to run in the nursery."""


class PreflightError(RefereeError):
    """Some players' bots did not start or did not answer the handshake; nothing was played.

    ``failures`` says why, by player (a ladder refuses one version with its reason)."""

    def __init__(self, message: str, failures: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.failures = dict(failures or {})


async def preflight(
    names: Sequence[str],
    make_player: MakePlayer,
    config: MatchConfig,
    *,
    start: str | None = None,
    at_once: int | None = None,
    seats: int | None = None,
) -> None:
    """Start the bot of each player in ``names`` and check it answers ``new_game``.

    Each is told of a game of ``seats`` players (default: two, or as few as the
    game allows) from ``start`` (the game's standard start when ``None``), in its
    first seat, the next players in ``names`` in the others. At most ``at_once``
    bots run at the same time (all of them when ``None``). Raises :class:`PreflightError`
    naming every player that failed and why; a failure of the referee's own
    resources (:class:`~referee.errors.RefereeFault`) propagates unchanged.
    """
    game = get_game(config.game)
    if seats is None:
        seats = min(max(2, game.min_players), game.max_players)
    failures: dict[str, str] = {}
    limiter = trio.CapacityLimiter(at_once or max(1, len(names)))
    async with trio.open_nursery() as nursery:
        for place in range(len(names)):
            table = tuple(names[(place + seat) % len(names)] for seat in range(seats))
            nursery.start_soon(_check, table, make_player, config, start, limiter, failures)
    if failures:
        listed = "; ".join(f"{name}: {failures[name]}" for name in names if name in failures)
        who = "a player" if len(failures) == 1 else f"{len(failures)} players"
        raise PreflightError(
            f"{who} failed the start-up check ({listed}); nothing was played or saved:"
            " fix the command and run it again",
            failures,
        )


async def _check(
    table: tuple[str, ...],
    make_player: MakePlayer,
    config: MatchConfig,
    start: str | None,
    limiter: trio.CapacityLimiter,
    failures: dict[str, str],
) -> None:
    """Start the bot of ``table[0]``, hand it a ``new_game`` for a game between ``table``,
    and note in ``failures`` why it failed."""
    name = table[0]
    async with limiter, trio.open_nursery() as nursery:
        player = make_player(name, nursery)
        try:
            link = await player.link()
            entry = get_entry(config.game)
            session = GameSession(
                entry.rules,
                entry.codec,
                GameSettings(players=len(table), start=start, options=config.options),
                players=table,
                control=config.control,
                allowances=config.allowances,
                max_line_bytes=config.max_line_bytes,
            )
            await link.ask(session.new_game(0, link.next_id), config.allowances.startup)
        except BotFault as fault:
            # The message may quote the bot's own output.
            failures[name] = clip(printable(str(fault)), MAX_REASON) or type(fault).__name__
        # When cancelled instead, leaving the nursery stops the bot all the same.
        await player.close()
