"""The ``referee`` command.

Commands only parse their arguments and call library functions; whatever they
do can be done from Python. Any :class:`~referee.errors.RefereeError` (or
``OSError``) a command lets through becomes one line ``Error: …`` on stderr and
exit code 1 — :class:`RefereeGroup` does that for every command of the group.

Exit codes: 0 success; 1 an error, or (``replay``) an invalid game; 2 a usage
error (click's).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from referee import __version__
from referee.errors import RecordError, RefereeError
from referee.games.ivy.position import Position
from referee.pgn import read_game, read_pgn_file
from referee.render import render
from referee.replay import GameCheck, check_games
from referee.replay import replay as replay_record


class RefereeGroup(click.Group):
    """A click group whose commands report referee errors as one ``Error:`` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise
        except (RefereeError, OSError) as error:
            raise click.ClickException(" ".join(str(error).splitlines())) from None


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
    checked. Exits 0 when every game is valid, 1 otherwise (with
    --final-position too).
    """
    checks = list(check_games(read_pgn_file(pgn_file)))
    if not checks:
        raise RecordError(f"{pgn_file} holds no games")
    for check in checks:
        click.echo(_final_position_line(check) if final_position else _summary_line(check))
        if not check.valid:
            click.echo(f"game {check.number}: {check.reason}", err=True)
    ctx.exit(0 if all(check.valid for check in checks) else 1)


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
    help="Which game of the PGN file to show (default: the first).",
)
@click.option(
    "--turn",
    type=click.IntRange(min=1),
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
    """Draw an Ivy position: a §6 position string, or a game of a PGN file.

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
