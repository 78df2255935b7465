"""``referee ladder list``: every entrant's versions, as registered and as waiting.

Read only: the registry and the results store are opened read-only (a running ladder
keeps writing them), and a version the entries folder holds that the ladder has not
seen yet is listed as ``waiting``.
"""

from __future__ import annotations

from collections.abc import Iterator

from tournaments.ladder.entries import scan
from tournaments.ladder.registry import REGISTRY, Registry, State
from tournaments.ladder.settings import LadderConfig
from tournaments.ladder.standings import Standings
from tournaments.store import DATABASE, ResultStore


def listing(config: LadderConfig) -> Iterator[str]:
    """One line per version: ``alice@v2 active 12 games μ 26.10 σ 3.20`` (``refused: why``,
    ``waiting``), with ``(matched)`` on the version each entrant plays with now."""
    output = config.output
    versions = []
    retired: frozenset[str] = frozenset()
    standings = Standings()
    if (output / REGISTRY).exists():
        registry, _ = Registry.open(output / REGISTRY, read_only=True)
        try:
            versions = registry.versions()
            retired = registry.retired()
        finally:
            registry.close()
    if (output / DATABASE).exists():
        with ResultStore.open(output / DATABASE, read_only=True) as store:
            standings = Standings.of(store.games(pgn=False))
    matched = {row.player for row in standings.leaderboard(versions, retired)}
    known = {v.player for v in versions}
    for version in versions:
        skill = standings.skill(version.player)
        state = version.state.value
        if version.state is State.REFUSED:
            state += f": {version.reason}"
        mark = " (matched)" if version.player in matched else ""
        mark += " (retired)" if version.entrant in retired else ""
        yield (
            f"{version.player} {state} {standings.games.get(version.player, 0)} games"
            f" μ {skill.mu:.2f} σ {skill.sigma:.2f}{mark}"
        )
    for submission in scan(config.entries).submissions:
        if submission.player not in known:
            yield f"{submission.player} waiting"
