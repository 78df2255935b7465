"""Replaying game records through the rules: is a record a true game?

:func:`replay` plays a :class:`~referee.pgn.GameRecord`'s turns through its game
module (the ``[Game]`` tag, Ivy when absent) and keeps every state up to the
first turn the rules refuse. :func:`verify` judges the whole record on top of
that — legal turns, a result the rules agree with, a consistent ``Termination``
and ``PlyCount`` — and returns a :class:`ReplayReport`.

The game is set up from the tags: ``[Game "…"]`` (or, without it, ``[Variant "…"]``)
names the game, Ivy when both are absent; ``[SetUp "1"]`` with ``[FEN "…"]`` (older
records: ``[Position "…"]``) holds the position, in the game's own notation, of a
game that does not start from the start position; ``[TurnLimit "N"]`` is the turn
limit. A record whose set-up cannot be understood raises
:class:`~referee.errors.RecordError`: there is no game to replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from referee.errors import IllegalDecision, RecordError, RuleError
from referee.games import Game, GameSettings, Outcome, get_game
from referee.pgn import GameRecord, PgnError

DEFAULT_GAME = "ivy"
"""The game a record without a ``[Game]`` tag is taken to be."""

FORFEITS: frozenset[str] = frozenset({"time forfeit", "rules infraction", "abandoned"})
"""``Termination`` values for a game a player lost by breaking the protocol."""

_LOSS_OF: tuple[str, str] = ("0-1", "1-0")
"""The result of a game lost by the first seat, and by the second."""


@dataclass(frozen=True, slots=True)
class BrokenTurn:
    """The first recorded turn the rules refuse.

    ``turn`` is its turn number (§6 ``TURN``), ``token`` the turn as recorded and
    ``reason`` the rule it breaks, as one line.
    """

    turn: int
    token: str
    reason: str


@dataclass(frozen=True, slots=True)
class Replay:
    """A record's turns played through the rules, as far as they are legal.

    ``states[i]`` is the state before the recorded turn numbered
    ``first_turn + i``; the last state is the one after the last legal turn.
    ``broken`` is the first illegal turn, when there is one.
    """

    game: Game
    states: tuple[Any, ...]
    first_turn: int
    broken: BrokenTurn | None

    @property
    def final_state(self) -> Any:
        """The state after the last legal turn."""
        return self.states[-1]

    @property
    def outcome(self) -> Outcome | None:
        """How the rules say the game ended after its legal turns (``None``: it goes on)."""
        return self.game.outcome(self.final_state)

    def notation_before(self, turn: int | None = None) -> str:
        """The position before turn number ``turn`` is played, in the game's notation.

        ``turn`` runs from the first recorded turn's number to one past the last
        legal turn's (the position after it); ``None`` gives that final position.
        Raises :class:`RecordError` for a turn outside that range.
        """
        if turn is None:
            return self.game.notation(self.final_state)
        last = self.first_turn + len(self.states) - 1
        if not self.first_turn <= turn <= last:
            detail = ""
            if self.broken is not None:
                detail = f" (turn {self.broken.turn} is illegal: {self.broken.reason})"
            raise RecordError(
                f"no position before turn {turn}: the record has the positions before"
                f" turns {self.first_turn} to {last}{detail}"
            )
        return self.game.notation(self.states[turn - self.first_turn])


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What :func:`verify` found out about one record.

    ``players`` are the White and Black tags; ``recorded_result`` the record's
    result; ``turns`` how many turns it records; ``rules_result`` the result the
    rules give after its legal turns (``*`` while the game goes on) and
    ``rules_reason`` why (``None`` while it goes on); ``final_notation`` the
    position after the last legal turn; ``first_illegal`` the first turn the
    rules refuse; ``valid`` the verdict and ``reason`` a one-line explanation
    (for a valid record: how the game ended, or ``unfinished``).
    """

    players: tuple[str, str]
    recorded_result: str
    turns: int
    rules_result: str
    rules_reason: str | None
    final_notation: str
    first_illegal: BrokenTurn | None
    valid: bool
    reason: str


@dataclass(frozen=True, slots=True)
class GameCheck:
    """One game of a file as :func:`check_games` saw it.

    ``number`` is its 1-based place in the file. ``report`` is ``None`` when the
    game could not be replayed at all; ``error`` then says why (a broken PGN
    game, or a set-up the rules refuse), and ``record`` is ``None`` too when
    the PGN itself was broken.
    """

    number: int
    record: GameRecord | None
    report: ReplayReport | None
    error: RecordError | None

    @property
    def valid(self) -> bool:
        """Whether the game was replayed and found valid."""
        return self.report is not None and self.report.valid

    @property
    def reason(self) -> str:
        """One line: why the game is invalid or could not be replayed, or how it ended."""
        if self.report is not None:
            return self.report.reason
        if isinstance(self.error, PgnError):
            return f"line {self.error.line}: {self.error.reason}"
        return str(self.error)


def check_games(games: Iterable[GameRecord | PgnError]) -> Iterator[GameCheck]:
    """Verify every game read from a file (see :func:`referee.pgn.read_games`), in order."""
    for number, game in enumerate(games, start=1):
        if isinstance(game, PgnError):
            yield GameCheck(number=number, record=None, report=None, error=game)
            continue
        try:
            report = verify(game)
        except RecordError as error:
            yield GameCheck(number=number, record=game, report=None, error=error)
            continue
        yield GameCheck(number=number, record=game, report=report, error=None)


def replay(record: GameRecord) -> Replay:
    """Play the record's turns through its game's rules, stopping at the first illegal one.

    A turn recorded after the rules ended the game (a win at Feed, the turn
    limit) is illegal too. Raises :class:`RecordError` when the game cannot be
    set up from the tags.
    """
    game, settings = _setup(record)
    first_turn = record.first_turn
    try:
        state = game.start(settings)
    except RuleError as error:
        raise RecordError(f"cannot set up the game: {error}") from None
    states = [state]
    broken = None
    for index, played in enumerate(record.turns):
        number = first_turn + index
        seat = game.to_decide(state)
        if seat is None:
            outcome = game.outcome(state)
            ended = f" ({outcome.reason})" if outcome is not None else ""
            broken = BrokenTurn(number, played.token, f"turn {number}: the game was over{ended}")
            break
        try:
            state = game.apply(state, seat, game.parse_decision(played.token))
        except RuleError as error:
            reason = str(error)
            if not isinstance(error, IllegalDecision):
                reason = f"turn {number} ({_seat_name(game, seat)}): {reason}"
            broken = BrokenTurn(number, played.token, reason)
            break
        states.append(state)
    return Replay(game=game, states=tuple(states), first_turn=first_turn, broken=broken)


def verify(record: GameRecord) -> ReplayReport:
    """Replay the record and judge it (raises :class:`RecordError` if it cannot be set up).

    A record is valid when every turn is legal, ``PlyCount`` (when present)
    counts its turns, and its result and ``Termination`` fit what the rules say:

    - the rules ended the game: ``Termination`` is ``normal`` (or absent) and the
      result is the rules' result;
    - the game goes on: the result is ``*`` with ``Termination`` ``unterminated``
      (or absent); or a player lost by ``time forfeit``, ``rules infraction`` or
      ``abandoned`` with a decisive result; or it was ended by ``adjudication``
      with any finished result;
    - a ``time forfeit`` after the first recorded turn is lost by the player to
      move in the final position: only its clock was running. (A bot may break
      the rules or crash while the other one thinks, and before the first turn
      either may overrun its start-up allowance, so nothing more follows.)
    """
    played = replay(record)
    outcome = played.outcome
    rules_result = "*" if outcome is None else _result_of(outcome)
    valid, reason = _judge(record, played, outcome, rules_result)
    return ReplayReport(
        players=(record.tags["White"], record.tags["Black"]),
        recorded_result=record.result,
        turns=len(record.turns),
        rules_result=rules_result,
        rules_reason=None if outcome is None else outcome.reason,
        final_notation=played.game.notation(played.final_state),
        first_illegal=played.broken,
        valid=valid,
        reason=reason,
    )


def _setup(record: GameRecord) -> tuple[Game, GameSettings]:
    """The game and its settings as the record's tags describe them."""
    tags = record.tags
    name, variant = tags.get("Game"), tags.get("Variant")
    if name is not None and variant is not None and name.lower() != variant.lower():
        raise RecordError(f"the Game tag {name!r} and the Variant tag {variant!r} disagree")
    try:
        game = get_game(name or variant or DEFAULT_GAME)
    except RuleError as error:
        raise RecordError(str(error)) from None
    setup = tags.get("SetUp", "0")
    if setup not in ("0", "1"):
        raise RecordError(f'SetUp tag must be "0" or "1", not {setup!r}')
    start = record.start_position
    has_position = "FEN" in tags or "Position" in tags
    if (setup == "1") != has_position:
        raise RecordError('a FEN tag goes with [SetUp "1"] and only with it')
    options: dict[str, Any] = {}
    if "TurnLimit" in tags:
        if not tags["TurnLimit"].isdigit():
            raise RecordError(f"TurnLimit tag {tags['TurnLimit']!r} is not a whole number")
        options["turn_limit"] = int(tags["TurnLimit"])
    players = len(game.seat_names) if game.seat_names else 2
    return game, GameSettings(players=players, start=start, options=options)


def _judge(
    record: GameRecord, played: Replay, outcome: Outcome | None, rules_result: str
) -> tuple[bool, str]:
    """The verdict on a replayed record and its one-line reason (see :func:`verify`)."""
    if played.broken is not None:
        return False, played.broken.reason
    count = record.tags.get("PlyCount")
    if count is not None and count != str(len(record.turns)):
        return False, f"PlyCount is {count} but {len(record.turns)} turns are recorded"
    recorded = record.result
    termination = record.tags.get("Termination")
    kind = "normal" if termination is None else termination.strip().lower()
    if outcome is not None:
        if kind != "normal":
            return False, f"the rules ended the game ({outcome.reason}) but Termination is {kind!r}"
        if recorded != rules_result:
            return False, f"result {recorded} but the rules give {rules_result} ({outcome.reason})"
        return True, outcome.reason
    if recorded == "*":
        if kind == "unterminated" or termination is None:
            return True, "unfinished"
        return False, f"the game is unfinished but Termination is {kind!r}, not 'unterminated'"
    if kind in ("normal", "unterminated"):
        return False, f"result {recorded} but the rules say the game goes on"
    if kind in FORFEITS:
        if recorded == "1/2-1/2":
            return False, f"a game lost by {kind} cannot be a draw"
        if kind == "time forfeit" and record.turns:
            # After the first turn only the player asked for a turn has a running clock;
            # before it, either player may have run out of its start-up allowance.
            mover = played.game.to_decide(played.final_state)
            if mover is not None and recorded != _LOSS_OF[mover]:
                seat = _seat_name(played.game, mover)
                return False, (
                    f"result {recorded} but a time forfeit is lost by the player to move"
                    f" ({seat}), which gives {_LOSS_OF[mover]}"
                )
        return True, kind
    if kind == "adjudication":
        return True, kind
    return False, f"unknown Termination {termination!r}"


def _result_of(outcome: Outcome) -> str:
    """The PGN result of a two-player outcome."""
    first, second = outcome.scores[0], outcome.scores[1]
    if first == second:
        return "1/2-1/2"
    return "1-0" if first > second else "0-1"


def _seat_name(game: Game, seat: int) -> str:
    """How messages name a seat: the game's seat name, or ``seat N``."""
    return game.seat_names[seat] if game.seat_names else f"seat {seat}"
