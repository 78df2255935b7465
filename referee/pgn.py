"""Game records as PGN: a writer no text can corrupt, streaming readers, clock comments.

The format is PGN's (see ``docs/ivy.md`` §8 and ``docs/records.md``) so that rating
tools and game filters read our records unchanged. This module knows nothing about
any game's rules: a decision is kept as its token text, and the game module checks it
on replay (:mod:`referee.replay`). Two kinds of movetext are written and read:

- a game whose seats simply alternate (``Game.alternating``: Ivy) is chess-like: the
  first seat plays the odd turn numbers, numbered ``1.``, ``2.`` as PGN numbers moves;
- any other game names the actor of every decision (``s1:token`` for the first seat,
  ``c:token`` for chance, :func:`actor_word`), with the game's turn number ``N.``
  before the first decision of each turn.

The ``Result`` of a game of any number of seats is made in one place
(:func:`result_token`) and read back by :func:`result_places`; the tags naming the
seats' players and their scores likewise (:func:`seat_tags`, :func:`seat_players`,
:func:`outcome_tags`, :func:`option_tag`).

- :class:`GameRecord` / :class:`RecordedTurn` hold one game. They clean what they are
  given (:func:`clean_tag_value`, :func:`clean_comment`), so text from a bot can never
  end a comment, open a tag, fake a result or put a control byte in a file, whoever
  builds the record: what a record holds is exactly what every PGN reader reads back.
- :func:`format_game` writes one game; :func:`append_game` appends it to a file
  durably (one write, then fsync).
- :func:`read_games` reads the games of a text, :func:`iter_pgn_file` those of a file
  one at a time (memory does not grow with the file). Neither stops at a broken game:
  it yields a :class:`PgnError` for it and carries on with the next.
  :func:`read_pgn_file` and :func:`read_game` are shortcuts.
- :func:`read_headers` / :func:`iter_pgn_headers` read only each game's tags, in one
  fast pass that never looks into the movetext beyond finding where the next game
  starts: what a rating tool needs, whatever the movetext holds (variations, another
  game's moves, NAGs).
- :class:`ClockAnnotation` writes and reads ``{[%clk 0:00:39.5] [%emt 0:00:00.21]}``.

Where one game ends and the next begins is decided in one place for every reader
(:func:`_split_games`): a game starts at a tag line (a line whose first non-blank
character is ``[``) that is outside any ``{…}`` comment and follows movetext, or
that follows a blank line inside a comment, which then was never closed.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from referee.errors import RecordError
from referee.games.base import CHANCE, Breakdown
from referee.untrusted import MAX_TEXT_LENGTH, clip, printable

SEVEN_TAG_ROSTER: tuple[str, ...] = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
"""PGN's seven mandatory tags, in the order they are written."""

ROSTER_DEFAULTS: Mapping[str, str] = {
    "Event": "?",
    "Site": "?",
    "Date": "????.??.??",
    "Round": "?",
    "White": "?",
    "Black": "?",
    "Result": "*",
}
"""PGN's values for roster tags that are unknown."""

RESULTS: tuple[str, ...] = ("1-0", "0-1", "1/2-1/2", "*")
"""Chess PGN's game termination markers: first seat won, second seat won, draw,
unfinished. Games of one seat or of three to five seats have other results
(:func:`result_token`)."""

MAX_SEATS = 5
"""The most seats a record's ``Result`` can give places to."""

MAX_LINE_LENGTH = 79
"""Movetext lines are wrapped to stay under 80 characters."""

MAX_WORD_LENGTH = 60
"""A longer word of a comment is cut into pieces this long, so every line can be wrapped."""

MAX_COMMENT_LENGTH = MAX_TEXT_LENGTH
"""The most characters a comment's text keeps (clock annotations aside)."""

MAX_TAG_VALUE_LENGTH = 200
"""The most characters a tag value keeps, so a tag line stays within PGN's 255."""

_COMMENT_SAFE = str.maketrans({"{": "(", "}": ")", "[": "(", "]": ")", "%": "％"})
"""Comment text never holds what ends a comment or starts a tag, escape or command."""

_TAG_SAFE = str.maketrans({'"': "'", "\\": "/"})
"""Tag values never need an escape, which some readers (Ordo) do not undo."""

_TAG_NAME = re.compile(r"[A-Za-z0-9_]+")
_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9_+#=:\-]*|--")
"""A chess-like decision: a PGN symbol (letters, digits, ``_+#=:-``) or the null move."""
_DECISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+#=:\-,/@.]*")
"""A decision that names its actor, after ``s1:``/``c:``: it may also hold ``,/@.``,
none of which ends a word, opens a comment or a variation, or starts a result."""


class PgnError(RecordError):
    """One game of a PGN text cannot be read.

    ``game`` is the game's 1-based place in the text, ``line`` the 1-based line
    where the problem was found and ``reason`` what is wrong.
    """

    def __init__(self, game: int, line: int, reason: str) -> None:
        super().__init__(f"game {game}, line {line}: {reason}")
        self.game = game
        self.line = line
        self.reason = reason


# --- cleaning text ---------------------------------------------------------------


def clean_comment(text: str) -> str:
    """``text`` as a comment holds it, and as every reader gives it back.

    One line of visible characters (:func:`referee.untrusted.printable`); ``{``
    and ``[`` become ``(``, ``}`` and ``]`` become ``)``, ``%`` becomes ``％``;
    words longer than :data:`MAX_WORD_LENGTH` are cut into pieces; at most
    :data:`MAX_COMMENT_LENGTH` characters are kept. Cleaning twice changes
    nothing more.
    """
    words = printable(text).translate(_COMMENT_SAFE).split(" ")
    pieces = [
        word[start : start + MAX_WORD_LENGTH]
        for word in words
        for start in range(0, max(len(word), 1), MAX_WORD_LENGTH)
    ]
    return clip(" ".join(pieces), MAX_COMMENT_LENGTH)


def clean_tag_value(value: str) -> str:
    """``value`` as a tag holds it, and as every reader gives it back.

    One line of visible characters (:func:`referee.untrusted.printable`); ``"``
    becomes ``'`` and ``\\`` becomes ``/``; at most :data:`MAX_TAG_VALUE_LENGTH`
    characters are kept. A name is *PGN-safe* when cleaning leaves it unchanged.
    """
    return clip(printable(value).translate(_TAG_SAFE), MAX_TAG_VALUE_LENGTH)


# --- clock comments ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClockAnnotation:
    """The clock annotations of a turn, in milliseconds.

    ``clock_ms`` is the time the player had left after the turn (``[%clk]``),
    ``elapsed_ms`` the time the turn took (``[%emt]``); either may be absent.
    ``str()`` gives the comment text, both as ``H:MM:SS`` with a fraction, such as
    ``[%clk 0:00:39.5] [%emt 0:00:00.21]``.
    """

    clock_ms: int | None = None
    elapsed_ms: int | None = None
    cpu_ms: int | None = None
    """The CPU time the seat's whole process tree used for the turn (``[%ect]``, the
    referee's own command: written when the bot had a control group)."""

    def __str__(self) -> str:
        clock, elapsed = self.clock_ms, self.elapsed_ms
        if clock is not None and elapsed is not None and self.cpu_ms is None:
            return f"[%clk {_format_hms(clock)}] [%emt {_format_hms(elapsed)}]"
        parts = []
        if self.clock_ms is not None:
            parts.append(f"[%clk {_format_hms(self.clock_ms)}]")
        if self.elapsed_ms is not None:
            parts.append(f"[%emt {_format_hms(self.elapsed_ms)}]")
        if self.cpu_ms is not None:
            parts.append(f"[%ect {_format_hms(self.cpu_ms)}]")
        return " ".join(parts)

    @classmethod
    def parse(cls, comment: str | None) -> ClockAnnotation:
        """The annotations found in ``comment`` (fields ``None`` where absent).

        Both ``H:MM:SS.f`` and plain seconds (older records: ``[%emt 0.21]``) are
        accepted for either command; the first of each counts.
        """
        return _split_clock(comment or "")[0] or cls()


_DURATION = r"(?:(\d{1,9}):)??(?:(\d{1,9}):)?(\d{1,9})(?:\.(\d{1,9}))?"
"""``H:MM:SS.f``, ``M:SS.f`` or ``S.f``: hours, minutes, seconds and fraction groups."""

_CLOCK_COMMAND = re.compile(rf"\[%(clk|emt|ect)\s+{_DURATION}\s*\]")

_CLOCK_ONLY = re.compile(rf"\[%clk {_DURATION}\] \[%emt {_DURATION}\]")
"""A comment holding just what the writer puts after every turn (the common case, fast)."""


def _split_clock(text: str) -> tuple[ClockAnnotation | None, str]:
    """The clock annotations in a comment's text (``None``: none) and the text without them."""
    if match := _CLOCK_ONLY.fullmatch(text):
        groups = match.groups()
        return ClockAnnotation(_duration_ms(*groups[:4]), _duration_ms(*groups[4:])), ""
    found: dict[str, int] = {}

    def take(match: re.Match[str]) -> str:
        found.setdefault(match[1], _duration_ms(*match.groups()[1:]))
        return " "

    rest = " ".join(_CLOCK_COMMAND.sub(take, text).split())
    if not found:
        return None, rest
    return (
        ClockAnnotation(
            clock_ms=found.get("clk"), elapsed_ms=found.get("emt"), cpu_ms=found.get("ect")
        ),
        rest,
    )


def _format_hms(ms: int) -> str:
    """``39500`` → ``0:00:39.5``; ``210`` → ``0:00:00.21``; ``0`` → ``0:00:00``."""
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    whole, fraction = divmod(rest, 1000)
    if fraction:  # only its trailing zeros go (there is a non-zero digit before them)
        return f"{hours}:{minutes:02d}:{whole:02d}.{fraction:03d}".rstrip("0")
    return f"{hours}:{minutes:02d}:{whole:02d}"


def _duration_ms(hours: str | None, minutes: str | None, seconds: str, fraction: str | None) -> int:
    """The groups of :data:`_DURATION` in milliseconds (a fraction counts to the millisecond)."""
    ms = int(seconds) * 1000 + (int((fraction + "00")[:3]) if fraction else 0)
    if minutes:
        ms += int(minutes) * 60_000
    if hours:
        ms += int(hours) * 3_600_000
    return ms


# --- results, seats and scores ----------------------------------------------------


def result_token(places: Sequence[int], scores: Sequence[float]) -> str:
    """The ``Result`` of a finished game with these places and scores (seat order).

    Two seats: ``1-0``, ``0-1`` or ``1/2-1/2`` from the places (seat 0 is White), as
    chess PGN has it; one seat (solo): the score, a whole number (``47``); three to
    five seats: the places joined by ``-`` (``2-1-3``; a tie shares a place:
    ``1-1-3``), as four-player chess PGNs give one number per player.
    """
    if len(places) != len(scores) or not places:
        raise ValueError("one place and one score per seat")
    if len(places) == 1:
        return str(int(scores[0]))
    if len(places) == 2:
        first, second = places
        return "1-0" if first < second else "0-1" if second < first else "1/2-1/2"
    return "-".join(str(place) for place in places)


_TWO_SEAT_PLACES: Mapping[str, tuple[int, ...]] = {
    "1-0": (1, 2),
    "0-1": (2, 1),
    "1/2-1/2": (1, 1),
}
_SOLO_RESULT = re.compile(r"[0-9]{1,9}")
_PLACES_RESULT = re.compile(rf"[1-{MAX_SEATS}](?:-[1-{MAX_SEATS}]){{2,{MAX_SEATS - 1}}}")


def is_ranking(places: Sequence[int]) -> bool:
    """Whether ``places`` are places as games give them: 1 is best, tied seats share a
    place and the places after a tie are skipped (``1-1-3``, never ``1-1-2``)."""
    return bool(places) and all(
        place == 1 + sum(other < place for other in places) for place in places
    )


def _places_of(result: str) -> tuple[int, ...] | None:
    """The places a ``Result`` gives, ``None`` for ``*``; :class:`RecordError` when it is
    none of the forms :func:`result_token` makes."""
    if result == "*":
        return None
    if result in _TWO_SEAT_PLACES:
        return _TWO_SEAT_PLACES[result]
    if _SOLO_RESULT.fullmatch(result):
        return (1,)
    if _PLACES_RESULT.fullmatch(result):
        places = tuple(int(place) for place in result.split("-"))
        if is_ranking(places):
            return places
        raise RecordError(f"result {result!r} does not give places (1 best, ties share)")
    raise RecordError(
        f"result {clip(result, 40)!r} is not a result: 1-0, 0-1, 1/2-1/2, *, a solo game's"
        " score (47), or the places of 3 to 5 seats (2-1-3)"
    )


def result_places(result: str, seats: int) -> tuple[int, ...] | None:
    """The places, in seat order, that the ``Result`` ``result`` gives a game of ``seats``
    seats (``1-0`` → ``(1, 2)``, ``1/2-1/2`` → ``(1, 1)``, ``2-1-3`` → ``(2, 1, 3)``, a
    solo game's score → ``(1,)``); ``None`` for ``*`` and for what is not a result of
    that many seats."""
    try:
        places = _places_of(result)
    except RecordError:
        return None
    return places if places is not None and len(places) == seats else None


def seat_tags(seat_names: Sequence[str] | None, players: Sequence[str]) -> dict[str, str]:
    """The tags naming each seat's player, in seat order.

    A game's own seat names when it has them (Ivy: ``Green``, ``Purple``), else
    ``Seat1`` … ``SeatN``; and for two seats ``White`` and ``Black`` too, which rating
    tools read.
    """
    names = seat_names or tuple(f"Seat{seat + 1}" for seat in range(len(players)))
    if len(names) != len(players):
        raise ValueError(f"{len(players)} players for {len(names)} seats")
    tags = dict(zip(("White", "Black"), players, strict=False)) if len(players) == 2 else {}
    tags.update(zip(names, players, strict=True))
    return tags


def record_seats(tags: Mapping[str, str]) -> int | None:
    """How many seats a record's tags name (``Seat1``, ``Seat2``, … in a row), or ``None``
    when they name none that way (a game with seat names of its own, or chess)."""
    seats = 0
    while f"Seat{seats + 1}" in tags:
        seats += 1
    return seats or None


def seat_players(tags: Mapping[str, str]) -> tuple[str, ...]:
    """The players of a record in seat order: its ``Seat1`` … ``SeatN`` tags when it has
    them, else its ``White`` and ``Black`` (``?`` where a tag is missing)."""
    seats = record_seats(tags)
    if seats is None:
        return (tags.get("White", "?"), tags.get("Black", "?"))
    return tuple(tags[f"Seat{seat}"] for seat in range(1, seats + 1))


def score_text(score: float) -> str:
    """A score as records write it: a whole number without a fraction (``47``, ``0.5``)."""
    return str(int(score)) if float(score).is_integer() else f"{score:g}"


def score_words(breakdown: Breakdown, score: float) -> str:
    """One seat's score by category, then its total: ``plants=20 pots=8 total=28``."""
    parts = [f"{name}={value}" for name, value in breakdown]
    return " ".join([*parts, f"total={score_text(score)}"])


def outcome_tags(
    places: Sequence[int],
    scores: Sequence[float],
    breakdown: Sequence[Breakdown],
    *,
    points: bool = False,
) -> dict[str, str]:
    """The tags recording how a game scored in points ended (none for other games).

    ``Places`` and ``Scores`` in seat order joined by ``-`` (``1-2-3``, ``47-38-30``) and,
    when the rules scored it by categories, each seat's ``SeatNScore``, its
    :func:`score_words`. ``points``: the game is scored in points even without a
    breakdown (a forfeit, which scores 0 for every seat).
    """
    if not breakdown and not points:
        return {}
    tags = {
        "Places": "-".join(str(place) for place in places),
        "Scores": "-".join(score_text(score) for score in scores),
    }
    if not breakdown:
        return tags
    for seat, (parts, score) in enumerate(zip(breakdown, scores, strict=True)):
        tags[f"Seat{seat + 1}Score"] = score_words(parts, score)
    return tags


def tagged_scores(tags: Mapping[str, str]) -> tuple[float, ...] | None:
    """The scores a record's ``Scores`` tag gives in seat order (``None``: no such tag, or
    one that is not numbers joined by ``-``)."""
    text = tags.get("Scores")
    if text is None or not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?(?:-[0-9]+(?:\.[0-9]+)?)*", text):
        return None
    return tuple(float(score) for score in text.split("-"))


ATTEMPT_TAG = "Attempt"
"""The tag of a tournament game played again: ``[Attempt "2"]`` for its second attempt
(none on a first attempt); its ``Seed`` is that attempt's (docs/records.md, "Attempts")."""


def tagged_attempt(tags: Mapping[str, str]) -> int | None:
    """Which attempt at its game a record is: its :data:`ATTEMPT_TAG`, 1 without one, and
    ``None`` when the tag is not a whole number from 1 (leading zeros refused: one
    attempt, one spelling)."""
    text = tags.get(ATTEMPT_TAG)
    if text is None:
        return 1
    return int(text) if re.fullmatch(r"[1-9][0-9]{0,8}", text) else None


RESERVED_TAGS: frozenset[str] = frozenset(
    {
        *SEVEN_TAG_ROSTER,
        "Game",
        "Variant",
        "Seed",
        "Places",
        "Scores",
        "TimeControl",
        "Termination",
        "PlyCount",
        "SetUp",
        "FEN",
        "Position",
        "GameNumber",
        ATTEMPT_TAG,
    }
)
"""Tags every game's records use for one meaning; no game option is recorded in them."""


def option_tag(game: str, key: str) -> str:
    """The tag recording the game option ``key``: its name in CamelCase
    (``turn_limit`` → ``TurnLimit``), after the game's name when that is a
    :data:`RESERVED_TAGS` one (Verdant's ``variant`` → ``VerdantVariant``)."""
    name = "".join(part.capitalize() for part in key.split("_"))
    return game.capitalize() + name if name in RESERVED_TAGS else name


# --- actors --------------------------------------------------------------------------


def actor_word(actor: int, token: str) -> str:
    """A decision as a record word that names who made it: ``s1:token`` for seat 0,
    ``c:token`` for chance (records of games whose decisions do not simply alternate)."""
    return f"c:{token}" if actor == CHANCE else f"s{actor + 1}:{token}"


_ACTOR_WORD = re.compile(r"(?:c|s([1-9][0-9]?)):(.+)", re.DOTALL)


def split_actor_word(word: str) -> tuple[int, str]:
    """Inverse of :func:`actor_word`: the actor (a seat, or ``CHANCE``) and the token."""
    found = _ACTOR_WORD.fullmatch(word)
    if found is None:
        raise RecordError(f"{clip(word, 40)!r} does not name its actor (s1:…, c:…)")
    seat, token = found.groups()
    return (CHANCE if seat is None else int(seat) - 1), token


# --- the record ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordedTurn:
    """One decision of a record: its token (Ivy: a §7 turn), a comment and clock annotations.

    ``comment`` is free text, cleaned on construction (:func:`clean_comment`), so
    it may come from anywhere; ``clock`` is written before it in the same
    ``{…}``. An empty comment next to a clock is no comment (``None``).

    Without an actor the token is a PGN symbol (letters, digits, ``_+#=:-``, starting
    with a letter) or ``--``; with one it may also hold ``,/@.`` and start with a
    digit (docs/records.md). A chance decision has no clock: chance takes no time.
    """

    token: str
    comment: str | None = None
    clock: ClockAnnotation | None = None
    actor: int | None = None
    """Who made the decision (a seat, or ``CHANCE``), in records of games whose
    decisions do not simply alternate (``Game.alternating`` false); else ``None``."""
    turn: int | None = None
    """The game's turn number of the decision, with :attr:`actor`."""

    def __post_init__(self) -> None:
        if self.actor is None:
            if not _SYMBOL.fullmatch(self.token):
                raise RecordError(f"turn token {clip(self.token, 40)!r} is not a PGN symbol")
            if _ACTOR_WORD.fullmatch(self.token):  # it would read back as another seat's
                raise RecordError(f"turn token {clip(self.token, 40)!r} reads as an actor word")
            if self.turn is not None:
                raise RecordError("a turn number goes with an actor")
        else:
            self._check_actor(self.actor, self.turn)
        clock = self.clock
        if clock is not None and clock == ClockAnnotation():
            clock = None
        if clock is not None and self.actor == CHANCE:
            raise RecordError(f"chance decision {clip(self.token, 40)!r} has a clock")
        comment = None if self.comment is None else clean_comment(self.comment)
        if clock is not None and comment == "":
            comment = None
        object.__setattr__(self, "clock", clock)
        object.__setattr__(self, "comment", comment)

    def _check_actor(self, actor: int, turn: int | None) -> None:
        """Refuse an actor, turn number or token that the record could not hold."""
        if type(actor) is not int or (actor != CHANCE and not 0 <= actor < 99):
            raise RecordError(f"actor {actor!r} is neither a seat (0 to 98) nor chance")
        if type(turn) is not int or turn < 1:
            raise RecordError(f"decision {clip(self.token, 40)!r} has no turn number (1 or more)")
        if not _DECISION.fullmatch(self.token):
            raise RecordError(
                f"decision token {clip(self.token, 40)!r} is not letters, digits and"
                " _+#=:-,/@. starting with a letter or digit"
            )

    @property
    def word(self) -> str:
        """The decision as the movetext writes it: the token, after its actor if any."""
        return self.token if self.actor is None else actor_word(self.actor, self.token)


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game: tags, decisions, result and an optional comment before the first one.

    ``tags`` is normalised on construction: every value cleaned
    (:func:`clean_tag_value`), the seven-tag roster first, in its order (missing
    roster tags get PGN's unknown values, ``Result`` the record's result), then
    the other tags in the order given. ``result`` is one of the forms
    :func:`result_token` makes, or ``*``; when the tags name the seats
    (:func:`record_seats`), it must give them as many places. A ``Result`` tag that
    disagrees with it is refused. The turns either all name their actor, with turn
    numbers that never go down, or none does. ``comment`` is cleaned like a turn's.
    """

    tags: dict[str, str] = field(default_factory=dict)
    turns: list[RecordedTurn] = field(default_factory=list)
    result: str = "*"
    comment: str | None = None

    def __post_init__(self) -> None:
        places = _places_of(self.result)
        cleaned: dict[str, str] = {}
        for name, value in self.tags.items():
            if not _TAG_NAME.fullmatch(name):
                raise RecordError(f"tag name {clip(name, 40)!r} is not letters, digits and '_'")
            cleaned[name] = clean_tag_value(value)
        tagged = cleaned.get("Result", self.result)
        if tagged != self.result:
            raise RecordError(f"Result tag {tagged!r} does not match the result {self.result!r}")
        seats = record_seats(cleaned)
        if places is not None and seats is not None and len(places) != seats:
            raise RecordError(f"result {self.result!r} is not a result of {seats} seats")
        ordered = {name: cleaned.get(name, ROSTER_DEFAULTS[name]) for name in SEVEN_TAG_ROSTER}
        ordered["Result"] = self.result
        ordered.update((k, v) for k, v in cleaned.items() if k not in ordered)
        object.__setattr__(self, "tags", ordered)
        if self.comment is not None:
            object.__setattr__(self, "comment", clean_comment(self.comment))
        _check_actors(self.turns)

    @property
    def seats(self) -> int | None:
        """How many seats the tags name (``Seat1`` … ``SeatN``), or ``None``: see
        :func:`record_seats`."""
        return record_seats(self.tags)

    @property
    def names_actors(self) -> bool:
        """Whether the decisions name their actors (a game that does not simply alternate)."""
        return bool(self.turns) and self.turns[0].actor is not None

    @property
    def start_position(self) -> str | None:
        """The position a set-up game starts from, in its game's own notation.

        The ``FEN`` tag of a game with ``[SetUp "1"]`` (older records: the
        ``Position`` tag); ``None`` for a game from the start position.
        """
        if self.tags.get("SetUp") != "1":
            return None
        return self.tags.get("FEN", self.tags.get("Position"))

    @property
    def first_turn(self) -> int:
        """The turn number (§6 ``TURN``) of the first recorded turn.

        1, unless the game starts from a set-up position (:attr:`start_position`),
        which ends with its turn number.
        """
        start = self.start_position
        if start is None:
            return 1
        fields = start.split()
        if not fields or not fields[-1].isdigit() or int(fields[-1]) < 1:
            raise RecordError(f"set-up position {start!r} does not end with a turn number")
        return int(fields[-1])


def _check_actors(turns: Sequence[RecordedTurn]) -> None:
    """Refuse turns of which some name their actor and some do not, or whose turn
    numbers go down."""
    named = [turn.turn for turn in turns if turn.actor is not None]
    if named and len(named) != len(turns):
        raise RecordError("some decisions name their actor and some do not")
    for before, after in itertools.pairwise(named):
        assert before is not None and after is not None
        if after < before:
            raise RecordError(f"turn {after} is recorded after turn {before}")


# --- the writer ----------------------------------------------------------------


def format_game(record: GameRecord) -> str:
    """The game as PGN export text: tags, a blank line, movetext, a blank line.

    Tag values are written as the record holds them: cleaning left nothing that
    needs an escape. No movetext line starts with ``[`` or ``%``, and the only
    ``[`` in the movetext open clock annotations.
    """
    tag_lines = [f'[{name} "{value}"]' for name, value in record.tags.items()]
    words: list[str] = []
    if record.comment is not None:
        words += _comment_words(record.comment, None)
    numbers = _actor_numbers(record.turns) if record.names_actors else _chess_numbers(record)
    for number, played in zip(numbers, record.turns, strict=True):
        if number is not None:
            words.append(number)
        words.append(played.word)
        if played.comment is not None or played.clock is not None:
            words += _comment_words(played.comment, played.clock)
    words.append(record.result)
    return "\n".join(tag_lines) + "\n\n" + "\n".join(_wrap(words)) + "\n\n"


def _chess_numbers(record: GameRecord) -> Iterator[str | None]:
    """Chess PGN's move numbers: ``N.`` before the first seat's turns (odd turn numbers),
    ``N...`` before a first recorded turn that is the second seat's."""
    first = record.first_turn
    for index in range(len(record.turns)):
        turn = first + index
        if turn % 2 == 1:
            yield f"{(turn + 1) // 2}."
        elif index == 0:
            yield f"{turn // 2}..."
        else:
            yield None


def _actor_numbers(turns: Sequence[RecordedTurn]) -> Iterator[str | None]:
    """The game's turn number ``N.`` before the first decision of each turn."""
    last = None
    for played in turns:
        yield None if played.turn == last else f"{played.turn}."
        last = played.turn


def append_game(path: str | os.PathLike[str], record: GameRecord) -> None:
    """Append one game to the PGN file at ``path`` (created if need be), durably.

    The whole game goes out in a single write on a file opened for appending,
    then is fsynced, so concurrent writers never interleave and a crash never
    leaves half a game.
    """
    data = memoryview(format_game(record).encode("utf-8"))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _comment_words(comment: str | None, clock: ClockAnnotation | None) -> list[str]:
    """The comment as ``{…}`` cut into units for wrapping.

    The clock annotations are one unit, so a ``[%…]`` command is never split or
    put at the start of a line; the text's words follow.
    """
    units = [str(clock)] if clock is not None else []
    if comment:
        units += comment.split(" ")
    if not units:
        units = [""]
    units[0] = "{" + units[0]
    units[-1] += "}"
    return units


def _wrap(words: list[str]) -> list[str]:
    """Join words into lines under 80 characters (a longer word has a line to itself)."""
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= MAX_LINE_LENGTH:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


# --- where games begin ------------------------------------------------------------

_BEFORE, _TAGS, _MOVES = range(3)
"""Where a game's text is: before its tags, in them, after them (the movetext)."""


@dataclass(slots=True)
class _Chunk:
    """The lines of one game, as :func:`_split_games` found them.

    ``first`` is the 0-based number of its first line in the text. ``game`` is
    ``False`` for a chunk that holds nothing but blank lines and comments (the
    text before the first game). ``cut_by_tags`` says the next game's tags
    follow it. Without ``keep_moves`` only the lines up to the end of the tag
    section are kept.
    """

    first: int
    lines: list[str] = field(default_factory=list)
    game: bool = False
    cut_by_tags: bool = False


def _split_games(lines: Iterable[str], *, keep_moves: bool = True) -> Iterator[_Chunk]:
    """The text's lines grouped by game (see the module docstring for the rule).

    This is the only place that decides where games begin, so that every reader
    here counts the same games. It follows ``{…}`` comments and ``;`` comments
    line by line, but reads no token: the same pass serves the headers-only
    reader.
    """
    chunk = _Chunk(0)
    phase = _BEFORE
    in_comment = blank_before = False
    for number, line in enumerate(lines):
        head = line[:1]
        if head == " " or head == "\t":
            head = line.lstrip()[:1]
        if in_comment and not (head == "[" and blank_before):
            if head:
                in_comment = _comment_open_after(line, True)
        elif head == "[":
            if phase == _MOVES or in_comment:
                chunk.cut_by_tags = True
                yield chunk
                chunk = _Chunk(number)
                in_comment = False
            phase = _TAGS
        elif not head:
            if phase == _TAGS:
                phase = _MOVES
        elif head == "%" and line[0] == "%":
            pass  # an escape line: skipped by every reader
        elif head == ";":
            if phase == _TAGS:
                phase = _MOVES
        else:
            phase = _MOVES
            in_comment = _comment_open_after(line, False)
        blank_before = not head
        if phase != _BEFORE:
            chunk.game = True
        if keep_moves or phase != _MOVES:
            chunk.lines.append(line)
    yield chunk


def _comment_open_after(line: str, inside: bool) -> bool:
    """Whether a ``{…}`` comment is open at the end of ``line`` (``inside``: at its start)."""
    if ";" not in line:
        # Comments do not nest, so the last brace on the line decides.
        opened, closed = line.rfind("{"), line.rfind("}")
        return inside if opened == closed else opened > closed
    position = 0
    while True:
        if inside:
            position = line.find("}", position) + 1
            if not position:
                return True
            inside = False
        else:
            brace, semicolon = line.find("{", position), line.find(";", position)
            if brace < 0 or 0 <= semicolon < brace:
                return False  # a ';' comment hides the rest of the line
            position, inside = brace + 1, True


# --- reading tags -----------------------------------------------------------------

_TAG = re.compile(r'\s*\[\s*([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]')
_UNESCAPE = re.compile(r"\\(.)")


def _read_tag_line(line: str, tags: dict[str, str]) -> bool:
    """Add the tags of one tag line to ``tags``; ``False`` when it is not well formed."""
    end = len(line.rstrip())
    position = 0
    while position < end:
        match = _TAG.match(line, position)
        if match is None:
            return False
        value = match.group(2)
        tags[match.group(1)] = _UNESCAPE.sub(r"\1", value) if "\\" in value else value
        position = match.end()
    return True


def _is_escape_line(line: str) -> bool:
    return line[:1] == "%"


@dataclass(frozen=True, slots=True)
class GameHeaders:
    """The tags of one game as :func:`read_headers` read them.

    ``number`` is the game's 1-based place in the text and ``line`` the line
    of its first tag (of its movetext, for a game without tags). Values are
    exactly as strict PGN readers give them back (escapes undone), not cleaned.
    """

    number: int
    line: int
    tags: dict[str, str]


def _headers(chunks: Iterable[_Chunk]) -> Iterator[GameHeaders | PgnError]:
    """The tag section of every game."""
    number = 0
    for chunk in chunks:
        if not chunk.game:
            continue
        number += 1
        tags: dict[str, str] = {}
        error = None
        start = chunk.first + 1
        for row, line in enumerate(chunk.lines, start=chunk.first + 1):
            if _is_escape_line(line):
                continue
            stripped = line.strip()
            if stripped.startswith("["):
                start = row if not tags else start
                if not _read_tag_line(line, tags):
                    error = PgnError(number, row, f"bad tag line {clip(stripped, 40)!r}")
                    break
            elif tags or (stripped and stripped[0] != ";"):
                start = row if not tags else start
                break  # the end of the tags, or the movetext of a game without tags
        yield error or GameHeaders(number, start, tags)


def read_headers(text: str) -> Iterator[GameHeaders | PgnError]:
    """The tags of every game in a PGN text, in order, or the error of a broken tag section.

    Only the tags are read: whatever the movetext holds, every game with a
    readable tag section is given.
    """
    return _headers(_split_games(_text_lines(text), keep_moves=False))


def iter_pgn_headers(path: str | os.PathLike[str]) -> Iterator[GameHeaders | PgnError]:
    """:func:`read_headers` for the file at ``path``, read in one streaming pass.

    The file is read as for :func:`iter_pgn_file`.
    """
    return _headers(_split_games(_file_lines(path), keep_moves=False))


# --- reading whole games --------------------------------------------------------------


def read_games(text: str) -> Iterator[GameRecord | PgnError]:
    """Every game in a PGN text, in order: a record, or the error that broke it.

    A broken game never takes the next one with it: games are found before
    they are read (see the module docstring). Move numbers, NAGs (``$1``),
    ``!``/``?`` suffixes, ``;`` comments and ``%`` escape lines are skipped;
    comments are kept with their whitespace collapsed to single spaces, several
    after one turn joined by a space, clock annotations taken out of them;
    ``--`` is an ordinary token (the null turn). Text after a game's result that
    is not another game's tags is read as games without tags.
    """
    return _records(_split_games(_text_lines(text)))


def iter_pgn_file(path: str | os.PathLike[str]) -> Iterator[GameRecord | PgnError]:
    """:func:`read_games` for the file at ``path``, one game at a time.

    Memory holds one game, whatever the size of the file. Each line is read as
    UTF-8 (a BOM is allowed), or, when it is not valid UTF-8, as Latin-1, PGN's
    historical encoding. Raises :class:`RecordError` (when the first game is
    asked for) if the file cannot be read.
    """
    return _records(_split_games(_file_lines(path)))


def read_pgn_file(path: str | os.PathLike[str]) -> list[GameRecord | PgnError]:
    """Every game in the PGN file at ``path`` (see :func:`iter_pgn_file`), as a list."""
    return list(iter_pgn_file(path))


def read_game(path: str | os.PathLike[str], number: int = 1) -> GameRecord:
    """Game ``number`` (1-based) of the PGN file at ``path``, reading no further.

    Raises the game's :class:`PgnError` when it is broken, :class:`RecordError`
    when the file cannot be read or holds fewer games.
    """
    held = 0
    for held, game in enumerate(iter_pgn_file(path), start=1):
        if held == number:
            if isinstance(game, PgnError):
                raise game
            return game
    games = f"{held} game{'' if held == 1 else 's'}"
    raise RecordError(f"{os.fspath(path)} holds {games}, not game {number}")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # only these: str.splitlines() also splits at \x0c, \u2028…


def _text_lines(text: str) -> list[str]:
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()  # the text's final line break ends a line, it starts none
    return lines


MAX_FILE_LINE = 1 << 20
"""The longest line a PGN file may have (characters): the writer's lines are at most
:data:`MAX_LINE_LENGTH` long but for one long word, a decision, of a few kilobytes."""


def _file_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """The lines of the file at ``path`` without their line breaks, each UTF-8 or else Latin-1.

    The file is opened when the first line is asked for, and closed at the end.
    """
    try:
        # Universal newlines split at exactly the line breaks of _LINE_BREAK.
        with open(path, encoding="utf-8-sig", errors="surrogateescape", newline=None) as file:
            for number, line in enumerate(iter(lambda: file.readline(MAX_FILE_LINE + 1), ""), 1):
                if len(line) > MAX_FILE_LINE:  # memory stays bounded whatever the file holds
                    raise RecordError(
                        f"{os.fspath(path)}: line {number} is longer than {MAX_FILE_LINE}"
                        " characters: not a PGN file"
                    )
                if line[-1:] == "\n":
                    line = line[:-1]
                if not line.isascii():
                    line = _latin_1_unless_utf_8(line)
                yield line
    except OSError as error:
        raise RecordError(f"cannot read {os.fspath(path)}: {error.strerror or error}") from None


def _latin_1_unless_utf_8(line: str) -> str:
    """A line decoded with ``surrogateescape``, decoded as Latin-1 if it was not UTF-8."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return line.encode("utf-8", "surrogateescape").decode("latin-1")
    return line


def _records(chunks: Iterable[_Chunk]) -> Iterator[GameRecord | PgnError]:
    """Every game of every chunk; a broken game ends its chunk."""
    number = 0
    for chunk in chunks:
        reader = _Reader(chunk)
        while reader.find_game():
            number += 1
            try:
                yield reader.read_game(number)
            except _Broken as broken:
                yield broken.error
                break


class _Broken(Exception):
    """Internal: a game is broken; the rest of its chunk is not read."""

    def __init__(self, error: PgnError) -> None:
        super().__init__(str(error))
        self.error = error


_MOVETEXT = re.compile(
    r"""
    \s*(?:
      (?P<end>$)
    | (?P<result>1-0|0-1|1/2-1/2|\*|[1-9](?:-[1-9]){2,})(?=[\s{;]|$)
    | (?P<number>\d+(?:\.+|(?=[\s{;]|$)))
    | (?P<dots>\.+)
    | (?P<nag>\$\d+)(?=[\s{;]|$)
    | (?P<actor>(?:c|s[1-9][0-9]?):[A-Za-z0-9][A-Za-z0-9_+\#=:\-,/@.]*)(?:[!?]{1,2})?(?=[\s{;$]|$)
    | (?P<symbol>[A-Za-z][A-Za-z0-9_+\#=:\-]*|--)(?:[!?]{1,2})?(?=[\s{;$]|$)
    | (?P<comment>\{)
    | (?P<rest>;)
    | (?P<variation>\()
    )""",
    re.VERBOSE,
)
"""The next token of a movetext line, after any blanks (``end``: nothing more on it).

A ``number`` with no period is the result of a solo game when the ``Result`` tag
holds it; otherwise every number is a move number.
"""


class _Reader:
    """A cursor over the lines of one chunk that reads one game at a time."""

    def __init__(self, chunk: _Chunk) -> None:
        self.chunk = chunk
        self.lines = chunk.lines
        self.row = 0
        self.col = 0

    def line_number(self, row: int) -> int:
        """The 1-based number in the whole text of the chunk's line ``row``."""
        return self.chunk.first + row + 1

    # -- between games

    def find_game(self) -> bool:
        """Skip what lies between games; ``True`` when a game starts at the cursor."""
        while self.row < len(self.lines):
            rest = self.lines[self.row][self.col :]
            if self._skippable(rest):
                self._next_line()
            else:
                self.col += len(rest) - len(rest.lstrip())
                return True
        return False

    def _skippable(self, rest: str) -> bool:
        """Blank, a ``;`` comment, or a ``%`` escape line."""
        stripped = rest.strip()
        return not stripped or stripped.startswith(";") or (self.col == 0 and rest[:1] == "%")

    def _next_line(self) -> None:
        self.row += 1
        self.col = 0

    # -- one game

    def read_game(self, number: int) -> GameRecord:
        tags = self._read_tags(number)
        leading: list[str] = []
        turns: list[_Word] = []
        move_number: int | None = None
        lines = self.lines
        while True:
            if self.row >= len(lines):
                self._fail_at_end(number)
            line = lines[self.row]
            if self.col == 0 and _is_escape_line(line):
                self._next_line()
                continue
            match = _MOVETEXT.match(line, self.col)
            if match is None:
                garbage = line[self.col :].split()[0]
                self._fail(number, self.row, f"unexpected {clip(garbage, 40)!r} in the movetext")
            kind = match.lastgroup
            if kind == "end":
                self._next_line()
                continue
            self.col = match.end()
            if kind == "result":
                return self._finish(number, tags, leading, turns, match.group("result"))
            if kind == "number":
                text = match.group("number")
                digits = text.rstrip(".")
                if digits == text and tags.get("Result") == digits:
                    return self._finish(number, tags, leading, turns, digits)
                move_number = int(digits)
            elif kind == "symbol":
                turns.append(_Word(match.group("symbol")))
            elif kind == "actor":
                turns.append(_Word(match.group("actor"), named=True, turn=move_number))
            elif kind == "comment":
                (turns[-1].comments if turns else leading).append(self._read_comment(number))
            elif kind == "rest":
                self._next_line()
            elif kind == "variation":
                self._fail(number, self.row, "variations '(…)' are not supported")

    def _read_tags(self, number: int) -> dict[str, str]:
        """The tag section at the cursor (may be empty); leaves the cursor after it."""
        tags: dict[str, str] = {}
        while self.row < len(self.lines):
            line = self.lines[self.row]
            if self.col == 0 and _is_escape_line(line):
                self._next_line()
                continue
            if not line[self.col :].lstrip().startswith("["):
                break
            if not _read_tag_line(line[self.col :], tags):
                self._fail(number, self.row, f"bad tag line {clip(line.strip(), 40)!r}")
            self._next_line()
        return tags

    def _read_comment(self, number: int) -> str:
        """The ``{…}`` comment whose ``{`` is just before the cursor, whitespace collapsed."""
        start = self.row
        parts: list[str] = []
        while True:
            line = self.lines[self.row]
            end = line.find("}", self.col)
            if end >= 0:
                parts.append(line[self.col : end])
                self.col = end + 1
                return " ".join(" ".join(parts).split())
            parts.append(line[self.col :])
            self._next_line()
            if self.row >= len(self.lines):
                self._fail(number, start, "unterminated comment '{'")

    def _fail_at_end(self, number: int) -> NoReturn:
        """The chunk ended inside the game: at the next game's tags, or at the end of the text."""
        if self.chunk.cut_by_tags:
            line = self.line_number(len(self.lines))
            raise _Broken(PgnError(number, line, "the next game's tags come before a result"))
        line = self.line_number(len(self.lines) - 1)
        raise _Broken(PgnError(number, line, "the game ends without a result token"))

    def _finish(
        self,
        number: int,
        tags: dict[str, str],
        leading: list[str],
        turns: list[_Word],
        result: str,
    ) -> GameRecord:
        """Build the record once the result token is read."""
        tagged = tags.get("Result", result)
        if tagged != result:
            mismatch = f"result token {result!r} does not match the Result tag {tagged!r}"
            self._fail(number, self.row, mismatch)
        try:
            return GameRecord(
                tags=tags,
                turns=[word.recorded() for word in turns],
                result=result,
                comment=_join(leading),
            )
        except RecordError as error:
            self._fail(number, self.row, str(error))

    def _fail(self, number: int, row: int, reason: str) -> NoReturn:
        raise _Broken(PgnError(number, self.line_number(row), reason))


@dataclass(slots=True)
class _Word:
    """A decision's word as read, with the comments after it.

    ``named``: the word names its actor (``s1:…``, ``c:…``); ``turn`` is then the
    last move number read before it (``None``: none was).
    """

    word: str
    named: bool = False
    turn: int | None = None
    comments: list[str] = field(default_factory=list)

    def recorded(self) -> RecordedTurn:
        """The decision read back, its clock annotations taken out of its comments."""
        actor, token = split_actor_word(self.word) if self.named else (None, self.word)
        if self.named and self.turn is None:
            raise RecordError(f"decision {clip(self.word, 40)!r} comes before any turn number")
        text = _join(self.comments)
        if text is None:
            return RecordedTurn(token, actor=actor, turn=self.turn)
        clock, rest = _split_clock(text)
        comment = rest if rest or clock is None else None
        return RecordedTurn(token, comment, clock, actor, self.turn)


def _join(comments: list[str]) -> str | None:
    """Several comments in one place, as one (``None`` when there are none)."""
    return " ".join(filter(None, comments)) if comments else None
