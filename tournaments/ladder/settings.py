"""The settings of one ladder: a tournament file without players, plus the ladder's own keys.

A ladder file looks like this (docs/ladder.md)::

    event = "Spring ladder"
    game = "ivy"
    tc = "1+0.05"
    seats = 2                 # players per table (Verdant: 2 to 5; Ivy: 2)
    concurrency = 2           # games at once
    placement_games = 5       # games a new version plays before it is matched by rating
    scan_interval = 2         # seconds between two looks at the entries folder
    entries = "entries"       # the entries folder (default: beside this file)
    output = "spring"         # the ladder's folder (default: ./<file name without .toml>)
    seed = 123                # optional; sandbox, limits and [options] as in a tournament

Every key a tournament file takes except ``players``, ``format``, ``cycles``, ``games``,
``rounds``, ``tiebreaks``, ``players_per_table`` (here ``seats``), ``openings`` and
``cluster`` means what it means there, and is checked by the tournament's own rules
(:func:`tournaments.config.load_config`): the ladder's games are played with the match
settings of that template, and its final phase is a tournament made from it.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.match import MatchConfig
from referee.process import BotCommand
from tournaments.config import ConfigError, Entrant, TournamentConfig, load_config

LADDER_KEYS = ("seats", "placement_games", "scan_interval", "entries")
"""The ladder's own keys."""

SHARED_KEYS = (
    "event",
    "game",
    "tc",
    "startup",
    "margin",
    "concurrency",
    "seed",
    "output",
    "options",
    "sandbox",
    "memory",
    "processes",
    "file_size",
    "open_files",
    "affinity",
)
"""The tournament keys a ladder file takes, meaning what they mean there."""

DEFAULT_EVENT = "Ladder"
DEFAULT_PLACEMENT_GAMES = 5
DEFAULT_SCAN_INTERVAL = 2.0


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """A checked ladder file: the tournament ``template`` (placeholder players, the
    ladder's match settings), the seats of a table, the placement games, the seconds
    between scans of ``entries``, and the ladder's folder ``output``."""

    template: TournamentConfig
    seats: int
    placement_games: int
    scan_interval: float
    entries: Path

    @property
    def output(self) -> Path:
        return self.template.output

    def match_config(self) -> MatchConfig:
        """The settings every game is played with; no bot sees the ladder's folder."""
        return self.template.match_config()

    def to_json(self) -> str:
        """The settings that decide results (the results store keeps them): the
        template's, without its placeholder players."""
        return self.template.to_json()

    def tournament(
        self, commands: dict[str, BotCommand], output: Path, games: int
    ) -> TournamentConfig:
        """A round-robin of these players, ``games`` games per table, with this ladder's
        match settings (its final phase)."""
        players = tuple(Entrant(name, command) for name, command in commands.items())
        return dataclasses.replace(self.template, players=players, output=output, games=games)


def load_ladder(path: str | os.PathLike[str], **overrides: Any) -> LadderConfig:
    """The ladder described by the TOML file at ``path`` (``overrides`` on top: ``output``,
    ``concurrency``, ``sandbox``); :class:`ConfigError` with one line."""
    path = Path(path)
    source = os.fspath(path)
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ConfigError(f"cannot read {source}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML ({error})") from None
    for key in data:
        if key not in (*SHARED_KEYS, *LADDER_KEYS):
            known = ", ".join((*SHARED_KEYS, *LADDER_KEYS))
            raise ConfigError(f"{source}: unknown key {key!r} in a ladder file (known: {known})")
    base = path.parent
    shared = {key: data[key] for key in SHARED_KEYS if key in data}
    shared.setdefault("event", DEFAULT_EVENT)
    if isinstance(shared.get("output"), str) and shared["output"]:
        shared["output"] = base / shared["output"]
    shared.setdefault("output", Path(path.stem))
    shared.update({key: value for key, value in overrides.items() if value is not None})
    seats = data.get("seats", 2)
    placement = data.get("placement_games", DEFAULT_PLACEMENT_GAMES)
    interval = data.get("scan_interval", DEFAULT_SCAN_INTERVAL)
    entries = data.get("entries", "entries")
    for key, value, low in (("seats", seats, 2), ("placement_games", placement, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ConfigError(
                f"{source}: {key} must be a whole number of at least {low}, not {value!r}"
            )
    if (
        not isinstance(interval, int | float)
        or isinstance(interval, bool)
        or not math.isfinite(interval)
        or interval <= 0
    ):
        raise ConfigError(
            f"{source}: scan_interval must be a number of seconds above 0, not {interval!r}"
        )
    if not isinstance(entries, str) or not entries:
        raise ConfigError(f"{source}: entries must be a folder's path, not {entries!r}")
    placeholders = [Entrant(f"seat {n}", BotCommand(("true",))) for n in range(1, seats + 1)]
    try:
        template = load_config(None, players=placeholders, players_per_table=seats, **shared)
    except ConfigError as error:  # the tournament's rules, in the ladder's words
        message = str(error).replace("players_per_table", "seats")
        raise ConfigError(f"{source}: {message}") from None
    return LadderConfig(
        template=template,
        seats=seats,
        placement_games=placement,
        scan_interval=float(interval),
        entries=base / entries,
    )
