"""The ladder's leaderboard in the terminal: a live rich table, or one line per game.

On a terminal the table (the top :data:`ROWS` entrants: rank, version, μ − 3σ, μ, σ,
games, versions, last result) is redrawn as games end and versions settle; elsewhere (a
pipe, a log file) each recorded game is one line, ``game N: a@v1 1st, b@v2 2nd``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.table import Table

from referee.untrusted import printable
from tournaments.ladder.standings import Row, ordinal

if TYPE_CHECKING:
    from tournaments.ladder.ladder import LadderRun

ROWS = 20


def leaderboard_table(rows: Sequence[Row], title: str) -> Table:
    table = Table(title=printable(title))
    for column in ("#", "entrant", "version", "μ−3σ", "μ", "σ", "games", "versions", "last result"):
        table.add_column(
            column,
            justify="right" if column in ("#", "μ−3σ", "μ", "σ", "games", "versions") else "left",
        )
    for row in rows:
        table.add_row(
            str(row.rank),
            row.entrant,
            row.player,
            f"{row.skill.ordinal:.2f}",
            f"{row.skill.mu:.2f}",
            f"{row.skill.sigma:.2f}",
            str(row.games),
            str(row.versions),
            row.last.describe() if row.last else "–",
        )
    return table


class Board:
    """Draws the leaderboard: call it with the run after each change; :meth:`close` at the end."""

    def __init__(self, console: Console, *, live: bool = True) -> None:
        self.console = console
        self.live = live and console.is_terminal
        self._live: Live | None = None
        self._printed = 0

    def __call__(self, run: LadderRun) -> None:
        rows = run.standings.leaderboard(run.versions(), run.registry.retired())
        title = f"{run.config.template.event}: {run.standings.count} games"
        if self.live:
            table = leaderboard_table(rows[:ROWS], title)
            if self._live is None:
                self._live = Live(table, console=self.console, auto_refresh=False)
                self._live.start()
            self._live.update(table, refresh=True)
            return
        for played in _new_games(run, self._printed):
            self.console.print(played, markup=False, highlight=False, soft_wrap=True)
        self._printed = run.standings.count

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()


def _new_games(run: LadderRun, printed: int) -> list[str]:
    if run.standings.count <= printed:
        return []
    lines = []
    for game in run.store.games(pgn=False)[printed:]:
        seats = ", ".join(
            f"{name} {ordinal(place)}"
            for name, place in zip(game.players, game.places, strict=True)
        )
        lines.append(f"game {game.index + 1}: {seats} ({game.reason})")
    return lines
