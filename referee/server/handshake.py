"""The first line of a remote bot's connection, sans-I/O: ``hello``, and the answer.

A bot that connects sends one line before anything else::

    {"type": "hello", "name": "alice", "token": "…"}

and the server answers with one line: ``{"type": "welcome", "name": "alice", "protocol": 1}``,
after which the connection carries the bot protocol (docs/protocol.md), or
``{"type": "refused", "code": "…", "message": "…"}``, after which it is closed.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from protocol.messages import MAX_QUOTE_CHARS, PROTOCOL_VERSION
from referee.server.tokens import MAX_TOKEN_CHARS
from referee.untrusted import clip, printable

MAX_HELLO_BYTES = 1024
"""The longest ``hello`` line, its newline not counted."""

RefusalCode: TypeAlias = Literal["bad_hello", "bad_token", "timeout"]
"""Why a connection was refused: a first line that is not a ``hello``, a wrong name or
token, or no ``hello`` in time."""


class Hello(msgspec.Struct, frozen=True, kw_only=True, tag="hello", tag_field="type"):
    """The bot's first line: which player it is, and that player's token."""

    name: str
    token: str
    protocol: int = PROTOCOL_VERSION


class Welcome(msgspec.Struct, frozen=True, kw_only=True, tag="welcome", tag_field="type"):
    name: str
    protocol: int = PROTOCOL_VERSION


class Refused(msgspec.Struct, frozen=True, kw_only=True, tag="refused", tag_field="type"):
    code: RefusalCode
    message: str


_DECODER = msgspec.json.Decoder(Hello)
_ENCODER = msgspec.json.Encoder()


class HelloRefused(Exception):
    """A connection that did not say ``hello`` as it should; ``refusal`` is its answer."""

    def __init__(self, code: RefusalCode, message: str) -> None:
        super().__init__(message)
        self.refusal = Refused(code=code, message=message)


def read_hello(line: bytes) -> Hello:
    """The ``hello`` on ``line`` (without its newline); raises :class:`HelloRefused`."""
    if len(line) > MAX_HELLO_BYTES:
        raise HelloRefused("bad_hello", f"the hello line is longer than {MAX_HELLO_BYTES} bytes")
    try:
        hello = _DECODER.decode(line)
    except msgspec.DecodeError as error:  # ValidationError included: a JSON path follows
        said = clip(printable(str(error)), MAX_QUOTE_CHARS)  # it may quote the line
        raise HelloRefused("bad_hello", f"the first line must be a hello message: {said}") from None
    if hello.protocol != PROTOCOL_VERSION:
        raise HelloRefused(
            "bad_hello", f"protocol {hello.protocol} is not spoken here (only {PROTOCOL_VERSION})"
        )
    if len(hello.token) > MAX_TOKEN_CHARS:
        raise HelloRefused("bad_token", "unknown player or wrong token")
    return hello


def welcome_line(name: str) -> bytes:
    return _ENCODER.encode(Welcome(name=name)) + b"\n"


def refused_line(refusal: Refused) -> bytes:
    return _ENCODER.encode(refusal) + b"\n"
