"""Game records as PGN: a writer, a tolerant reader, clock comments.

The format is PGN's (see ``shared/spec/ivy.md`` §8) so that rating tools and game
filters read our records unchanged. This module knows nothing about any game's
rules: a turn is kept as its token text, and the game module checks it on replay
(:mod:`referee.replay`). It assumes a two-player game whose first seat plays the
odd turn numbers (Ivy: Green), so that PGN move numbers line up.

- :class:`GameRecord` / :class:`RecordedTurn` hold one game.
- :func:`format_game` writes one game; :func:`append_game` appends it to a file
  durably (one write, then fsync).
- :func:`read_games` reads any number of games from text. It never stops at a
  broken game: it yields a :class:`PgnError` for it and carries on with the next.
  :func:`read_pgn_file` and :func:`read_game` do the same for a file.
- :class:`ClockAnnotation` writes and reads ``{[%clk 0:00:39.5] [%emt 0.21]}``;
  :func:`clean_comment` makes free text (a bot's error message) fit a comment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import NoReturn

from referee.errors import RecordError

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
"""The game termination markers: first seat won, second seat won, draw, unfinished."""

MAX_LINE_LENGTH = 79
"""Movetext lines are wrapped to stay under 80 characters."""

_TAG_NAME = re.compile(r"[A-Za-z0-9_]+")
_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9_+#=:\-]*|--")


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


# --- the record ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordedTurn:
    """One turn of a record: its token (Ivy: a §7 turn) and the comment after it."""

    token: str
    comment: str | None = None

    def __post_init__(self) -> None:
        if not _SYMBOL.fullmatch(self.token):
            raise RecordError(f"turn token {self.token!r} is not a PGN symbol")
        _check_comment(self.comment)


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game: tags, turns, result and an optional comment before the first turn.

    ``tags`` is normalised on construction: the seven-tag roster first, in its
    order (missing roster tags get PGN's unknown values, ``Result`` the record's
    result), then the other tags in the order given. ``result`` is one of
    :data:`RESULTS`; a ``Result`` tag that disagrees with it is refused.
    """

    tags: dict[str, str] = field(default_factory=dict)
    turns: list[RecordedTurn] = field(default_factory=list)
    result: str = "*"
    comment: str | None = None

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise RecordError(f"result {self.result!r} is not one of {', '.join(RESULTS)}")
        tagged = self.tags.get("Result", self.result)
        if tagged != self.result:
            raise RecordError(f"Result tag {tagged!r} does not match the result {self.result!r}")
        for name, value in self.tags.items():
            if not _TAG_NAME.fullmatch(name):
                raise RecordError(f"tag name {name!r} is not letters, digits and '_'")
            if "\n" in value or "\r" in value:
                raise RecordError(f"tag {name} holds a line break")
        _check_comment(self.comment)
        ordered = {name: self.tags.get(name, ROSTER_DEFAULTS[name]) for name in SEVEN_TAG_ROSTER}
        ordered["Result"] = self.result
        ordered.update((k, v) for k, v in self.tags.items() if k not in ordered)
        object.__setattr__(self, "tags", ordered)

    @property
    def first_turn(self) -> int:
        """The turn number (§6 ``TURN``) of the first recorded turn.

        1, unless the game starts from a set-up position (``[SetUp "1"]``), whose
        ``[Position]`` ends with its turn number.
        """
        if self.tags.get("SetUp") != "1" or "Position" not in self.tags:
            return 1
        fields = self.tags["Position"].split()
        if not fields or not fields[-1].isdigit() or int(fields[-1]) < 1:
            raise RecordError(
                f"Position tag {self.tags['Position']!r} does not end with a turn number"
            )
        return int(fields[-1])


def clean_comment(text: str) -> str:
    """``text`` made fit for a comment, as the reader will give it back.

    A ``}`` (which would end the comment) becomes ``)`` and whitespace runs,
    line breaks included, become single spaces. For free text such as a bot's
    error message.
    """
    return " ".join(text.replace("}", ")").split())


def _check_comment(comment: str | None) -> None:
    """Refuse a comment PGN cannot hold."""
    if comment is not None and "}" in comment:
        raise RecordError("a PGN comment cannot contain '}'")


# --- clock comments ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClockAnnotation:
    """The clock annotations of a turn's comment, in milliseconds.

    ``clock_ms`` is the time the player had left after the turn (``[%clk]``),
    ``elapsed_ms`` the time the turn took (``[%emt]``); either may be absent.
    ``str()`` gives the comment text, such as ``[%clk 0:00:39.5] [%emt 0.21]``.
    """

    clock_ms: int | None = None
    elapsed_ms: int | None = None

    def __str__(self) -> str:
        parts = []
        if self.clock_ms is not None:
            parts.append(f"[%clk {_format_hms(self.clock_ms)}]")
        if self.elapsed_ms is not None:
            parts.append(f"[%emt {_format_seconds(self.elapsed_ms)}]")
        return " ".join(parts)

    @classmethod
    def parse(cls, comment: str | None) -> ClockAnnotation:
        """The annotations found in ``comment`` (fields ``None`` where absent).

        Both ``H:MM:SS.f`` and plain seconds are accepted for either command.
        """
        found: dict[str, int] = {}
        for command, value in _CLOCK_COMMAND.findall(comment or ""):
            found.setdefault(command, _parse_duration(value))
        return cls(clock_ms=found.get("clk"), elapsed_ms=found.get("emt"))


_CLOCK_COMMAND = re.compile(r"\[%(clk|emt)\s+((?:\d+:)?(?:\d+:)?\d+(?:\.\d+)?)\s*\]")


def _format_seconds(ms: int) -> str:
    """``39500`` → ``39.5``: seconds with as many decimals as needed."""
    whole, fraction = divmod(ms, 1000)
    return f"{whole}.{fraction:03d}".rstrip("0").rstrip(".")


def _format_hms(ms: int) -> str:
    """``39500`` → ``0:00:39.5``."""
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds = _format_seconds(rest)
    return f"{hours}:{minutes:02d}:{'0' if rest < 10_000 else ''}{seconds}"


def _parse_duration(text: str) -> int:
    """``0:00:39.5`` or ``39.5`` → milliseconds."""
    *larger, seconds = text.split(":")
    whole, _, fraction = seconds.partition(".")
    ms = int(whole) * 1000 + int((fraction + "000")[:3])
    multiplier = 60_000
    for unit in reversed(larger):
        ms += int(unit) * multiplier
        multiplier *= 60
    return ms


# --- the writer ----------------------------------------------------------------


def format_game(record: GameRecord) -> str:
    """The game as PGN export text: tags, a blank line, movetext, a blank line."""
    tag_lines = [f'[{name} "{_escape(value)}"]' for name, value in record.tags.items()]
    words: list[str] = []
    if record.comment is not None:
        words += _comment_words(record.comment)
    first = record.first_turn
    for index, played in enumerate(record.turns):
        turn = first + index
        if turn % 2 == 1:
            words.append(f"{(turn + 1) // 2}.")
        elif index == 0:
            words.append(f"{turn // 2}...")
        words.append(played.token)
        if played.comment is not None:
            words += _comment_words(played.comment)
    words.append(record.result)
    return "\n".join(tag_lines) + "\n\n" + "\n".join(_wrap(words)) + "\n\n"


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


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _comment_words(comment: str) -> list[str]:
    """The comment as ``{…}`` split into words for wrapping."""
    words = comment.split() or [""]
    words[0] = "{" + words[0]
    words[-1] += "}"
    return words


def _wrap(words: list[str]) -> list[str]:
    """Join words into lines under 80 characters.

    A line never starts with ``%`` or ``[`` (a reader could take it for an
    escape line or a tag), so such a word is first glued to the word before it;
    a glued group longer than a line gets a line of its own.
    """
    groups: list[str] = []
    for word in words:
        if groups and word[:1] in ("%", "["):
            groups[-1] += " " + word
        else:
            groups.append(word)
    lines: list[str] = []
    for group in groups:
        if lines and len(lines[-1]) + 1 + len(group) <= MAX_LINE_LENGTH:
            lines[-1] += " " + group
        else:
            lines.append(group)
    return lines


# --- the reader ----------------------------------------------------------------


def read_games(text: str) -> Iterator[GameRecord | PgnError]:
    """Every game in a PGN text, in order: a record, or the error that broke it.

    After a broken game, reading resumes at the next tag line that follows a
    blank line (or, when the break was a game running into the next one's tags,
    at those tags). Move numbers, NAGs (``$1``), ``!``/``?`` suffixes, ``;``
    comments and ``%`` escape lines are skipped; comments are kept with their
    whitespace collapsed to single spaces, several after one turn joined by a
    space; ``--`` is an ordinary token (the null turn).
    """
    reader = _Reader(text)
    number = 0
    while reader.find_game():
        number += 1
        try:
            record = reader.read_game(number)
        except _Broken as broken:
            yield broken.error
            reader.resume(broken)
            continue
        yield record


def read_pgn_file(path: str | os.PathLike[str]) -> list[GameRecord | PgnError]:
    """Every game in the PGN file at ``path`` (see :func:`read_games`).

    The file is read as UTF-8 (a BOM is allowed), falling back to Latin-1, PGN's
    historical encoding. Raises :class:`RecordError` when it cannot be read.
    """
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise RecordError(f"cannot read {os.fspath(path)}: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return list(read_games(text))


def read_game(path: str | os.PathLike[str], number: int = 1) -> GameRecord:
    """Game ``number`` (1-based) of the PGN file at ``path``.

    Raises the game's :class:`PgnError` when it is broken, :class:`RecordError`
    when the file cannot be read or holds fewer games.
    """
    games = read_pgn_file(path)
    if not 1 <= number <= len(games):
        held = f"{len(games)} game{'' if len(games) == 1 else 's'}"
        raise RecordError(f"{os.fspath(path)} holds {held}, not game {number}")
    game = games[number - 1]
    if isinstance(game, PgnError):
        raise game
    return game


class _Broken(Exception):
    """Internal: a game is broken; ``resume_at`` is where to look for the next one.

    ``resume_at`` ``None`` means: at the next tag line after a blank line,
    searching from the line after the error.
    """

    def __init__(self, error: PgnError, resume_at: int | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.resume_at = resume_at


_TAG = re.compile(r'\s*\[\s*([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]')
_UNESCAPE = re.compile(r"\\(.)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # only these: str.splitlines() also splits at \x0c, \u2028…
_MOVETEXT = re.compile(
    r"""
      (?P<result>1-0|0-1|1/2-1/2|\*)(?=[\s{;]|$)
    | (?P<number>\d+(?:\.+|(?=[\s{;]|$)))
    | (?P<dots>\.+)
    | (?P<nag>\$\d+)(?=[\s{;]|$)
    | (?P<symbol>[A-Za-z][A-Za-z0-9_+#=:\-]*|--)(?:[!?]{1,2})?(?=[\s{;$]|$)
    | (?P<comment>\{)
    | (?P<rest>;)
    | (?P<variation>\()
    """,
    re.VERBOSE,
)


class _Reader:
    """A cursor over the lines of a PGN text that reads one game at a time."""

    def __init__(self, text: str) -> None:
        self.lines = _LINE_BREAK.split(text)
        if self.lines[-1] == "":
            self.lines.pop()  # the text's final line break ends a line, it starts none
        self.row = 0
        self.col = 0

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

    def resume(self, broken: _Broken) -> None:
        """Move the cursor to where the next game may start after a broken one."""
        if broken.resume_at is not None:
            self.row, self.col = broken.resume_at, 0
            return
        row = broken.error.line  # the line after the error (lines count from 1)
        while row < len(self.lines) and not self._tags_after_blank(row):
            row += 1
        self.row, self.col = row, 0

    def _tags_after_blank(self, row: int) -> bool:
        return self.lines[row].lstrip().startswith("[") and not self.lines[row - 1].strip()

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
        turns: list[tuple[str, list[str]]] = []
        while True:
            if self.row >= len(self.lines):
                self._fail(number, len(self.lines), "the game ends without a result token")
            line = self.lines[self.row]
            if self.col == 0 and line.startswith("%"):
                self._next_line()
                continue
            if self.col == 0 and line.lstrip().startswith("["):
                raise _Broken(
                    PgnError(number, self.row + 1, "the next game's tags come before a result"),
                    resume_at=self.row,
                )
            self.col = len(line) - len(line[self.col :].lstrip())
            if self.col == len(line):
                self._next_line()
                continue
            match = _MOVETEXT.match(line, self.col)
            if match is None:
                garbage = line[self.col :].split()[0]
                self._fail(number, self.row + 1, f"unexpected {_clip(garbage)!r} in the movetext")
            kind = match.lastgroup
            self.col = match.end()
            if kind == "result":
                return self._finish(number, tags, leading, turns, match.group())
            if kind == "symbol":
                turns.append((match.group("symbol"), []))
            elif kind == "comment":
                (turns[-1][1] if turns else leading).append(self._read_comment(number))
            elif kind == "rest":
                self._next_line()
            elif kind == "variation":
                self._fail(number, self.row + 1, "variations '(…)' are not supported")

    def _read_tags(self, number: int) -> dict[str, str]:
        """The tag section at the cursor (may be empty); leaves the cursor after it."""
        tags: dict[str, str] = {}
        while self.row < len(self.lines):
            line = self.lines[self.row]
            if self.col == 0 and line.startswith("%"):
                self._next_line()
                continue
            if not line[self.col :].lstrip().startswith("["):
                break
            position = self.col
            while position < len(line.rstrip()):
                match = _TAG.match(line, position)
                if match is None:
                    self._fail(number, self.row + 1, f"bad tag line {_clip(line.strip())!r}")
                tags[match.group(1)] = _UNESCAPE.sub(r"\1", match.group(2))
                position = match.end()
            self._next_line()
        return tags

    def _read_comment(self, number: int) -> str:
        """The ``{…}`` comment whose ``{`` is just before the cursor, whitespace collapsed.

        A comment still open at the end of the text, or when a tag line follows a
        blank line, is unterminated.
        """
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
                self._fail(number, start + 1, "unterminated comment '{'")
            if self._tags_after_blank(self.row):
                raise _Broken(
                    PgnError(number, start + 1, "unterminated comment '{'"), resume_at=self.row
                )

    def _finish(
        self,
        number: int,
        tags: dict[str, str],
        leading: list[str],
        turns: list[tuple[str, list[str]]],
        result: str,
    ) -> GameRecord:
        """Build the record once the result token is read."""
        tagged = tags.get("Result", result)
        if tagged != result:
            self._fail(
                number,
                self.row + 1,
                f"result token {result!r} does not match the Result tag {tagged!r}",
            )
        try:
            return GameRecord(
                tags=tags,
                turns=[RecordedTurn(token, _join(comments)) for token, comments in turns],
                result=result,
                comment=_join(leading),
            )
        except RecordError as error:
            self._fail(number, self.row + 1, str(error))

    def _fail(self, number: int, line: int, reason: str) -> NoReturn:
        raise _Broken(PgnError(number, line, reason))


def _join(comments: list[str]) -> str | None:
    """Several comments in one place, as one (``None`` when there are none)."""
    return " ".join(filter(None, comments)) if comments else None


def _clip(text: str, limit: int = 40) -> str:
    """Shorten text quoted in an error message."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
