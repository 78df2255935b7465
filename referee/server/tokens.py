"""Remote players' tokens: made by the server, kept only as hashes.

A token is 32 random bytes from :mod:`secrets`, written as URL-safe base64 (43
characters). The server keeps only its SHA-256 digest (a token has 256 bits of entropy,
so no salt or slow hash is needed to keep it from being guessed back), in
``tokens.json`` in the tournament's output directory, readable by its owner alone::

    {"version": 1, "players": {"alice": "sha256:9f86d0…"}}

A presented token is checked by comparing digests in constant time. Issuing a player a
new token replaces the old one at once, also for a running server, which reads the file
again whenever it changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from referee.server.settings import ServerError

TOKENS = "tokens.json"
"""The file, in the tournament's output directory, that keeps the tokens' digests."""

TOKEN_BYTES = 32
"""Random bytes in a token (43 characters of URL-safe base64)."""

MAX_TOKEN_CHARS = 256
"""The longest token a client may present (longer ones are refused unread)."""

_PREFIX = "sha256:"
_NOBODY = hashlib.sha256(b"no such player").hexdigest()
"""Compared against when the name is unknown, so that a refusal takes the same time."""


def digest(token: str) -> str:
    """What ``tokens.json`` keeps of ``token``."""
    return _PREFIX + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TokenBook:
    """The digests of the remote players' tokens, kept in ``path`` (``tokens.json``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._digests: dict[str, str] = {}
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file last read
        self._reload()

    def issue(self, name: str) -> str:
        """A new token for ``name``, replacing any earlier one; returns the token itself,
        which is stored nowhere."""
        self._reload()
        token = secrets.token_urlsafe(TOKEN_BYTES)
        self._digests[name] = digest(token)
        self._save()
        return token

    def missing(self, names: Iterable[str]) -> list[str]:
        """Those of ``names`` that have no token yet."""
        self._reload()
        return [name for name in names if name not in self._digests]

    def check(self, name: str, token: str) -> bool:
        """Whether ``token`` is ``name``'s (in time that does not depend on where they differ)."""
        self._reload()
        expected = self._digests.get(name)
        presented = digest(token)
        if expected is None:
            hmac.compare_digest(presented, _PREFIX + _NOBODY)
            return False
        return hmac.compare_digest(presented, expected)

    def _reload(self) -> None:
        """Read the file again if it changed since it was last read (another command
        issued a token)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._digests, self._seen = {}, None
            return
        except OSError as error:
            raise ServerError(f"cannot read {self.path}: {error.strerror or error}") from None
        seen = (stat.st_mtime_ns, stat.st_size)
        if seen == self._seen:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            players = data["players"]
            if data.get("version") != 1 or not isinstance(players, dict):
                raise ValueError("not a version 1 token file")
            digests = {
                str(name): value
                for name, value in players.items()
                if isinstance(value, str) and value.startswith(_PREFIX)
            }
        except OSError as error:
            raise ServerError(f"cannot read {self.path}: {error.strerror or error}") from None
        except (ValueError, KeyError, TypeError) as error:
            raise ServerError(
                f"{self.path} is damaged ({error}): delete it and issue every token again"
            ) from None
        self._digests, self._seen = digests, seen

    def _save(self) -> None:
        """Write the digests atomically, readable by the owner alone."""
        text = json.dumps({"version": 1, "players": self._digests}, indent=1, sort_keys=True)
        partial = self.path.with_name(self.path.name + ".partial")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text + "\n")
            os.replace(partial, self.path)
        except OSError as error:
            with contextlib.suppress(OSError):
                partial.unlink()
            raise ServerError(f"cannot write {self.path}: {error.strerror or error}") from None
        self._seen = None
        self._reload()
