"""The bot protocol: message types, line framing and session phases, without I/O.

- :mod:`protocol.messages` — every message as a msgspec ``Struct``, the encoder and
  one decoder per direction, :class:`ProtocolViolation`, :class:`GameCodec`.
- :mod:`protocol.connection` — :class:`BotConnection`, the referee's side of one
  bot's conversation as a sans-I/O state machine.
- :mod:`protocol.ivy` — how Ivy's views and turns are written in messages.

``docs/protocol.md`` is the same protocol as a bot author reads it.
"""

from __future__ import annotations

from typing import Any

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
from referee.errors import SettingsError


def codec_for(game: str) -> GameCodec[Any, Any]:
    """The codec of the game registered under ``game`` (case-insensitive)."""
    from protocol import ivy

    codecs: dict[str, GameCodec[Any, Any]] = {"ivy": ivy.CODEC}
    try:
        return codecs[game.lower()]
    except KeyError:
        known = ", ".join(sorted(codecs))
        raise SettingsError(f"no protocol codec for game {game!r} (known: {known})") from None


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
    "codec_for",
    "encode_line",
]
