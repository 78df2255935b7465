"""The referee's error tree.

Every error the referee raises on purpose is a :class:`RefereeError`, so callers
(the CLI above all) can turn it into a one-line message instead of a traceback.

- :class:`RuleError` and its children: a game's rules refuse something (a turn, a
  position, a setting). Pure code raises these; they carry the rule they break.
- :class:`BotFault` and its children: a bot process misbehaved. The match runner
  turns these into a lost game with a PGN ``Termination``, never into a crash.
- :class:`RecordError`: a game record (PGN) cannot be read.
- :class:`RefereeFault`: the referee's own resources failed; never a bot's loss.
"""

from __future__ import annotations

import sqlite3


class RefereeError(Exception):
    """Root of every error the referee raises on purpose."""


# --- rules -------------------------------------------------------------------


class RuleError(RefereeError, ValueError):
    """A game's rules refuse something."""


class IllegalDecision(RuleError):
    """A player's decision (in Ivy: a whole turn) breaks a rule.

    ``index`` is the position of the offending action inside the decision
    (``None`` when the decision as a whole is at fault), so a protocol layer can
    point at ``$.actions[index]``.
    """

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class PositionError(RuleError):
    """A position read from outside (a string, an opening) is not valid."""


class SettingsError(RuleError):
    """Game settings (player count, turn limit, ...) are not acceptable."""


# --- records -----------------------------------------------------------------


class RecordError(RefereeError, ValueError):
    """A game record cannot be read (malformed PGN, unknown game, ...)."""


# --- bots --------------------------------------------------------------------


class BotFault(RefereeError):
    """A bot broke the protocol or its process failed. Costs the bot the game.

    ``code`` is the stable protocol error code sent to the bot (when it can still
    be told) and ``termination`` the PGN ``Termination`` value for the record.
    """

    code: str = "bot_fault"
    termination: str = "rules infraction"


class BotTimeout(BotFault):
    """The bot did not answer before its clock ran out."""

    code = "timeout"
    termination = "time forfeit"


class BotCrashed(BotFault):
    """The bot process exited, was killed, or closed its stdout."""

    code = "crashed"
    termination = "abandoned"


class BotOverLimit(BotCrashed):
    """The bot's whole process tree hit a limit of its control group and the bot ended
    (the kernel killed it for its memory, or it failed once a fork was refused): ``code``
    names the limit, ``memory`` or ``processes``."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.code = limit


class BotProtocolError(BotFault):
    """The bot sent a line that is not a valid message (or is too long)."""

    code = "invalid_message"


class BotIllegalTurn(BotFault):
    """The bot sent a well-formed turn that the rules refuse."""

    code = "illegal_turn"


# --- the referee itself ------------------------------------------------------


class RefereeFault(RefereeError):
    """The referee's own resources failed: file descriptors, memory, disk, fork.

    No bot is to blame, so this is never a :class:`BotFault`: a game it interrupts
    is not recorded (a tournament plays it again on its next run), and the command
    stops with one line naming the cause.
    """


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``[error]`` for a plain one."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def is_own_failure(error: BaseException) -> bool:
    """Whether ``error`` is a failure of the referee's own resources (a
    :class:`RefereeFault`, or what the system raises when files, memory or the
    database fail), never to be charged to a bot."""
    return isinstance(error, RefereeFault | OSError | sqlite3.Error | MemoryError)


def own_failure(error: BaseException) -> BaseException | None:
    """The first failure of the referee's own resources inside ``error`` (a group or
    not), or ``None``."""
    return next((leaf for leaf in leaves(error) if is_own_failure(leaf)), None)


def describe_failure(error: BaseException) -> str:
    """One line for a failure: a referee error's own message, or what the system said."""
    if isinstance(error, OSError) and error.strerror:
        where = f" ({error.filename})" if error.filename else ""
        return f"{error.strerror}{where}"
    if isinstance(error, MemoryError):
        return "out of memory"
    return " ".join(str(error).split()) or type(error).__name__
