"""Replaying game records through the rules: is a record a true game?

:func:`replay` plays a :class:`~referee.pgn.GameRecord`'s decisions through its game
module (the ``[Game]`` tag, Ivy when absent) and keeps every state up to the
first decision the rules refuse. Chance decisions are applied as recorded, each
checked to be one of the outcomes the rules allow at that point
(``Game.chance_outcomes``); when the record has a ``Seed`` tag, each is also drawn
again the way the referee drew it (:class:`~referee.session.ChanceDraws`) and must
be the outcome drawn, so rigged draws under a real seed are found. :func:`verify`
judges the whole record on top of that — legal decisions, a result (and, for a game
scored by categories, ``Places``, ``Scores`` and ``SeatNScore`` tags) the rules agree
with, a consistent ``Termination`` and ``PlyCount`` — and returns a
:class:`ReplayReport`.

The game is set up from the tags: ``[Game "…"]`` (or, without it, ``[Variant "…"]``)
names the game, Ivy when both are absent; the seats are the ``Seat1`` … ``SeatN``
tags (a game with seat names of its own, such as Ivy, has as many seats as names);
each game option is read from its tag (:func:`referee.pgn.option_tag`: Ivy's
``[TurnLimit "N"]``); ``[SetUp "1"]`` with ``[FEN "…"]`` (older records:
``[Position "…"]``) holds the position, in the game's own notation, of a game that
does not start from the start position. A tournament game played again carries
``[Attempt "N"]`` (:data:`referee.pgn.ATTEMPT_TAG`); its ``Seed`` is that attempt's
seed, so its draws are checked like any other's, and the tag must be a whole number
from 1. A record whose set-up cannot be understood raises
:class:`~referee.errors.RecordError`: there is no game to replay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from referee.clock import CLOCKS
from referee.errors import RecordError, RuleError
from referee.games import CHANCE, DEFAULT_GAME, Game, GameSettings, Outcome, get_game
from referee.pgn import (
    ATTEMPT_TAG,
    GameRecord,
    PgnError,
    RecordedTurn,
    option_tag,
    outcome_tags,
    result_places,
    result_token,
    score_text,
    score_words,
    seat_players,
    tagged_attempt,
)
from referee.session import ChanceDraws
from referee.untrusted import clip, printable

FORFEITS: frozenset[str] = frozenset({"time forfeit", "rules infraction", "abandoned"})
"""``Termination`` values for a game a player lost by breaking the protocol."""


@dataclass(frozen=True, slots=True)
class BrokenTurn:
    """The first recorded decision the rules refuse.

    ``turn`` is the game's turn number when it was to be made (Ivy: §6 ``TURN``),
    ``token`` the decision as the movetext records it (with its actor, ``s2:…``,
    in a game that names actors) and ``reason`` the rule it breaks, as one line.
    """

    turn: int
    token: str
    reason: str


@dataclass(frozen=True, slots=True)
class Replay:
    """A record's decisions played through the rules, as far as they are legal.

    ``states[i]`` is the state before the record's decision ``i`` (0-based); the
    last state is the one after the last legal decision. ``seats`` is how many
    seats the game has; ``first_turn`` the turn number of the first state;
    ``broken`` the first illegal decision, when there is one.
    """

    game: Game[Any, Any]
    states: tuple[Any, ...]
    seats: int
    first_turn: int
    broken: BrokenTurn | None

    @property
    def final_state(self) -> Any:
        """The state after the last legal decision."""
        return self.states[-1]

    @property
    def outcome(self) -> Outcome | None:
        """How the rules say the game ended after its legal decisions (``None``: it goes on)."""
        return self.game.outcome(self.final_state)

    def state_before(self, turn: int | None = None) -> Any:
        """The state before turn number ``turn`` is played (before its first decision).

        ``turn`` runs from the first state's turn number to the final state's (for
        Ivy, one past the last legal turn: the position after it); ``None`` gives
        the final state. Raises :class:`RecordError` for a turn outside that range.
        """
        if turn is None:
            return self.final_state
        numbers = [self.game.turn_number(state) for state in self.states]
        if not numbers[0] <= turn <= numbers[-1]:
            detail = ""
            if self.broken is not None:
                detail = f" (turn {self.broken.turn} is illegal: {self.broken.reason})"
            raise RecordError(
                f"no position before turn {turn}: the record has the positions before"
                f" turns {numbers[0]} to {numbers[-1]}{detail}"
            )
        return next(s for s, n in zip(self.states, numbers, strict=True) if n >= turn)

    def notation_before(self, turn: int | None = None) -> str:
        """:meth:`state_before` in the game's position notation."""
        return self.game.notation(self.state_before(turn))


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What :func:`verify` found out about one record.

    ``players`` are the players in seat order (:func:`referee.pgn.seat_players`);
    ``recorded_result`` the record's result; ``turns`` how many decisions it
    records; ``rules_result`` the result the rules give after its legal decisions
    (``*`` while the game goes on), ``rules_reason`` why (``None`` while it goes
    on) and ``outcome`` the rules' whole outcome (places, scores, breakdown);
    ``final_notation`` the position after the last legal decision;
    ``first_illegal`` the first decision the rules refuse; ``valid`` the verdict
    and ``reason`` a one-line explanation (for a valid record: how the game
    ended, or ``unfinished``).
    """

    players: tuple[str, ...]
    recorded_result: str
    turns: int
    rules_result: str
    rules_reason: str | None
    final_notation: str
    first_illegal: BrokenTurn | None
    valid: bool
    reason: str
    outcome: Outcome | None = None

    @property
    def breakdown_line(self) -> str | None:
        """Each seat's final score by category, one line (``None`` unless the rules ended
        the game and score it by categories): ``seat=1 place=1 plants=20 … total=47;
        seat=2 place=2 …`` (docs/records.md)."""
        outcome = self.outcome
        if outcome is None or not outcome.breakdown:
            return None
        return "; ".join(
            f"seat={seat} place={place} {score_words(parts, score)}"
            for seat, (place, score, parts) in enumerate(
                zip(outcome.places, outcome.scores, outcome.breakdown, strict=True), start=1
            )
        )


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
    """Play the record's decisions through its game's rules, stopping at the first illegal one.

    A decision is illegal when the rules refuse it, when it is recorded after the
    rules ended the game (a win at Feed, the turn limit), and, in a record that
    names actors, when another actor than the one to decide made it, when it is
    recorded in another turn than the one being played, or when chance could not
    have given it there (with a ``Seed`` tag: when it is not the outcome the
    referee's generator draws there from that seed). Raises :class:`RecordError`
    when the game cannot be set up from the tags.
    """
    game, settings = _setup(record)
    try:
        state = game.start(settings)
    except RuleError as error:
        raise RecordError(f"cannot set up the game: {error}") from None
    # The referee writes the seed whenever it drew: its draws can then be drawn again.
    draws = ChanceDraws(settings.seed) if "Seed" in record.tags else None
    states = [state]
    broken = None
    for played in record.turns:
        state, broken = _step(game, state, played, draws)
        if broken is not None:
            break
        states.append(state)
    return Replay(
        game=game,
        states=tuple(states),
        seats=settings.players,
        first_turn=game.turn_number(states[0]),
        broken=broken,
    )


def _step(
    game: Game[Any, Any], state: Any, played: RecordedTurn, draws: ChanceDraws | None
) -> tuple[Any, BrokenTurn | None]:
    """The state after the recorded decision ``played``, or why it cannot be made there.

    ``draws`` is the referee's generator for the record's seed (``None``: no seed),
    drawn from once per chance decision, in order, as the referee did.
    """
    number = game.turn_number(state)
    actor = game.to_decide(state)

    def broken(reason: str) -> tuple[Any, BrokenTurn]:
        return state, BrokenTurn(number, played.word, reason)

    if actor is None:
        outcome = game.outcome(state)
        ended = f" ({outcome.reason})" if outcome is not None else ""
        return broken(f"turn {number}: the game was over{ended}")
    who = _actor_name(game, actor)
    if played.actor is None and not game.alternating:
        return broken(f"turn {number}: {who} decides, but the record does not say who (s1:…, c:…)")
    if played.actor is not None and played.actor != actor:
        return broken(f"turn {number}: {who} decides, not {_actor_name(game, played.actor)}")
    if played.turn is not None and played.turn != number:
        return broken(f"turn {number}: the record says turn {played.turn}")
    try:
        decision = game.parse_decision(played.token)
        if actor == CHANCE and decision not in game.chance_outcomes(state):
            return broken(f"turn {number}: chance cannot give {played.token} here")
        if actor == CHANCE and draws is not None:
            drawn = draws.draw(game, state)
            if drawn != decision:
                return broken(
                    f"turn {number}: chance drew {game.format_decision(drawn)} here from the"
                    f" record's seed, not {played.token}"
                )
        return game.apply(state, actor, decision), None
    except RuleError as error:
        reason = str(error)
        if not reason.startswith(f"turn {number} "):  # Ivy's own messages name both
            reason = f"turn {number} ({who}): {reason}"
        return broken(reason)


def verify(record: GameRecord) -> ReplayReport:
    """Replay the record and judge it (raises :class:`RecordError` if it cannot be set up).

    A record is valid when every decision is legal, ``PlyCount`` (when present)
    counts its decisions, and its result and ``Termination`` fit what the rules say:

    - the rules ended the game: ``Termination`` is ``normal`` (or absent), the
      result is the rules' result (:func:`referee.pgn.result_token` of their places
      and scores) and, for a game scored by categories, the ``Places``, ``Scores``
      and ``SeatNScore`` tags are the rules' (:func:`referee.pgn.outcome_tags`);
    - the game goes on: the result is ``*`` with ``Termination`` ``unterminated``
      (or absent); or a seat lost by ``time forfeit``, ``rules infraction`` or
      ``abandoned``, the faulty seats sharing the last place and the others place
      1 (a solo game's result is then ``0``); or, when no seat's decision is
      recorded (every seat failed the start), it was ended by ``adjudication``
      with every seat in place 1;
    - a game the rules did not end never ends while chance is to decide (the
      referee draws at once), has no ``SeatNScore`` tags, and its ``Scores`` tag,
      when present, gives every seat 0;
    - a ``time forfeit`` after a seat's first recorded decision is lost by the seat
      to decide in the final position alone: only its clock was running. (A bot may
      break the rules or crash while another one thinks, and before any seat's
      decision — chance may deal first — any may overrun its start-up allowance,
      so nothing more follows.)
    """
    played = replay(record)
    outcome = played.outcome
    rules_result = "*" if outcome is None else result_token(outcome.places, outcome.scores)
    valid, reason = _judge(record, played, outcome, rules_result)
    return ReplayReport(
        players=seat_players(record.tags),
        recorded_result=record.result,
        turns=len(record.turns),
        rules_result=rules_result,
        rules_reason=None if outcome is None else outcome.reason,
        final_notation=played.game.notation(played.final_state),
        first_illegal=played.broken,
        valid=valid,
        reason=reason,
        outcome=outcome,
    )


def _setup(record: GameRecord) -> tuple[Game[Any, Any], GameSettings]:
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
    has_position = "FEN" in tags or "Position" in tags
    if (setup == "1") != has_position:
        raise RecordError('a FEN tag goes with [SetUp "1"] and only with it')
    seed = tags.get("Seed", "0")
    if not re.fullmatch(r"-?[0-9]{1,30}", seed):
        raise RecordError(f"Seed tag {seed!r} is not a whole number")
    if tagged_attempt(tags) is None:  # the Seed is that attempt's: nothing more to draw
        shown = clip(printable(tags[ATTEMPT_TAG]), 40)
        raise RecordError(f"Attempt tag {shown!r} is not a whole number from 1")
    return game, GameSettings(
        players=_seats(record, game),
        seed=int(seed),
        start=record.start_position,
        options=_options(record, game),
    )


def _seats(record: GameRecord, game: Game[Any, Any]) -> int:
    """How many seats the record's game has: its ``SeatN`` tags, or the game's seat names."""
    seats = record.seats
    if seats is None:
        if game.seat_names is None:
            raise RecordError(f"the record does not name {game.name}'s seats (Seat1, Seat2, …)")
        seats = len(game.seat_names)
    if not game.min_players <= seats <= game.max_players:
        raise RecordError(
            f"{game.name} is played by {game.min_players} to {game.max_players} seats, not {seats}"
        )
    return seats


def _options(record: GameRecord, game: Game[Any, Any]) -> dict[str, Any]:
    """The game's options as the record's tags hold them (defaults for the others)."""
    options: dict[str, Any] = {}
    try:
        for key in game.check_options({}):
            tag = option_tag(game.name, key)
            if tag in record.tags:
                value = record.tags[tag]
                try:
                    game.check_options({key: value})
                except RuleError as error:
                    raise RecordError(f"{tag} tag {value!r} is not a setting: {error}") from None
                options[key] = value
        return game.check_options(options)
    except RuleError as error:
        raise RecordError(f"the record's settings are not the game's: {error}") from None


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
        for tag, value in outcome_tags(outcome.places, outcome.scores, outcome.breakdown).items():
            if record.tags.get(tag) != value:
                return (
                    False,
                    f"its {tag} tag is {record.tags.get(tag)!r} but the rules give {value!r}",
                )
        return True, outcome.reason
    if recorded == "*":
        if kind == "unterminated" or termination is None:
            return True, "unfinished"
        return False, f"the game is unfinished but Termination is {kind!r}, not 'unterminated'"
    places = result_places(recorded, played.seats)
    if places is None:
        return False, f"result {recorded} is not a result of a game of {played.seats} seats"
    tagged = record.tags.get("Places")
    if tagged is not None and tagged != "-".join(map(str, places)):
        return False, f"its Places tag is {tagged!r} but its result {recorded} gives other places"
    if kind in ("normal", "unterminated"):
        return False, f"result {recorded} but the rules say the game goes on"
    if kind not in FORFEITS and kind != "adjudication":
        return False, f"unknown Termination {termination!r}"
    if played.game.to_decide(played.final_state) == CHANCE:
        # The referee draws chance's decisions as soon as chance is to decide.
        return False, f"a game cannot end by {kind} while chance is to decide"
    zeros = "-".join(score_text(0) for _ in places)
    scores = record.tags.get("Scores")
    if played.game.scored_in_points and (tagged is None or scores is None):
        return False, "a finished game scored in points records its Places and Scores tags"
    if scores is not None and scores != zeros:
        return False, f"its Scores tag is {scores!r} but a game ended by {kind} scores {zeros!r}"
    breakdowns = [f"Seat{seat}Score" for seat in range(1, played.seats + 1)]
    if breakdown := next((name for name in breakdowns if name in record.tags), None):
        return False, f"it has a {breakdown} tag but the rules did not end the game"
    # Chance deals before the seats' handshake: only a seat's decision starts the game.
    started = any(played.game.to_decide(state) != CHANCE for state in played.states[:-1])
    if kind == "adjudication":
        if set(places) != {1}:
            return False, f"result {recorded}: an adjudicated game shares place 1 among all"
        if started:
            return False, "a game is adjudicated only when no seat started it, but seats decided"
        return True, kind
    return _judge_forfeit(record, played, kind, places, started=started)


def _judge_forfeit(
    record: GameRecord, played: Replay, kind: str, places: tuple[int, ...], *, started: bool
) -> tuple[bool, str]:
    """The verdict on a game lost by ``kind`` (one of :data:`FORFEITS`) with ``places``;
    ``started``: whether a seat's decision is recorded."""
    recorded = record.result
    seats = played.seats
    if seats == 1:
        if recorded != "0":
            return False, f"a solo game lost by {kind} scores 0, not {recorded}"
    else:
        winners = places.count(1)
        if winners == seats and not started:
            return False, f"a start that every seat failed is adjudicated, not lost by {kind}"
        if winners < seats and set(places) != {1, winners + 1}:
            return False, (
                f"result {recorded}: in a game lost by {kind} the faulty seats share the last"
                " place and the others place 1"
            )
    clock = record.tags.get("Clock", "wall")
    if clock not in CLOCKS:
        return False, f"its Clock tag is {clock!r}, not one of {', '.join(CLOCKS)}"
    if kind == "time forfeit" and clock == "cpu":
        # On the cpu clock the seats were charged CPU time: the record keeps it for each
        # timed decision ([%ect]), or it does not show the clock that was in force.
        for number, turn in enumerate(record.turns, 1):
            timed = turn.clock is not None and turn.clock.clock_ms is not None
            if timed and turn.clock is not None and turn.clock.cpu_ms is None:
                return False, (
                    f"a time forfeit on the cpu clock, but decision {number} records no"
                    " CPU time ([%ect])"
                )
    mover = played.game.to_decide(played.final_state)
    if kind == "time forfeit" and started and mover is not None and seats > 1:
        # After a seat's first decision only the seat asked for one has a running clock
        # (before it, any seats may have run out of their start-up allowance): it is
        # among the faulty seats, with any that crashed while they waited. When every
        # seat is at fault they all share the places.
        faulty = [seat for seat, place in enumerate(places) if place > 1] or range(seats)
        if mover not in faulty:
            lost = tuple(seats if seat == mover else 1 for seat in range(seats))
            expected = result_token(lost, (0,) * seats)
            return False, (
                f"result {recorded} but a time forfeit is lost by the player to move"
                f" ({_actor_name(played.game, mover)}), which gives {expected}"
            )
    return True, kind


def _actor_name(game: Game[Any, Any], actor: int) -> str:
    """How messages name an actor: the game's seat name, ``seat N`` (1-based) or ``chance``."""
    if actor == CHANCE:
        return "chance"
    return game.seat_names[actor] if game.seat_names else f"seat {actor + 1}"
