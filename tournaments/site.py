"""A tournament's web pages, made from its results store (the truth), for any browser.

The output directory of a tournament gets:

``index.html``
    Links to the tournament's files (``games.pgn``, ``ratings.json``, ``ratings.csv``),
    the standings (Elo with its 95% error bar, as :mod:`tournaments.ratings` rates
    the games), how the games ended (counted by ``Termination``, with the players at
    fault), the crosstable, the openings played, every game (with its opening and
    duration) and each player's games, every game linked to its replay. While games
    are still to be played it reloads itself every :data:`RELOAD_SECONDS` seconds, so
    a page left open follows the run.
``games/0007.html``
    The replay of game 7 (numbered from 1, as ``logs/game-0007.log``), a
    self-contained viewer page (:mod:`referee.viewer`).

:func:`update_site` is what a tournament run calls after each game it records: it
writes that game's page and, every few seconds, the index, each atomically.
:func:`complete_site` is what a run calls as it starts: pages for games recorded by a
run that stopped before writing them, and the index.
:func:`build_site` (``referee site OUTPUT_DIR``) rebuilds every page from the store.
Every text that comes from the store (names, reasons, results) is escaped; the pages
run no script.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from referee.errors import RecordError, RefereeError
from referee.games import get_game
from referee.pgn import GameRecord as PgnRecord
from referee.pgn import PgnError, read_games
from referee.replay import FORFEITS
from referee.untrusted import clip, printable
from referee.viewer import game_page, static_page, write_atomically
from tournaments.ratings import Method, PlayerRating, RatingTable, rate
from tournaments.report import SAME_PLAYER, encounter_text, format_points
from tournaments.store import DATABASE, PGN, GameRecord, ResultStore

INDEX = "index.html"
GAMES = "games"
"""The index page and the folder of game pages, in the output directory."""

RELOAD_SECONDS = 15
"""How often the index reloads itself while games remain to be played."""

BACK_LINK = ("← Tournament standings", f"../{INDEX}")
"""The link from each game page back to the index."""


def game_page_path(index: int) -> str:
    """The page of the game of pairing ``index``, relative to the output directory."""
    return f"{GAMES}/{index + 1:04d}.html"


@dataclass(frozen=True, slots=True)
class _Tournament:
    """What the index says about the tournament as a whole, from its saved settings."""

    event: str
    game: str
    time_control: str
    players: tuple[str, ...]
    seat_names: tuple[str, ...] | None
    openings: tuple[str, ...]

    @classmethod
    def of(cls, store: ResultStore, games: Sequence[GameRecord]) -> _Tournament:
        """The tournament of ``store``: its saved settings, else what its games show."""
        saved: dict[str, Any] = {}
        text = store.saved_config()
        if text is not None:
            loaded = json.loads(text)
            saved = loaded if isinstance(loaded, dict) else {}
        names = [player["name"] for player in saved.get("players", []) if "name" in player]
        for game in games:
            names.extend(name for name in game.players if name not in names)
        game_name = str(saved.get("game", "ivy"))
        try:
            seat_names = get_game(game_name).seat_names
        except RefereeError:  # a game this referee does not know: its seats are numbered
            seat_names = None
        control = saved.get("time_control", {})
        openings = saved.get("openings") or []
        return cls(
            event=str(saved.get("event", "Tournament")),
            game=game_name,
            time_control=str(control.get("tc", "")) if isinstance(control, dict) else "",
            players=tuple(dict.fromkeys(names)),
            seat_names=seat_names,
            openings=tuple(str(opening) for opening in openings)
            if isinstance(openings, list)
            else (),
        )

    def seat(self, seat: int) -> str:
        """How the pages name a seat (Ivy: Green, Purple; otherwise seat 1, seat 2 …)."""
        if self.seat_names is not None and seat < len(self.seat_names):
            return self.seat_names[seat]
        return f"seat {seat + 1}"


def update_site(
    output: str | os.PathLike[str],
    store: ResultStore,
    index: int,
    *,
    page: str | None = None,
    total: int | None = None,
    standings: RatingTable | None = None,
    index_page: bool = True,
) -> None:
    """Write the page of the just-recorded game of pairing ``index`` and (with
    ``index_page``) the index.

    ``page`` is the game's page when the caller made it already (a worker that
    played the game: :func:`game_page_text`); otherwise it is made from the
    stored record. ``total`` is how many games the schedule holds (the index
    reloads itself while fewer are recorded); ``standings`` the ratings of the
    recorded games, when the caller has them (otherwise they are computed). The
    index reads every stored game, so a run writes it every few seconds rather
    than after every game. Each file is replaced atomically. Raises ``OSError``
    when a page cannot be written.
    """
    directory = Path(output)
    if page is None:
        game = store.game(index)
        page = None if game is None else game_page_text(index, game.pgn)
    if page is not None:
        write_atomically(directory / game_page_path(index), page)
    if index_page:
        _write_index(directory, store, total=total, standings=standings)


def complete_site(
    output: str | os.PathLike[str],
    store: ResultStore,
    *,
    total: int | None = None,
    standings: RatingTable | None = None,
) -> int:
    """Write the page of every stored game that has none (a run that stopped before
    writing it), then the index; returns the number of game pages written."""
    directory = Path(output)
    missing = [
        index
        for index in sorted(store.done_indices())
        if not (directory / game_page_path(index)).exists()
    ]
    for index in missing:
        game = store.game(index)
        if game is not None:
            _write_game_page(directory, game)
    _write_index(directory, store, total=total, standings=standings)
    return len(missing)


def build_site(output: str | os.PathLike[str], *, total: int | None = None) -> int:
    """Rebuild every page of the tournament in ``output`` from its store; returns the
    number of game pages written. Raises :class:`~tournaments.store.StoreError` when
    the directory holds no readable store."""
    directory = Path(output)
    with ResultStore.open(directory / DATABASE, read_only=True) as store:
        games = store.games()
        for game in games:
            _write_game_page(directory, game)
        _write_index(directory, store, total=total, standings=None, games=games)
    return len(games)


# --- the game pages ------------------------------------------------------------------


def _write_game_page(directory: Path, game: GameRecord) -> None:
    write_atomically(directory / game_page_path(game.index), game_page_text(game.index, game.pgn))


def game_page_text(index: int, pgn: str, record: PgnRecord | None = None) -> str:
    """The page of the game of pairing ``index`` whose record is ``pgn``: its replay,
    or, when the record cannot be replayed, its PGN text. ``record`` is ``pgn`` read,
    when the caller has it (the worker that wrote it), so it is not read again."""
    records = (
        [record]
        if record is not None
        else [game for game in read_games(pgn) if not isinstance(game, PgnError)]
    )
    if len(records) == 1:
        try:
            return game_page(records[0], links=[BACK_LINK])
        except RecordError as error:
            problem = str(error)
    else:
        problem = "the stored record is not one readable PGN game"
    body = (
        f'<p><a href="{escape(BACK_LINK[1])}">{escape(BACK_LINK[0])}</a></p>'
        f"<p>This game cannot be replayed: {escape(problem)}.</p>"
        f'<pre class="table-wrap">{escape(pgn)}</pre>'
    )
    return static_page(title=f"Game {index + 1}", body=body)


# --- the index ----------------------------------------------------------------------


def _write_index(
    directory: Path,
    store: ResultStore,
    *,
    total: int | None,
    standings: RatingTable | None,
    games: Sequence[GameRecord] | None = None,
) -> None:
    games = store.games() if games is None else games
    tournament = _Tournament.of(store, games)
    table = standings or rate(store.results(), players=tournament.players)
    running = total is not None and len(games) < total
    facts = {game.index: _facts(game.pgn) for game in games}
    openings = _Openings.of(tournament, games, facts)
    body = "\n".join(
        [
            _status(tournament, len(games), total, running),
            _downloads(directory),
            _standings(table),
            _endings(games),
            _crosstable(table),
            openings.section(),
            _game_list(tournament, games, facts, openings),
            _player_games(tournament, table, games),
        ]
    )
    page = static_page(
        title=tournament.event, body=body, refresh=RELOAD_SECONDS if running else None
    )
    write_atomically(directory / INDEX, page)


def _status(tournament: _Tournament, played: int, total: int | None, running: bool) -> str:
    counted = f"{played} of {total} games played" if total is not None else f"{played} games played"
    facts = [tournament.game.capitalize()]
    if tournament.time_control:
        facts.append(f"time control {tournament.time_control}")
    facts.append(f"{len(tournament.players)} players")
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [
        '<section aria-label="Progress">',
        f'<p class="status">{escape(counted)}</p>',
        f'<p class="meta">{escape(" · ".join(facts))} · updated {escape(now)}</p>',
    ]
    if running:
        lines.append(
            f'<p class="note">The tournament is running: this page reloads every'
            f" {RELOAD_SECONDS} seconds.</p>"
        )
    lines.append("</section>")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the index shows of a game that only its record says.

    ``readable``: the stored PGN is one readable game; ``start``: its set-up position
    (the ``FEN`` tag), ``None`` when it starts from the game's initial position;
    ``duration_ms``: the time its seats took for their decisions, the sum of its
    ``[%emt]`` comments (``None`` when it records none).
    """

    readable: bool
    start: str | None
    duration_ms: int | None


_FACTS_CACHE: dict[bytes, _Facts] = {}
_FACTS_CACHE_SIZE = 1 << 17
"""Every index write reads every stored record; a run writes the index every few
seconds, so each record is read once per process and its facts kept by digest."""


def _facts(pgn: str) -> _Facts:
    """The :class:`_Facts` of the stored record ``pgn``."""
    key = hashlib.blake2b(pgn.encode(), digest_size=16).digest()
    known = _FACTS_CACHE.get(key)
    if known is not None:
        return known
    records = [game for game in read_games(pgn) if not isinstance(game, PgnError)]
    if len(records) != 1:
        facts = _Facts(readable=False, start=None, duration_ms=None)
    else:
        (record,) = records
        times = [turn.clock.elapsed_ms for turn in record.turns if turn.clock is not None]
        elapsed = [ms for ms in times if ms is not None]
        facts = _Facts(
            readable=True,
            start=record.start_position,
            duration_ms=sum(elapsed) if elapsed else None,
        )
    if len(_FACTS_CACHE) >= _FACTS_CACHE_SIZE:
        _FACTS_CACHE.clear()
    _FACTS_CACHE[key] = facts
    return facts


def format_duration(ms: int | None) -> str:
    """A game's duration as the index shows it: ``0.84 s``, ``12.3 s``, ``2:05``,
    ``1:02:05``; ``–`` when unknown."""
    if ms is None:
        return "–"
    if ms < 10_000:
        return f"{ms / 1000:.2f} s"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    seconds = round(ms / 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


FILES: tuple[tuple[str, str], ...] = (
    (PGN, "every finished game, PGN"),
    ("ratings.json", "the rating table, JSON"),
    ("ratings.csv", "the rating table, CSV"),
)
"""The files of the output directory the index links to, with what each holds (the
runner writes them: :mod:`tournaments.runner`, which imports this module)."""


def _size(size: int) -> str:
    """A file size in bytes, KB or MB (powers of 1024)."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1 << 20:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1 << 20):.1f} MB"


def _downloads(directory: Path) -> str:
    """Links to the files of ``FILES`` that the directory holds, with their sizes."""
    links = []
    for name, what in FILES:
        try:
            size = (directory / name).stat().st_size
        except OSError:  # not written yet (no game finished), or removed
            continue
        links.append(
            f'<li><a href="{escape(name)}" download>{escape(name)}</a>'
            f" ({escape(what)}, {escape(_size(size))})</li>"
        )
    listing = (
        f'<ul class="downloads">{"".join(links)}</ul>'
        if links
        else '<p class="note">No file yet: the first finished game writes them.</p>'
    )
    return "\n".join(
        [
            '<section aria-labelledby="files-heading">',
            '<h2 id="files-heading">Files</h2>',
            listing,
            "</section>",
        ]
    )


TERMINATIONS: dict[str, str] = {
    "normal": "ended by the rules",
    "time forfeit": "a bot ran out of time",
    "abandoned": "a bot crashed, exited or closed its output",
    "rules infraction": "a bot sent an illegal decision or broke the protocol",
    "adjudication": "no seat could start: adjudicated",
}
"""Each ``Termination`` a game can end by (docs/records.md), in the order the index
counts them, and what it means in words."""


def at_fault(game: GameRecord) -> tuple[int, ...]:
    """The seats that lost ``game`` by a fault: for a forfeit, the seats not in place 1
    (all seats when all share it: every seat was at fault, docs/records.md); for an
    adjudication, every seat (none could start); otherwise none."""
    if game.termination == "adjudication":
        return tuple(range(len(game.players)))
    if game.termination not in FORFEITS:
        return ()
    behind = tuple(seat for seat, place in enumerate(game.places) if place != 1)
    return behind or tuple(range(len(game.players)))


def _endings(games: Sequence[GameRecord]) -> str:
    """How many games ended by each termination, with the players at fault."""
    counts = Counter(game.termination for game in games)
    faults: dict[str, Counter[str]] = {}
    for game in games:
        for seat in at_fault(game):
            faults.setdefault(game.termination, Counter())[game.players[seat]] += 1
    order = [name for name in TERMINATIONS if name in counts]
    order += sorted(name for name in counts if name not in TERMINATIONS)
    rows = []
    for name in order:
        share = 100 * counts[name] / len(games)
        blamed = faults.get(name, Counter())
        who = ", ".join(
            f"{escape(player)} {count}"
            for player, count in sorted(blamed.items(), key=lambda item: (-item[1], item[0]))
        )
        rows.append(
            f'<tr data-termination="{escape(name)}"><th scope="row">{escape(name)}</th>'
            f"<td>{escape(TERMINATIONS.get(name, ''))}</td>"
            f'<td class="num">{counts[name]}</td><td class="num">{share:.1f}%</td>'
            f"<td>{who or '–'}</td></tr>"
        )
    body = (
        [
            '<div class="table-wrap"><table class="endings">',
            "<caption>Finished games by their Termination tag; at fault: the players"
            " who forfeited (and how often)</caption>",
            '<thead><tr><th scope="col">Termination</th><th scope="col">Meaning</th>'
            '<th scope="col" class="num">Games</th><th scope="col" class="num">%</th>'
            '<th scope="col">At fault</th></tr></thead>',
            "<tbody>",
            *rows,
            "</tbody></table></div>",
        ]
        if games
        else ['<p class="note">No game has finished yet.</p>']
    )
    return "\n".join(
        [
            '<section aria-labelledby="endings-heading">',
            '<h2 id="endings-heading">How the games ended</h2>',
            *body,
            "</section>",
        ]
    )


@dataclass(frozen=True, slots=True)
class _Openings:
    """The start of each game as the index names it, and the openings played.

    A game whose ``FEN`` is line N of the tournament's openings (as saved in its
    settings, compared with runs of spaces made one) started from opening N; one
    without a ``FEN`` from the initial position.
    """

    positions: tuple[str, ...]
    """The openings' positions, spaces normalised: opening N is ``positions[N - 1]``."""
    numbers: dict[str, int]
    """Each position and its number (the first, when the list holds it twice)."""
    played: dict[int, list[GameRecord]]
    """The games of each opening that was played, by its number."""

    @classmethod
    def of(
        cls, tournament: _Tournament, games: Sequence[GameRecord], facts: dict[int, _Facts]
    ) -> _Openings:
        positions = tuple(" ".join(opening.split()) for opening in tournament.openings)
        numbers: dict[str, int] = {}
        for number, position in enumerate(positions, start=1):
            numbers.setdefault(position, number)
        played: dict[int, list[GameRecord]] = {}
        openings = cls(positions, numbers, played)
        for game in games:
            started = openings.number(facts[game.index])
            if started is not None:
                played.setdefault(started, []).append(game)
        return openings

    def number(self, facts: _Facts) -> int | None:
        """The number of the opening a game started from, if it is one of the list."""
        if facts.start is None:
            return None
        return self.numbers.get(" ".join(facts.start.split()))

    def cell(self, facts: _Facts) -> str:
        """A game's start, for its row in the list of games."""
        if not facts.readable:
            return "–"
        if facts.start is None:
            return "initial position"
        number = self.number(facts)
        position = escape(clip(printable(facts.start)))
        if number is None:
            return f'<span class="position" title="{position}">set-up position</span>'
        return f'<a href="#opening-{number}" title="{position}">opening {number}</a>'

    def section(self) -> str:
        """The openings played: each one's position, its games and their results."""
        if not self.played:
            return ""
        rows = []
        for number in sorted(self.played):
            games = self.played[number]
            position = self.positions[number - 1]
            results = Counter(game.result for game in games)
            first_seat = {game.result: game.scores[0] for game in games}
            tally = " · ".join(
                f'<span class="tally">{escape(result)}: {results[result]}</span>'
                for result in sorted(results, key=lambda result: (-first_seat[result], result))
            )
            rows.append(
                f'<tr id="opening-{number}"><td class="num">{number}</td>'
                f'<td><code class="position">{escape(clip(printable(position)))}</code></td>'
                f'<td class="num">{len(games)}</td><td>{tally}</td></tr>'
            )
        return "\n".join(
            [
                '<section aria-labelledby="openings-heading">',
                '<h2 id="openings-heading">Openings</h2>',
                '<div class="table-wrap"><table class="openings">',
                "<caption>The start positions played, numbered as in the openings"
                " file (its position lines, comments left out)</caption>",
                '<thead><tr><th scope="col" class="num">#</th><th scope="col">Position</th>'
                '<th scope="col" class="num">Games</th><th scope="col">Results</th>'
                "</tr></thead>",
                "<tbody>",
                *rows,
                "</tbody></table></div>",
                "</section>",
            ]
        )


def _number(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


_METHOD_NOTES: dict[Method, str] = {
    "plackett-luce": (
        "Elo is the Plackett–Luce fit of each game's whole ranking (a tie counts as each"
        " order that breaks it, equally); μ, σ and μ−3σ are OpenSkill ratings, updated game"
        " by game (see the statistics documentation)."
    ),
    "pairwise": (
        "Elo is fitted to the pairwise results between seats, each weighted 1/(seats−1);"
        " μ, σ and μ−3σ are OpenSkill ratings, updated game by game (see the statistics"
        " documentation)."
    ),
}
"""How the standings of games at tables were rated, by method."""


def _standings(table: RatingTable) -> str:
    two_seat = table.kind == "two-seat"
    headings: list[tuple[str, str]] = [("#", "num"), ("Player", "")]
    if table.rated:
        headings += [("Elo", "num"), ("±", "num"), ("95% interval", "interval")]
    headings.append(("Games", "num"))
    if two_seat:
        headings += [("W", "num"), ("D", "num"), ("L", "num"), ("Score", "num"), ("%", "num")]
    else:
        headings += [("Mean score", "num")]
        if table.rated:
            headings += [("Mean place", "num"), ("%", "num")]
    if table.rated:
        headings.append(("LOS", "num"))
    skill = table.kind == "tables"
    if skill:
        headings += [("μ", "num"), ("σ", "num"), ("μ−3σ", "num")]
    scale = _Scale.of(table.players) if table.rated else None
    rows = []
    for row in table.players:
        cells = [(str(row.rank), "num"), (row.name, "player")]
        if table.rated:
            assert scale is not None
            sign = "" if table.anchor is not None else "+"
            cells += [
                ("–" if row.elo is None else f"{row.elo:{sign}.0f}", "num"),
                (_number(row.error, ".0f"), "num"),
            ]
        cells.append((str(row.games), "num"))
        if two_seat:
            cells += [
                (str(row.wins), "num"),
                (str(row.draws), "num"),
                (str(row.losses), "num"),
                (format_points(row.score), "num"),
                (f"{row.score_percent:.1f}", "num"),
            ]
        else:
            cells.append((_number(row.mean_score, ".2f"), "num"))
            if table.rated:
                cells += [
                    (_number(row.mean_place, ".2f"), "num"),
                    (f"{row.score_percent:.1f}", "num"),
                ]
        if table.rated:
            los = "" if row.los_next is None else f"{100 * row.los_next:.1f}%"
            cells.append((los, "num"))
        if skill:
            cells += [
                (_number(row.mu, ".1f"), "num"),
                (_number(row.sigma, ".1f"), "num"),
                (_number(row.ordinal, ".1f"), "num"),
            ]
        html_cells = [f'<td class="{kind}">{escape(text)}</td>' for text, kind in cells]
        if scale is not None:
            html_cells.insert(4, f'<td class="interval">{scale.bar(row)}</td>')
        rows.append("<tr>" + "".join(html_cells) + "</tr>")
    head = "".join(f'<th scope="col" class="{kind}">{escape(text)}</th>' for text, kind in headings)
    notes = []
    if table.anchor is not None:
        notes.append(f"Ratings anchored: {table.anchor} is fixed.")
    if table.virtual_draws:
        notes.append(
            "A perfect or zero score (or players who never met): each player has one virtual"
            " draw against the pool average."
        )
    if skill:
        notes.append(_METHOD_NOTES[table.method])
    caption = "Elo ± the half-width of its 95% interval" if table.rated else "Solo games: no Elo"
    return "\n".join(
        [
            '<section aria-labelledby="standings-heading">',
            '<h2 id="standings-heading">Standings</h2>',
            '<div class="table-wrap"><table class="standings">',
            f"<caption>{escape(caption)}</caption>",
            f"<thead><tr>{head}</tr></thead>",
            "<tbody>",
            *rows,
            "</tbody></table></div>",
            *(f'<p class="note">{escape(note)}</p>' for note in notes),
            "</section>",
        ]
    )


@dataclass(frozen=True, slots=True)
class _Scale:
    """The Elo range the error bars of the standings are drawn on."""

    low: float
    high: float

    @classmethod
    def of(cls, rows: Iterable[PlayerRating]) -> _Scale:
        ends = [
            end
            for row in rows
            if row.elo is not None and row.error is not None
            for end in (row.elo - row.error, row.elo + row.error)
        ]
        low, high = (min(ends), max(ends)) if ends else (-1.0, 1.0)
        return cls(low, high if high > low else low + 1)

    def x(self, elo: float) -> float:
        return 4 + 92 * (elo - self.low) / (self.high - self.low)

    def bar(self, row: PlayerRating) -> str:
        """The player's rating and its 95% interval drawn as a small SVG."""
        if row.elo is None or row.error is None:
            return ""
        low, high = row.elo - row.error, row.elo + row.error
        label = f"Elo {row.elo:.0f}, 95% interval {low:.0f} to {high:.0f}"
        return (
            f'<svg class="errorbar" viewBox="0 0 100 12" role="img" aria-label="{escape(label)}">'
            f'<line x1="{self.x(low):.1f}" x2="{self.x(high):.1f}" y1="6" y2="6"'
            ' stroke="#0b57d0" stroke-width="2"/>'
            f'<line x1="{self.x(low):.1f}" x2="{self.x(low):.1f}" y1="2" y2="10"'
            ' stroke="#0b57d0" stroke-width="2"/>'
            f'<line x1="{self.x(high):.1f}" x2="{self.x(high):.1f}" y1="2" y2="10"'
            ' stroke="#0b57d0" stroke-width="2"/>'
            f'<circle cx="{self.x(row.elo):.1f}" cy="6" r="3.5" fill="#1b1b1b"/></svg>'
        )


def _crosstable(table: RatingTable) -> str:
    players = table.players
    head = "".join(
        f'<th scope="col"><abbr title="{escape(row.name)}">{row.rank}</abbr></th>'
        for row in players
    )
    rows = []
    for row in players:
        cells = [
            '<td aria-label="same player">' + SAME_PLAYER + "</td>"
            if opponent.name == row.name
            else f"<td>{encounter_text(table, row.name, opponent.name)}</td>"
            for opponent in players
        ]
        rows.append(
            f'<tr><td class="num">{row.rank}</td>'
            f'<th scope="row" class="player">{escape(row.name)}</th>{"".join(cells)}'
            f'<td class="num">{format_points(row.score)}/{row.results}</td></tr>'
        )
    return "\n".join(
        [
            '<section aria-labelledby="crosstable-heading">',
            '<h2 id="crosstable-heading">Crosstable</h2>',
            '<div class="table-wrap"><table class="crosstable">',
            "<caption>Points of the row player against the column player, out of the"
            " results between them (columns are numbered by rank)</caption>",
            '<thead><tr><th scope="col" class="num">#</th>'
            f'<th scope="col" class="player">Player</th>{head}'
            '<th scope="col" class="num">Score</th></tr></thead>',
            "<tbody>",
            *rows,
            "</tbody></table></div>",
            "</section>",
        ]
    )


def _players_cell(tournament: _Tournament, game: GameRecord) -> str:
    return " – ".join(
        f"{escape(player)} ({escape(tournament.seat(seat))})"
        for seat, player in enumerate(game.players)
    )


def _game_link(game: GameRecord) -> str:
    number = game.index + 1
    return (
        f'<a href="{game_page_path(game.index)}" aria-label="Replay of game {number}">{number}</a>'
    )


def _game_list(
    tournament: _Tournament,
    games: Sequence[GameRecord],
    facts: dict[int, _Facts],
    openings: _Openings,
) -> str:
    rows = [
        "<tr>"
        f'<td class="num">{_game_link(game)}</td>'
        f'<td class="players">{_players_cell(tournament, game)}</td>'
        f'<td class="result">{escape(game.result)}</td>'
        f"<td>{escape(game.termination)}: {escape(clip(printable(game.reason)))}</td>"
        f'<td class="opening">{openings.cell(facts[game.index])}</td>'
        f'<td class="num">{game.plies}</td>'
        f'<td class="num duration">{format_duration(facts[game.index].duration_ms)}</td>'
        "</tr>"
        for game in games
    ]
    empty = [] if games else ['<p class="note">No game has finished yet.</p>']
    return "\n".join(
        [
            '<section aria-labelledby="games-heading">',
            '<h2 id="games-heading">Games</h2>',
            *empty,
            '<div class="table-wrap"><table class="games">',
            "<caption>Every finished game; its number opens its replay. Moves: the"
            " decisions recorded; duration: the time the seats took for them (the sum of"
            " the record's [%emt] times)</caption>",
            '<thead><tr><th scope="col" class="num">Game</th><th scope="col">Players</th>'
            '<th scope="col" class="result">Result</th><th scope="col">How it ended</th>'
            '<th scope="col">Opening</th><th scope="col" class="num">Moves</th>'
            '<th scope="col" class="num">Duration</th></tr></thead>',
            "<tbody>",
            *rows,
            "</tbody></table></div>",
            "</section>",
        ]
    )


def _outcome(game: GameRecord, seat: int) -> tuple[str, str]:
    """How ``seat`` did in ``game``, in words, and a class for its colour."""
    places = game.places
    if len(places) == 1:
        return f"score {format_points(game.scores[0])}", ""
    if len(places) == 2:
        mine, theirs = places[seat], places[1 - seat]
        if mine == theirs:
            return "draw", ""
        return ("win", "win") if mine < theirs else ("loss", "loss")
    return f"place {places[seat]} of {len(places)}", "win" if places[seat] == 1 else ""


def _player_games(tournament: _Tournament, table: RatingTable, games: Sequence[GameRecord]) -> str:
    parts = [
        '<section aria-labelledby="players-heading">',
        '<h2 id="players-heading">Each player\'s games</h2>',
    ]
    for row in table.players:
        mine = [
            (game, seat)
            for game in games
            for seat, player in enumerate(game.players)
            if player == row.name
        ]
        items = []
        for game, seat in mine:
            words, kind = _outcome(game, seat)
            others = ", ".join(
                escape(player) for other, player in enumerate(game.players) if other != seat
            )
            against = f" against {others}" if others else ""
            items.append(
                f"<li>Game {_game_link(game)} as {escape(tournament.seat(seat))}{against}:"
                f' <span class="{kind}">{escape(words)}</span> ({escape(game.result)},'
                f" {escape(clip(printable(game.reason)))})</li>"
            )
        listing = "<ol>" + "".join(items) + "</ol>" if items else "<p>No game yet.</p>"
        parts.append(
            f'<details class="player-games"><summary>{escape(row.name)}'
            f" ({len(mine)} game{'' if len(mine) == 1 else 's'})</summary>{listing}</details>"
        )
    parts.append("</section>")
    return "\n".join(parts)
