"""A rating table for people (rich tables) and for programs (JSON, CSV).

Numbers are rounded for reading: Elo and errors to 0.1 in JSON and CSV and to
whole points on screen, percentages to 0.1, LOS to four decimals (shown as a
percentage on screen), mean scores and mean places to two decimals, OpenSkill's
μ, σ and μ − 3σ to three decimals in JSON and CSV and to one on screen.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any, Final

from rich.table import Table
from rich.text import Text

from tournaments.knockout import Match
from tournaments.ratings import EloDifference, Method, PlayerRating, RatingTable
from tournaments.swiss import Standing

Outcome = tuple[Standing, ...] | tuple[Match, ...] | None
"""What a format adds to the ratings: a Swiss's standings, a knockout's matches, or nothing."""

COLUMNS = (
    "rank",
    "name",
    "elo",
    "error",
    "games",
    "wins",
    "draws",
    "losses",
    "score",
    "score_percent",
    "los_next",
    "mean_score",
    "mean_place",
    "mu",
    "sigma",
    "ordinal",
)
"""The fields of one player in JSON and the columns of the CSV, in order."""

TABLES_NOTES: dict[Method, str] = {
    "plackett-luce": (
        "Elo: Plackett-Luce fit of each game's whole ranking (a tie counts as each order"
        " that breaks it, equally); %: two-player results by places; μ, σ, μ-3σ: OpenSkill"
    ),
    "pairwise": (
        "Elo and %: each game split into two-player results by places (ties are draws),"
        " weighted 1/(seats-1); μ, σ, μ-3σ: OpenSkill"
    ),
}
"""How a table of games of more than two seats (or scored in points) reads, by method."""


def format_points(points: float) -> str:
    """Points the chess way: ``"7½"``, ``"½"``, ``"3"``."""
    whole = math.floor(points)
    half = "½" if points - whole else ""
    return f"{whole}{half}" if whole or not half else half


def _notes(table: RatingTable) -> str | None:
    """What a reader must know about how the ratings were fixed, or ``None``."""
    notes = []
    if table.kind == "tables":
        notes.append(TABLES_NOTES[table.method])
    elif table.kind == "solo":
        notes.append("solo games: no Elo, players ranked by mean score")
    if table.anchor is not None:
        notes.append(f"anchored: {table.anchor} = {_number(table.player(table.anchor).elo, '.0f')}")
    if table.virtual_draws:
        notes.append(
            "a perfect or zero score (or players who never met): each player has one"
            " virtual draw against the pool average"
        )
    return "; ".join(notes) or None


def _number(value: float | None, spec: str) -> str:
    """``value`` formatted by ``spec``, or an empty cell for ``None``."""
    return "" if value is None else format(value, spec)


NAME_OVERFLOW: Final = "fold"
"""How a name too long for a narrow terminal is shown: whole, folded onto more lines
(cut with an ellipsis, ``bots.verdant.random`` and ``bots.verdant.greedy`` would both
read ``bots.verdant.…``)."""


def rating_table(table: RatingTable, *, title: str | None = None) -> Table:
    """The rating table as a rich :class:`~rich.table.Table`, best player first.

    Two-seat games scored 1, ½ or 0 (``kind`` ``"two-seat"``): rank, name, Elo
    (signed: a difference from the mean or from an anchor rated 0; plain when an anchor
    fixes another rating, as ``--anchor-elo 2800`` does), 95% error, games, wins, draws,
    losses, points, score percentage and the likelihood of superiority over the next player.
    Other games (``"tables"``): rank, name, Elo, error, games, mean score, mean
    place, the percentage of the two-player results scored, LOS, and OpenSkill's μ,
    σ and μ − 3σ. Solo games: rank, name, games and mean score.
    """
    notes = _notes(table)
    view = Table(title=title, caption=None if notes is None else Text(notes))
    view.add_column("#", justify="right")
    view.add_column("Player", overflow=NAME_OVERFLOW)
    headings = {
        "two-seat": ("Elo", "±", "Games", "W", "D", "L", "Score", "%", "LOS"),
        "tables": (
            "Elo",
            "±",
            "Games",
            "Mean score",
            "Mean place",
            "%",
            "LOS",
            "μ",
            "σ",
            "μ-3σ",
        ),
        "solo": ("Games", "Mean score"),
    }[table.kind]
    for heading in headings:
        view.add_column(heading, justify="right")
    anchored = table.anchor is not None and round(table.player(table.anchor).elo or 0) != 0
    sign = "" if anchored else "+"
    for row in table.players:
        elo = (_number(row.elo, f"{sign}.0f"), _number(row.error, ".0f"))
        los = "" if row.los_next is None else f"{100 * row.los_next:.1f}%"
        mean_score = _number(row.mean_score, ".2f")
        if table.kind == "two-seat":
            cells: tuple[str, ...] = (
                *elo,
                str(row.games),
                str(row.wins),
                str(row.draws),
                str(row.losses),
                format_points(row.score),
                f"{row.score_percent:.1f}",
                los,
            )
        elif table.kind == "tables":
            mean_place = _number(row.mean_place, ".2f")
            percent = f"{row.score_percent:.1f}"
            skill = (
                _number(row.mu, ".1f"),
                _number(row.sigma, ".1f"),
                _number(row.ordinal, ".1f"),
            )
            cells = (*elo, str(row.games), mean_score, mean_place, percent, los, *skill)
        else:
            cells = (str(row.games), mean_score)
        view.add_row(str(row.rank), Text(row.name), *cells)  # a name is text, never markup
    return view


SAME_PLAYER = "·"
"""The crosstable's cell of a player against themselves."""


def encounter_text(table: RatingTable, player: str, opponent: str) -> str:
    """A crosstable cell: ``player``'s points against ``opponent`` out of their games
    (``1½/2``), :data:`SAME_PLAYER` on the diagonal, empty when they never met."""
    if opponent == player:
        return SAME_PLAYER
    encounter = table.encounter(player, opponent)
    return f"{format_points(encounter.score)}/{encounter.games}" if encounter.games else ""


def crosstable(table: RatingTable, *, title: str | None = None) -> Table:
    """Who scored what against whom: a rich table with one row and column per player.

    Rows and columns follow the rating table (columns are headed by rank); a
    cell holds the row player's points out of the two-player results against
    that opponent (for two seats, the games), and is blank when they never met.
    """
    view = Table(title=title)
    view.add_column("#", justify="right")
    view.add_column("Player", overflow=NAME_OVERFLOW)
    for row in table.players:
        view.add_column(str(row.rank), justify="center")
    view.add_column("Score", justify="right")
    for row in table.players:
        cells = [encounter_text(table, row.name, opponent.name) for opponent in table.players]
        points = f"{format_points(row.score)}/{row.results}"
        view.add_row(str(row.rank), Text(row.name), *cells, points)
    return view


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _player_fields(row: PlayerRating) -> dict[str, Any]:
    """One player's :data:`COLUMNS` as rounded values (``None`` for what it has not)."""
    return {
        "rank": row.rank,
        "name": row.name,
        "elo": _rounded(row.elo, 1),
        "error": _rounded(row.error, 1),
        "games": row.games,
        "wins": row.wins,
        "draws": row.draws,
        "losses": row.losses,
        "score": row.score,
        "score_percent": round(row.score_percent, 1),
        "los_next": _rounded(row.los_next, 4),
        "mean_score": _rounded(row.mean_score, 2),
        "mean_place": _rounded(row.mean_place, 2),
        "mu": _rounded(row.mu, 3),
        "sigma": _rounded(row.sigma, 3),
        "ordinal": _rounded(row.ordinal, 3),
    }


def swiss_table(standings: Sequence[Standing], *, title: str | None = None) -> Table:
    """A Swiss's standings as a rich table: rank, name, points, Buchholz, games, byes and
    colours (``W``, ``B``, ``-`` per round)."""
    view = Table(title=title)
    view.add_column("#", justify="right")
    view.add_column("Player", overflow=NAME_OVERFLOW)
    for heading in ("Points", "Buchholz", "Games", "Byes", "Colours"):
        view.add_column(heading, justify="right")
    for row in standings:
        view.add_row(
            str(row.rank),
            Text(row.name),
            format_points(row.points),
            format_points(row.buchholz),
            str(row.played),
            str(row.byes),
            row.colours,
        )
    return view


def bracket_lines(matches: Sequence[Match]) -> list[str]:
    """A knockout's matches, one line each, then the winner: ``Round 1: a 1½ - ½ b (a)``,
    a bye as ``Round 1: a (bye)``, a match not yet decided with ``…``."""
    lines = []
    for match in matches:
        first, second = match.players
        if match.round == 1 and (first is None or second is None):
            lines.append(f"Round {match.round}: {first or second} (bye)")
            continue
        points = " - ".join(format_points(p) for p in match.points) if match.games else "-"
        lines.append(
            f"Round {match.round}: {first or '?'} {points} {second or '?'} ({match.winner or '…'})"
        )
    winner = matches[-1].winner if matches else None
    lines.append(f"Winner: {winner}" if winner else "Winner: not decided yet")
    return lines


def _outcome_fields(outcome: Outcome) -> dict[str, Any]:
    """The JSON of a Swiss's standings or a knockout's bracket (see :func:`to_json`)."""
    if not outcome:
        return {}
    if isinstance(outcome[0], Standing):
        return {
            "swiss": [
                {
                    "rank": row.rank,
                    "name": row.name,
                    "points": row.points,
                    "buchholz": row.buchholz,
                    "games": row.played,
                    "byes": row.byes,
                    "colours": row.colours,
                }
                for row in outcome
                if isinstance(row, Standing)
            ]
        }
    matches = [match for match in outcome if isinstance(match, Match)]
    return {
        "knockout": {
            "winner": matches[-1].winner,
            "matches": [
                {
                    "round": match.round,
                    "players": list(match.players),
                    "points": list(match.points),
                    "games": len(match.games),
                    "winner": match.winner,
                }
                for match in matches
            ],
        }
    }


def to_json(table: RatingTable, outcome: Outcome = None) -> str:
    """The table as JSON: players best first, how the scale was fixed, and the crosstable.

    ``{"players": [{"rank", "name", "elo", "error", "games", "wins", "draws",
    "losses", "score", "score_percent", "los_next", "mean_score", "mean_place", "mu",
    "sigma", "ordinal"}, …], "kind": "two-seat" | "tables" | "solo", "method":
    "plackett-luce" | "pairwise", "anchor": name or null, "virtual_draws": bool,
    "openskill": {"library", "version", "model", "mu", "sigma", "beta", "kappa", "tau",
    "margin", "limit_sigma", "balance"} or null, "crosstable": {player: {opponent:
    {"games", "wins", "draws", "losses", "score"}}}}``. ``games`` counts games played; ``wins``,
    ``draws``, ``losses``, ``score`` (in points, a draw ½) and ``score_percent``
    count two-player results, which for two seats are the games and at a table of
    more are the results by places (as in the crosstable); ``mean_score`` is in
    the game's own unit (Verdant: points), ``mean_place`` 1 for the best; ``error``
    is the 95% half-width; ``mu``, ``sigma`` and ``ordinal`` (``mu - 3·sigma``) are the
    OpenSkill ratings, whose pinned settings ``"openskill"`` gives; ``elo``, ``error``,
    ``los_next``, ``mu``, ``sigma``, ``ordinal`` and ``"openskill"`` are null for solo
    games, ``los_next`` also for the last player, and the means with no game.

    A Swiss adds ``"swiss": [{"rank", "name", "points", "buchholz", "games",
    "byes", "colours"}, …]`` (its standings after the complete rounds: points, then
    Buchholz, then seed); a knockout adds ``"knockout": {"winner": name or null,
    "matches": [{"round", "players", "points", "games", "winner"}, …]}`` (every
    match of the bracket, round by round; a player not known yet, or a bye's
    empty slot, is null; ``games`` counts those due so far).
    """
    document = {
        "players": [_player_fields(row) for row in table.players],
        "kind": table.kind,
        "method": table.method,
        "anchor": table.anchor,
        "virtual_draws": table.virtual_draws,
        "openskill": None if table.openskill is None else table.openskill.to_json(),
        "crosstable": {
            row.name: {
                opponent.name: {
                    "games": encounter.games,
                    "wins": encounter.wins,
                    "draws": encounter.draws,
                    "losses": encounter.losses,
                    "score": encounter.score,
                }
                for opponent in table.players
                if (encounter := table.encounter(row.name, opponent.name)).games
            }
            for row in table.players
        },
        **_outcome_fields(outcome),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def to_csv(table: RatingTable) -> str:
    """The players as CSV with a header row of :data:`COLUMNS` (a value the player has not,
    as ``los_next`` for the last one, is empty)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in table.players:
        fields = _player_fields(row)
        writer.writerow({key: "" if value is None else value for key, value in fields.items()})
    return out.getvalue()


def describe_elo_difference(difference: EloDifference) -> str:
    """A two-player match's Elo difference in cutechess-cli's words, for the match command.

    For example ``Elo difference: 147.2 +/- 387.3, LOS: 99.2 %, DrawRatio: 0.0 %``:
    the estimate, half the width of its 95% interval, the likelihood of superiority
    and the share of draws, as cutechess-cli prints them. A perfect score (or a zero
    one) has no finite estimate: it is ``inf`` (``-inf``), never the estimate with a
    virtual draw that the rating table uses; a half-width the results cannot bound is
    ``nan``, as in cutechess-cli. LOS is 50.0 % when no game was decisive.
    """
    if difference.virtual_draw:
        elo = math.inf if difference.wins else -math.inf
        margin = math.nan
    else:
        elo = difference.elo
        margin = difference.margin if math.isfinite(difference.margin) else math.nan
    draws = 100 * difference.draws / difference.games if difference.games else 0.0
    return (
        f"Elo difference: {elo:.1f} +/- {margin:.1f},"
        f" LOS: {100 * difference.los:.1f} %, DrawRatio: {draws:.1f} %"
    )
