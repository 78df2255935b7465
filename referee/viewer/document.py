"""The data a viewer page embeds: a record replayed through its game's rules, as JSON.

:func:`game_document` replays a :class:`~referee.pgn.GameRecord` with
:func:`referee.replay.replay` (the rules ``referee replay`` uses) and lists one
*frame* per state: the start, then the state after each recorded decision that
the rules accept. Each frame carries the decision that led to it (actor, token,
comment, clock annotations), every seat's clock at that point, and the game's own
data from its :class:`~referee.viewer.views.BoardView`. The page only draws these
frames, so it shows what the rules computed, and nothing else. :class:`LiveDocument`
is the same document for a game in progress, grown a decision at a time (the live
pages of :mod:`referee.server.spectate`).

Everything taken from the record (names, tags, comments, tokens) is plain text in
this document. The page inserts it as text, never as markup
(:mod:`referee.viewer.page`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from referee.errors import RuleError
from referee.games import CHANCE, Game
from referee.pgn import GameRecord, RecordedTurn, result_places, seat_players
from referee.replay import replay
from referee.viewer.views import Json, view_for

DOCUMENT_VERSION = 1
"""The version of the embedded document's shape (``version`` in it)."""

SEAT_COLOURS: Sequence[str] = ("#2e7d32", "#7b1fa2", "#1565c0", "#c62828", "#ef6c00")
"""The colour that marks each seat on the page, in seat order (Ivy: green, purple)."""

_BASE_SECONDS = re.compile(r"([0-9]+(?:\.[0-9]+)?)(?:\+[0-9]+(?:\.[0-9]+)?)?")
_PER_TURN = re.compile(r"1/([0-9]+(?:\.[0-9]+)?)")


def game_document(record: GameRecord, *, links: Sequence[tuple[str, str]] = ()) -> Json:
    """The viewer's data for ``record``: tags, seats, result and one frame per state.

    ``links`` are ``(text, relative URL)`` pairs the page shows above the game
    (a tournament page links back to its index). Raises
    :class:`~referee.errors.RecordError` when the record cannot be set up at all.
    """
    played = replay(record)
    game = played.game
    view = view_for(game)
    seats = played.seats
    start_clock = _start_clock_ms(record.tags.get("TimeControl", ""))
    clocks: list[int | None] = [start_clock] * seats
    first = played.states[0]
    frames = [_frame(game, view, first, turn=game.turn_number(first) - 1, clocks=clocks)]
    for index, after in enumerate(played.states[1:]):
        before = played.states[index]
        frames.append(_decision_frame(game, view, before, after, record.turns[index], clocks))
    _number_steps(frames)
    return {
        "version": DOCUMENT_VERSION,
        "game": game.name,
        "view": view.script.removesuffix(".js"),
        "layout": view.layout(game, first),
        "tags": [[name, value] for name, value in record.tags.items()],
        "seats": _seats(game, record, seats),
        "result": _result(record, seats),
        "comment": record.comment,
        "frames": frames,
        "broken": None
        if played.broken is None
        else {
            "turn": played.broken.turn,
            "token": played.broken.token,
            "reason": played.broken.reason,
        },
        "links": [{"text": text, "href": href} for text, href in links],
    }


def _frame(
    game: Game[Any, Any], view: Any, state: Any, *, turn: int, clocks: list[int | None]
) -> Json:
    """A frame without its decision: the turn it ends, the clocks, the game's own data."""
    return {
        "turn": turn,
        "toDecide": game.to_decide(state),
        "clocks": list(clocks),
        "state": view.state(game, state),
    }


def _decision_frame(
    game: Game[Any, Any],
    view: Any,
    before: Any,
    after: Any,
    recorded: RecordedTurn,
    clocks: list[int | None],
) -> Json:
    """The frame of the state ``after`` the recorded decision made in ``before``; a seat's
    clock in ``clocks`` becomes the one the decision records."""
    actor = game.to_decide(before)
    assert actor is not None  # the rules applied a decision here
    decision = game.parse_decision(recorded.token)
    clock = recorded.clock
    if actor != CHANCE and clock is not None and clock.clock_ms is not None:
        clocks[actor] = clock.clock_ms
    frame = _frame(game, view, after, turn=_turn_of(game, before, recorded), clocks=clocks)
    frame["decision"] = _decision(recorded, actor)
    frame["decision"]["text"] = view.sentence(game, before, actor, decision)
    frame["changes"] = view.changes(game, before, actor, decision, after)
    return frame


def _turn_of(game: Game[Any, Any], before: Any, recorded: RecordedTurn) -> int:
    """The turn number a decision belongs to: the record's, else the rules' before it."""
    return recorded.turn if recorded.turn is not None else game.turn_number(before)


def _decision(recorded: RecordedTurn, actor: int) -> Json:
    """A recorded decision as the page lists it (its ``text``, the board view's sentence
    for it, is added by the caller)."""
    clock = recorded.clock
    return {
        "actor": actor,
        "token": recorded.token,
        "comment": recorded.comment,
        "clock": None if clock is None else clock.clock_ms,
        "elapsed": None if clock is None else clock.elapsed_ms,
    }


def _number_steps(frames: list[Json]) -> None:
    """Give each frame its ``step`` within its turn (1, 2, … ; the start is step 0) and
    mark the last frame of each turn ``last``, which ``#turn=N`` links go to."""
    for index, frame in enumerate(frames):
        previous = frames[index - 1]
        same_turn = index > 1 and previous["turn"] == frame["turn"]
        frame["step"] = 0 if index == 0 else previous["step"] + 1 if same_turn else 1
    for frame, following in zip(frames, [*frames[1:], None], strict=True):
        frame["last"] = following is None or following["turn"] != frame["turn"]


def _seats(game: Game[Any, Any], record: GameRecord, seats: int) -> list[Json]:
    """Each seat's name, player and colour."""
    players = seat_players(record.tags)
    names = game.seat_names or tuple(f"Seat {seat + 1}" for seat in range(seats))
    return [
        {
            "name": names[seat],
            "player": players[seat] if seat < len(players) else "?",
            "colour": SEAT_COLOURS[seat % len(SEAT_COLOURS)],
        }
        for seat in range(seats)
    ]


def _result(record: GameRecord, seats: int) -> Json:
    """The recorded result, the places it gives, the termination and the reason."""
    reason = record.turns[-1].comment if record.turns else record.comment
    places = result_places(record.result, seats)
    return {
        "text": record.result,
        "places": None if places is None else list(places),
        "termination": record.tags.get("Termination", "normal" if places else "unterminated"),
        "reason": reason,
    }


def _start_clock_ms(time_control: str) -> int | None:
    """Each seat's clock before its first decision, from the ``TimeControl`` tag (``None``:
    not given in a form read here)."""
    if match := _PER_TURN.fullmatch(time_control):
        return round(float(match[1]) * 1000)
    if match := _BASE_SECONDS.fullmatch(time_control):
        return round(float(match[1]) * 1000)
    return None


class LiveDocument:
    """The viewer's data of a game in progress, grown as its record grows.

    It starts as :func:`game_document` of the record so far; each later record of the
    same game (:meth:`extend`) adds the frames of its new decisions, computed by the
    same rules and board view as for a finished game, so a live page shows exactly what
    its replay page will. ``document`` is the whole document so far (its last frame is
    the last of its turn until a later decision of the same turn arrives).
    """

    def __init__(self, record: GameRecord, *, links: Sequence[tuple[str, str]] = ()) -> None:
        self.document = game_document(record, links=links)
        played = replay(record)
        self._game = played.game
        self._view = view_for(played.game)
        self._seats = played.seats
        self._state = played.final_state
        self._decisions = len(played.states) - 1
        self._clocks: list[int | None] = list(self.document["frames"][-1]["clocks"])

    @property
    def frames(self) -> list[Json]:
        """Every frame so far."""
        frames: list[Json] = self.document["frames"]
        return frames

    def extend(self, record: GameRecord) -> list[Json]:
        """Add the frames of the decisions ``record`` holds beyond those already shown, and
        its result; returns the new frames. Once a decision is refused by the rules the
        document says so (``broken``, as :func:`game_document` would) and grows no more.
        """
        document = self.document
        document["result"] = _result(record, self._seats)
        document["tags"] = [[name, value] for name, value in record.tags.items()]
        if document["broken"] is not None:
            return []
        start = len(self.frames)
        for recorded in record.turns[self._decisions :]:
            before = self._state
            try:
                actor = self._game.to_decide(before)
                if actor is None:
                    raise RuleError("the game is over")
                after = self._game.apply(before, actor, self._game.parse_decision(recorded.token))
            except RuleError:
                # The replay of the whole record says exactly which rule, as offline.
                broken = replay(record).broken
                document["broken"] = (
                    None
                    if broken is None
                    else {"turn": broken.turn, "token": broken.token, "reason": broken.reason}
                )
                break
            self.frames.append(
                _decision_frame(self._game, self._view, before, after, recorded, self._clocks)
            )
            self._state = after
            self._decisions += 1
        _number_steps(self.frames)
        return self.frames[start:]
