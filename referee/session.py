"""One refereed game, without I/O: who is asked what, what their replies mean.

A :class:`GameSession` is the referee's judgement in plain synchronous code. The
trio layer (:mod:`referee.match`) only carries its requests to the bots, times the
replies and hands them back::

    session = GameSession(game, codec, settings, players=("alice", "bob"), ...)
    while (seat := session.deciding) is not None:
        request = session.next_request(request_id)
        ... write request.message to that seat's bot, wait up to request.budget ...
        error = session.submit(request.seat, reply, elapsed)      # or session.fault(...)
        ... if error: tell that bot ...
    record = session.record()

Every way a game can end lands here: by the rules (:class:`~referee.games.base.Outcome`),
or by a bot's fault (:class:`~referee.errors.BotFault`), which costs that bot the
game and names the cause in the record's ``Termination`` tag and final comment.
The start of a game is judged as a whole (:meth:`GameSession.faults`): when every
bot fails it, nobody played better than anybody else and the game is adjudicated
a draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
from referee.clock import Clock, TimeControl
from referee.errors import BotFault, BotIllegalTurn, BotTimeout, IllegalDecision
from referee.games.base import Game, GameSettings, Outcome
from referee.pgn import ClockAnnotation, GameRecord, RecordedTurn


@dataclass(frozen=True, slots=True)
class Request:
    """A request for ``seat``'s bot, to be answered within ``budget`` seconds."""

    seat: int
    message: TurnRequest
    budget: float


@dataclass(frozen=True, slots=True)
class Ending:
    """How a game ended: the rules' outcome or a forfeit, as the record gives it.

    ``faulty_seats`` are the seats whose bots forfeited, in seat order: none when
    the rules ended the game, usually one, every seat when all of them failed the
    start of the game (then the game is adjudicated a draw).
    """

    scores: tuple[float, ...]
    termination: str
    reason: str
    faulty_seats: tuple[int, ...] = ()

    @property
    def faulty_seat(self) -> int | None:
        """The seat that forfeited, when exactly one did."""
        return self.faulty_seats[0] if len(self.faulty_seats) == 1 else None

    @property
    def result(self) -> str:
        """The PGN result token for two seats (``1-0``, ``0-1``, ``1/2-1/2``)."""
        if len(self.scores) != 2:
            return "*"
        white, black = self.scores
        if white > black:
            return "1-0"
        if black > white:
            return "0-1"
        return "1/2-1/2"


@dataclass(frozen=True, slots=True)
class _Played:
    """A decision accepted into the game, with its timing."""

    seat: int
    turn: int
    notation: str
    actions: Any
    elapsed: float
    remaining: float


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


class GameSession:
    """The referee's side of one game between ``players`` (names, in seat order)."""

    def __init__(
        self,
        game: Game[Any, Any],
        codec: GameCodec[Any, Any],
        settings: GameSettings,
        *,
        players: Sequence[str],
        control: TimeControl,
        tags: Mapping[str, str] | None = None,
        max_line_bytes: int,
    ) -> None:
        if len(players) != settings.players:
            raise ValueError("one name per seat")
        self.game = game
        self.codec = codec
        self.settings = settings
        self.players = tuple(players)
        self.control = control
        self.clock = Clock(control, len(players))
        self.max_line_bytes = max_line_bytes
        self._extra_tags = dict(tags or {})
        self.state = game.start(settings)
        self._start_notation = game.notation(self.state)
        self._played: list[_Played] = []
        self._seen = [0] * len(players)  # per seat: how many turns it has been told of
        self._asked: int | None = None
        self.ending: Ending | None = None
        self._settle()

    # --- what the bots are told ---------------------------------------------------

    def seat_name(self, seat: int) -> str:
        """The seat's name in the game (Ivy: ``"Green"``), else ``"seat N"``."""
        names = self.game.seat_names
        return names[seat] if names else f"seat {seat + 1}"

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
            ),
            startup_ms=_ms(control.startup),
            settings=dict(self.game.rule_settings(self.state)),
            position=self._start_notation,
            max_line_bytes=self.max_line_bytes,
        )

    @property
    def deciding(self) -> int | None:
        """The seat that must decide next, or ``None`` once the game is over."""
        if self.ending is not None:
            return None
        return self.game.to_decide(self.state)

    def next_request(self, request_id: int) -> Request:
        """The turn request for the seat that decides next (see :attr:`deciding`)."""
        seat = self.deciding
        if seat is None:
            raise RuntimeError("the game is over: nobody decides")
        self._asked = seat
        clock = self.clock
        last = clock.last_turn(seat)
        since = self._played[self._seen[seat] :]
        self._seen[seat] = len(self._played)
        message = TurnRequest(
            id=request_id,
            turn=self.game.turn_number(self.state),
            view=self.codec.view_raw(self.game.view(self.state, seat)),
            clock=ClockInfo(
                remaining_ms=_ms(clock.remaining(seat)),
                increment_ms=_ms(self.control.increment),
                per_turn_ms=None if self.control.per_turn is None else _ms(self.control.per_turn),
                last_turn_ms=None if last is None else _ms(last),
            ),
            opponents_clock_ms=tuple(
                _ms(clock.remaining(other)) for other in range(len(self.players)) if other != seat
            ),
            since_last=tuple(
                PastTurn(seat=p.seat, turn=p.turn, notation=p.notation, actions=p.actions)
                for p in since
                if p.seat != seat
            ),
        )
        return Request(seat=seat, message=message, budget=clock.budget(seat))

    def game_over(self, request_id: int) -> GameOver:
        """The ``game_over`` message every bot gets at the end."""
        ending = self._require_ending()
        return GameOver(
            id=request_id,
            result=ending.result,
            scores=ending.scores,
            termination=ending.termination,
            reason=ending.reason,
        )

    # --- what the bots answer -----------------------------------------------------

    def submit(self, seat: int, reply: TurnReply, elapsed: float) -> ErrorMessage | None:
        """Judge ``seat``'s reply, which took ``elapsed`` seconds.

        Returns ``None`` when the decision is accepted, or the ``error`` message
        for the bot when it is refused (the game is then over: the bot forfeits).
        """
        if seat != self._asked or self.ending is not None:
            raise RuntimeError(f"seat {seat} was not asked for a decision")
        self._asked = None
        player = self.seat_name(seat)
        if not self.clock.charge(seat, elapsed):
            allowed = self.clock.budget(seat) - self.control.margin
            return self.fault(
                seat,
                BotTimeout(
                    f"{player} ran out of time: the reply took {elapsed:.3f} s, "
                    f"{allowed:.3f} s were left"
                ),
            )
        turn = self.game.turn_number(self.state)
        try:
            decision = self.codec.decode_actions(reply.actions)
            self.state = self.game.apply(self.state, seat, decision)
        except ProtocolViolation as violation:
            return self.fault(seat, violation)
        except IllegalDecision as illegal:
            offending = None if illegal.index is None else f"$.actions[{illegal.index}]"
            error = BotIllegalTurn(str(illegal))
            return self._forfeit(seat, error, offending)
        self.clock.add_increment(seat)
        self._played.append(
            _Played(
                seat=seat,
                turn=turn,
                notation=self.game.format_decision(decision),
                actions=self.codec.actions_raw(decision),
                elapsed=elapsed,
                remaining=self.clock.remaining(seat),
            )
        )
        self._settle()
        return None

    def fault(self, seat: int, error: BotFault) -> ErrorMessage | None:
        """End the game because ``seat``'s bot misbehaved (timeout, crash, bad line).

        Returns the ``error`` message to send to the bot, or ``None`` when it
        cannot be told (it crashed).
        """
        return self.faults({seat: error})[seat]

    def faults(self, errors: Mapping[int, BotFault]) -> dict[int, ErrorMessage | None]:
        """End the game because the bots of these seats misbehaved, all at once.

        That is how the start of a game is judged: every seat that failed its
        handshake forfeits; the others share the points. When every seat failed,
        none played better than another: the game is adjudicated a draw (PGN has
        no result in which everybody loses). Returns, per faulty seat, the
        ``error`` message for its bot (``None`` when it cannot be told).
        """
        if not errors:
            raise ValueError("no fault to judge")
        if self.ending is not None:
            raise RuntimeError("the game is already over")
        self._asked = None
        players = len(self.players)
        faulty = tuple(sorted(errors))
        blame = "; ".join(
            f"{self.seat_name(seat)} ({self.players[seat]}) forfeits: {errors[seat]}"
            for seat in faulty
        )
        if len(faulty) == players:
            scores = (1.0 / players,) * players
            termination = "adjudication"
            reason = f"{blame}; nobody played, so the game is adjudicated a draw"
        else:
            winners = players - len(faulty)
            scores = tuple(0.0 if s in errors else 1.0 / winners for s in range(players))
            termination = errors[faulty[0]].termination
            reason = blame
        self.ending = Ending(
            scores=scores, termination=termination, reason=reason, faulty_seats=faulty
        )
        return {seat: _error_message(errors[seat]) for seat in faulty}

    def _forfeit(self, seat: int, error: BotIllegalTurn, offending: str | None) -> ErrorMessage:
        """``seat`` loses by an illegal turn (``offending`` points into its reply)."""
        self.faults({seat: error})
        return ErrorMessage(code="illegal_turn", message=str(error), offending=offending)

    def _settle(self) -> None:
        """End the game if the rules say it is over."""
        outcome: Outcome | None = self.game.outcome(self.state)
        if outcome is not None:
            self.ending = Ending(scores=outcome.scores, termination="normal", reason=outcome.reason)

    def _require_ending(self) -> Ending:
        if self.ending is None:
            raise RuntimeError("the game is not over")
        return self.ending

    # --- the record ---------------------------------------------------------------

    @property
    def plies(self) -> int:
        """How many decisions have been accepted."""
        return len(self._played)

    @property
    def last_notation(self) -> str | None:
        """The last accepted decision in record notation (``None`` before the first)."""
        return self._played[-1].notation if self._played else None

    def record(self) -> GameRecord:
        """The game as a PGN record (``*`` while it goes on)."""
        ending = self.ending
        result = ending.result if ending else "*"
        # GameRecord puts the seven-tag roster first and fills what is missing.
        tags: dict[str, str] = {
            **self._extra_tags,
            "White": self.players[0],
            "Black": self.players[1] if len(self.players) > 1 else "?",
            "Result": result,
            "Game": self.game.name.capitalize(),
        }
        for seat, player in enumerate(self.players):
            tags[self.seat_name(seat)] = player
        tags.update(self.game.settings_tags(self.state))
        tags["TimeControl"] = self.control.pgn_tag
        tags["Termination"] = ending.termination if ending else "unterminated"
        tags["PlyCount"] = str(len(self._played))
        tags["Variant"] = tags["Game"]  # variant PGNs' convention: not chess, and which game
        if self.settings.start is not None:
            tags["SetUp"] = "1"
            tags["FEN"] = self._start_notation
        turns = [
            RecordedTurn(
                p.notation,
                clock=ClockAnnotation(clock_ms=_ms(p.remaining), elapsed_ms=_ms(p.elapsed)),
            )
            for p in self._played
        ]
        comment = None
        if ending is not None:  # the reason may quote a bot: the record cleans it
            if turns:
                turns[-1] = RecordedTurn(turns[-1].token, ending.reason, turns[-1].clock)
            else:
                comment = ending.reason
        return GameRecord(tags=tags, turns=turns, result=result, comment=comment)
