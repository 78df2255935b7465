"""The bot protocol: message types, line framing and session phases, without I/O.

- :mod:`protocol.messages` — every message as a msgspec ``Struct``, the encoder and
  one decoder per direction, :class:`ProtocolViolation`, :class:`GameCodec`.
- :mod:`protocol.connection` — :class:`BotConnection`, the referee's side of one
  bot's conversation as a sans-I/O state machine.

Each game's own codec (how its views and decisions are written in messages) lives
beside its rules, in ``referee/games/<game>/codec.py``; ``protocol/`` imports no game.
``docs/protocol.md`` is the same protocol as a bot author reads it.
"""

from __future__ import annotations

from protocol.connection import (
    END_OF_STREAM,
    MAX_NESTING,
    NEED_DATA,
    BotConnection,
    Event,
    LocalProtocolError,
    Phase,
)
from protocol.messages import (
    BOT_TO_REFEREE,
    DEFAULT_MAX_LINE_BYTES,
    ERROR_CODES,
    PROTOCOL_VERSION,
    REFEREE_TO_BOT,
    BotMessage,
    ClockInfo,
    ErrorCode,
    ErrorMessage,
    GameCodec,
    GameOver,
    Log,
    NewGame,
    PastTurn,
    ProtocolViolation,
    Quit,
    Ready,
    RefereeMessage,
    TimeControlInfo,
    TurnReply,
    TurnRequest,
    encode_line,
)

__all__ = [
    "BOT_TO_REFEREE",
    "DEFAULT_MAX_LINE_BYTES",
    "END_OF_STREAM",
    "ERROR_CODES",
    "MAX_NESTING",
    "NEED_DATA",
    "PROTOCOL_VERSION",
    "REFEREE_TO_BOT",
    "BotConnection",
    "BotMessage",
    "ClockInfo",
    "ErrorCode",
    "ErrorMessage",
    "Event",
    "GameCodec",
    "GameOver",
    "LocalProtocolError",
    "Log",
    "NewGame",
    "PastTurn",
    "Phase",
    "ProtocolViolation",
    "Quit",
    "Ready",
    "RefereeMessage",
    "TimeControlInfo",
    "TurnReply",
    "TurnRequest",
    "encode_line",
]
