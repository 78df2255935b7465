"""The settings of one tournament: read from a TOML file, overridden by keyword (the CLI's flags).

A tournament file looks like this::

    event = "Quick start"
    game = "ivy"                  # the default
    tc = "1+0.05"                 # TimeControl.parse: BASE+INC, BASE or SECS/turn
    clock = "wall"                # or "cpu": CPU time of the bot's whole tree (docs/security.md)
    startup = 10                  # seconds for each game's handshake (default 10)
    margin = 0.1                  # grace before a bot is out of time (default 0.1)
    players_per_table = 2         # seats per game (default: see below)
    format = "round-robin"        # or "gauntlet" (the first player against each other),
                                  # "swiss" or "knockout" (two seats only)
    cycles = 1                    # 2: double round-robin (round-robin only)
    games = 2                     # games per pairing (table) and cycle, or per knockout
                                  # match (default: see below)
    rounds = 5                    # Swiss only (default: the most, n - 1 or n for odd n)
    tiebreaks = 1                 # knockout only: pairs of tie-break games (default 1)
    concurrency = 2               # games at once (default: the number of CPUs)
    cluster = "tcp://10.0.0.1:8786"  # play on this Dask cluster instead (docs/cluster.md)
    openings = "openings.txt"     # start positions, one a line; each played in every seat
    seed = 5170389406611263270    # reproducible deals (default: a secret seed per game)
    output = "runs/quick"         # the output directory (default: ./<file name without .toml>)
    sandbox = "auto"              # "on", "off": see docs/security.md
    memory = "2G"                 # the default limits of every bot (see docs/security.md)
    processes = 128
    file_size = "64M"
    open_files = 512
    affinity = false              # true: each bot pinned to a CPU of its own

    [options]                     # the game's own options, checked by the game
    turn_limit = 120              # Ivy: the turn after which the game is a draw

    [[players]]
    name = "random"               # optional: default the command's name, made unique
    cmd = "python -m bots.random" # a command line, or an array of arguments
    dir = "."                     # optional working directory (the bot gets a private copy)
    env = { SEED = "1" }          # optional environment variables the bot gets
    memory = "512M"               # optional: this bot's own limits (also processes,
                                  # file_size, open_files; "unlimited" for none)
    network = true                # optional: this bot may use the network (default false)
    cpus = [1]                    # optional: pin this bot to these CPUs

    [[players]]
    cmd = "python -m bots.greedy"

    [[players]]
    name = "alice"                # a remote player: it connects to ``referee serve``
    remote = true                 # (no cmd; see docs/server.md)

    [server]                      # ``referee serve`` only: see referee.server.settings

A player may also be one string in :meth:`~referee.process.BotCommand.parse`'s
forms (``players = ["python -m bots.random", "name=g cmd='python -m bots.greedy'"]``).

``players_per_table`` is how many players each game seats. A game played by one
number of players only (Ivy: 2) needs none; for a game that seats a range
(Verdant: 1 to 5) it defaults to every player at one table when the game seats
that many, else to the most the game seats (``min(players, max_players)``): a
tournament of three Verdant bots plays 3-player games. With 1 (a solo game) each
player plays alone and is ranked by mean score, without Elo. In a round-robin or
gauntlet ``games`` is per table (with two seats, per pairing) and cycle: one game per
seat by default (times the openings), and a count given is rounded up to a multiple
of the seats unless it is 1 (:meth:`TournamentConfig.rounding` says so in one line), so
that each player sits each seat equally often (see :mod:`tournaments.pairings`); a
Swiss plays ``games`` games per pairing (default 1, 2 with openings); a knockout match
is 2 games by default (:mod:`tournaments.knockout`). A Swiss (:mod:`tournaments.swiss`)
and a knockout pair each round from the results before it, so their games are not listed in
advance: :meth:`TournamentConfig.bracket` gives them. Without ``seed`` every game of chance gets a
secret random seed of its own (recorded in its ``Seed`` tag once it is over): a seed
a bot could guess would tell it every card still to come. With ``seed``, each game's
seed is :func:`~referee.games.base.game_seed` of it, the game's index and the attempt
(a game played again gets a fresh deal: docs/records.md, "Attempts"), so a
tournament can be replayed deal for deal; keep such a seed private until the end, and
draw it at random (a finished game's ``Seed`` tag is public: from a guessable tournament
seed, every later game's seed could be computed).

``[options]`` holds the game's own options (Ivy: ``turn_limit``; Verdant:
``variant``), checked by the game (``check_options``); the CLI's ``--option
KEY=VALUE`` override them one by one. A game option written at the top level is
refused with a pointer to ``[options]``.

Relative paths written in the file (``openings``, ``output``, a player's
``dir``) are relative to the file's folder; paths given as overrides are
relative to the current directory. Bot commands run in the current directory
unless a ``dir`` is given. A ``dir`` may hold this file, the openings and the output
directory (``dir = "."`` beside the file, as above): sandboxed, the bot's private copy
of it leaves them out (docs/security.md).

Everything is checked before anything is run or saved (:class:`ConfigError`, one
line): files must be UTF-8; numbers whole or finite and in range; the player names
and the event PGN-safe (:func:`check_pgn_name`); the output directory not empty.

:meth:`TournamentConfig.to_json` is the snapshot the results store keeps to
make sure a resumed run is the same tournament: everything that changes
results, but not ``concurrency``, ``cluster`` or ``output``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.clock import DEFAULT_TIME_CONTROL, Allowances, TimeControl
from referee.errors import RefereeError
from referee.games import game_seed, get_game
from referee.games.base import Game, GameSettings
from referee.match import DEFAULT_GAME, MatchConfig, unique_names
from referee.process import BotCommand
from referee.sandbox import (
    LIMIT_KEYS,
    MODES,
    Limits,
    SandboxError,
    SandboxPolicy,
    check_cpus,
    parse_cpus,
    parse_limit,
)
from referee.server.settings import ServerError, ServerSettings
from tournaments.knockout import Knockout, knockout
from tournaments.pairings import Schedule, games_per_table, gauntlet, round_robin
from tournaments.swiss import Swiss, swiss

FORMATS = ("round-robin", "gauntlet", "swiss", "knockout")
"""The tournament formats."""

PAIRED_FORMATS = ("swiss", "knockout")
"""The formats whose rounds are paired from the results before them (two seats only)."""

DEFAULT_EVENT = "Tournament"
"""The PGN ``Event`` of a tournament that names none."""

KEYS = (
    "event",
    "game",
    "tc",
    "clock",
    "startup",
    "margin",
    "players_per_table",
    "format",
    "cycles",
    "games",
    "rounds",
    "tiebreaks",
    "concurrency",
    "cluster",
    "openings",
    "seed",
    "output",
    "players",
    "options",
    "sandbox",
    *LIMIT_KEYS,
    "affinity",
    "server",
)
"""The keys of a tournament file, and the keyword overrides :func:`load_config` takes."""

_MADE_INTO_OTHERS = (
    "tc",
    "clock",
    "startup",
    "margin",
    "openings",
    "sandbox",
    *LIMIT_KEYS,
    "affinity",
)
_AS_GIVEN = tuple(key for key in KEYS if key not in (*_MADE_INTO_OTHERS, "output", "players"))
"""The keys whose checked value is a :class:`TournamentConfig` field as it is (besides
``output`` and ``players``); the others make its time control, allowances, openings and
sandbox policy."""

OPTION_TYPES = (str, int, float, bool)
"""What a game option's value may be in a tournament file (the game checks the rest)."""

PLAYER_KEYS = ("name", "cmd", "dir", "env", *LIMIT_KEYS, "network", "cpus", "remote")
"""The keys of one ``[[players]]`` table (a remote one has only ``name`` and ``remote``)."""

_SANDBOX_KEYS = ("sandbox", *LIMIT_KEYS, "affinity")
"""The top-level keys that make the :class:`~referee.sandbox.SandboxPolicy`."""

MAX_NAME_LENGTH = 64
"""The longest player name, in characters."""

MAX_EVENT_LENGTH = 100
"""The longest event name, in characters."""

MAX_SEED = 2**63 - 1
"""Seeds are from ``-MAX_SEED`` to ``MAX_SEED``."""

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
"""Unicode categories no name may hold: controls, format marks (bidi overrides), surrogates,
private use, line and paragraph separators."""


class ConfigError(RefereeError, ValueError):
    """A tournament's settings are wrong: an unknown key, a missing player, a bad time control."""


def default_concurrency() -> int:
    """How many games to play at once by default: one per CPU."""
    return os.cpu_count() or 1


def check_pgn_name(label: str, text: str, max_length: int = MAX_NAME_LENGTH) -> None:
    """Refuse (:class:`ConfigError`) a name that a PGN tag, a log file name or a terminal
    could not carry exactly.

    A name is 1 to ``max_length`` characters with no space at either end, not ``?``
    (PGN's "unknown"), and holds no ``"`` or ``\\`` (which PGN readers disagree on
    escaping) and no control or invisible formatting characters (line breaks, escapes,
    bidi overrides).
    """
    if not text.strip():
        raise ConfigError(f"{label} is empty")
    if text != text.strip():
        raise ConfigError(f"{label} {text!r} starts or ends with a space")
    if len(text) > max_length:
        raise ConfigError(
            f"{label} {text[:20]!r}… is {len(text)} characters long, more than {max_length}"
        )
    if text == "?":
        raise ConfigError(f"{label} '?' means 'unknown' in PGN; choose another")
    for character in text:
        if character in '"\\' or unicodedata.category(character) in _UNSAFE_CATEGORIES:
            raise ConfigError(f"{label} {text!r} holds {character!r}, which PGN names may not")


@dataclass(frozen=True, slots=True)
class Entrant:
    """One player of a tournament: its unique name and how to start its bot, or ``None``
    for a remote player, whose bot connects to the match server (``referee serve``)."""

    name: str
    command: BotCommand | None

    @property
    def remote(self) -> bool:
        return self.command is None


@dataclass(frozen=True, slots=True, kw_only=True)
class TournamentConfig:
    """Everything a tournament needs, checked on construction (:class:`ConfigError`).

    ``openings`` holds the start positions themselves (``openings_file`` says
    where they came from); ``games`` ``None`` means the default number per
    pairing or table (see :mod:`tournaments.pairings`); ``players_per_table``
    ``None`` the game's default (the module docstring, :attr:`seats`); ``options``
    the game's options as given (text or TOML values), :attr:`rule_options` them
    checked and completed by the game.
    """

    players: tuple[Entrant, ...]
    output: Path
    event: str = DEFAULT_EVENT
    game: str = DEFAULT_GAME
    tc: TimeControl = field(default_factory=lambda: TimeControl.parse(DEFAULT_TIME_CONTROL))
    allowances: Allowances = field(default_factory=Allowances)
    options: Mapping[str, Any] = field(default_factory=dict)
    players_per_table: int | None = None
    format: str = "round-robin"
    cycles: int = 1
    games: int | None = None
    rounds: int | None = None
    tiebreaks: int | None = None
    concurrency: int = field(default_factory=default_concurrency)
    cluster: str | None = None
    """The Dask scheduler whose workers play the games (docs/cluster.md); ``None``: worker
    processes on this machine."""
    openings: tuple[str, ...] = ()
    openings_file: Path | None = None
    seed: int | None = None
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    server: ServerSettings | None = None
    """The ``[server]`` table (``referee serve``), ``None`` when the file has none."""

    def __post_init__(self) -> None:
        if not self.players:
            raise ConfigError("a tournament needs players: give at least one")
        names = [player.name for player in self.players]
        for name in names:
            check_pgn_name("player name", name)
            if names.count(name) > 1:
                raise ConfigError(f"player name {name!r} is given more than once")
        check_pgn_name("event", self.event, MAX_EVENT_LENGTH)
        if not os.fspath(self.output):
            raise ConfigError("the output directory is empty")
        if self.format not in FORMATS:
            raise ConfigError(f"unknown format {self.format!r} (known: {', '.join(FORMATS)})")
        if self.cycles < 1:
            raise ConfigError(f"cycles must be at least 1, not {self.cycles}")
        if self.format != "round-robin" and self.cycles != 1:
            raise ConfigError(f"cycles apply to a round-robin, not to a {self.format}")
        if self.format != "swiss" and self.rounds is not None:
            raise ConfigError(f"rounds apply to a swiss, not to a {self.format}")
        if self.format != "knockout" and self.tiebreaks is not None:
            raise ConfigError(f"tiebreaks apply to a knockout, not to a {self.format}")
        if self.games is not None and self.games < 1:
            raise ConfigError(f"games per pairing must be at least 1, not {self.games}")
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, not {self.concurrency}")
        if self.cluster is not None and self.cluster.split() != [self.cluster]:
            raise ConfigError(
                "cluster must be a Dask scheduler address such as tcp://host:8786,"
                f" not {self.cluster!r}"
            )
        if self.seed is not None and not -MAX_SEED <= self.seed <= MAX_SEED:
            raise ConfigError(f"seed must be from {-MAX_SEED} to {MAX_SEED}, not {self.seed}")
        self._check_game()
        try:
            if self.bracket() is None:
                self.schedule()
        except RefereeError as error:
            raise ConfigError(str(error)) from None

    def _check_game(self) -> None:
        """Refuse an unknown game, a table it cannot seat, options it does not take, and
        openings it cannot start from."""
        try:
            game = get_game(self.game)
        except RefereeError as error:
            raise ConfigError(str(error)) from None
        seats = self.seats
        low, high = game.min_players, game.max_players
        if not low <= seats <= high:
            seated = f"{low}" if low == high else f"{low} to {high}"
            raise ConfigError(
                f"players_per_table must be {seated} for {game.name}"
                f" (the players it seats), not {seats}"
            )
        if len(self.players) < 2 and seats != 1:
            raise ConfigError(f"a tournament needs at least 2 players, not {len(self.players)}")
        if seats > len(self.players):
            raise ConfigError(
                f"tables of {seats} need at least {seats} players, not {len(self.players)}"
            )
        if self.format in PAIRED_FORMATS and seats != 2:
            raise ConfigError(f"a {self.format} is for games of two seats, not {seats}")
        try:
            options = self.rule_options
            game.start(GameSettings(players=seats, options=options))
        except RefereeError as error:
            raise ConfigError(str(error)) from None
        check_openings(game, seats, options, self.openings, self.openings_file)

    # --- what the runner needs ---------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        """The players' names, in the order given (the schedule numbers them so)."""
        return tuple(player.name for player in self.players)

    @property
    def commands(self) -> dict[str, BotCommand]:
        """How to start each local player's bot, by name (remote players are left out)."""
        return {p.name: p.command for p in self.players if p.command is not None}

    @property
    def remote_names(self) -> tuple[str, ...]:
        """The remote players' names (``remote = true``), in the order given."""
        return tuple(player.name for player in self.players if player.remote)

    def check_local(self) -> None:
        """Refuse (:class:`ConfigError`) remote players: only the match server plays them."""
        if self.remote_names:
            listed = ", ".join(self.remote_names)
            raise ConfigError(
                f"remote players ({listed}) connect over the network:"
                " play this tournament with `referee serve`"
            )

    @property
    def seats(self) -> int:
        """The players of each game: ``players_per_table``, or the game's default (the
        module docstring): its only number, else every player when they fit at one table,
        else the most it seats."""
        if self.players_per_table is not None:
            return self.players_per_table
        game = get_game(self.game)
        if game.min_players == game.max_players:
            return game.min_players
        return max(game.min_players, min(len(self.players), game.max_players))

    @property
    def rule_options(self) -> dict[str, Any]:
        """The game's options, checked and completed with its defaults (``check_options``)."""
        return get_game(self.game).check_options(self.options)

    def game_seed(self, index: int, attempt: int = 1) -> int:
        """The seed for attempt ``attempt`` at game ``index``:
        :func:`~referee.games.base.game_seed` of the tournament's ``seed``, or, without one,
        a new secret seed at every call."""
        return game_seed(self.seed, index, attempt)

    def schedule(self) -> Schedule:
        """Every game of a round-robin or gauntlet, in index order (the same on every run),
        made lazily. A Swiss or knockout has none: see :meth:`bracket`."""
        if self.format in PAIRED_FORMATS:
            raise ConfigError(f"a {self.format} has no fixed schedule: its rounds follow results")
        openings = list(self.openings) or None
        if self.format == "gauntlet":
            return gauntlet(self.names, seats=self.seats, games=self.games, openings=openings)
        return round_robin(
            self.names, seats=self.seats, cycles=self.cycles, games=self.games, openings=openings
        )

    @property
    def table_games(self) -> int | None:
        """``games`` as a round-robin or gauntlet plays it, rounded up to whole rotations
        of the seats (:func:`~tournaments.pairings.games_per_table`); ``None``: the default,
        or a Swiss or knockout, which play ``games`` as given."""
        if self.games is None or self.format in PAIRED_FORMATS:
            return self.games
        return games_per_table(self.games, None, self.seats)

    def rounding(self) -> str | None:
        """The warning line for a ``games`` count rounded up to whole rotations of the
        seats, or ``None`` when it is played as given."""
        if self.table_games == self.games:
            return None
        unit = "pairing" if self.seats == 2 else "table"
        return (
            f"{self.games} games per {unit} rounded up to {self.table_games}, a multiple of"
            f" the {self.seats} seats, so that each player sits each seat equally often"
        )

    def bracket(self) -> Swiss | Knockout | None:
        """The Swiss or knockout whose rounds are paired from the stored results (game numbers
        fixed in advance, :attr:`~tournaments.swiss.Swiss.length` of them at most), or
        ``None`` for a format with a fixed :meth:`schedule`."""
        openings = list(self.openings) or None
        if self.format == "swiss":
            most = len(self.players) - 1 + len(self.players) % 2
            rounds = most if self.rounds is None else self.rounds
            return swiss(self.names, rounds=rounds, games=self.games, openings=openings)
        if self.format == "knockout":
            return knockout(
                self.names,
                games=2 if self.games is None else self.games,
                tiebreaks=1 if self.tiebreaks is None else self.tiebreaks,
                openings=openings,
            )
        return None

    def match_config(self) -> MatchConfig:
        """The settings every game of the tournament is played with."""
        return MatchConfig(
            game=self.game,
            control=self.tc,
            allowances=self.allowances,
            options=self.rule_options,
            event=self.event,
            sandbox=self.sandbox.hiding(self.output),  # no bot sees the results
        )

    def to_json(self) -> str:
        """The settings that decide results, as canonical JSON (sorted keys, no spaces).

        Concurrency, the cluster and the output directory are left out: a tournament may
        be resumed with more or fewer games at once, on a cluster or not, or from a moved
        directory. The
        options are those given, as the game checked them (a default left unsaid
        stays unsaid), and ``players_per_table`` is there only for a game that seats
        more than one number of players: the snapshot of a two-seat Ivy tournament
        is the one earlier versions saved.
        """
        checked = self.rule_options
        snapshot: dict[str, Any] = {
            "event": self.event,
            "game": self.game,
            "time_control": {
                "tc": str(self.tc),
                "startup": self.allowances.startup,
                "margin": self.allowances.margin,
            },
            "options": {key: checked[key] for key in self.options if key in checked},
            "format": self.format,
            "cycles": self.cycles,
            "games": self.table_games,  # --games 3 resumes a tournament started with 4
            "openings": list(self.openings),
            "seed": self.seed,
            "players": [
                {"name": player.name, "remote": True}
                if player.command is None
                else {
                    "name": player.name,
                    "argv": list(player.command.argv),
                    "dir": player.command.cwd,
                    "env": dict(player.command.env),
                }
                for player in self.players
            ],
        }
        game = get_game(self.game)
        if game.min_players != game.max_players:
            snapshot["players_per_table"] = self.seats
        bracket = self.bracket()
        if isinstance(bracket, Swiss):
            snapshot["rounds"] = bracket.rounds
        elif isinstance(bracket, Knockout):
            snapshot["tiebreaks"] = bracket.tiebreaks
        return json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- reading settings --------------------------------------------------------------


def load_config(path: str | os.PathLike[str] | None = None, **overrides: Any) -> TournamentConfig:
    """The tournament described by the TOML file at ``path``, with ``overrides`` on top.

    ``overrides`` take the file's keys (:data:`KEYS`); a ``None`` value means
    "not given" (so a CLI can pass every flag). ``players`` is a list of
    command strings (:meth:`BotCommand.parse` forms) or of :class:`Entrant`
    and replaces the file's players; ``options`` maps game options to values
    (text, as ``--option KEY=VALUE`` gives them, or typed) and overrides the
    file's ``[options]`` one by one. Without a file, ``output`` defaults to
    ``./tournament``. Raises :class:`ConfigError` with a one-line message.
    """
    unknown = sorted(set(overrides) - set(KEYS))
    if unknown:
        raise TypeError(f"unknown tournament settings: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    if path is not None:
        values = _read_file(Path(path))
    for key, value in overrides.items():
        if value is None:
            continue
        if key == "players":
            values[key] = _entrants(value, base=None, source=None)
        elif key == "server":
            values[key] = _server(value, None, None)
        elif key == "options":
            values[key] = {**values.get(key, {}), **_options(value, None)}
        elif key in _SANDBOX_KEYS:
            values[key] = _sandbox_setting(key, value, None)
        else:
            values[key] = _checked(key, value, None)
            if key in ("openings", "output"):
                values[key] = Path(value)
    if "output" not in values:
        values["output"] = Path(Path(path).stem if path is not None else "tournament")
    return _build(values)


def _read_file(path: Path) -> dict[str, Any]:
    """A tournament file's settings, checked for unknown keys and types, paths resolved."""
    source = os.fspath(path)
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ConfigError(f"cannot read {source}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{source}: not UTF-8 text ({_decode_problem(error)})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML ({error})") from None
    _refuse_unknown(data, KEYS, source, game=data.get("game", DEFAULT_GAME))
    base = path.parent
    values = dict(data)
    for key, value in data.items():
        if key == "players":
            values[key] = _entrants(value, base=base, source=source)
        elif key == "server":
            values[key] = _server(value, base, source)
        elif key == "options":
            values[key] = _options(value, source)
        elif key in _SANDBOX_KEYS:
            values[key] = _sandbox_setting(key, value, source)
        else:
            values[key] = _checked(key, value, source)
            if key in ("openings", "output"):
                values[key] = base / value
    return values


def _build(values: Mapping[str, Any]) -> TournamentConfig:
    """The config from merged settings (types already checked)."""
    if "players" not in values:
        raise ConfigError("no players: give at least two (one for a solo game)")
    try:
        tc = TimeControl.parse(
            str(values.get("tc", DEFAULT_TIME_CONTROL)), clock=values.get("clock", "wall")
        )
        allowances = Allowances(
            **{key: float(values[key]) for key in ("startup", "margin") if key in values}
        )
    except RefereeError as error:
        raise ConfigError(str(error)) from None
    openings_file = values.get("openings")
    if tc.clock == "cpu" and any(player.remote for player in values["players"]):
        raise ConfigError(
            'clock = "cpu" cannot time remote players (their CPU is their own machine\'s):'
            " use the wall clock"
        )
    settings: dict[str, Any] = {
        "players": values["players"],
        "output": values["output"],
        "tc": tc,
        "allowances": allowances,
        "openings": read_openings(openings_file) if openings_file is not None else (),
        "openings_file": openings_file,
    }
    for key in _AS_GIVEN:
        if key in values:
            settings[key] = values[key]
    settings["sandbox"] = SandboxPolicy(
        mode=values.get("sandbox", "auto"),
        limits=Limits().merged({key: values[key] for key in LIMIT_KEYS if key in values}),
        affinity=values.get("affinity", False),
    )
    return TournamentConfig(**settings)


def _sandbox_setting(key: str, value: Any, source: str | None) -> Any:
    """A sandbox setting (:data:`_SANDBOX_KEYS`) as its policy needs it, else a
    :class:`ConfigError`."""
    where = f"{source}: " if source is not None else ""
    try:
        if key == "sandbox":
            if value not in MODES:
                raise SandboxError(f"must be one of {', '.join(MODES)}, not {value!r}")
            return value
        if key == "affinity":
            if not isinstance(value, bool):
                raise SandboxError(f"must be true or false, not {value!r}")
            return value
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise SandboxError(f'must be a number or a string such as "512M", not {value!r}')
        return parse_limit(key, value)
    except SandboxError as error:
        message = str(error)
        if message.startswith("must"):
            message = f"{key} {message}"
        raise ConfigError(f"{where}{message}") from None


_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    **{
        key: ((str,), "a string")
        for key in ("event", "game", "format", "openings", "output", "cluster", "clock")
    },
    **{
        key: ((int,), "a whole number")
        for key in (
            "players_per_table",
            "cycles",
            "games",
            "rounds",
            "tiebreaks",
            "concurrency",
            "seed",
        )
    },
    **{key: ((int, float), "a number of seconds") for key in ("startup", "margin")},
    "tc": ((str, int, float), 'a time control such as "10+0.1"'),
}
"""What each scalar setting must be, and how to say so."""


def _checked(key: str, value: Any, source: str | None) -> Any:
    """``value`` when it has the type ``key`` needs, else a :class:`ConfigError`.

    Paths must not be empty (``--output ""`` would mean the current directory).
    Ranges are checked where the value is used (:class:`TournamentConfig`,
    :class:`TimeControl`, :class:`Allowances`), so a file and the flags are held to the
    same rules.
    """
    kinds, wanted = _KINDS[key]
    where = f"{source}: " if source is not None else ""
    if key in ("openings", "output") and isinstance(value, str | os.PathLike):
        if not os.fspath(value):
            raise ConfigError(f"{where}{key} must be a path, not an empty string")
        return value
    if isinstance(value, kinds) and not isinstance(value, bool):
        return value
    raise ConfigError(f"{where}{key} must be {wanted}, not {value!r}")


def _refuse_unknown(
    data: Mapping[str, Any], known: Sequence[str], source: str | None, *, game: Any = None
) -> None:
    """Raise :class:`ConfigError` naming the first key of ``data`` not in ``known``.

    With ``game`` (the file's ``game`` setting, ``None`` for the default), a key
    that is one of that game's options is pointed to the ``[options]`` table.
    """
    where = f"{source}: " if source is not None else ""
    for key in data:
        if key in known:
            continue
        if game is not None:
            name = game if isinstance(game, str) else DEFAULT_GAME
            if _is_option(name, key):
                raise ConfigError(
                    f"{where}{key!r} is an option of the game {name}: write it under [options]"
                )
        raise ConfigError(f"{where}unknown key {key!r} (known: {', '.join(known)})")


def _is_option(game: str, key: str) -> bool:
    """Whether the game called ``game`` has the option ``key`` (one its defaults name)."""
    try:
        return key in get_game(game).check_options({})
    except RefereeError:
        return False


def _options(options: Any, source: str | None) -> dict[str, Any]:
    """The ``[options]`` table (or the overrides' mapping), its values checked to be
    scalars; what they mean is the game's to check."""
    where = f"{source}: " if source is not None else ""
    if not isinstance(options, Mapping):
        raise ConfigError(f"{where}options must be a table of the game's options, not {options!r}")
    for key, value in options.items():
        if not isinstance(key, str) or not isinstance(value, OPTION_TYPES):
            raise ConfigError(
                f"{where}option {key!r} must be a string, a number or true/false, not {value!r}"
            )
    return dict(options)


def _server(value: Any, base: Path | None, source: str | None) -> ServerSettings:
    """The ``[server]`` table (or a :class:`ServerSettings` given as an override)."""
    if isinstance(value, ServerSettings):
        return value
    try:
        return ServerSettings.from_table(value, base, source)
    except ServerError as error:
        raise ConfigError(str(error)) from None


def _entrants(players: Any, *, base: Path | None, source: str | None) -> tuple[Entrant, ...]:
    """The players of a file (``base`` its folder) or of overrides, named uniquely.

    A remote player (``remote = true``) keeps the name it is given; the others' names
    are made unique around them."""
    where = f"{source}: " if source is not None else ""
    if not isinstance(players, list | tuple):
        raise ConfigError(f"{where}players must be a list of players, not {players!r}")
    commands: list[BotCommand | str] = []
    for number, player in enumerate(players, start=1):
        try:
            remote = _remote_name(player)
            command = _command(player, base) if remote is None else remote
        except RefereeError as error:
            raise ConfigError(f"{where}player {number}: {error}") from None
        commands.append(command)
    explicit = [c if isinstance(c, str) else c.name for c in commands]
    for name in explicit:
        if name and explicit.count(name) > 1:
            raise ConfigError(f"{where}player name {name!r} is given more than once")
    local = [command for command in commands if not isinstance(command, str)]
    names = iter(unique_names(local))
    return tuple(
        Entrant(command, None) if isinstance(command, str) else Entrant(next(names), command)
        for command in commands
    )


def _remote_name(player: Any) -> str | None:
    """The name of a remote player (``{name = "…", remote = true}`` or an :class:`Entrant`
    without a command), ``None`` for a player with a command."""
    if isinstance(player, Entrant):
        return player.name if player.command is None else None
    if not isinstance(player, dict) or "remote" not in player:
        return None
    remote = player["remote"]
    if not isinstance(remote, bool):
        raise ConfigError(f"remote must be true or false, not {remote!r}")
    if not remote:
        return None
    other = [key for key in player if key not in ("name", "remote")]
    if other:
        raise ConfigError(f"a remote player has only a name, not {other[0]}")
    name = player.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"a remote player needs a name, a non-empty string, not {name!r}")
    return name


def _command(player: Any, base: Path | None) -> BotCommand:
    """One player's :class:`BotCommand`, from a string, a table or an :class:`Entrant`."""
    if isinstance(player, Entrant):
        assert player.command is not None, "a remote player is taken by _remote_name"
        return dataclasses.replace(player.command, name=player.name)
    if isinstance(player, BotCommand):
        return player
    if isinstance(player, str):
        command = BotCommand.parse(player)
    elif isinstance(player, dict):
        _refuse_unknown(player, PLAYER_KEYS, None)
        command = _command_from_table(player)
    else:
        raise ConfigError(f"expected a command string or a table, not {player!r}")
    if base is not None and command.cwd is not None and not Path(command.cwd).is_absolute():
        command = dataclasses.replace(command, cwd=os.fspath(base / command.cwd))
    return command


def player_command(table: Any, base: Path | None) -> BotCommand:
    """One player as a ``[[players]]`` table (or a command string) gives it, a relative
    ``dir`` taken from ``base``; :class:`ConfigError` with one line (a ladder's entries
    are read with it: :mod:`tournaments.ladder.entries`)."""
    try:
        return _command(table, base)
    except ConfigError:
        raise
    except RefereeError as error:
        raise ConfigError(str(error)) from None


def _command_from_table(table: Mapping[str, Any]) -> BotCommand:
    """A ``[[players]]`` table as a :class:`BotCommand`."""
    if "cmd" not in table:
        raise ConfigError("cmd is missing (or remote = true for a remote player)")
    cmd = table["cmd"]
    if isinstance(cmd, str):
        argv = BotCommand.parse(cmd).argv
    elif isinstance(cmd, list) and cmd and all(isinstance(arg, str) for arg in cmd):
        argv = tuple(cmd)
    else:
        raise ConfigError(f"cmd must be a command line or a list of arguments, not {cmd!r}")
    name = table.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ConfigError(f"name must be a non-empty string, not {name!r}")
    directory = table.get("dir")
    if directory is not None and not isinstance(directory, str):
        raise ConfigError(f"dir must be a string, not {directory!r}")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in env.items()
    ):
        raise ConfigError(f"env must be a table of strings, not {env!r}")
    limits = {key: _sandbox_setting(key, table[key], None) for key in LIMIT_KEYS if key in table}
    network = table.get("network", False)
    if not isinstance(network, bool):
        raise ConfigError(f"network must be true or false, not {network!r}")
    cpus = table.get("cpus")
    if cpus is not None:
        try:
            cpus = parse_cpus(cpus)
            check_cpus(cpus)
        except SandboxError as error:
            raise ConfigError(f"cpus: {error}") from None
    return BotCommand(
        argv=argv, name=name, cwd=directory, env=env, limits=limits, network=network, cpus=cpus
    )


MAX_OPENINGS_BYTES = 16 << 20
"""The largest openings file read (a hundred thousand positions and more)."""


def read_openings(path: Path) -> tuple[str, ...]:
    """The start positions in an openings file: one a line; blank and ``#`` lines skipped
    (a tournament's ``openings``, ``referee match --openings``)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_OPENINGS_BYTES + 1)
        if len(data) > MAX_OPENINGS_BYTES:
            raise ConfigError(
                f"openings file {os.fspath(path)} is larger than {MAX_OPENINGS_BYTES >> 20} MiB"
            )
        text = data.decode("utf-8")
    except OSError as error:
        raise ConfigError(
            f"cannot read openings file {os.fspath(path)}: {error.strerror or error}"
        ) from None
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"openings file {os.fspath(path)} is not UTF-8 text ({_decode_problem(error)})"
        ) from None
    openings = tuple(
        stripped
        for line in text.splitlines()
        if (stripped := line.strip()) and not stripped.startswith("#")
    )
    if not openings:
        raise ConfigError(f"openings file {os.fspath(path)} holds no positions")
    return openings


def check_openings(
    game: Game, seats: int, options: Mapping[str, Any], openings: Sequence[str], path: Path | None
) -> None:
    """Refuse an opening that ``game`` cannot start from with ``seats`` and ``options``,
    naming it by its number (and the file ``path`` it came from)."""
    where = f"{os.fspath(path)}: " if path is not None else ""
    for number, opening in enumerate(openings, start=1):
        try:
            game.start(GameSettings(players=seats, start=opening, options=options))
        except RefereeError as error:
            raise ConfigError(f"{where}opening {number}: {error}") from None


def _decode_problem(error: UnicodeDecodeError) -> str:
    """Where a file stops being UTF-8: ``byte 0xff at offset 12``."""
    return f"byte 0x{error.object[error.start]:02x} at offset {error.start}"
