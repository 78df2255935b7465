"""A contest ladder: entrants join and update their bots while it runs (docs/ladder.md).

One idea per module: :mod:`~tournaments.ladder.settings` (the ladder file),
:mod:`~tournaments.ladder.entries` (the entries folder), :mod:`~tournaments.ladder.registry`
(entrants, versions and the log in ``ladder.sqlite``), :mod:`~tournaments.ladder.standings`
(OpenSkill ratings replayed from the stored games), :mod:`~tournaments.ladder.matchmaking`
(the next table), :mod:`~tournaments.ladder.ladder` (the coordinator),
:mod:`~tournaments.ladder.site` (the leaderboard pages), :mod:`~tournaments.ladder.board`
(the terminal's) and :mod:`~tournaments.ladder.final` (the final phase).
"""
