"""The ``referee`` command.

Commands only parse their arguments and call library functions; whatever they
do can be done from Python. Any :class:`~referee.errors.RefereeError` (or
``OSError``, or SQLite error) a command lets through, alone or inside an
exception group, becomes one line ``Error: …`` on stderr and exit code 1; Ctrl-C
at any moment becomes one line and exit code 130 — :class:`RefereeGroup` does
that for every command of the group.

Exit codes: 0 success; 1 an error, or (``replay``) an invalid game; 2 a usage
error (click's); 130 stopped by Ctrl-C (SIGINT); 141 standard output closed by its
reader (``referee … | head -1``: nothing is printed, as SIGPIPE ends a Unix tool); 143
a tournament stopped by SIGTERM.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import resource
import secrets
import select
import signal
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
import trio
from msgspec.structs import replace as replace_struct

from referee import __version__
from referee.cgroups import group_problem
from referee.clock import (
    CLOCKS,
    DEFAULT_MARGIN,
    DEFAULT_STARTUP,
    DEFAULT_TIME_CONTROL,
    Allowances,
    TimeControl,
)
from referee.errors import RecordError, RefereeError, SettingsError
from referee.games import GameSettings, game_names, game_seed, get_entry, get_game
from referee.match import (
    DEFAULT_GAME,
    OPENINGS_ORDERS,
    BotPlayer,
    GameResult,
    MatchConfig,
    MatchOpenings,
    MatchPlan,
    MatchScore,
    OpeningsOrder,
    first_game_number,
    plan_path,
    read_plan,
    recorded_games,
    rotation_games,
    run_match,
    unique_names,
    write_plan,
)
from referee.pgn import iter_pgn_file, read_game, seat_players
from referee.play import play_against
from referee.preflight import preflight
from referee.process import BotCommand, stopped_bots_cpu_time
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
from referee.session import check_players
from referee.untrusted import for_terminal, printable

if TYPE_CHECKING:
    from tournaments.config import TournamentConfig
    from tournaments.ratings import Method
    from tournaments.sprt import SprtReport

INTERRUPTED = 128 + signal.SIGINT
"""The exit code after Ctrl-C, as shells report a process that SIGINT ended."""

_REPORTED = (RefereeError, OSError, sqlite3.Error)
"""What a command may fail with and be reported as one ``Error:`` line."""


PIPE_CLOSED = 128 + signal.SIGPIPE
"""The exit code when standard output's reader has gone (``referee … | head -1``), as
shells report a process that SIGPIPE ended."""


class RefereeGroup(click.Group):
    """A click group whose commands report referee errors as one ``Error:`` line and
    Ctrl-C as one line with exit code 130, whatever nursery they come out of, and end
    quietly with exit code 141 once their standard output is closed."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:  # --help and --version print here (a command's own, in invoke)
            return super().parse_args(ctx, args)
        except BrokenPipeError as error:
            if _stdout_closed(error):
                _leave_unread()
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke_while_read(ctx)
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

    def _invoke_while_read(self, ctx: click.Context) -> Any:
        """Run the command; once nobody reads its standard output, end it quietly.

        A Unix tool that writes to a closed pipe dies of SIGPIPE, silently. Python ignores
        SIGPIPE (a bot or a spectator hanging up must not kill the referee), so the write
        raises ``BrokenPipeError`` instead, wherever it comes: in a command, in a trio task
        (inside an exception group), or in rich, which turns it into ``SystemExit(1)``. A
        command stopped so has already unwound: every game it finished is recorded, every
        bot and worker is stopped, and a tournament resumes when run again.
        """
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # a short output meets the closed pipe here, not at exit
        except BaseException as error:
            if _stdout_closed(error):
                _leave_unread()
            raise


def _stdout_closed(error: BaseException) -> bool:
    """Whether ``error`` comes of writing to a standard output nobody reads any more: a
    ``BrokenPipeError`` in it (in its groups or the errors it was raised from) while
    descriptor 1 has no reader (or is ``/dev/null``, where rich puts it after one)."""
    seen: set[int] = set()
    todo = [error]
    broken = False
    while todo and not broken:
        link = todo.pop()
        if id(link) in seen:
            continue
        seen.add(id(link))
        broken = isinstance(link, BrokenPipeError)
        if isinstance(link, BaseExceptionGroup):
            todo.extend(link.exceptions)
        todo.extend(cause for cause in (link.__cause__, link.__context__) if cause is not None)
    if not broken:
        return False
    try:
        poller = select.poll()
        poller.register(1, select.POLLOUT)
        if any(mask & (select.POLLERR | select.POLLHUP) for _, mask in poller.poll(0)):
            return True
        return os.path.samestat(os.fstat(1), os.stat(os.devnull))
    except OSError:
        return False


def _leave_unread() -> NoReturn:
    """Exit with :data:`PIPE_CLOSED`, saying nothing; what Python still holds for
    standard output goes to ``/dev/null`` (else it would complain about it at exit)."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.exit(PIPE_CLOSED)


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
    help="Print only, one line per game, the position after its last decision (for a game "
    "the rules ended and score by categories, such as Verdant, each seat's place and score "
    "breakdown instead: docs/records.md), or 'ILLEGAL <turn> <reason>' for the first "
    "decision that breaks a rule ('ILLEGAL 0 <reason>' when the game cannot be read or set up).",
)
@click.pass_context
def replay(ctx: click.Context, pgn_file: Path, final_position: bool) -> None:
    """Check every game of PGN_FILE against the rules.

    Prints one line per game: its number, its players in seat order joined by
    'vs', the recorded result, the number of turns (decisions, for a game whose
    record names who made each), and 'valid' or 'INVALID: reason'. Each reason is
    said once, in its game's line on stdout (stderr holds only the command's own
    Error line). A broken game does not stop the others being checked. Exits 0 when
    every game is valid, 1 otherwise, in both modes.
    """
    games = invalid = 0
    for check in check_games(iter_pgn_file(pgn_file)):  # one game in memory at a time
        games += 1
        line = _final_position_line(check) if final_position else _summary_line(check)
        click.echo(printable(line))
        invalid += not check.valid
    if not games:
        raise RecordError(f"{pgn_file} holds no games")
    ctx.exit(1 if invalid else 0)


def _summary_line(check: GameCheck) -> str:
    """``game 2: alice vs bob, 1-0, 17 turns, valid`` or ``… INVALID: reason``."""
    verdict = "valid" if check.valid else f"INVALID: {check.reason}"
    if check.record is None:
        return f"game {check.number}: {verdict}"
    record = check.record
    players = " vs ".join(seat_players(record.tags))
    unit = "decision" if record.names_actors else "turn"
    count = len(record.turns)
    turns = f"{count} {unit}{'' if count == 1 else 's'}"
    return f"game {check.number}: {players}, {record.result}, {turns}, {verdict}"


def _final_position_line(check: GameCheck) -> str:
    """The position after the game's last decision (or its seats' score breakdown), or
    ``ILLEGAL <turn> <reason>``."""
    report = check.report
    if report is None:
        return f"ILLEGAL 0 {check.reason}"
    if report.first_illegal is not None:
        return f"ILLEGAL {report.first_illegal.turn} {report.first_illegal.reason}"
    return report.breakdown_line or report.final_notation


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
    help="Show the state before turn N is played, N being the game's turn number (Ivy: the "
    "position's TURN, 1 is Green's first turn); the last turn's number plus one shows the "
    "Ivy position after it. Default: the state after the last legal decision.",
)
@click.option(
    "--seat",
    type=click.IntRange(min=1),
    metavar="S",
    help="Show what seat S (1 is the first seat) may see, instead of the public state.",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the board (default: when stdout is a terminal).",
)
def show(
    source: str, game_number: int | None, turn: int | None, seat: int | None, color: bool | None
) -> None:
    """Draw a game's state: a game of a PGN file, or an Ivy position given as a §6 string.

    POSITION_OR_PGN is a PGN file when such a file exists, else a position
    when it contains a space (a §6 string always does), else a missing file.
    A game of any registered game is drawn by that game's renderer: the public
    state (what every seat may see), or with --seat one seat's view.
    """
    if color is None:
        color = sys.stdout.isatty()
    if " " in source.strip() and not Path(source).exists():
        if game_number is not None or turn is not None:
            raise click.UsageError("--game and --turn apply to a PGN file, not a position")
        rules = get_game(DEFAULT_GAME)  # positions given as text are Ivy's
        if seat is not None and seat > rules.min_players:
            raise click.BadParameter(
                f"an {rules.name.capitalize()} position has {rules.min_players} seats",
                param_hint="--seat",
            )
        state = rules.start(GameSettings(players=rules.min_players, start=source))
        entry = get_entry(rules.name)
        drawing = (
            entry.render_public(state, color)
            if seat is None
            else entry.render(rules.view(state, seat - 1), color)
        )
        click.echo(drawing, nl=False, color=color)
        return
    played = replay_record(read_game(Path(source), game_number or 1))
    if turn is None and played.broken is not None:
        click.echo(f"Warning: {played.broken.reason}; showing the position before it", err=True)
    state = played.state_before(turn)
    entry = get_entry(played.game.name)
    if seat is None:
        drawing = entry.render_public(state, color)
    elif seat > played.seats:
        raise click.BadParameter(f"the game has {played.seats} seats", param_hint="--seat")
    else:
        drawing = entry.render(played.game.view(state, seat - 1), color)
    click.echo(drawing, nl=False, color=color)


@main.command()
@click.argument("pgn_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--game",
    "game_number",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="K",
    help="Which game of the PGN file to show.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML file to write (default: PGN_FILE's name with -K.html, K the game).",
)
def view(pgn_file: Path, game_number: int, output: Path | None) -> None:
    """Write a replay of a game of PGN_FILE as one self-contained HTML page.

    The page replays the game step by step as the rules play it (the positions
    `referee replay` computes) and opens offline from the file, in any browser.
    """
    from referee.viewer import game_page, write_atomically

    record = read_game(pgn_file, game_number)
    target = output or pgn_file.with_name(f"{pgn_file.stem}-{game_number}.html")
    write_atomically(target, game_page(record))
    click.echo(printable(f"Wrote {target}"))


# --- matches ---------------------------------------------------------------------


def _options(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--option KEY=VALUE`` flags as a mapping (the game checks keys and values)."""
    options: dict[str, str] = {}
    for text in pairs:
        key, equals, value = text.partition("=")
        if not equals or not key.strip():
            raise SettingsError(f"--option takes KEY=VALUE, not {text!r}")
        options[key.strip()] = value.strip()
    return options


def _match_config(
    game: str,
    tc: str,
    startup: float,
    margin: float,
    options: tuple[str, ...],
    clock: str = "wall",
    **more: Any,
) -> MatchConfig:
    """The settings of a match or a game against a person, all checked before anything runs:
    the game, its options (by the game), the time control on its clock and the allowances."""
    return MatchConfig(
        game=game,
        control=TimeControl.parse(tc, clock),
        allowances=Allowances(startup=startup, margin=margin),
        options=_options(options),
        **more,
    )


def match_options(command: Any) -> Any:
    """The options every command that runs bots shares."""
    options = [
        click.option(
            "--game",
            default=DEFAULT_GAME,
            show_default=True,
            help=f"The game to play ({', '.join(game_names())}).",
        ),
        click.option(
            "--option",
            "options",
            multiple=True,
            metavar="KEY=VALUE",
            help="A rule setting of the game, checked by the game (repeatable): Ivy"
            " turn_limit=N; Verdant variant=standard|simplified|advanced.",
        ),
        click.option(
            "--tc",
            default=DEFAULT_TIME_CONTROL,
            show_default=True,
            help="Time control: BASE+INC seconds (Fischer), BASE, or SECS/turn.",
        ),
        click.option(
            "--startup",
            type=click.FloatRange(min=0),
            default=DEFAULT_STARTUP,
            show_default=True,
            help="Seconds a bot may take to answer new_game (start-up allowance).",
        ),
        click.option(
            "--margin",
            type=click.FloatRange(min=0),
            default=DEFAULT_MARGIN,
            show_default=True,
            help="Extra seconds tolerated past a bot's clock before it loses on time.",
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


def _check_clock(control: TimeControl) -> None:
    """Refuse the ``cpu`` clock where bots cannot have control groups (it charges a group's
    CPU time)."""
    problem = group_problem() if control.clock == "cpu" else None
    if problem is not None:
        raise click.ClickException(
            f"the cpu clock needs a control group per bot, which cannot be had here: {problem}"
            " (docs/security.md says how to delegate one; or use --clock wall)"
        )


def _check_sandbox(policy: SandboxPolicy) -> None:
    """Refuse a sandbox that cannot be had (``on``); warn when ``auto`` goes without."""
    warning = sandbox_warning(policy)
    if warning is not None:
        _warn(warning)


SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")
"""The words of an SPRT's settings (:meth:`tournaments.sprt.Sprt.parse`)."""

SPRT_MAX_GAMES = 100_000
"""The games of a match with ``--sprt`` and no ``--games``: a cap the test stops well before."""


@main.command()
@click.argument("bots", metavar="BOT...", nargs=-1, required=True)
@match_options
@click.option(
    "--games",
    type=click.IntRange(min=1),
    default=None,
    help="Games to play (default: as many as bots, one rotation of the seats; with --openings,"
    f" one rotation per opening; with --sprt, at most {SPRT_MAX_GAMES:,}). More than one"
    " is rounded up to a multiple of the number of bots, so that each bot sits each seat"
    " equally often.",
)
@click.option(
    "--openings",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Start positions, one a line (blank and # lines skipped), as a tournament's; each"
    " is played with every seating of the rotation (two bots: once with each colour).",
)
@click.option(
    "--openings-order",
    type=click.Choice(OPENINGS_ORDERS),
    default=None,
    help="The order of the openings: sequential (as listed, the default) or random"
    " (shuffled by --seed, or by a secret seed without it).",
)
@click.option(
    "--sprt",
    metavar="elo0=E0 elo1=E1 [alpha=A] [beta=B] [model=normalized|logistic]",
    default=None,
    help="Two bots: stop as soon as a sequential probability ratio test accepts H0 (the first"
    " bot is elo0 stronger) or H1 (elo1 stronger); alpha and beta default to 0.05, model to"
    " normalized. Tests game pairs (pentanomial) when the games come in pairs, else games.",
)
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
@click.option(
    "--seed",
    type=int,
    help="Seed of the match: each game's chance is seeded from it and the game's number"
    " (default: a secret random seed per game; the game's Seed tag records it).",
)
@click.option("--event", default="Match", show_default=True, help="The PGN Event tag.")
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=None,
    help="Rounds of one rotation each: N × bots games (two bots: N game pairs, one per"
    " opening in turn), as cutechess-cli's -rounds N -games 2 -repeat; instead of --games.",
)
@click.option(
    "--each",
    metavar="tc=TC [startup=S] [margin=M]",
    default=None,
    help="Settings of every bot, as fastchess's -each writes them (the words after it"
    " count too): the same as --tc, --startup and --margin.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Games at once, each on a worker process of its own (as a tournament's).",
)
@click.option(
    "--recover",
    is_flag=True,
    help="Finish the last match into --pgn (killed or stopped): its games already in the PGN"
    " count, the missing ones are played. Give the same settings as when it started.",
)
@click.option(
    "--output",
    "output_format",
    type=click.Choice(["referee", "cutechess"]),
    default="referee",
    show_default=True,
    help="Progress lines: referee's, or cutechess-cli's (Started game…, Finished game…,"
    " Score of… after each game), which fastchess also writes.",
)
@click.option(
    "--ratinginterval",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Two bots: print the Score, Elo difference (and Ptnml) lines every N games (0: at"
    " the end only).",
)
@click.option(
    "--clock",
    type=click.Choice(CLOCKS),
    default="wall",
    show_default=True,
    help="The time charged: wall (request to reply) or cpu (the CPU time of the bot's"
    " whole process tree, under a wall-clock cap; needs control groups).",
)
def match(
    bots: tuple[str, ...],
    game: str,
    options: tuple[str, ...],
    tc: str,
    startup: float,
    margin: float,
    games: int | None,
    openings: Path | None,
    openings_order: OpeningsOrder | None,
    sprt: str | None,
    pgn: Path,
    log_dir: Path,
    seed: int | None,
    event: str,
    rounds: int | None,
    each: str | None,
    concurrency: int,
    recover: bool,
    output_format: str,
    ratinginterval: int,
    clock: str,
    sandbox: SandboxPolicy,
) -> None:
    """Play games between bots, one bot a seat, the seats rotating.

    Give as many BOTs as the game's players (Ivy: 2; Verdant: 1 to 5). In game K
    (from 1) the bots sit in the order given, rotated by K-1 places, so over each
    run of N games (N bots) every bot sits every seat once; two bots alternate
    colours. Each BOT is a command line, e.g. "python -m bots.random", or a keyed
    form "name=alice cmd='python -m bots.random --seed 3' dir=DIR env=KEY=VALUE".
    Prints a line per game, then the score with the Elo difference (two bots) or
    each bot's games, mean score and mean place. With --sprt, each finished game (or
    game pair) adds a line with the test's LLR, bounds, counts and Elo estimate, and the
    match ends with the test's verdict. --concurrency N plays N games at once on worker
    processes, counted in number order; --recover finishes the last match into --pgn.
    """
    from tournaments.config import check_openings, read_openings
    from tournaments.sprt import Pentanomial, Sprt, SprtRun

    if sprt is not None:  # "--sprt elo0=0 elo1=5 …" as fastchess writes it: the words after
        # the first arrive among the BOTS (click options take one word); no bot is "elo1=5".
        settings = [word for word in bots if word.partition("=")[0] in SPRT_KEYS]
        bots = tuple(word for word in bots if word not in settings)
        sprt = " ".join([sprt, *settings])
    if each is not None:  # as --sprt's: "--each tc=10+0.1 startup=5", fastchess's words
        words = [word for word in bots if word.partition("=")[0] in EACH_KEYS]
        bots = tuple(word for word in bots if word not in words)
        tc, startup, margin = _each_settings([each, *words], tc, startup, margin)
    if rounds is not None:
        if games is not None:
            raise SettingsError("--rounds N plays N rotations of the seats: give it or --games")
        games = rounds * len(bots)
    commands = [BotCommand.parse(bot) for bot in bots]
    config = _match_config(
        game, tc, startup, margin, options, clock, log_dir=log_dir, event=event, sandbox=sandbox
    )
    _check_clock(config.control)
    rules = get_game(config.game)
    check_players(rules, len(commands))
    test = None if sprt is None else Sprt.parse(sprt)
    if test is not None and len(commands) != 2:
        raise SettingsError(
            f"--sprt tests one bot against another: give 2 bots, not {len(commands)}"
        )
    # What fixes the match's games: a recovery must be given the same (docs: --recover).
    plan_settings: dict[str, Any] = {
        "bots": list(bots),
        "game": game,
        "options": list(options),
        "tc": tc,
        "games": games,  # --rounds N is --games N × bots
        "openings": None if openings is None else str(openings),
        "openings_order": openings_order,
        "sprt": sprt,
        "seed": seed,
        "event": event,
    }
    plan = read_plan(pgn) if recover else None
    if plan is not None and plan.settings != plan_settings:
        changed = ", ".join(
            key for key in plan_settings if plan.settings.get(key) != plan_settings[key]
        )
        raise SettingsError(
            f"--recover finishes the match {plan_path(pgn)} describes: give the settings it"
            f" was started with (these differ: {changed})"
        )
    book = None
    if openings is not None:
        positions = read_openings(openings)
        check_openings(rules, len(commands), config.options, positions, openings)
        if plan is not None:
            order_seed = plan.order_seed
        else:
            order_seed = secrets.randbits(63) if seed is None else seed
        book = MatchOpenings(positions, openings_order or "sequential", order_seed or 0)
    elif openings_order is not None:
        raise SettingsError("--openings-order orders the positions of --openings: give both")
    if games is not None:
        wanted = games
    elif test is not None:
        wanted = SPRT_MAX_GAMES
    else:
        wanted = len(commands) * (1 if book is None else len(book.openings))
    rounds = rotation_games(wanted, len(commands))
    paired = len(commands) == 2 and rounds % 2 == 0
    # Two bots' games 2k and 2k + 1 are a pair: both colours (with openings, of one opening).
    run = None if test is None else SprtRun.start(test, pairs=paired)
    if rounds != wanted and plan is None:
        _warn(
            f"{wanted} games rounded up to {rounds}, a multiple of the {len(commands)} bots,"
            " so that each bot sits each seat equally often"
        )
    unit = "turns" if rules.alternating else "decisions"
    first_scores: list[float] = []  # the first bot's, game by game (its pairs: Ptnml)
    cutechess = output_format == "cutechess"
    names = unique_names(commands)

    def rating_lines(score: MatchScore) -> list[str]:
        lines = _score_lines(score)
        if paired and len(first_scores) >= 2:
            lines.append(f"Ptnml(0-2): {Pentanomial.from_scores(first_scores)}")
        return lines

    def started(number: int, players: tuple[str, ...], attempt: int) -> None:
        # The plan says which attempts were begun: one killed now is never dealt again.
        begun[number - first] = attempt
        write_plan(pgn, replace_struct(plan_now, begun=begun))
        if cutechess:
            shown = " vs ".join(printable(name) for name in players)
            click.echo(f"Started game {number - first + 1} of {rounds} ({shown})")

    cost = _Cost()

    def report(number: int, result: GameResult, score: MatchScore) -> None:
        cost.decisions += int(result.record.tags["PlyCount"])
        players = " vs ".join(printable(name) for name in result.players)
        reason = for_terminal(result.ending.reason)  # it may quote a bot
        nonlocal run
        if len(score.names) == 2:
            mine, theirs = (result.ending.places[result.players.index(n)] for n in score.names)
            first_scores.append(1.0 if mine < theirs else 0.0 if mine > theirs else 0.5)
        if cutechess:
            click.echo(
                f"Finished game {number - first + 1} ({players}): {result.result} {{{reason}}}"
            )
            if len(score.names) == 2:
                click.echo(_score_lines(score)[0])
        else:
            click.echo(
                f"game {number}: {players}  {result.result}  "
                f"({reason}; {result.record.tags['PlyCount']} {unit})"
            )
        if run is not None:
            run = run.plus(first_scores[-1])
            if run.counted:
                click.echo(f"  SPRT {run.report().line()}")
        if ratinginterval and len(score.names) == 2 and score.games % ratinginterval == 0:
            for line in rating_lines(score)[0 if not cutechess else 1 :]:
                click.echo(line)

    def decided(score: MatchScore) -> bool:
        return run is not None and run.counted and run.report().status.finished

    first = plan.first if plan is not None else first_game_number(pgn, log_dir)
    recorded = {} if plan is None else recorded_games(pgn, names, plan.first, plan.games)
    begun = {} if plan is None else dict(plan.begun)
    plan_now = plan or MatchPlan(
        first=first,
        games=rounds,
        order_seed=None if book is None else book.seed,
        settings=plan_settings,
    )
    if plan is not None:
        rounds = plan.games
        click.echo(
            f"Recovering the match of {plan_path(pgn)}: {len(recorded)} of its {rounds} games"
            f" are in {pgn}"
        )

    async def check_then_play() -> MatchScore:
        # Every bot must start and answer a handshake before anything is written.
        players = dict(zip(names, commands, strict=True))
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
            seats=len(commands),
        )
        pgn.parent.mkdir(parents=True, exist_ok=True)
        write_plan(pgn, plan_now)
        return await run_match(
            commands,
            config,
            games=rounds,
            pgn=pgn,
            seed=seed,
            openings=book,
            on_game=report,
            on_start=started,
            warn=_warn,
            stop=decided,
            concurrency=concurrency,
            first=first,
            recorded=recorded,
            begun=begun,
        )

    try:
        score = _run(check_then_play)
    except BaseException as error:
        if _was_interrupted(error):
            _interrupted(f"Interrupted: finished games are in {pgn}")
        raise
    if len(score.names) == 2:
        # cutechess-cli's lines: the Score line followed the last game already.
        for line in rating_lines(score)[1:] if cutechess and score.games else _score_lines(score):
            click.echo(line)
    if len(score.names) != 2 or rules.scored_in_points:
        for line in _standing_lines(score):
            click.echo(line)
    if run is not None:
        click.echo(_sprt_verdict(run.report(), score.games))
    if (spent := cost.line()) is not None:
        click.echo(spent)
    click.echo(f"Games: {pgn}  Logs: {log_dir}")


EACH_KEYS = {"tc": "--tc", "startup": "--startup", "margin": "--margin"}
"""The words of ``--each`` (fastchess's ``-each``), with the flag each stands for."""


def _each_settings(
    texts: list[str], tc: str, startup: float, margin: float
) -> tuple[str, float, float]:
    """The time control and allowances once ``--each``'s words are applied (checked: a
    word the flags also give, twice or with its flag, is refused)."""
    context = click.get_current_context()
    given: dict[str, str] = {}
    for word in (word for text in texts for word in text.split()):
        key, equals, value = word.partition("=")
        if key not in EACH_KEYS or not equals or not value:
            known = ", ".join(f"{name}=…" for name in EACH_KEYS)
            raise SettingsError(f"--each takes {known}, not {word!r}")
        source = context.get_parameter_source(key)
        if key in given or source is click.core.ParameterSource.COMMANDLINE:
            raise SettingsError(f"--each {key}= and {EACH_KEYS[key]} (or a second {key}=)"
                                " set the same thing: give one")  # fmt: skip
        given[key] = value
    allowances = {"startup": startup, "margin": margin}
    for key in ("startup", "margin"):
        if key in given:
            try:
                allowances[key] = float(given[key])
            except ValueError:
                allowances[key] = -1.0
            if not allowances[key] >= 0:
                raise SettingsError(f"--each {key}= is seconds, 0 or more, not {given[key]!r}")
    return given.get("tc", tc), allowances["startup"], allowances["margin"]


class _Cost:
    """The referee's own CPU time and its bots', from its start until :meth:`line`: so an
    organiser sees when the machine, not a bot, is the bottleneck."""

    def __init__(self) -> None:
        self.decisions = 0
        self._start = (_cpu(resource.RUSAGE_SELF), _bots_cpu())

    def line(self) -> str | None:
        """``CPU per decision: referee 0.42 ms, bots 5.10 ms`` (``None`` before any)."""
        if not self.decisions:
            return None
        referee = _cpu(resource.RUSAGE_SELF) - self._start[0]
        bots = _bots_cpu() - self._start[1]
        each = 1000 / self.decisions
        return f"CPU per decision: referee {referee * each:.2f} ms, bots {bots * each:.2f} ms"


def _cpu(who: int) -> float:
    """User and system CPU seconds of this process (``RUSAGE_SELF``) or of its reaped
    descendants (``RUSAGE_CHILDREN``)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _bots_cpu() -> float:
    """CPU seconds the bots this process stopped used: their groups' where they had
    them (a killed process's time reaches no parent), else the reaped children's."""
    if group_problem() is None:
        return stopped_bots_cpu_time()
    return _cpu(resource.RUSAGE_CHILDREN)


def _warn_cores(concurrency: int) -> None:
    """Warn when more bots may think at once (one per game played at once) than there
    are CPUs to think on."""
    cores = len(os.sched_getaffinity(0))
    if concurrency > cores:
        _warn(
            f"concurrency {concurrency} lets {concurrency} bots think at once on {cores}"
            f" CPU{'s' * (cores != 1)}: fewer than one core per bot, so the machine's load"
            f" decides games on the wall clock (use --concurrency {cores} or --clock cpu)"
        )


def _sprt_verdict(report: SprtReport, games: int) -> str:
    """``SPRT elo0=0 elo1=5 …: H1 accepted after 24 games; LLR 2.96 …`` (or inconclusive
    when the games ran out first)."""
    verdict = report.status.describe() if report.status.finished else "inconclusive"
    counted = f"{games} game{'' if games == 1 else 's'}"
    return f"SPRT {report.sprt}: {verdict} after {counted}; {report.line()}"


def _warn(line: str) -> None:
    """Say something the user should know, on one line of stderr."""
    click.echo(f"Warning: {printable(line)}", err=True)


def _standing_lines(score: MatchScore) -> list[str]:
    """Each bot's games, points, mean score and mean place, best mean place first."""
    lines = [f"Standings after {score.games} game{'' if score.games == 1 else 's'}:"]
    ranked = sorted(score.standings, key=lambda s: (s.mean_place, -s.mean_score))
    for standing in ranked:
        lines.append(
            f"  {printable(standing.name)}: {standing.games} games,"
            f" {standing.points:g} points (mean score {standing.mean_score:.2f}),"
            f" mean place {standing.mean_place:.2f}"
        )
    return lines


def _score_lines(score: MatchScore) -> list[str]:
    """cutechess-cli's two lines, counts in its order (the first bot's wins, losses, draws)::

    Score of a vs b: 7 - 2 - 1  [0.750] 10
    Elo difference: 190.8 +/- 252.1, LOS: 96.7 %, DrawRatio: 10.0 %
    """
    from tournaments.ratings import elo_difference
    from tournaments.report import describe_elo_difference

    a, b = (printable(name) for name in score.names)
    line = f"Score of {a} vs {b}: {score.wins} - {score.losses} - {score.draws}"
    if not score.games:
        return [line]
    difference = elo_difference(score.wins, score.draws, score.losses)
    return [
        f"{line}  [{score.score / score.games:.3f}] {score.games}",
        describe_elo_difference(difference),
    ]


@main.command()
@click.argument("bots", metavar="[BOT]...", nargs=-1)
@click.option(
    "--as",
    "seat",
    default="1",
    show_default=True,
    help="Your seat: its number from 1 in turn order, or its name (Ivy: green or purple;"
    " Green plays first). The bots take the other seats in the order given.",
)
@match_options
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed of the game's chance (default: a random one; the record's Seed tag keeps it).",
)
@click.option(
    "--pgn",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append the finished game to this file.",
)
@click.option("--color/--no-color", default=None, help="Colour the board (default: on a terminal).")
def play(
    bots: tuple[str, ...],
    seat: str,
    game: str,
    options: tuple[str, ...],
    tc: str,
    startup: float,
    margin: float,
    seed: int | None,
    pgn: Path | None,
    color: bool | None,
    sandbox: SandboxPolicy,
) -> None:
    """Play bots yourself in the terminal, typing decisions in the game's notation.

    Ivy: turns such as c2+Lc2 (creep c2, leaf on c2), xg3 (choke g3), -- (pass).
    A Verdant game takes one person and 0 to 4 BOTs. Type 'moves' for the legal
    decisions, 'help' for the game's notation and these commands, 'quit' to stop. Your
    seat is untimed (--tc times the bots); the record keeps your think time as [%emt].
    """
    config = _match_config(game, tc, startup, margin, options, sandbox=sandbox)
    rules = get_game(config.game)
    commands = [BotCommand.parse(bot) for bot in bots]
    check_players(rules, len(commands) + 1)
    number = _seat_number(rules.seat_names, seat, len(commands) + 1)
    try:
        _run(
            lambda: play_against(
                commands,
                seat=number,
                config=config,
                color=sys.stdout.isatty() if color is None else color,
                seed=game_seed(None, 0) if seed is None else seed,
                say=click.echo,
                pgn=pgn,
            )
        )
    except KeyboardInterrupt:
        sys.exit(130)


def _seat_number(names: tuple[str, ...] | None, text: str, seats: int) -> int:
    """The seat (from 0) that ``--as`` names: a number from 1, or a seat's name."""
    wanted = text.strip().lower()
    known = [name.lower() for name in names or ()]
    if wanted in known:
        return known.index(wanted)
    if wanted.isdigit() and 1 <= int(wanted) <= seats:
        return int(wanted) - 1
    choices = f"1 to {seats}" + (f" or {', '.join(known)}" if known else "")
    raise SettingsError(f"--as takes a seat, {choices}, not {text!r}")


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
@click.option("--game", help=f"The game to play (default {DEFAULT_GAME}).")
@click.option(
    "--tc", help=f"Time control: BASE+INC, BASE or SECS/turn (default {DEFAULT_TIME_CONTROL})."
)
@click.option("--startup", type=click.FloatRange(min=0), help="Start-up allowance in seconds.")
@click.option("--margin", type=click.FloatRange(min=0), help="Time margin in seconds.")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A rule setting of the game (repeat), checked by the game; overrides the file's"
    " [options] one by one (Ivy: turn_limit=N; Verdant: variant=…).",
)
@click.option(
    "--players-per-table",
    type=click.IntRange(min=1),
    help="Seats per game, for a game played by a range of players (Verdant: 1 to 5).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["round-robin", "gauntlet", "swiss", "knockout"]),
    help="Format.",
)
@click.option("--double", is_flag=True, default=None, help="Double round-robin (two cycles).")
@click.option("--games", type=click.IntRange(min=1), help="Games per pairing (knockout: match).")
@click.option("--rounds", type=int, help="Rounds of a Swiss (default: n - 1, or n for odd n).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Games at once (default: CPUs).")
@click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Play the games on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786)"
    " instead of on this machine: see docs/cluster.md.",
)
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
@click.option(
    "--clock",
    type=click.Choice(CLOCKS),
    help="The time charged: wall (default) or cpu (the CPU time of the bot's whole process"
    " tree, under a wall-clock cap; needs control groups).",
)
@tournament_sandbox_options
def tournament(
    config_file: Path | None,
    players: tuple[str, ...],
    event: str | None,
    game: str | None,
    tc: str | None,
    startup: float | None,
    margin: float | None,
    options: tuple[str, ...],
    players_per_table: int | None,
    format_: str | None,
    double: bool | None,
    games: int | None,
    rounds: int | None,
    concurrency: int | None,
    cluster: str | None,
    openings: Path | None,
    seed: int | None,
    output: str | None,
    quiet: bool,
    clock: str | None,
    sandbox_settings: dict[str, Any],
) -> None:
    """Play (or resume) a round-robin, gauntlet, Swiss or knockout tournament and rate the
    players.

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
    from tournaments.report import bracket_lines, crosstable, rating_table, swiss_table
    from tournaments.runner import TournamentStopped, outcome_of, run_tournament
    from tournaments.swiss import Standing

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
        options=_options(options) or None,
        players_per_table=players_per_table,
        format=format_,
        cycles=2 if double else None,
        games=games,
        rounds=rounds,
        concurrency=concurrency,
        cluster=cluster,
        openings=openings,
        seed=seed,
        output=output,
        clock=clock,
        **sandbox_settings,
    )
    config.check_local()  # remote players are for `referee serve`
    _warn_rounding(config)
    # The tournament file may name other players' folders and settings: no bot reads it.
    config = dataclasses.replace(config, sandbox=config.sandbox.hiding(config_file))
    if config.cluster is None:
        _check_clock(config.tc)
        _check_sandbox(config.sandbox)
        _warn_cores(config.concurrency)
    else:  # the bots run on the workers, which check their sandbox themselves
        from tournaments.cluster import require_distributed

        require_distributed()  # one line saying how to install it, before anything runs
    console = Console()
    progress = make_progress(quiet=True if quiet else None, console=console)
    try:
        table = _run(lambda: run_tournament(config, progress=progress, warn=_warn))
    except TournamentStopped as stopped:
        click.echo(f"Interrupted: {stopped}", err=True)
        sys.exit(128 + stopped.signum)
    console.print(rating_table(table, title=config.event))
    console.print(crosstable(table, title="Crosstable"))
    outcome = outcome_of(config)
    if outcome and isinstance(outcome[0], Standing):
        console.print(
            swiss_table([row for row in outcome if isinstance(row, Standing)], title="Swiss")
        )
    elif outcome:
        for line in bracket_lines([match for match in outcome if not isinstance(match, Standing)]):
            console.print(line, markup=False, highlight=False)
    console.print(_results_line(config), markup=False, highlight=False, soft_wrap=True)


def _results_line(config: TournamentConfig) -> str:
    """The last line of ``referee tournament`` and ``referee serve``: where the files are."""
    return (
        f"Results in {printable(str(config.output))}/ (games.pgn, results.sqlite,"
        " ratings.json/.csv, index.html)"
    )


def _warn_rounding(config: TournamentConfig) -> None:
    """Say when the tournament's games per table are rounded up to whole rotations of the
    seats (``referee tournament`` and ``referee serve``)."""
    line = config.rounding()
    if line is not None:
        _warn(line)


@main.command()
@click.argument(
    "config_file",
    metavar="CONFIG.toml",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)
@click.option(
    "--issue",
    "issue",
    multiple=True,
    metavar="NAME",
    help="Give remote player NAME a new token (repeat), print it and exit; the old one"
    " stops working at once.",
)
@click.option("--quiet", is_flag=True, help="One plain line per game instead of a live display.")
def serve(config_file: Path, issue: tuple[str, ...], quiet: bool) -> None:
    """Run the tournament of CONFIG.toml as a match server: its remote players
    (remote = true) connect over TCP or WebSocket with their tokens, spectators watch
    over HTTP, as its [server] table says (docs/server.md).

    Tokens not issued yet are printed first, once ("token TOKEN for NAME"); the
    server keeps only their hashes. The server stops when the tournament is over.
    """
    import logging

    from rich.console import Console

    from referee.server.serve import issue_tokens, serve_tournament
    from tournaments.config import load_config
    from tournaments.progress import make_progress
    from tournaments.report import crosstable, rating_table
    from tournaments.runner import TournamentStopped

    config = load_config(config_file)
    if not config.remote_names:
        raise click.ClickException(
            f"{config_file} has no remote players (remote = true): play it with"
            " `referee tournament`"
        )
    _warn_rounding(config)
    for name, token in issue_tokens(config, list(issue) if issue else None).items():
        click.echo(f"token {token} for {name}")
    if issue:
        return
    # The tournament file may name other players' folders and settings: no bot reads it.
    config = dataclasses.replace(config, sandbox=config.sandbox.hiding(config_file))
    if config.commands:
        _check_sandbox(config.sandbox)
    log = logging.getLogger("referee.server")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("server: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    console = Console()
    progress = make_progress(quiet=True if quiet else None, console=console)

    def listening(where: Any) -> None:
        for line in where.lines():
            click.echo(f"listening: {line}")

    try:
        table = _run(
            lambda: serve_tournament(config, progress=progress, warn=_warn, listening=listening)
        )
    except TournamentStopped as stopped:
        click.echo(f"Interrupted: {stopped}", err=True)
        sys.exit(128 + stopped.signum)
    finally:
        log.removeHandler(handler)
    console.print(rating_table(table, title=config.event))
    console.print(crosstable(table, title="Crosstable"))
    console.print(_results_line(config), markup=False, highlight=False, soft_wrap=True)


@main.command()
@click.argument("pgn_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the ratings as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the ratings as CSV.")
@click.option("--anchor", metavar="NAME", help="Fix this player's rating (default: mean 0).")
@click.option(
    "--anchor-elo", type=float, default=0.0, show_default=True, help="The anchor's rating."
)
@click.option(
    "--method",
    type=click.Choice(["plackett-luce", "pairwise"]),
    default="plackett-luce",
    show_default=True,
    help="How games of more than two seats are rated: their whole rankings"
    " (Plackett–Luce), or their two-player results weighted 1/(seats-1).",
)
def ratings(
    pgn_file: Path,
    as_json: bool,
    as_csv: bool,
    anchor: str | None,
    anchor_elo: float,
    method: Method,
) -> None:
    """Rate the players of any PGN file by maximum likelihood (Bradley–Terry, and
    Plackett–Luce for tables of more than two seats).

    Elo with 95% error bars, likelihood of superiority over the next player, W/D/L,
    score, OpenSkill's μ and σ, and a crosstable; two-seat figures can be checked
    against Ordo (ordo -a 0 -z 200.240940 solves the same equations).
    """
    from rich.console import Console
    from rich.markup import escape

    from tournaments.report import crosstable, rating_table, to_csv, to_json
    from tournaments.runner import ratings_for_pgn

    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    rated = ratings_for_pgn(pgn_file, anchor=anchor, anchor_elo=anchor_elo, method=method)
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


@main.command()
@click.argument("output_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
def site(output_dir: Path) -> None:
    """Rebuild the web pages of the tournament in OUTPUT_DIR from its results store.

    Writes OUTPUT_DIR/index.html (standings, crosstable, every game, each player's
    games) and a replay page per game in OUTPUT_DIR/games/.
    """
    from tournaments.site import INDEX, build_site

    count = build_site(output_dir)
    click.echo(printable(f"Wrote {output_dir / INDEX} and {count} game pages"))


# --- the ladder -------------------------------------------------------------------


class _LadderGroup(click.Group):
    """``referee ladder LADDER.toml`` runs the ladder (the ``run`` command); the other
    words (``add``, ``update``, ``retire``, ``list``, ``final``) are its commands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


_LADDER_FILE = click.argument(
    "ladder_file", metavar="LADDER.toml", type=click.Path(dir_okay=False, path_type=Path)
)


@main.group(cls=_LadderGroup)
def ladder() -> None:
    """A contest ladder: entrants join and update their bots while it runs (docs/ladder.md).

    `referee ladder LADDER.toml` runs it; `add`, `update`, `retire` and `list` manage its
    entries folder while it runs; `final` freezes submissions and plays the final phase.
    """


@ladder.command("run")
@_LADDER_FILE
@click.option("--games", type=click.IntRange(min=1), help="Stop once the ladder holds N games.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Games at once (default: CPUs).")
@click.option("--sandbox", type=click.Choice(["auto", "on", "off"]), help="The bots' sandbox.")
@click.option("--output", metavar="DIR", help="The ladder's folder (default: from the file).")
@click.option("--quiet", is_flag=True, help="One line per game instead of a live leaderboard.")
def ladder_run(
    ladder_file: Path,
    games: int | None,
    concurrency: int | None,
    sandbox: str | None,
    output: str | None,
    quiet: bool,
) -> None:
    """Run (or resume) the ladder of LADDER.toml until Ctrl-C (or --games N games)."""
    from rich.console import Console

    from tournaments.ladder.board import Board, leaderboard_table
    from tournaments.ladder.ladder import run_ladder
    from tournaments.ladder.settings import load_ladder

    config = load_ladder(ladder_file, concurrency=concurrency, sandbox=sandbox, output=output)
    _check_sandbox(config.template.sandbox)
    console = Console()
    board = Board(console, live=not quiet)
    try:
        finished = _run(lambda: run_ladder(config, games=games, warn=_warn, board=board))
    finally:
        board.close()
    title = f"{config.template.event}: {finished.games} games"
    console.print(leaderboard_table(finished.rows, title))
    click.echo(
        printable(
            f"Ladder in {config.output}/ (results.sqlite, ladder.sqlite, games.pgn, index.html)"
        )
    )


def _entry_options(command: Any) -> Any:
    command = click.option("--cmd", "cmd", required=True, help="The bot's command line.")(command)
    command = click.option(
        "--from",
        "source",
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        help="A folder whose files the version holds (copied).",
    )(command)
    return click.option("--version", "version", help="The version's name (default: v<N+1>).")(
        command
    )


def _write_entry(
    ladder_file: Path,
    entrant: str,
    cmd: str,
    source: Path | None,
    version: str | None,
    *,
    new: bool,
) -> None:
    from tournaments.ladder.entries import EntryError, next_version, write_version
    from tournaments.ladder.settings import load_ladder

    config = load_ladder(ladder_file)
    exists = (config.entries / entrant).is_dir()
    if new and exists:
        raise EntryError(f"{entrant} is already an entrant: use `referee ladder update`")
    if not new and not exists:
        raise EntryError(f"{entrant} is not an entrant yet: use `referee ladder add`")
    name = version or next_version(config.entries, entrant)
    target = write_version(config.entries, entrant, name, cmd, source)
    click.echo(
        printable(f"{entrant}@{name} written to {target}; the ladder checks it at its next scan")
    )


@ladder.command("add")
@_LADDER_FILE
@click.argument("entrant")
@_entry_options
def ladder_add(
    ladder_file: Path, entrant: str, cmd: str, source: Path | None, version: str | None
) -> None:
    """Add ENTRANT with its first version (written whole into the entries folder)."""
    _write_entry(ladder_file, entrant, cmd, source, version, new=True)


@ladder.command("update")
@_LADDER_FILE
@click.argument("entrant")
@_entry_options
def ladder_update(
    ladder_file: Path, entrant: str, cmd: str, source: Path | None, version: str | None
) -> None:
    """Give ENTRANT a new version; once it passes its check, it replaces the old one."""
    _write_entry(ladder_file, entrant, cmd, source, version, new=False)


@ladder.command("retire")
@_LADDER_FILE
@click.argument("entrant")
def ladder_retire(ladder_file: Path, entrant: str) -> None:
    """Retire ENTRANT: no longer matched nor ranked (its games are kept)."""
    from tournaments.ladder.entries import retire
    from tournaments.ladder.settings import load_ladder

    config = load_ladder(ladder_file)
    marker = retire(config.entries, entrant)
    click.echo(printable(f"{entrant} retired ({marker}); the ladder sees it at its next scan"))


@ladder.command("list")
@_LADDER_FILE
def ladder_list(ladder_file: Path) -> None:
    """List every entrant's versions: registered (with state and games) or waiting."""
    from tournaments.ladder.listing import listing
    from tournaments.ladder.settings import load_ladder

    for line in listing(load_ladder(ladder_file)):
        click.echo(printable(line))


@ladder.command("final")
@_LADDER_FILE
@click.option("--top", type=click.IntRange(min=2), required=True, help="Entrants in the final.")
@click.option(
    "--tables",
    type=click.IntRange(min=1),
    help="Tables in all, at least (default: 10 games per table of one round-robin cycle).",
)
@click.option("--quiet", is_flag=True, help="One plain line per game instead of a live display.")
def ladder_final(ladder_file: Path, top: int, tables: int | None, quiet: bool) -> None:
    """Freeze submissions and play the final among the top K: a round-robin rated by the
    Plackett–Luce fit with 95% intervals (final/ratings.json, .csv, index.html)."""
    from rich.console import Console

    from tournaments.ladder.final import run_final
    from tournaments.ladder.settings import load_ladder
    from tournaments.progress import make_progress
    from tournaments.report import rating_table

    config = load_ladder(ladder_file)
    _check_sandbox(config.template.sandbox)
    console = Console()
    progress = make_progress(quiet=True if quiet else None, console=console)
    tournament, table = _run(
        lambda: run_final(config, top=top, tables=tables, progress=progress, warn=_warn)
    )
    console.print(rating_table(table, title=f"{config.template.event}: final"))
    console.print(_results_line(tournament), markup=False, highlight=False, soft_wrap=True)


if __name__ == "__main__":
    main()
