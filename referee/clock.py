"""Time controls, the referee's allowances and chess clocks, as plain arithmetic.

No clock is read here. The runner measures how long a bot took and tells the
:class:`Clock`; the clock decides whether the bot's flag fell and what it has left.

Two things are kept apart:

- the **time control** (:class:`TimeControl`), what bots are told and records
  keep (``TimeControl`` tag):

  - **Fischer** ``base+increment`` (``"10+0.1"``, or ``"10"`` with no increment): a
    bank of ``base`` seconds per seat; a decision's time is taken from the bank and
    the increment added after the decision is accepted;
  - **fixed time per decision** (``"0.5/turn"``): every request may take that long;
    nothing carries over;

- the referee's **allowances** (:class:`Allowances`), which are not the bots' time:
  the *start-up* allowance covers the handshake of each game (``new_game`` →
  ``ready``), not charged to the clock; the *margin* is waited past a bot's time
  before it is declared out of time, to absorb pipe and scheduling latency.

Every default lives here, once: :data:`DEFAULT_TIME_CONTROL`, :data:`DEFAULT_STARTUP`,
:data:`DEFAULT_MARGIN`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import NamedTuple

from referee.errors import SettingsError

MAX_SECONDS = 1_000_000.0
"""The longest time a setting may give (base, increment, per turn, start-up, margin):
about eleven days, far beyond any contest, small enough to stay exact in milliseconds."""

DEFAULT_TIME_CONTROL = "10+0.1"
"""The time control when none is given: 10 seconds a game and 0.1 seconds a decision."""

DEFAULT_STARTUP = 10.0
"""Seconds a bot has to answer ``new_game`` when no start-up allowance is given."""

DEFAULT_MARGIN = 0.1
"""Seconds waited past a bot's time before it loses on time, when no margin is given."""

CLOCKS = ("wall", "cpu")
"""What a bot's time is: ``wall``, the time from request to reply (the default, the chess
convention); ``cpu``, the CPU time its whole process tree used meanwhile (its control
group's), under a wall-clock cap (:data:`WALL_FACTOR`, :data:`WALL_EXTRA`)."""

WALL_FACTOR = 3.0
WALL_EXTRA = 1.0
"""Under the ``cpu`` clock a reply must also come within ``WALL_FACTOR`` × the time left
+ ``WALL_EXTRA`` seconds of wall time (as isolate's ``--wall-time``), so a bot that sleeps
or waits still loses."""


class Spent(NamedTuple):
    """What one decision took: ``wall`` seconds, and ``cpu`` seconds of its seat's whole
    process tree (``None``: not measured — a person, an in-process or remote bot)."""

    wall: float
    cpu: float | None = None


_FISCHER = re.compile(r"(?P<base>\d+(?:\.\d+)?)(?:\+(?P<inc>\d+(?:\.\d+)?))?")
_PER_TURN = re.compile(r"(?:(?P<secs>\d+(?:\.\d+)?)/turn|st=(?P<st>\d+(?:\.\d+)?))")


def _check_seconds(label: str, value: float) -> None:
    if not math.isfinite(value) or not 0 <= value <= MAX_SECONDS:
        raise SettingsError(
            f"{label} must be a number of seconds from 0 to {MAX_SECONDS:.0f}, not {value}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeControl:
    """How much time bots get, in seconds: what bots are told and records keep.

    Exactly one of ``base`` (Fischer) and ``per_turn`` is set.
    """

    base: float | None = None
    increment: float = 0.0
    per_turn: float | None = None
    clock: str = "wall"
    """Which time is charged: one of :data:`CLOCKS`."""

    def __post_init__(self) -> None:
        if self.clock not in CLOCKS:
            raise SettingsError(f"unknown clock {self.clock!r} (known: {', '.join(CLOCKS)})")
        if (self.base is None) == (self.per_turn is None):
            raise SettingsError("a time control is either base+increment or seconds per turn")
        for label, value in (
            ("base", self.base),
            ("increment", self.increment),
            ("per_turn", self.per_turn),
        ):
            if value is not None:
                _check_seconds(f"time control {label}", value)
        if self.per_turn is not None and self.increment:
            raise SettingsError("a per-turn time control has no increment")

    @classmethod
    def parse(cls, text: str, clock: str = "wall") -> TimeControl:
        """Read ``"10+0.1"``, ``"10"``, ``"0.5/turn"`` or ``"st=0.5"``, on ``clock``."""
        spec = text.strip()
        if match := _FISCHER.fullmatch(spec):
            base = float(match["base"])
            increment = float(match["inc"] or 0)
            if base == 0 and increment == 0:
                raise SettingsError(f"time control {text!r} gives no time at all")
            return cls(base=base, increment=increment, clock=clock)
        if match := _PER_TURN.fullmatch(spec):
            per_turn = float(match["secs"] or match["st"])
            if per_turn == 0:
                raise SettingsError(f"time control {text!r} gives no time at all")
            return cls(per_turn=per_turn, clock=clock)
        raise SettingsError(
            f"bad time control {text!r}: expected BASE+INC (e.g. 10+0.1), BASE, or SECS/turn"
        )

    def __str__(self) -> str:
        if self.per_turn is not None:
            return f"{_number(self.per_turn)}/turn"
        assert self.base is not None
        if self.increment:
            return f"{_number(self.base)}+{_number(self.increment)}"
        return _number(self.base)

    @property
    def pgn_tag(self) -> str:
        """The ``TimeControl`` tag value in PGN's own syntax (``"10+0.1"``, ``"1/0.5"``)."""
        if self.per_turn is not None:
            return f"1/{_number(self.per_turn)}"
        return str(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Allowances:
    """The referee's own allowances, in seconds (not the bots' time).

    ``startup`` is how long a bot may take to answer each game's ``new_game``;
    ``margin`` how long the referee waits past a bot's time before it is out of
    time (a reply inside the margin empties the bank; one past it loses).
    """

    startup: float = DEFAULT_STARTUP
    margin: float = DEFAULT_MARGIN

    def __post_init__(self) -> None:
        _check_seconds("startup", self.startup)
        _check_seconds("margin", self.margin)


def _number(value: float) -> str:
    """``10.0`` → ``"10"``, ``0.05`` → ``"0.05"``."""
    return f"{value:g}"


class Clock:
    """The clocks of all seats of one game; ``margin`` is waited past each seat's time."""

    def __init__(self, control: TimeControl, seats: int, *, margin: float = DEFAULT_MARGIN) -> None:
        self.control = control
        self.margin = margin
        bank = control.base if control.base is not None else 0.0
        self._remaining = [bank] * seats
        self._last: list[float | None] = [None] * seats
        self._used = [0.0] * seats

    def remaining(self, seat: int) -> float:
        """Seconds ``seat`` has left in its bank (per-turn: the per-turn time)."""
        if self.control.per_turn is not None:
            return self.control.per_turn
        return self._remaining[seat]

    def last_turn(self, seat: int) -> float | None:
        """How long ``seat``'s last decision took as measured, or ``None`` before its first."""
        return self._last[seat]

    def used(self, seat: int) -> float:
        """Total thinking time ``seat`` has used in this game."""
        return self._used[seat]

    def budget(self, seat: int) -> float:
        """The time of the clock in force ``seat`` may use for its reply: its time plus the
        margin (wall: how long the referee waits; cpu: the CPU time it may use)."""
        return self.remaining(seat) + self.margin

    def wall_cap(self, seat: int) -> float | None:
        """Under the ``cpu`` clock, the wall-clock seconds a reply must come within
        (:data:`WALL_FACTOR` × the time left + :data:`WALL_EXTRA`); ``None`` under ``wall``."""
        if self.control.clock != "cpu":
            return None
        return WALL_FACTOR * self.remaining(seat) + WALL_EXTRA

    def charge(self, seat: int, elapsed: float) -> bool:
        """Record that ``seat`` took ``elapsed`` seconds; ``False`` when its flag fell.

        Time spent inside the margin is taken from the bank, which then stands
        at zero (the bot keeps playing on its increment). When the flag falls the
        bank is left as it was: the game is lost, and :meth:`remaining` still says
        what the seat had for the decision it overran (for the timeout message).
        """
        self._last[seat] = elapsed
        self._used[seat] += elapsed
        flagged = elapsed > self.budget(seat)
        if self.control.per_turn is None and not flagged:
            self._remaining[seat] = max(0.0, self._remaining[seat] - elapsed)
        return not flagged

    def add_increment(self, seat: int) -> None:
        """Add the increment after ``seat``'s decision was accepted (Fischer only)."""
        if self.control.per_turn is None:
            self._remaining[seat] += self.control.increment
