"""What a running tournament shows: a live display for people, one line per game for logs.

The runner talks to a :class:`Progress`: :meth:`~Progress.begin` once,
:meth:`~Progress.game_started` and :meth:`~Progress.game_finished` for every
game, :meth:`~Progress.close` at the end (also when the run is stopped). The
base class shows nothing; :class:`QuietProgress` prints one plain line per
finished game (for logs and CI); :class:`LiveProgress` keeps a rich display up to
date — games finished out of the total, the running games, the time left, the
current standings — and prints the same line per game above it.
:func:`make_progress` picks one.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from referee.untrusted import for_terminal, printable
from tournaments.pairings import Pairing
from tournaments.ratings import RatingTable
from tournaments.report import rating_table
from tournaments.workers import GameDone

STANDINGS_SHOWN = 10
"""How many players the live standings show (the best ones)."""


class Progress:
    """What a running tournament tells whoever watches it. This one shows nothing."""

    def begin(self, *, event: str, total: int, done: int, standings: RatingTable) -> None:
        """The run starts: ``total`` games in all, ``done`` of them recorded by earlier runs."""

    def game_started(self, pairing: Pairing) -> None:
        """A game has started."""

    def game_finished(self, pairing: Pairing, finished: GameDone, standings: RatingTable) -> None:
        """A game has ended and is recorded; ``standings`` counts it."""

    def refresh(self) -> None:
        """Time has passed: redraw clocks and ETA (the runner calls this twice a second)."""

    def close(self) -> None:
        """The run is over (finished or stopped): stop displaying."""


def describe_game(pairing: Pairing, finished: GameDone, seconds: float | None = None) -> str:
    """A finished game in one line: ``game 7 (round 2): random - greedy 0-1, <reason>, 3.2 s``.

    The players are named in seat order and the result is the record's (``2-1-3``
    for three seats, the score of a solo game). The reason may quote a bot, so it is
    made printable and clipped (:func:`referee.untrusted.for_terminal`): the line is
    one line, without escape codes.
    """
    took = "" if seconds is None else f", {seconds:.1f} s"
    players = " - ".join(printable(name) for name in pairing.players)
    return (
        f"game {pairing.index + 1} (round {pairing.round}): {players}"
        f" {finished.game.result}, {for_terminal(finished.game.reason)}{took}"
    )


def _clock(seconds: float) -> str:
    """``83.4`` → ``1:23``; hours when needed (``1:02:03``)."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class _Watcher(Progress):
    """Keeps count: finished games, the running ones with their start times, the standings."""

    def __init__(self) -> None:
        self.event = ""
        self.total = 0
        self.done = 0
        self.finished_now = 0
        self.began = time.monotonic()
        self.running: dict[int, tuple[Pairing, float]] = {}
        self.standings: RatingTable | None = None

    def begin(self, *, event: str, total: int, done: int, standings: RatingTable) -> None:
        self.event, self.total, self.done = event, total, done
        self.standings = standings
        self.began = time.monotonic()

    def game_started(self, pairing: Pairing) -> None:
        self.running[pairing.index] = (pairing, time.monotonic())

    def game_finished(self, pairing: Pairing, finished: GameDone, standings: RatingTable) -> None:
        running = self.running.pop(pairing.index, None)
        self.done += 1
        self.finished_now += 1
        self.standings = standings
        took = None if running is None else time.monotonic() - running[1]
        self.report(describe_game(pairing, finished, took))

    def report(self, line: str) -> None:
        """Show one line about a finished game."""

    def eta(self) -> float | None:
        """Seconds until the last game ends, at this run's pace so far (``None``: no pace yet)."""
        if not self.finished_now:
            return None
        pace = (time.monotonic() - self.began) / self.finished_now
        return pace * (self.total - self.done)

    def heading(self) -> str:
        """``Quick start: 24 games, 6 already played`` — what :meth:`begin` was told."""
        earlier = f", {self.done} already played" if self.done else ""
        return f"{self.event}: {self.total} game{'s' * (self.total != 1)}{earlier}"


class QuietProgress(_Watcher):
    """One plain line per finished game (and one at the start), for logs and CI."""

    def __init__(self, write: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self._write = write or (lambda line: print(line, flush=True))

    def begin(self, *, event: str, total: int, done: int, standings: RatingTable) -> None:
        super().begin(event=event, total=total, done=done, standings=standings)
        self._write(self.heading())

    def report(self, line: str) -> None:
        self._write(f"[{self.done}/{self.total}] {line}")


class LiveProgress(_Watcher):
    """A live rich display: progress bar, running games, ETA and the top of the standings.

    Finished games are printed above the display as they end; the display
    itself disappears on :meth:`close`, leaving the final table to the caller.
    """

    def __init__(self, console: Console | None = None) -> None:
        super().__init__()
        self._live = Live(
            console=console or Console(),
            get_renderable=self.__rich__,
            auto_refresh=False,
            transient=True,
        )

    def begin(self, *, event: str, total: int, done: int, standings: RatingTable) -> None:
        super().begin(event=event, total=total, done=done, standings=standings)
        self._live.console.print(self.heading())
        self._live.start()

    def report(self, line: str) -> None:
        self._live.console.print(Text(f"[{self.done}/{self.total}] {line}"))
        self._live.refresh()

    def game_started(self, pairing: Pairing) -> None:
        super().game_started(pairing)
        self._live.refresh()

    def refresh(self) -> None:
        self._live.refresh()

    def close(self) -> None:
        self._live.stop()

    def __rich__(self) -> RenderableType:
        """The display as it is now (what the live view draws)."""
        now = time.monotonic()
        eta = self.eta()
        summary = Text(
            f"{self.done}/{self.total} games · {len(self.running)} running · "
            f"elapsed {_clock(now - self.began)} · "
            f"ETA {'—' if eta is None else _clock(eta)}"
        )
        bar = Table.grid()  # rich's bar ends no line: alone, the next part would follow it
        bar.add_row(ProgressBar(total=max(self.total, 1), completed=self.done, width=60))
        running = Table(show_header=False, box=None, padding=(0, 1))
        for pairing, started in sorted(self.running.values(), key=lambda item: item[1]):
            running.add_row(
                f"game {pairing.index + 1}",
                Text(printable(" vs ".join(pairing.players))),
                _clock(now - started),
            )
        parts: list[RenderableType] = [summary, bar, running]
        if self.standings is not None and self.standings.players:
            top = dataclasses.replace(
                self.standings, players=self.standings.players[:STANDINGS_SHOWN]
            )
            parts.append(rating_table(top, title="Standings"))
        return Group(*parts)


def make_progress(*, quiet: bool | None = None, console: Console | None = None) -> Progress:
    """A :class:`LiveProgress`, or a :class:`QuietProgress` when ``quiet`` (``None``:
    quiet when the console is not a terminal)."""
    console = console or Console()
    if quiet is None:
        quiet = not console.is_terminal
    if quiet:
        return QuietProgress(lambda line: console.out(line, highlight=False))
    return LiveProgress(console)
