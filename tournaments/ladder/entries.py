"""The entries folder: what the contest host (or ``referee ladder add``) puts in, read safely.

Layout::

    entries/
      alice/                 an entrant (its name: the folder's)
        v1/                  a version (its name: the folder's), the bot's working folder
          entry.toml         the manifest: cmd, and optionally env, limits, network
          bot.py ...
        v2/
        RETIRED              present: alice is retired (not matched, not ranked)

A version is *complete*, and only then seen, once its ``entry.toml`` is there: the
manifest is written last, so a folder still being copied has none and is never started.
``referee ladder add`` and ``update`` copy into a hidden folder (``.incoming-…``; names
starting with ``.`` are never read) and rename it into place, which is atomic. Versions
of one entrant are ordered as the ladder first saw them complete; versions seen complete
in the same scan by their names' natural order (``v2`` before ``v10``).
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path

from referee.process import BotCommand
from tournaments.config import ConfigError, player_command

MANIFEST = "entry.toml"
RETIRED = "RETIRED"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
"""An entrant's or a version's name: a folder name safe in a PGN tag, a URL and a shell."""
MANIFEST_KEYS = ("cmd", "env", "memory", "processes", "file_size", "open_files", "network")
"""What a manifest may say (its bot always runs in its own version folder)."""
MAX_MANIFEST_BYTES = 64 << 10


class EntryError(ConfigError):
    """An entry cannot be read or written (one line naming it)."""


@dataclass(frozen=True, slots=True)
class Submission:
    """A complete version folder: entrant, version, folder, and its manifest's text."""

    entrant: str
    version: str
    folder: Path
    manifest: str

    @property
    def player(self) -> str:
        """Its name as a player in the store and the records: ``alice@v2``."""
        return player_name(self.entrant, self.version)

    def command(self) -> BotCommand:
        """How to start it; :class:`EntryError` naming the manifest's problem."""
        return manifest_command(self.manifest, self.folder)


@dataclass(frozen=True, slots=True)
class Scan:
    """What the entries folder holds now: complete versions and retired entrants."""

    submissions: tuple[Submission, ...]
    retired: frozenset[str]


def player_name(entrant: str, version: str) -> str:
    return f"{entrant}@{version}"


def check_name(label: str, name: str) -> None:
    if not NAME.fullmatch(name):
        raise EntryError(
            f"{label} {name!r} must be 1 to 40 letters, digits, '_', '.' or '-',"
            " starting with a letter or digit"
        )


def _natural(name: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def scan(folder: Path) -> Scan:
    """Read the entries folder (missing: empty); folders that are not names, hidden
    folders and versions without a manifest are skipped."""
    submissions: list[Submission] = []
    retired: set[str] = set()
    if not folder.is_dir():
        return Scan((), frozenset())
    for entrant in sorted(folder.iterdir()):
        if not entrant.is_dir() or not NAME.fullmatch(entrant.name):
            continue
        if (entrant / RETIRED).exists():
            retired.add(entrant.name)
        versions = [v for v in entrant.iterdir() if v.is_dir() and NAME.fullmatch(v.name)]
        for version in sorted(versions, key=lambda v: _natural(v.name)):
            manifest = version / MANIFEST
            try:
                with open(manifest, "rb") as file:
                    data = file.read(MAX_MANIFEST_BYTES + 1)
            except OSError:
                continue  # not complete yet
            text = data.decode("utf-8", errors="replace")
            if len(data) > MAX_MANIFEST_BYTES:
                text = "\0"  # refused by manifest_command: too long to be a manifest
            submissions.append(Submission(entrant.name, version.name, version, text))
    return Scan(tuple(submissions), frozenset(retired))


def manifest_command(text: str, folder: Path) -> BotCommand:
    """The bot a manifest describes, run in ``folder``; :class:`EntryError` (one line)."""
    where = f"{folder / MANIFEST}"
    if "\0" in text:
        raise EntryError(f"{where}: not a manifest (binary or over {MAX_MANIFEST_BYTES} bytes)")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise EntryError(f"{where}: not valid TOML ({error})") from None
    for key in table:
        if key not in MANIFEST_KEYS:
            raise EntryError(f"{where}: unknown key {key!r} (known: {', '.join(MANIFEST_KEYS)})")
    try:
        return player_command({**table, "dir": os.fspath(folder.resolve())}, None)
    except ConfigError as error:
        raise EntryError(f"{where}: {error}") from None


def write_version(
    folder: Path, entrant: str, version: str, command: str, source: Path | None
) -> Path:
    """Put a version in the entries folder atomically: ``source``'s files (if any) and a
    manifest running ``command`` are made in a hidden folder, then renamed into place.
    Refuses a version that is already there."""
    check_name("entrant", entrant)
    check_name("version", version)
    target = folder / entrant / version
    if target.exists():
        raise EntryError(f"{entrant} already has a version {version!r} ({target})")
    manifest = manifest_text(command)
    manifest_command(manifest, target)  # the same check the ladder makes
    incoming = folder / entrant / f".incoming-{uuid.uuid4().hex}"
    incoming.parent.mkdir(parents=True, exist_ok=True)
    try:
        if source is not None:
            if not source.is_dir():
                raise EntryError(f"{source} is not a folder")
            shutil.copytree(source, incoming, symlinks=True)
            (incoming / MANIFEST).unlink(missing_ok=True)
        else:
            incoming.mkdir()
        (incoming / MANIFEST).write_text(manifest, encoding="utf-8")
        os.rename(incoming, target)
    except OSError as error:
        shutil.rmtree(incoming, ignore_errors=True)
        raise EntryError(f"cannot write {target}: {error.strerror or error}") from None
    except BaseException:
        shutil.rmtree(incoming, ignore_errors=True)
        raise
    return target


def manifest_text(command: str) -> str:
    """A manifest holding only ``cmd = command`` (TOML's basic string, escaped)."""
    escaped = command.replace("\\", "\\\\").replace('"', '\\"')
    if any(ord(c) < 0x20 for c in command):
        raise EntryError(f"command {command!r} holds a control character")
    return f'cmd = "{escaped}"\n'


def retire(folder: Path, entrant: str) -> Path:
    """Mark ``entrant`` retired (its ``RETIRED`` file); it must have an entry."""
    check_name("entrant", entrant)
    home = folder / entrant
    if not home.is_dir():
        raise EntryError(f"no entrant {entrant!r} in {folder}")
    marker = home / RETIRED
    marker.touch()
    return marker


def next_version(folder: Path, entrant: str) -> str:
    """``v<N+1>`` past the entrant's highest ``v<N>`` version (``v1`` for a new one)."""
    home = folder / entrant
    numbers = [
        int(v.name[1:])
        for v in (home.iterdir() if home.is_dir() else ())
        if re.fullmatch(r"v\d{1,9}", v.name)
    ]
    return f"v{max(numbers, default=0) + 1}"
