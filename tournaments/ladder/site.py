"""The ladder's site: ``index.html`` (the leaderboard, the log) and a page per entrant.

Rewritten from the standings as games end (at most every few seconds, and after each
change to the field), each file written whole (temporary file, rename). An entrant's page
``entrants/<name>.html`` lists its versions (state, games, μ, σ, μ − 3σ), draws each
version's ordinal over its games as an inline SVG chart, and links its recent games to
their replays (``games/NNNN.html``, the tournament's game pages). Every text from an
entry (a refusal's reason) is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tournaments.ladder.registry import State, Version
from tournaments.runner import write_atomically
from tournaments.site import game_page_path

if TYPE_CHECKING:
    from tournaments.ladder.ladder import LadderRun

ENTRANTS = "entrants"
CHART_WIDTH, CHART_HEIGHT = 640, 200

_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}"
    "table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;"
    "text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".refused{color:#a00}.log{font-family:monospace;font-size:.9em}"
)


def entrant_page_path(entrant: str) -> str:
    return f"{ENTRANTS}/{entrant}.html"


def _page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}'
        f'</title><meta name="viewport" content="width=device-width"><style>{_STYLE}</style>'
        f"</head><body>{body}</body></html>\n"
    )


def write_site(run: LadderRun) -> None:
    """Write the index and every entrant's page."""
    output = run.config.output
    versions = run.versions()
    retired = run.registry.retired()
    board = run.standings.leaderboard(versions, retired)
    event = run.config.template.event
    rows = "".join(
        f"<tr><td class=n>{row.rank}</td>"
        f'<td><a href="{entrant_page_path(row.entrant)}">{html.escape(row.entrant)}</a></td>'
        f"<td>{html.escape(row.player)}</td>"
        f"<td class=n>{row.skill.ordinal:.2f}</td><td class=n>{row.skill.mu:.2f}</td>"
        f"<td class=n>{row.skill.sigma:.2f}</td><td class=n>{row.games}</td>"
        f"<td class=n>{row.versions}</td>"
        f"<td>{html.escape(row.last.describe()) if row.last else '–'}</td></tr>"
        for row in board
    )
    frozen = run.registry.frozen()
    status = f"{run.standings.count} games; {len(board)} entrants ranked"
    if frozen is not None:
        status += f"; submissions frozen at {html.escape(frozen)}"
    final = output / "final" / "index.html"
    final_link = '<p><a href="final/index.html">The final phase</a></p>' if final.exists() else ""
    log = "".join(
        f"<li><span class=log>{html.escape(line.at)}</span> "
        f"<span{' class=refused' if ' refused: ' in line.line else ''}>"
        f"{html.escape(line.line)}</span></li>"
        for line in run.registry.log_lines()
    )
    body = (
        f"<h1>{html.escape(event)}</h1><p>{status} · "
        f'<a href="games.pgn">games.pgn</a></p>{final_link}'
        "<h2>Leaderboard</h2><table><tr><th>#</th><th>entrant</th><th>version</th>"
        "<th>μ − 3σ</th><th>μ</th><th>σ</th><th>games</th><th>versions</th>"
        f"<th>last result</th></tr>{rows}</table>"
        f"<h2>Log</h2><ul>{log}</ul>"
    )
    write_atomically(output / "index.html", _page(event, body))
    (output / ENTRANTS).mkdir(parents=True, exist_ok=True)
    by_entrant: dict[str, list[Version]] = {}
    for version in versions:
        by_entrant.setdefault(version.entrant, []).append(version)
    for entrant, own in by_entrant.items():
        write_atomically(
            output / entrant_page_path(entrant),
            _entrant_page(run, entrant, own, entrant in retired),
        )


def _entrant_page(run: LadderRun, entrant: str, versions: Sequence[Version], retired: bool) -> str:
    standings = run.standings
    rows = []
    for version in versions:
        skill = standings.skill(version.player)
        state = version.state.value + (f": {version.reason}" if version.reason else "")
        css = " class=refused" if version.state is State.REFUSED else ""
        rows.append(
            f"<tr><td>{html.escape(version.version)}</td><td{css}>{html.escape(state)}</td>"
            f"<td class=n>{standings.games.get(version.player, 0)}</td>"
            f"<td class=n>{skill.mu:.2f}</td><td class=n>{skill.sigma:.2f}</td>"
            f"<td class=n>{skill.ordinal:.2f}</td><td>{html.escape(version.seen_at)}</td></tr>"
        )
    games = sorted(
        (
            (played, version.player)
            for version in versions
            for played in standings.recent.get(version.player, ())
        ),
        key=lambda item: -item[0].number,
    )[:20]
    recent = "".join(
        f'<li><a href="../{game_page_path(played.number - 1)}">game {played.number}</a>: '
        f"{html.escape(player)} {html.escape(played.describe())}</li>"
        for played, player in games
    )
    note = "<p>Retired: not matched, not ranked.</p>" if retired else ""
    body = (
        f'<p><a href="../index.html">← leaderboard</a></p><h1>{html.escape(entrant)}</h1>{note}'
        "<h2>Versions</h2><table><tr><th>version</th><th>state</th><th>games</th><th>μ</th>"
        f"<th>σ</th><th>μ − 3σ</th><th>seen</th></tr>{''.join(rows)}</table>"
        f"<h2>Rating over time (μ − 3σ)</h2>{rating_chart(run, versions)}"
        f"<h2>Recent games</h2><ul>{recent}</ul>"
    )
    return _page(entrant, body)


def rating_chart(run: LadderRun, versions: Sequence[Version]) -> str:
    """An inline SVG: each version's ordinal after each of its games, by game number."""
    series = [(v.version, run.standings.history.get(v.player, [])) for v in versions]
    points = [p for _, history in series for p in history]
    if not points:
        return "<p>No games yet.</p>"
    low_x, high_x = min(p[0] for p in points), max(p[0] for p in points)
    low_y, high_y = min(p[1] for p in points), max(p[1] for p in points)
    span_x, span_y = max(1, high_x - low_x), max(1e-9, high_y - low_y)
    pad = 30

    def xy(point: tuple[int, float]) -> str:
        x = pad + (point[0] - low_x) / span_x * (CHART_WIDTH - 2 * pad)
        y = CHART_HEIGHT - pad - (point[1] - low_y) / span_y * (CHART_HEIGHT - 2 * pad)
        return f"{x:.1f},{y:.1f}"

    colours = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
    lines = "".join(
        f'<polyline fill="none" stroke="{colours[n % len(colours)]}" stroke-width="2" '
        f'points="{" ".join(xy(p) for p in history)}"><title>{html.escape(name)}</title></polyline>'
        for n, (name, history) in enumerate(series)
        if history
    )
    labels = (
        f'<text x="2" y="{pad}" font-size="11">{high_y:.1f}</text>'
        f'<text x="2" y="{CHART_HEIGHT - pad}" font-size="11">{low_y:.1f}</text>'
        f'<text x="{pad}" y="{CHART_HEIGHT - 8}" font-size="11">game {low_x}</text>'
        f'<text x="{CHART_WIDTH - pad - 60}" y="{CHART_HEIGHT - 8}" font-size="11">'
        f"game {high_x}</text>"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rating-chart" width="{CHART_WIDTH}" '
        f'height="{CHART_HEIGHT}" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}">{labels}{lines}</svg>'
    )
