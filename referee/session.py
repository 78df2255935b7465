"""One refereed game, without I/O: who is asked what, what their replies mean.

A :class:`GameSession` is the referee's judgement in plain synchronous code. The
game driver (:mod:`referee.driver`) only carries its requests to the seats (bot
processes, people, in-process bots), times the replies and hands them back::

    session = GameSession(game, codec, settings, players=("alice", "bob", "carol"), ...)
    while (seat := session.deciding) is not None:
        request = session.next_request(request_id)
        ... give request.message to that seat, wait up to request.budget ...
        error = session.submit(request.seat, reply, elapsed)      # or session.fault(...)
        ... if error: tell that seat ...
    record = session.record()

The session owns the game's random generator (:class:`ChanceDraws` of
``settings.seed``): whenever the rules say chance decides, it draws one of the game's equally likely
outcomes itself and records it like any other decision, so seats are never asked
on behalf of chance and the record replays without any generator.

Hidden information stays hidden: a seat is told the decisions made since its
last request (other seats' and chance's) only as the game says it may see them
(:meth:`~referee.games.base.Game.observe`).

Every way a game can end lands here: by the rules (:class:`~referee.games.base.Outcome`),
or by a seat's fault (:class:`~referee.errors.BotFault`), which costs that seat the
game and names the cause in the record's ``Termination`` tag and final comment.
The start of a game is judged as a whole (:meth:`GameSession.faults`): when every
seat fails it, nobody played better than anybody else and all share first place.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from protocol.messages import (
    ERROR_CODES,
    ClockInfo,
    ErrorCode,
    ErrorMessage,
    GameCodec,
    GameOver,
    NewGame,
    PastTurn,
    ProtocolViolation,
    TimeControlInfo,
    TurnReply,
    TurnRequest,
)
from referee.clock import Allowances, Clock, Spent, TimeControl
from referee.errors import BotFault, BotIllegalTurn, BotTimeout, IllegalDecision, SettingsError
from referee.games.base import CHANCE, Breakdown, Game, GameSettings, Outcome
from referee.pgn import (
    ClockAnnotation,
    GameRecord,
    RecordedTurn,
    outcome_tags,
    result_token,
    seat_tags,
)


class ChanceDraws:
    """The one way chance's decisions are drawn: the referee's, and a replay's check.

    ``random.Random(seed)``, and for each chance event one of the game's equally
    likely outcomes (``game.chance_outcomes``, in the game's fixed order), so the
    same seed always draws the same game: a replay that knows the seed can check
    every recorded draw.
    """

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def draw(self, game: Game[Any, Any], state: Any) -> Any:
        """Chance's decision in ``state`` (where ``game.to_decide`` is ``CHANCE``)."""
        return self._rng.choice(list(game.chance_outcomes(state)))


@dataclass(frozen=True, slots=True)
class Request:
    """A request for ``seat``, to be answered within ``budget`` seconds.

    ``message`` is what a bot process is sent; ``view`` the same view as the game's
    own value (``Game.view``), for seats in the referee's process (a person, an
    in-process bot), which need not decode it.
    """

    seat: int
    message: TurnRequest
    budget: float
    view: Any = None
    wall_cap: float | None = None
    """Under the ``cpu`` clock, ``budget`` is CPU time and this the wall-clock seconds the
    reply must come within; ``None`` under ``wall`` (``budget`` is wall time)."""


def places_from_scores(scores: Sequence[float]) -> tuple[int, ...]:
    """Places by score, higher is better; ties share a place and skip the next (1, 1, 3)."""
    return tuple(1 + sum(other > score for other in scores) for score in scores)


@dataclass(frozen=True, slots=True, kw_only=True)
class Ending:
    """How a game ended: the rules' outcome or a forfeit, as the record gives it.

    ``scores`` are in the game's own unit (Ivy 1, ½ or 0; Verdant points), ``places``
    1 for the best, ties sharing (1, 1, 3); when not given they follow the scores.
    ``faulty_seats`` are the seats that forfeited, in seat order: none when the rules
    ended the game, usually one, every seat when all of them failed the start of the
    game. ``breakdown`` is each seat's score by category, for games scored so (empty
    after a forfeit).
    """

    scores: tuple[float, ...]
    termination: str
    reason: str
    faulty_seats: tuple[int, ...] = ()
    places: tuple[int, ...] = ()
    breakdown: tuple[Breakdown, ...] = ()

    def __post_init__(self) -> None:
        if not self.places:
            object.__setattr__(self, "places", places_from_scores(self.scores))
        if len(self.places) != len(self.scores):
            raise ValueError("one place per score")

    @property
    def faulty_seat(self) -> int | None:
        """The seat that forfeited, when exactly one did."""
        return self.faulty_seats[0] if len(self.faulty_seats) == 1 else None

    @property
    def result(self) -> str:
        """The record's result (:func:`referee.pgn.result_token`): ``1-0``, ``2-1-3``, ``47``…"""
        return result_token(self.places, self.scores)


class _Played(NamedTuple):
    """A decision accepted into the game (``actor`` is a seat or ``CHANCE``).

    ``observed`` holds, per seat, the decision as that seat sees it (``None``: it
    learns nothing of it; the actor's own entry is ``None`` too). ``elapsed`` and
    ``remaining`` are ``None`` for chance, which has no clock. A named tuple, not a
    frozen dataclass: one is made every turn, and this is twice as fast to make.
    """

    actor: int
    turn: int
    decision: Any
    notation: str
    observed: tuple[Any, ...]
    elapsed: float | None = None
    remaining: float | None = None
    cpu: float | None = None


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


_STABLE_CODES: dict[str, ErrorCode] = {code: code for code in ERROR_CODES}


def _error_message(error: BotFault) -> ErrorMessage | None:
    """The ``error`` message about ``error``; ``None`` for a crash (nobody left to tell)."""
    code = _STABLE_CODES.get(error.code)
    if code is None:
        return None
    offending = error.offending if isinstance(error, ProtocolViolation) else None
    return ErrorMessage(code=code, message=str(error), offending=offending)


def check_players(game: Game[Any, Any], players: int) -> None:
    """Refuse a number of players the game is not played by (``SettingsError``)."""
    low, high = game.min_players, game.max_players
    if not low <= players <= high:
        allowed = str(low) if low == high else f"{low} to {high}"
        raise SettingsError(f"{game.name} is played by {allowed} players, not {players}")


class GameSession:
    """The referee's side of one game between ``players`` (names, in seat order).

    ``control`` is the time control the seats play under; ``allowances`` the
    referee's own start-up allowance and margin. Seats in ``untimed`` (a person at
    the terminal) have no clock: they never run out of time, and their decisions are
    recorded with the time they took (``[%emt]``) but no time left (no ``[%clk]``).
    """

    def __init__(
        self,
        game: Game[Any, Any],
        codec: GameCodec[Any, Any],
        settings: GameSettings,
        *,
        players: Sequence[str],
        control: TimeControl,
        allowances: Allowances | None = None,
        tags: Mapping[str, str] | None = None,
        max_line_bytes: int,
        untimed: Collection[int] = (),
    ) -> None:
        if len(players) != settings.players:
            raise ValueError("one name per seat")
        check_players(game, settings.players)
        self.game = game
        self.codec = codec
        self.settings = settings
        self.players = tuple(players)
        self.control = control
        self.allowances = allowances if allowances is not None else Allowances()
        self.clock = Clock(control, len(players), margin=self.allowances.margin)
        self.untimed = frozenset(untimed)
        self.max_line_bytes = max_line_bytes
        self._extra_tags = dict(tags or {})
        self._chance = ChanceDraws(settings.seed)
        self.state = game.start(settings)
        self._start_notation = game.notation(self.state)
        self._played: list[_Played] = []
        self._told = [0] * len(players)  # per seat: how many decisions it has been told of
        self._drew = False  # whether chance decided anything (the record then keeps the seed)
        self._asked: int | None = None
        self._deciding: int | None = None  # who decides in ``state``: set once per state
        self._faults: dict[int, BotFault] = {}  # the seats whose faults ended the game
        self._primary = 0  # the one whose fault ended it (its Termination is the game's)
        self.ending: Ending | None = None
        # What every turn request says of the time control, which does not change.
        self._increment_ms = _ms(control.increment)
        self._per_turn_ms = None if control.per_turn is None else _ms(control.per_turn)
        self._settle()

    # --- what the seats are told --------------------------------------------------

    def seat_name(self, seat: int) -> str:
        """The seat's name in the game (Ivy: ``"Green"``), else ``"Seat N"`` (from 1)."""
        names = self.game.seat_names
        return names[seat] if names else f"Seat {seat + 1}"

    def new_game(self, seat: int, request_id: int) -> NewGame:
        """The ``new_game`` message for ``seat`` (the handshake of every game)."""
        control = self.control
        return NewGame(
            id=request_id,
            game=self.game.name,
            seat=seat,
            seat_name=self.seat_name(seat).lower(),
            players=self.players,
            time_control=TimeControlInfo(
                kind="per_turn" if control.per_turn is not None else "fischer",
                base_ms=_ms(control.base or 0.0),
                increment_ms=_ms(control.increment),
                per_turn_ms=None if control.per_turn is None else _ms(control.per_turn),
                clock="cpu" if control.clock == "cpu" else "wall",
            ),
            startup_ms=_ms(self.allowances.startup),
            settings=dict(self.game.rule_settings(self.state)),
            position=self._start_notation,
            max_line_bytes=self.max_line_bytes,
        )

    @property
    def deciding(self) -> int | None:
        """The seat that must decide next, or ``None`` once the game is over."""
        if self.ending is not None:
            return None
        return self._deciding

    def next_request(self, request_id: int) -> Request:
        """The request for the seat that decides next (see :attr:`deciding`)."""
        seat = self.deciding
        if seat is None:
            raise RuntimeError("the game is over: nobody decides")
        self._asked = seat
        clock = self.clock
        last = clock.last_turn(seat)
        view = self.game.view(self.state, seat)
        message = TurnRequest(
            id=request_id,
            turn=self.game.turn_number(self.state),
            view=self.codec.view_raw(view),
            clock=ClockInfo(
                remaining_ms=_ms(clock.remaining(seat)),
                increment_ms=self._increment_ms,
                per_turn_ms=self._per_turn_ms,
                last_turn_ms=None if last is None else _ms(last),
            ),
            opponents_clock_ms=tuple(
                _ms(clock.remaining(other)) for other in range(len(self.players)) if other != seat
            ),
            since_last=self.news(seat),
        )
        return Request(
            seat=seat,
            message=message,
            budget=clock.budget(seat),
            view=view,
            wall_cap=clock.wall_cap(seat),
        )

    def news(self, seat: int) -> tuple[PastTurn, ...]:
        """What ``seat`` has not been told yet, oldest first, as it may see it; now told.

        Other seats' decisions and chance's (``PastTurn.seat`` ``None``), each as
        ``Game.observe`` shows it to ``seat``; what it learns nothing of is left out.
        A request carries this as ``since_last``; a person is shown it at the end too.
        """
        fresh = self._played[self._told[seat] :]
        self._told[seat] = len(self._played)
        news = []
        for played in fresh:
            seen = played.observed[seat]
            if seen is None:
                continue
            exact = seen is played.decision
            news.append(
                PastTurn(
                    seat=None if played.actor == CHANCE else played.actor,
                    turn=played.turn,
                    notation=played.notation if exact else self.game.format_decision(seen),
                    actions=self.codec.actions_raw(seen),
                )
            )
        return tuple(news)

    def game_over(self, request_id: int) -> GameOver:
        """The ``game_over`` message every seat gets at the end."""
        ending = self._require_ending()
        return GameOver(
            id=request_id,
            result=ending.result,
            scores=ending.scores,
            places=ending.places,
            termination=ending.termination,
            reason=ending.reason,
        )

    # --- what the seats answer ----------------------------------------------------

    def submit(
        self, seat: int, reply: TurnReply, elapsed: float | Spent, *, forfeit: bool = True
    ) -> ErrorMessage | None:
        """Judge ``seat``'s reply, which took ``elapsed`` seconds (wall time, or a
        :class:`~referee.clock.Spent` with the CPU time too). The clock in force is
        charged: under ``cpu``, the CPU time (a seat that measured none, the wall time).

        Returns ``None`` when the decision is accepted, or the ``error`` message for
        the seat when it is refused: the game is then over, the seat forfeits. With
        ``forfeit=False`` (a person at the terminal) a refused decision changes
        nothing and the seat may submit again; running out of time still forfeits.
        """
        if seat != self._asked or self.ending is not None:
            raise RuntimeError(f"seat {seat} was not asked for a decision")
        player = self.seat_name(seat)
        spent = elapsed if isinstance(elapsed, Spent) else Spent(elapsed)
        on_cpu = self.control.clock == "cpu" and spent.cpu is not None
        charged = spent.cpu if on_cpu and spent.cpu is not None else spent.wall
        if seat not in self.untimed and not self.clock.charge(seat, charged):
            allowed = self.clock.budget(seat) - self.clock.margin
            what = " of CPU time" if on_cpu else ""
            return self.fault(
                seat,
                BotTimeout(
                    f"{player} ran out of time: the reply took {charged:.3f} s{what}, "
                    f"{allowed:.3f} s were left"
                ),
            )
        try:
            decision = self.codec.decode_actions(reply.actions)
            self._accept(seat, decision, spent.wall, spent.cpu)
        except ProtocolViolation as violation:
            return self.fault(seat, violation) if forfeit else violation.to_message()
        except IllegalDecision as illegal:
            offending = None if illegal.index is None else f"$.actions[{illegal.index}]"
            error = ErrorMessage(code="illegal_turn", message=str(illegal), offending=offending)
            if forfeit:
                self.faults({seat: BotIllegalTurn(str(illegal))}, primary=seat)
            return error
        self._asked = None
        self._settle()
        return None

    def fault(self, seat: int, error: BotFault) -> ErrorMessage | None:
        """End the game because ``seat`` misbehaved (timeout, crash, bad line).

        Returns the ``error`` message to send to it, or ``None`` when it cannot be
        told (it crashed).
        """
        return self.faults({seat: error}, primary=seat)[seat]

    def faults(
        self, errors: Mapping[int, BotFault], *, primary: int | None = None
    ) -> dict[int, ErrorMessage | None]:
        """End the game because these seats misbehaved, all at once.

        That is how the start of a game is judged: every seat that failed its
        handshake forfeits. The faulty seats share the last place, the others the
        first; a duel scores 1 for the seat left and 0 for the faulty one, a game
        scored in points 0 for everyone (its points are not final: places carry the
        result). ``primary`` is the seat whose fault ended the game (the one asked; by
        default the first faulty seat): the record's ``Termination`` is its fault's.
        When every seat failed the start, none played better than another: all share
        first place (a duel scores ½ each) and the game is adjudicated; when every
        seat is at fault later on, they share the places too, under the primary
        fault. Returns, per faulty seat, the ``error`` message for it (``None`` when
        it cannot be told).
        """
        if not errors:
            raise ValueError("no fault to judge")
        if self.ending is not None:
            raise RuntimeError("the game is already over")
        self._asked = None
        self._faults = dict(errors)
        self._primary = min(errors) if primary is None else primary
        self._end_by_faults()
        return {seat: _error_message(errors[seat]) for seat in sorted(errors)}

    def more_faults(self, errors: Mapping[int, BotFault]) -> dict[int, ErrorMessage | None]:
        """Add seats found at fault as the game ended for another seat's fault (a bot
        that had crashed while it waited for its turn): they share the last place
        with it. Returns the ``error`` message for each seat added."""
        if self.ending is None or not self._faults:
            raise RuntimeError("the game did not end by a fault")
        added = {seat: fault for seat, fault in errors.items() if seat not in self._faults}
        self._faults.update(added)
        self._end_by_faults()
        return {seat: _error_message(added[seat]) for seat in sorted(added)}

    def _end_by_faults(self) -> None:
        """The ending that :attr:`_faults` gives (see :meth:`faults`)."""
        errors = self._faults
        seats = len(self.players)
        faulty = tuple(sorted(errors))
        points = self.game.scored_in_points
        blame = "; ".join(
            f"{self.seat_name(seat)} ({self.players[seat]}) forfeits: {errors[seat]}"
            for seat in faulty
        )
        started = any(played.actor != CHANCE for played in self._played)
        termination = errors[self._primary].termination
        if len(faulty) == seats:
            places = (1,) * seats
            scores = (0.0 if points else 1.0 / seats,) * seats
            if started:
                reason = f"{blame}; every seat is at fault, so all share the places"
            else:
                termination = "adjudication"
                reason = f"{blame}; nobody played, so the game is adjudicated a draw"
        else:
            last = seats - len(faulty) + 1
            places = tuple(last if seat in errors else 1 for seat in range(seats))
            winners = seats - len(faulty)
            scores = tuple(
                0.0 if points or seat in errors else 1.0 / winners for seat in range(seats)
            )
            reason = blame
        self.ending = Ending(
            scores=scores,
            places=places,
            termination=termination,
            reason=reason,
            faulty_seats=faulty,
        )

    # --- the game moving on -------------------------------------------------------

    def _accept(
        self, actor: int, decision: Any, elapsed: float | None, cpu: float | None = None
    ) -> None:
        """Apply ``actor``'s ``decision`` (raises ``IllegalDecision``) and keep it."""
        game, before = self.game, self.state
        turn = game.turn_number(before)
        self.state = game.apply(before, actor, decision)
        observed = tuple(
            None if seat == actor else game.observe(before, actor, decision, seat)
            for seat in range(len(self.players))
        )
        remaining = None
        if actor != CHANCE and actor not in self.untimed:
            self.clock.add_increment(actor)
            remaining = self.clock.remaining(actor)
        self._played.append(
            _Played(
                actor=actor,
                turn=turn,
                decision=decision,
                notation=game.format_decision(decision),
                observed=observed,
                elapsed=elapsed,
                remaining=remaining,
                cpu=cpu,
            )
        )

    def _settle(self) -> None:
        """Draw chance's decisions until a seat must decide, or end the game if it is over.

        The state changes only here (after ``_accept``), so this is where it is judged,
        once: :attr:`deciding` keeps the answer instead of asking the rules again.
        """
        game = self.game
        self._deciding = None
        while self.ending is None:
            outcome: Outcome | None = game.outcome(self.state)
            if outcome is not None:
                self.ending = Ending(
                    scores=outcome.scores,
                    places=outcome.places,
                    termination="normal",
                    reason=outcome.reason,
                    breakdown=outcome.breakdown,
                )
                return
            seat = game.to_decide(self.state)
            if seat != CHANCE:
                self._deciding = seat
                return
            self._drew = True
            self._accept(CHANCE, self._chance.draw(game, self.state), None)

    def _require_ending(self) -> Ending:
        if self.ending is None:
            raise RuntimeError("the game is not over")
        return self.ending

    # --- the record ---------------------------------------------------------------

    @property
    def plies(self) -> int:
        """How many decisions (chance's included) have been accepted."""
        return len(self._played)

    def record(self) -> GameRecord:
        """The game as a PGN record (``*`` while it goes on)."""
        game, ending, players = self.game, self.ending, self.players
        result = ending.result if ending else "*"
        # GameRecord puts the seven-tag roster first and fills what is missing.
        tags: dict[str, str] = dict(self._extra_tags)
        tags["Result"] = result
        tags["Game"] = game.name.capitalize()
        tags.update(seat_tags(game.seat_names, players))  # White/Black too for two seats
        tags.update(game.settings_tags(self.state))
        tags["TimeControl"] = self.control.pgn_tag
        if self.control.clock != "wall":  # no tag: the wall clock, as in every chess record
            tags["Clock"] = self.control.clock
        if self._drew:  # a replay needs no seed; a rerun of the game does
            tags["Seed"] = str(self.settings.seed)
        tags["Termination"] = ending.termination if ending else "unterminated"
        tags["PlyCount"] = str(len(self._played))
        tags["Variant"] = tags["Game"]  # variant PGNs' convention: not chess, and which game
        if self.settings.start is not None:
            tags["SetUp"] = "1"
            tags["FEN"] = self._start_notation
        if ending is not None:
            points = game.scored_in_points
            tags.update(outcome_tags(ending.places, ending.scores, ending.breakdown, points=points))
        named = not game.alternating  # each decision names its actor and turn
        turns = [
            RecordedTurn(
                p.notation,
                clock=None
                if p.elapsed is None
                else ClockAnnotation(
                    clock_ms=None if p.remaining is None else _ms(p.remaining),
                    elapsed_ms=_ms(p.elapsed),
                    cpu_ms=None if p.cpu is None else _ms(p.cpu),
                ),
                actor=p.actor if named else None,
                turn=p.turn if named else None,
            )
            for p in self._played
        ]
        comment = None
        if ending is not None:  # the reason may quote a bot: the record cleans it
            if turns:
                turns[-1] = dataclasses.replace(turns[-1], comment=ending.reason)
            else:
                comment = ending.reason
        return GameRecord(tags=tags, turns=turns, result=result, comment=comment)
