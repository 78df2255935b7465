"""The match server's settings: the ``[server]`` table of a tournament file.

::

    [server]
    host = "0.0.0.0"              # where to listen (default "127.0.0.1": this machine only)
    port = 7700                   # bots over plain TCP (false: off; 0: any free port)
    websocket_port = 7701         # bots over WebSocket (false: off; 0: any free port)
    http_port = 7702              # spectators' site (false: off; 0: any free port)
    certificate = "server.pem"    # TLS on every port: certificate chain (PEM) ...
    key = "server.key"            # ... and its private key; both or neither
    hello_timeout = 5             # seconds a connection has to present a valid token
    max_pending = 256             # connections waiting for their hello at once
    wait_for_players = 60         # seconds to wait, before the first game, for every
                                  # remote player to connect (0: do not wait)

Pure data: the server itself is :mod:`referee.server.serve`.
"""

from __future__ import annotations

import math
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import RefereeError

SERVER_KEYS = (
    "host",
    "port",
    "websocket_port",
    "http_port",
    "certificate",
    "key",
    "hello_timeout",
    "max_pending",
    "wait_for_players",
)
"""The keys of a tournament file's ``[server]`` table."""

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7700
DEFAULT_WEBSOCKET_PORT = 7701
DEFAULT_HTTP_PORT = 7702
DEFAULT_HELLO_TIMEOUT = 5.0
DEFAULT_MAX_PENDING = 256
DEFAULT_WAIT_FOR_PLAYERS = 60.0


class ServerError(RefereeError):
    """The match server cannot run as set: a bad ``[server]`` table, an unusable certificate."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    """Where and how the match server listens. A port of ``None`` is a listener turned off;
    ``0`` lets the system pick a free port (the server says which)."""

    host: str = DEFAULT_HOST
    port: int | None = DEFAULT_PORT
    websocket_port: int | None = DEFAULT_WEBSOCKET_PORT
    http_port: int | None = DEFAULT_HTTP_PORT
    certificate: Path | None = None
    key: Path | None = None
    hello_timeout: float = DEFAULT_HELLO_TIMEOUT
    max_pending: int = DEFAULT_MAX_PENDING
    wait_for_players: float = DEFAULT_WAIT_FOR_PLAYERS

    def __post_init__(self) -> None:
        if not self.host or "\0" in self.host:
            raise ServerError(f"server host must be a host name or address, not {self.host!r}")
        for label, port in self.ports().items():
            if port is not None and not 0 <= port <= 65535:
                raise ServerError(f"server {label} must be from 0 to 65535 or false, not {port}")
        if self.port is None and self.websocket_port is None:
            raise ServerError("server port and websocket_port are both off: bots could not connect")
        if (self.certificate is None) != (self.key is None):
            raise ServerError("server certificate and key go together: give both or neither")
        if not (math.isfinite(self.hello_timeout) and 0 < self.hello_timeout <= 60):
            raise ServerError(
                f"server hello_timeout must be more than 0 and at most 60 seconds,"
                f" not {self.hello_timeout}"
            )
        if not (math.isfinite(self.wait_for_players) and self.wait_for_players >= 0):
            raise ServerError(
                f"server wait_for_players must be a number of seconds, at least 0,"
                f" not {self.wait_for_players}"
            )
        if not 1 <= self.max_pending <= 100_000:
            raise ServerError(
                f"server max_pending must be from 1 to 100000, not {self.max_pending}"
            )

    def ports(self) -> dict[str, int | None]:
        """Each listener's setting by its key."""
        return {
            "port": self.port,
            "websocket_port": self.websocket_port,
            "http_port": self.http_port,
        }

    @property
    def tls(self) -> bool:
        return self.certificate is not None

    def ssl_context(self) -> ssl.SSLContext | None:
        """The server's TLS context (``None`` without a certificate); raises
        :class:`ServerError` naming the file that cannot be used."""
        if self.certificate is None or self.key is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(self.certificate, self.key)
        except OSError as error:
            raise ServerError(
                f"cannot read the server certificate {os.fspath(self.certificate)} or key"
                f" {os.fspath(self.key)}: {error.strerror or error}"
            ) from None
        except ssl.SSLError as error:
            raise ServerError(
                f"the server certificate {os.fspath(self.certificate)} and key"
                f" {os.fspath(self.key)} cannot be used: {error.reason or error}"
            ) from None
        return context

    @classmethod
    def from_table(cls, table: Any, base: Path | None, source: str | None) -> ServerSettings:
        """The settings of a ``[server]`` table (paths relative to ``base``); raises
        :class:`ServerError` (one line, naming ``source``) for anything wrong."""
        where = f"{source}: " if source is not None else ""
        if not isinstance(table, Mapping):
            raise ServerError(f"{where}server must be a table ([server]), not {table!r}")
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in SERVER_KEYS:
                raise ServerError(
                    f"{where}unknown key {key!r} in [server] (known: {', '.join(SERVER_KEYS)})"
                )
            values[key] = _value(key, value, base, where)
        try:
            return cls(**values)
        except ServerError as error:
            raise ServerError(f"{where}{error}") from None


def _value(key: str, value: Any, base: Path | None, where: str) -> Any:
    """One ``[server]`` value, checked for its type."""
    if key == "host":
        if isinstance(value, str):
            return value
        raise ServerError(f"{where}server host must be a string, not {value!r}")
    if key in ("port", "websocket_port", "http_port"):
        if value is False:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ServerError(f"{where}server {key} must be a port number or false, not {value!r}")
    if key in ("certificate", "key"):
        if isinstance(value, str) and value:
            path = Path(value)
            return path if base is None or path.is_absolute() else base / path
        raise ServerError(f"{where}server {key} must be a file's path, not {value!r}")
    if key in ("hello_timeout", "wait_for_players"):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise ServerError(f"{where}server {key} must be a number of seconds, not {value!r}")
    if isinstance(value, int) and not isinstance(value, bool):  # max_pending
        return value
    raise ServerError(f"{where}server {key} must be a whole number, not {value!r}")
