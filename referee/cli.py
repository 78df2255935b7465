"""The ``referee`` command.

Commands only parse their arguments and call library functions; whatever they
do can be done from Python. Any :class:`~referee.errors.RefereeError` (or
``OSError``, or SQLite error) a command lets through, alone or inside an
exception group, becomes one line ``Error: …`` on stderr and exit code 1; Ctrl-C
at any moment becomes one line and exit code 130 — :class:`RefereeGroup` does
that for every command of the group.

Exit codes: 0 success; 1 an error, or (``replay``) an invalid game; 2 a usage
error (click's); 130 stopped by Ctrl-C (SIGINT); 143 a tournament stopped by SIGTERM.
"""

from __future__ import annotations

import dataclasses
import functools
import signal
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import trio

from referee import __version__
from referee.clock import TimeControl
from referee.errors import RecordError, RefereeError
from referee.games.ivy.position import Position
from referee.games.ivy.render import render
from referee.match import BotPlayer, GameResult, MatchConfig, MatchScore, run_match, unique_names
from referee.pgn import iter_pgn_file, read_game
from referee.play import play_against
from referee.preflight import preflight
from referee.process import BotCommand
from referee.replay import GameCheck, check_games
from referee.replay import replay as replay_record
from referee.sandbox import (
    DEFAULT_FILE_SIZE,
    DEFAULT_MEMORY,
    DEFAULT_OPEN_FILES,
    DEFAULT_PROCESSES,
    MODES,
    Limits,
    SandboxError,
    SandboxPolicy,
    parse_count,
    parse_size,
    sandbox_warning,
)
from referee.untrusted import for_terminal, printable

INTERRUPTED = 128 + signal.SIGINT
"""The exit code after Ctrl-C, as shells report a process that SIGINT ended."""

_REPORTED = (RefereeError, OSError, sqlite3.Error)
"""What a command may fail with and be reported as one ``Error:`` line."""


class RefereeGroup(click.Group):
    """A click group whose commands report referee errors as one ``Error:`` line and
    Ctrl-C as one line with exit code 130, whatever nursery they come out of."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise
        except KeyboardInterrupt:
            _interrupted()
        except _REPORTED as error:
            raise click.ClickException(_one_line(error)) from None
        except BaseExceptionGroup as group:
            if _was_interrupted(group):
                _interrupted()
            reported, others = group.split(_REPORTED)
            if reported is None or others is not None:
                raise  # a bug: its traceback is what a report needs
            raise click.ClickException(_one_line(_first_leaf(reported))) from None


def _was_interrupted(error: BaseException) -> bool:
    """Whether ``error`` is Ctrl-C's ``KeyboardInterrupt``, alone or in an exception group."""
    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(KeyboardInterrupt) is not None
    return isinstance(error, KeyboardInterrupt)


def _interrupted(line: str = "Interrupted") -> NoReturn:
    """Leave as Ctrl-C does: one line on stderr, exit code 130."""
    click.echo(line, err=True)
    sys.exit(INTERRUPTED)


T = TypeVar("T")


def _run(async_fn: Callable[[], Awaitable[T]]) -> T:
    """``trio.run``, with Ctrl-C raised only in the main task at a checkpoint.

    By default trio raises ``KeyboardInterrupt`` at whatever line runs when SIGINT
    comes; raised inside a weakref callback it is swallowed (Ctrl-C is lost), and raised
    inside trio's spawning of a task it leaves a coroutine never awaited, reported on
    stderr. The main task of every command waits at checkpoints, so Ctrl-C still ends it
    at once.
    """
    return trio.run(async_fn, restrict_keyboard_interrupt_to_checkpoints=True)


def _one_line(error: BaseException) -> str:
    """An error's message on one line."""
    return " ".join(str(error).split()) or type(error).__name__


def _first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


@click.group(cls=RefereeGroup)
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """Referee for bot programming contests: game records, matches, tournaments."""


# --- game records ----------------------------------------------------------------


@main.command()
@click.argument("pgn_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--final-position",
    is_flag=True,
    help="Print only, one line per game, the position after its last turn, or "
    "'ILLEGAL <turn> <reason>' for the first turn that breaks a rule "
    "('ILLEGAL 0 <reason>' when the game cannot be read or set up).",
)
@click.pass_context
def replay(ctx: click.Context, pgn_file: Path, final_position: bool) -> None:
    """Check every game of PGN_FILE against the rules.

    Prints one line per game: its number, White vs Black, the recorded result,
    the number of turns, and 'valid' or 'INVALID: reason'. Reasons for invalid
    games also go to stderr. A broken game does not stop the others being
    checked. Exits 0 when every game is valid, 1 otherwise, in both modes.
    """
    games = invalid = 0
    for check in check_games(iter_pgn_file(pgn_file)):  # one game in memory at a time
        games += 1
        line = _final_position_line(check) if final_position else _summary_line(check)
        click.echo(printable(line))
        if not check.valid:
            invalid += 1
            click.echo(printable(f"game {check.number}: {check.reason}"), err=True)
    if not games:
        raise RecordError(f"{pgn_file} holds no games")
    ctx.exit(1 if invalid else 0)


def _summary_line(check: GameCheck) -> str:
    """``game 2: alice vs bob, 1-0, 17 turns, valid`` or ``… INVALID: reason``."""
    verdict = "valid" if check.valid else f"INVALID: {check.reason}"
    if check.record is None:
        return f"game {check.number}: {verdict}"
    record = check.record
    players = f"{record.tags['White']} vs {record.tags['Black']}"
    turns = f"{len(record.turns)} turn{'' if len(record.turns) == 1 else 's'}"
    return f"game {check.number}: {players}, {record.result}, {turns}, {verdict}"


def _final_position_line(check: GameCheck) -> str:
    """The position after the game's last turn, or ``ILLEGAL <turn> <reason>``."""
    report = check.report
    if report is None:
        return f"ILLEGAL 0 {check.reason}"
    if report.first_illegal is not None:
        return f"ILLEGAL {report.first_illegal.turn} {report.first_illegal.reason}"
    return report.final_notation


@main.command()
@click.argument("source", metavar="POSITION_OR_PGN")
@click.option(
    "--game",
    "game_number",
    type=click.IntRange(min=1),
    metavar="K",
    help="Which game of the PGN file to show (default: the first).",
)
@click.option(
    "--turn",
    type=click.IntRange(min=1),
    metavar="N",
    help="Show the position before turn N is played, N being the position's TURN "
    "number (1 is Green's first turn); the last turn's number plus one shows the "
    "position after it. Default: the position after the last legal turn.",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the board (default: when stdout is a terminal).",
)
def show(source: str, game_number: int | None, turn: int | None, color: bool | None) -> None:
    """Draw an Ivy position given as a §6 string or as a game of a PGN file.

    POSITION_OR_PGN is a PGN file when such a file exists, else a position
    when it contains a space (a §6 string always does), else a missing file.
    """
    if color is None:
        color = sys.stdout.isatty()
    if " " in source.strip() and not Path(source).exists():
        if game_number is not None or turn is not None:
            raise click.UsageError("--game and --turn apply to a PGN file, not a position")
        position = Position.from_string(source)
    else:
        played = replay_record(read_game(Path(source), game_number or 1))
        if turn is None and played.broken is not None:
            click.echo(f"Warning: {played.broken.reason}; showing the position before it", err=True)
        position = Position.from_string(played.notation_before(turn))
    click.echo(render(position, color), nl=False, color=color)


# --- matches ---------------------------------------------------------------------


def _time_control(tc: str, startup: float, margin: float) -> TimeControl:
    return TimeControl.parse(tc, startup=startup, margin=margin)


def match_options(command: Any) -> Any:
    """The options every command that runs bots shares."""
    options = [
        click.option("--game", default="ivy", show_default=True, help="The game to play."),
        click.option(
            "--tc",
            default="10+0.1",
            show_default=True,
            help="Time control: BASE+INC seconds (Fischer), BASE, or SECS/turn.",
        ),
        click.option(
            "--startup",
            type=click.FloatRange(min=0),
            default=10.0,
            show_default=True,
            help="Seconds a bot may take to answer new_game (start-up allowance).",
        ),
        click.option(
            "--margin",
            type=click.FloatRange(min=0),
            default=0.1,
            show_default=True,
            help="Extra seconds tolerated past a bot's clock before it loses on time.",
        ),
        click.option(
            "--turn-limit",
            type=click.IntRange(min=1),
            default=200,
            show_default=True,
            help="Ivy: the game is drawn once this many turns are played.",
        ),
        *sandbox_options(defaults=True),
    ]

    @functools.wraps(command)
    def run(**kwargs: Any) -> Any:
        kwargs["sandbox"] = _sandbox_policy(**_pop_sandbox_flags(kwargs))
        return command(**kwargs)

    for option in reversed(options):
        run = option(run)
    return run


class _Size(click.ParamType):
    """A byte count: 512M, 2G, 65536 or unlimited."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return value if value is None else parse_size(value)
        except SandboxError as error:
            self.fail(str(error), param, ctx)


class _Count(click.ParamType):
    """A positive whole number or unlimited."""

    name = "N"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return value if value is None else parse_count(value)
        except SandboxError as error:
            self.fail(str(error), param, ctx)


SANDBOX_FLAGS = ("sandbox", "memory", "processes", "file_size", "open_files", "affinity")
"""The sandbox settings as flags (and as a tournament file's top-level keys)."""


def sandbox_options(*, defaults: bool) -> list[Any]:
    """The sandbox flags of every command that runs bots: ``--sandbox`` and the default
    limits (with ``defaults``, the documented defaults; without, ``None``: not given)."""

    def default(value: Any) -> Any:
        return value if defaults else None

    def size(value: int) -> str:
        return f"{value >> 30}G" if value % (1 << 30) == 0 else f"{value >> 20}M"

    return [
        click.option(
            "--sandbox",
            type=click.Choice(MODES),
            default=default("auto"),
            show_default=defaults,
            help="Run each bot in a sandbox of its own (bubblewrap): auto = where it works,"
            " with a warning where not; on = refuse to run without it; off = never.",
        ),
        click.option(
            "--memory",
            type=_Size(),
            default=default(size(DEFAULT_MEMORY)),
            show_default=defaults,
            help="Memory (address space) each process of a bot may map: 512M, 2G, unlimited.",
        ),
        click.option(
            "--processes",
            type=_Count(),
            default=default(DEFAULT_PROCESSES),
            show_default=defaults,
            help="Processes and threads a sandboxed bot may run at once.",
        ),
        click.option(
            "--file-size",
            type=_Size(),
            default=default(size(DEFAULT_FILE_SIZE)),
            show_default=defaults,
            help="Bytes a bot may write to one file; also the size of its private /tmp.",
        ),
        click.option(
            "--open-files",
            type=_Count(),
            default=default(DEFAULT_OPEN_FILES),
            show_default=defaults,
            help="Files each process of a bot may hold open.",
        ),
        click.option(
            "--affinity/--no-affinity",
            default=default(False),
            show_default=defaults,
            help="Pin each bot, and all it starts, to a CPU of its own.",
        ),
    ]


def tournament_sandbox_options(command: Any) -> Any:
    """The sandbox flags of ``tournament``: given ones override the file's settings; they
    reach the command as one ``sandbox_settings`` dict (``None``: not given)."""

    @functools.wraps(command)
    def run(**kwargs: Any) -> Any:
        return command(sandbox_settings=_pop_sandbox_flags(kwargs), **kwargs)

    for option in reversed(sandbox_options(defaults=False)):
        run = option(run)
    return run


def _pop_sandbox_flags(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {key: kwargs.pop(key) for key in SANDBOX_FLAGS}


def _sandbox_policy(
    *,
    sandbox: str,
    memory: int | None,
    processes: int | None,
    file_size: int | None,
    open_files: int | None,
    affinity: bool,
) -> SandboxPolicy:
    """The policy the flags ask for, checked before any bot starts (see :func:`_check_sandbox`)."""
    limits = Limits(memory=memory, processes=processes, file_size=file_size, open_files=open_files)
    policy = SandboxPolicy(mode=sandbox, limits=limits, affinity=affinity)
    _check_sandbox(policy)
    return policy


def _check_sandbox(policy: SandboxPolicy) -> None:
    """Refuse a sandbox that cannot be had (``on``); warn when ``auto`` goes without."""
    warning = sandbox_warning(policy)
    if warning is not None:
        _warn(warning)


@main.command()
@click.argument("bot_a", metavar="BOT_A")
@click.argument("bot_b", metavar="BOT_B")
@match_options
@click.option("--games", type=click.IntRange(min=1), default=2, show_default=True)
@click.option(
    "--pgn",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("match.pgn"),
    show_default=True,
    help="Each finished game is appended here as it ends.",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("match-logs"),
    show_default=True,
    help="Bots' stderr (bounded) and their log messages, per game.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for games of chance.")
@click.option("--event", default="Match", show_default=True, help="The PGN Event tag.")
def match(
    bot_a: str,
    bot_b: str,
    game: str,
    tc: str,
    startup: float,
    margin: float,
    turn_limit: int,
    games: int,
    pgn: Path,
    log_dir: Path,
    seed: int,
    event: str,
    sandbox: SandboxPolicy,
) -> None:
    """Play GAMES games between two bots, colours alternating.

    Each BOT is a command line, e.g. "python -m bots.random", or a keyed form
    "name=alice cmd='python -m bots.random --seed 3' dir=DIR env=KEY=VALUE".
    Prints a line per game and a final score with the Elo difference.
    """
    commands = [BotCommand.parse(bot_a), BotCommand.parse(bot_b)]
    config = MatchConfig(
        game=game,
        control=_time_control(tc, startup, margin),
        options={"turn_limit": turn_limit},
        log_dir=log_dir,
        event=event,
        sandbox=sandbox,
    )

    def report(number: int, result: GameResult, score: MatchScore) -> None:
        white, black = (printable(name) for name in result.players)
        reason = for_terminal(result.ending.reason)  # it may quote a bot
        click.echo(
            f"game {number}: {white} vs {black}  {result.result}  "
            f"({reason}; {result.record.tags['PlyCount']} turns)"
        )

    async def check_then_play() -> MatchScore:
        # Both bots must start and answer a handshake before anything is written.
        players = dict(zip(unique_names(commands), commands, strict=True))
        await preflight(
            list(players),
            lambda name, nursery: BotPlayer(
                players[name],
                name,
                nursery,
                max_line_bytes=config.max_line_bytes,
                sandbox=sandbox.hiding(pgn, log_dir, *(c.cwd for c in commands)),
            ),
            config,
        )
        pgn.parent.mkdir(parents=True, exist_ok=True)
        return await run_match(commands, config, games=games, pgn=pgn, seed=seed, on_game=report)

    try:
        score = _run(check_then_play)
    except BaseException as error:
        if _was_interrupted(error):
            _interrupted(f"Interrupted: finished games are in {pgn}")
        raise
    click.echo(_score_line(score))
    click.echo(f"Games: {pgn}  Logs: {log_dir}")


def _warn(line: str) -> None:
    """Say something the user should know, on one line of stderr."""
    click.echo(f"Warning: {printable(line)}", err=True)


def _score_line(score: MatchScore) -> str:
    """``Score of a vs b: 7 - 2 - 1 [0.750] 10, Elo difference: +190.8 [...]``."""
    from tournaments.ratings import elo_difference
    from tournaments.report import describe_elo_difference

    a, b = score.names
    line = f"Score of {a} vs {b}: {score.wins} - {score.losses} - {score.draws}"
    if score.games:
        difference = elo_difference(score.wins, score.draws, score.losses)
        line += f" [{score.score / score.games:.3f}] {score.games}"
        line += f", Elo difference: {describe_elo_difference(difference)}"
    return line


@main.command()
@click.argument("bot", metavar="BOT")
@click.option(
    "--as",
    "side",
    type=click.Choice(["green", "purple"]),
    default="green",
    show_default=True,
    help="The side you play (Green moves first).",
)
@match_options
@click.option(
    "--pgn",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append the finished game to this file.",
)
@click.option("--color/--no-color", default=None, help="Colour the board (default: on a terminal).")
def play(
    bot: str,
    side: str,
    game: str,
    tc: str,
    startup: float,
    margin: float,
    turn_limit: int,
    pgn: Path | None,
    color: bool | None,
    sandbox: SandboxPolicy,
) -> None:
    """Play a bot yourself in the terminal, typing turn tokens (c2+Lc2, xg3, --)."""
    config = MatchConfig(
        game=game,
        control=_time_control(tc, startup, margin),
        options={"turn_limit": turn_limit},
        sandbox=sandbox,
    )
    try:
        _run(
            lambda: play_against(
                BotCommand.parse(bot),
                human_seat=0 if side == "green" else 1,
                config=config,
                color=sys.stdout.isatty() if color is None else color,
                say=click.echo,
                pgn=pgn,
            )
        )
    except KeyboardInterrupt:
        sys.exit(130)


# --- tournaments -------------------------------------------------------------------


@main.command()
@click.argument(
    "config_file",
    metavar="[CONFIG.toml]",
    required=False,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)
@click.option(
    "--player",
    "players",
    multiple=True,
    metavar="BOT",
    help="A player (repeat): a command line or name=… cmd=… dir=… env=K=V. "
    "Replaces the file's players.",
)
@click.option("--event", help="The PGN Event tag.")
@click.option("--game", help="The game to play (default ivy).")
@click.option("--tc", help="Time control: BASE+INC, BASE or SECS/turn (default 10+0.1).")
@click.option("--startup", type=click.FloatRange(min=0), help="Start-up allowance in seconds.")
@click.option("--margin", type=click.FloatRange(min=0), help="Time margin in seconds.")
@click.option("--turn-limit", type=click.IntRange(min=1), help="Ivy's turn limit.")
@click.option("--format", "format_", type=click.Choice(["round-robin", "gauntlet"]), help="Format.")
@click.option("--double", is_flag=True, default=None, help="Double round-robin (two cycles).")
@click.option("--games", type=click.IntRange(min=1), help="Games per pairing and cycle.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Games at once (default: CPUs).")
@click.option(
    "--openings",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Start positions, one per line; each is played with both colours.",
)
@click.option("--seed", type=int, help="Seed for games of chance.")
@click.option(
    "--output",
    metavar="DIR",
    help="Output directory (default: ./<config file name>).",
)
@click.option("--quiet", is_flag=True, help="One plain line per game instead of a live display.")
@tournament_sandbox_options
def tournament(
    config_file: Path | None,
    players: tuple[str, ...],
    event: str | None,
    game: str | None,
    tc: str | None,
    startup: float | None,
    margin: float | None,
    turn_limit: int | None,
    format_: str | None,
    double: bool | None,
    games: int | None,
    concurrency: int | None,
    openings: Path | None,
    seed: int | None,
    output: str | None,
    quiet: bool,
    sandbox_settings: dict[str, Any],
) -> None:
    """Play (or resume) a round-robin or gauntlet tournament and rate the players.

    Settings come from CONFIG.toml (see examples/quick.toml) and/or the flags,
    which win; all are checked before anything runs. Each player's bot is then
    started once and must answer a handshake. Results go to the output directory:
    results.sqlite (every game, as it ends), games.pgn, ratings.json, ratings.csv
    and logs/. Run the same command again after a crash or Ctrl-C and it resumes;
    a finished tournament just shows its results.
    """
    from rich.console import Console

    from tournaments.config import load_config
    from tournaments.progress import make_progress
    from tournaments.report import crosstable, rating_table
    from tournaments.runner import TournamentStopped, run_tournament

    if config_file is None and not players:
        raise click.UsageError("give a CONFIG.toml file or at least two --player options")
    config = load_config(
        config_file,
        players=list(players) or None,
        event=event,
        game=game,
        tc=tc,
        startup=startup,
        margin=margin,
        turn_limit=turn_limit,
        format=format_,
        cycles=2 if double else None,
        games=games,
        concurrency=concurrency,
        openings=openings,
        seed=seed,
        output=output,
        **sandbox_settings,
    )
    # The tournament file may name other players' folders and settings: no bot reads it.
    config = dataclasses.replace(config, sandbox=config.sandbox.hiding(config_file))
    _check_sandbox(config.sandbox)
    console = Console()
    progress = make_progress(quiet=True if quiet else None, console=console)
    try:
        table = _run(lambda: run_tournament(config, progress=progress, warn=_warn))
    except TournamentStopped as stopped:
        click.echo(f"Interrupted: {stopped}", err=True)
        sys.exit(128 + stopped.signum)
    console.print(rating_table(table, title=config.event))
    console.print(crosstable(table, title="Crosstable"))
    console.print(f"Results in {config.output}/ (games.pgn, results.sqlite, ratings.json/.csv)")


@main.command()
@click.argument("pgn_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the ratings as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the ratings as CSV.")
@click.option("--anchor", metavar="NAME", help="Fix this player's rating (default: mean 0).")
@click.option(
    "--anchor-elo", type=float, default=0.0, show_default=True, help="The anchor's rating."
)
def ratings(
    pgn_file: Path, as_json: bool, as_csv: bool, anchor: str | None, anchor_elo: float
) -> None:
    """Rate the players of any PGN file by maximum likelihood (Bradley–Terry).

    Elo with 95% error bars, likelihood of superiority over the next player, W/D/L,
    score and a crosstable; the figures can be checked against Ordo
    (ordo -a 0 -z 200.240940 solves the same equations).
    """
    from rich.console import Console
    from rich.markup import escape

    from tournaments.report import crosstable, rating_table, to_csv, to_json
    from tournaments.runner import ratings_for_pgn

    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    rated = ratings_for_pgn(pgn_file, anchor=anchor, anchor_elo=anchor_elo)
    for warning in rated.warnings:
        click.echo(printable(f"Warning: {warning}"), err=True)
    if as_json:
        click.echo(to_json(rated.table))
    elif as_csv:
        click.echo(to_csv(rated.table), nl=False)
    else:
        console = Console()
        title = escape(printable(f"{pgn_file} ({rated.games} games)"))  # not rich markup
        console.print(rating_table(rated.table, title=title))
        console.print(crosstable(rated.table, title="Crosstable"))


if __name__ == "__main__":
    main()
