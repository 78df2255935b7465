"""Text the referee does not control, made safe to show or record.

Bots write what they like: error lines quoted in a forfeit reason, stderr tails, names,
``log`` messages. Before such text reaches a terminal or a game record it goes through
:func:`printable`, which leaves one line of visible characters: terminal escape sequences
(ANSI colours, cursor moves, window titles, hyperlinks) are removed whole, control and
format characters (NUL, ESC, C1 controls, bidirectional overrides, zero-width
characters) and lone surrogates are dropped, and every run of whitespace, line breaks
included, becomes one space. :func:`clip` bounds its length. What a record's syntax
needs on top of that (no braces in a PGN comment, …) is the record writer's business:
:mod:`referee.pgn`.

The raw text is never lost by this: logs keep it (``--log-dir``).
"""

from __future__ import annotations

import re
import unicodedata

MAX_TEXT_LENGTH = 500
"""The most characters of free text from a bot that a record or a terminal line keeps."""

ELLIPSIS = " …"
"""What :func:`clip` puts at the end of text it shortened."""

_ESCAPE_SEQUENCE = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?           # CSI: colours, cursor
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) .*? (?:\x07|\x1b\\|\x9c|\Z)  # OSC, DCS, SOS, PM, APC
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                                  # any other escape
    """,
    re.VERBOSE | re.DOTALL,
)
"""A terminal escape sequence, 7-bit or 8-bit, also when cut short by the end of the text."""

_DROPPED = frozenset({"Cc", "Cf", "Cs"})
"""Unicode categories dropped: controls, format characters (bidi, zero-width), surrogates."""


def printable(text: str) -> str:
    """``text`` as one line of visible characters (see the module docstring).

    Leading and trailing whitespace is removed. The result is stable:
    ``printable(printable(t)) == printable(t)``.
    """
    if not text.isprintable():
        text = _ESCAPE_SEQUENCE.sub("", text)
        text = "".join(c for c in text if c.isspace() or unicodedata.category(c) not in _DROPPED)
    return " ".join(text.split())


def clip(text: str, limit: int = MAX_TEXT_LENGTH) -> str:
    """``text`` if it has at most ``limit`` characters, else its start ending in :data:`ELLIPSIS`.

    The result never has more than ``limit`` characters, and clipping it again
    changes nothing.
    """
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS


def for_terminal(text: str) -> str:
    """Text from outside made fit for one terminal line: :func:`printable`, then :func:`clip`."""
    return clip(printable(text))
