"""The sandbox every bot process runs in: its settings, the command that builds it, and
whether it can be had here.

A bot runs under `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``), in
namespaces of its own (PID, mount, IPC, UTS, cgroup and, unless its player allows the
network, network), as a user of its own (in a user namespace when the referee is not root), under a
system-call filter (seccomp, built with libseccomp), with resource limits and a clean
environment.
docs/security.md states what that buys and what it does not; this module is the one place
that decides how a bot's sandbox looks:

- :class:`Limits` and :class:`SandboxPolicy`: the settings (pure, immutable);
- :class:`Plan` and :func:`bwrap_command`: everything about one bot's sandbox, decided, and
  the ``bwrap`` command line that makes it (pure: unit-testable without processes);
- :func:`make_plan`: a :class:`Plan` from a command and the host's file system;
- :func:`sandbox_problem`, :func:`use_sandbox`, :func:`sandbox_warning`: whether the tool
  works here, and what ``auto``, ``on`` and ``off`` then mean;
- :func:`seccomp_program`, :func:`seccomp_fd`: the system-call filter every sandbox loads;
- :func:`clean_environment`: the environment a bot gets, sandboxed or not;
- the leases a running sandbox holds: a user id of its own (when the referee runs as
  root) and, with CPU affinity, its CPUs.

Processes are started by :mod:`referee.process`, and only there.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import errno
import fcntl
import functools
import math
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee import syscall_filter
from referee.cgroups import group_problem
from referee.errors import RefereeError

MODES = ("auto", "on", "off")
"""``auto``: sandboxed where the tool works (else a warning); ``on``: sandboxed or refuse;
``off``: not sandboxed."""

DEFAULT_MEMORY = 2 << 30
"""Bytes of address space each process of a bot may map (``RLIMIT_AS``)."""

DEFAULT_PROCESSES = 128
"""Processes and threads a bot may run at once (``RLIMIT_NPROC`` of its own user)."""

DEFAULT_FILE_SIZE = 64 << 20
"""Bytes a bot may write to one file (``RLIMIT_FSIZE``); also the size of its ``/tmp``."""

DEFAULT_OPEN_FILES = 512
"""File descriptors each process of a bot may hold (``RLIMIT_NOFILE``)."""

LIMIT_KEYS = ("memory", "processes", "file_size", "open_files")
"""The limits a player may set (each also a top-level setting: the default)."""

SEAT_UID_BASE = 1_900_000_000
SEAT_UID_COUNT = 10_000
"""A bot sandboxed by a referee running as root runs as a user of its own, taken from
``SEAT_UID_BASE`` … ``SEAT_UID_BASE + SEAT_UID_COUNT - 1`` (far above the ids of accounts)."""

MASKED = ("/root", "/home", "/run")
"""Host directories a bot sees empty (with the paths it needs bound back read-only): homes
hold secrets, ``/run`` holds sockets (a read-only mount does not stop ``connect``)."""

PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")
"""Directories a bot gets as a private, size-capped, empty tmpfs."""

COPY_SOURCE = "/run/referee-dir"
"""Where, inside a sandbox, the player's ``dir`` is bound read-only to be copied from."""

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The ``PATH`` of a bot when the referee has none."""

PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ")
"""Variables a bot gets from the referee's environment (when set)."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_PROBE_TIMEOUT = 20.0

MAX_DIR_ENTRIES = 100_000
"""The most files and folders a player's ``dir`` may hold: it is measured and copied at
every start of its bot."""


class SandboxError(RefereeError, ValueError):
    """A sandbox setting cannot be understood (a size, a count, a CPU list, a mode)."""


class SandboxUnavailable(RefereeError):
    """The sandbox cannot be had here (and ``--sandbox on`` asks for it), or no seat user
    is free."""


# --- settings -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Resource limits of one bot; ``None`` is no limit. See the ``DEFAULT_*`` constants."""

    memory: int | None = DEFAULT_MEMORY
    processes: int | None = DEFAULT_PROCESSES
    file_size: int | None = DEFAULT_FILE_SIZE
    open_files: int | None = DEFAULT_OPEN_FILES

    def __post_init__(self) -> None:
        for key in LIMIT_KEYS:
            value = getattr(self, key)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                raise SandboxError(f"{key} must be a positive whole number or unlimited")

    def merged(self, overrides: Mapping[str, int | None]) -> Limits:
        """These limits with a player's own settings (``LIMIT_KEYS`` → value) on top."""
        return dataclasses.replace(self, **overrides) if overrides else self


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxPolicy:
    """How every bot of a match, a game or a tournament is sandboxed.

    ``limits`` are the defaults a player's own settings override; ``affinity`` pins each
    running bot to a CPU of its own (the least used one); ``hide`` lists what no bot may
    see — the referee's outputs (PGN, store, logs), the openings, the players' ``dir`` —
    except, for each bot, a path that holds its own working directory (its ``dir`` is
    its own: see :func:`make_plan`); ``ledger``, when given, is a file where
    each started sandbox is noted, so that a later run can stop what a killed run left
    (:func:`referee.process.stop_leftovers`).
    """

    mode: str = "auto"
    limits: Limits = field(default_factory=Limits)
    affinity: bool = False
    hide: tuple[Path, ...] = ()
    ledger: Path | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SandboxError(f"unknown sandbox mode {self.mode!r} (known: {', '.join(MODES)})")

    def hiding(self, *paths: str | os.PathLike[str] | None) -> SandboxPolicy:
        """This policy, also hiding ``paths`` (``None`` entries are skipped)."""
        extra = tuple(Path(os.path.abspath(path)) for path in paths if path is not None)
        return dataclasses.replace(self, hide=self.hide + extra)


def parse_size(value: str | int | None) -> int | None:
    """A byte count as a user writes it: ``4096``, ``512K``, ``64M``, ``1.5G``, ``2GiB``
    (binary units) or ``unlimited`` (→ ``None``)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "unlimited"):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise SandboxError(f"a size must be positive, not {value}")
        return value
    match = _SIZE.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise SandboxError(f"bad size {value!r}: expected e.g. 512M, 2G, 65536 or unlimited")
    size = math.floor(float(match[1]) * _UNITS[match[2].lower()])
    if size < 1:
        raise SandboxError(f"a size must be positive, not {value!r}")
    return size


def parse_count(value: str | int | None) -> int | None:
    """A positive whole number, or ``unlimited`` (→ ``None``)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "unlimited"):
        return None
    number = int(value) if isinstance(value, str) and value.strip().isdigit() else value
    if isinstance(number, int) and not isinstance(number, bool) and number >= 1:
        return number
    raise SandboxError(f"bad count {value!r}: expected a positive whole number or unlimited")


def parse_limit(key: str, value: str | int | None) -> int | None:
    """The value of the limit ``key`` (one of :data:`LIMIT_KEYS`) as a user writes it."""
    if key not in LIMIT_KEYS:
        raise SandboxError(f"unknown limit {key!r} (known: {', '.join(LIMIT_KEYS)})")
    if key in ("memory", "file_size"):
        return parse_size(value)
    return parse_count(value)


def parse_cpus(value: str | Iterable[int]) -> tuple[int, ...]:
    """CPU numbers as in ``taskset -c``: ``"0,2-3"``, or a list of numbers."""
    cpus: set[int] = set()
    if isinstance(value, str):
        for part in value.split(","):
            first, dash, last = part.strip().partition("-")
            if not first.isdigit() or (dash and not last.isdigit()):
                raise SandboxError(f"bad CPU list {value!r}: expected e.g. 0,2-3")
            cpus.update(range(int(first), int(last if dash else first) + 1))
    else:
        for cpu in value:
            if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu < 0:
                raise SandboxError(f"bad CPU number {cpu!r}")
            cpus.add(cpu)
    if not cpus:
        raise SandboxError("an empty CPU list")
    return tuple(sorted(cpus))


def parse_switch(value: str | bool) -> bool:
    """``yes``/``no``, ``true``/``false``, ``on``/``off``, ``1``/``0``, or a bool."""
    if isinstance(value, bool):
        return value
    text = value.strip().lower()
    if text in ("yes", "true", "on", "1"):
        return True
    if text in ("no", "false", "off", "0"):
        return False
    raise SandboxError(f"bad switch {value!r}: expected yes or no")


def check_env_name(name: str) -> None:
    """Refuse a name that is not a portable environment variable name."""
    if not _ENV_NAME.fullmatch(name):
        raise SandboxError(f"bad environment variable name {name!r}: use letters, digits and _")


def clean_environment(
    declared: Mapping[str, str], *, sandboxed: bool, base: Mapping[str, str]
) -> dict[str, str]:
    """The whole environment of a bot: :data:`PASSED_ENV` from ``base`` (the referee's),
    ``HOME`` and ``TMPDIR`` (``/tmp`` in a sandbox; the referee's otherwise), then the
    player's ``declared`` variables on top."""
    env = {name: base[name] for name in PASSED_ENV if name in base}
    env.setdefault("PATH", SAFE_PATH)
    if sandboxed:
        env["HOME"] = env["TMPDIR"] = "/tmp"
    else:
        env.update({name: base[name] for name in ("HOME", "TMPDIR") if name in base})
    env.update(declared)
    return env


# --- one sandbox, decided -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tools:
    """Absolute paths of the programs a sandbox is built with."""

    bwrap: str
    bash: str
    env: str
    setpriv: str | None = None
    cp: str | None = None
    chown: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """Everything about one bot's sandbox, decided; :func:`bwrap_command` turns it into a
    command line. Paths are absolute.

    ``argv`` runs in ``cwd``. ``copy_from`` is the player's ``dir``, copied into a private
    tmpfs of ``copy_size`` bytes mounted at ``cwd`` (its own path) before the bot starts;
    ``None`` when the bot runs in the referee's directory, seen read-only. ``uid``: the
    seat's own user (the referee runs as root); ``None``: a user namespace maps the
    referee's user. ``masks`` are host directories seen empty and ``private`` those
    replaced by a private tmpfs; ``exposed`` are paths inside either bound back read-only
    (a bot run from a folder in ``/tmp`` still sees it); ``hidden`` are the referee's
    outputs (``(path, is_dir)``), each seen as an empty read-only directory or as
    ``stand_in``, an empty read-only file; ``scrubbed`` are the paths of those (existing
    or not) inside ``copy_from``, removed from the copy once made (the copy never holds
    them, even one made after the plan was).
    ``stdin_fd``/``stdout_fd`` are the bot's pipe ends as the sandbox inherits them,
    ``status_fd`` where bwrap reports the sandbox's pid and the bot's exit code, and
    ``seccomp_fd`` where it reads the system-call filter (:func:`seccomp_fd`).
    """

    argv: tuple[str, ...]
    cwd: str
    env: tuple[tuple[str, str], ...]
    limits: Limits
    network: bool = False
    uid: int | None = None
    masks: tuple[str, ...] = ()
    exposed: tuple[str, ...] = ()
    hidden: tuple[tuple[str, bool], ...] = ()
    stand_in: str = "/dev/null"
    scrubbed: tuple[str, ...] = ()
    private: tuple[str, ...] = PRIVATE
    copy_from: str | None = None
    copy_size: int | None = None
    stdin_fd: int
    stdout_fd: int
    status_fd: int
    seccomp_fd: int


def bwrap_command(plan: Plan, tools: Tools) -> list[str]:
    """The command line that starts ``plan``'s bot in its sandbox.

    bwrap builds the view (read-only root, masks, private tmpfs, the bot's directory),
    the namespaces, ties the sandbox's life to its parent's (``--die-with-parent``) and
    loads the system-call filter (:func:`seccomp_program`).
    Inside, ``bash`` copies the player's directory (if any), sets the limits, moves the
    bot's pipes onto its stdin and stdout — passed as extra descriptors so that bwrap's own
    processes never hold them: a bot that closes its stdout is seen doing so — and, through
    ``setpriv`` (as root) and ``env -i``, becomes the bot with a clean environment.
    """
    args = [tools.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for mask in plan.masks:
        args += ["--perms", "0755", "--tmpfs", mask]
    tmp_size = [] if plan.limits.file_size is None else ["--size", str(plan.limits.file_size)]
    for private in plan.private:
        args += ["--perms", "1777", *tmp_size, "--tmpfs", private]
    made: set[str] = set()
    hiding = (*plan.masks, *plan.private)
    for path in plan.exposed:
        args += _parents(path, hiding, made)
        args += ["--ro-bind", path, path]
    if plan.copy_from is not None:
        args += ["--ro-bind", plan.copy_from, COPY_SOURCE]
        args += _parents(plan.cwd, hiding, made)
        copy_size = [] if plan.copy_size is None else ["--size", str(plan.copy_size)]
        args += ["--perms", "0755", *copy_size, "--tmpfs", plan.cwd]
    for path, is_dir in plan.hidden:
        if plan.copy_from is not None and _inside(path, plan.copy_from):
            # Hidden from the copy's source, so the copy never holds it.
            path = COPY_SOURCE + path[len(plan.copy_from) :]
        args += _hide(path, is_dir, plan.stand_in)
    args += ["--chdir", plan.cwd]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not plan.network:
        args.append("--unshare-net")
    if plan.uid is None:
        args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    else:
        # Root without a user namespace: keep only what the launch script needs (copy the
        # player's dir and give it to the seat's user) and what setpriv needs to become
        # that user and drop every capability for good, before the bot's code runs.
        args += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_CHOWN", "CAP_DAC_READ_SEARCH"):
            args += ["--cap-add", cap]
    args += ["--die-with-parent", "--new-session", "--json-status-fd", str(plan.status_fd)]
    args += ["--seccomp", str(plan.seccomp_fd)]
    args += ["--", tools.bash, "-c", _launch_script(plan, tools), "referee-bot", *plan.argv]
    return args


def _launch_script(plan: Plan, tools: Tools) -> str:
    """The bash script run first inside the sandbox (see :func:`bwrap_command`)."""
    lines = ["set -e"]
    if plan.copy_from is not None:
        lines.append(
            f"{shlex.quote(tools.cp or 'cp')} -R --preserve=mode,timestamps,links {COPY_SOURCE}/. ."
        )
        for path in plan.scrubbed:
            lines.append(f"rm -rf -- {shlex.quote('./' + os.path.relpath(path, plan.cwd))}")
        if plan.uid is not None:
            lines.append(f"{shlex.quote(tools.chown or 'chown')} -R {plan.uid}:{plan.uid} .")
    limits = plan.limits
    for flag, value in (
        ("-v", None if limits.memory is None else max(1, limits.memory // 1024)),
        ("-u", limits.processes),
        ("-f", None if limits.file_size is None else limits.file_size // 1024),
        ("-n", limits.open_files),
    ):
        if value is not None:
            lines.append(f"ulimit {flag} {value}")
    become = ""
    if plan.uid is not None:
        become = (
            f"{shlex.quote(tools.setpriv or 'setpriv')} --reuid {plan.uid} --regid {plan.uid}"
            " --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "
        )
    assignments = " ".join(shlex.quote(f"{name}={value}") for name, value in plan.env)
    r, w = plan.stdin_fd, plan.stdout_fd
    lines.append(
        f'exec {become}{shlex.quote(tools.env)} -i {assignments} "$@" <&{r} >&{w} {r}<&- {w}>&-'
    )
    return "\n".join(lines)


def _hide(path: str, is_dir: bool, stand_in: str) -> list[str]:
    if is_dir:
        return ["--perms", "0555", "--size", "4096", "--tmpfs", path, "--remount-ro", path]
    # An empty regular file, not /dev/null: cp copies it where it refuses a device.
    return ["--ro-bind", stand_in, path]


@functools.cache
def stand_in_file() -> str:
    """An empty read-only file of this process's own, bound over each hidden file (in a
    private directory, removed when this process exits)."""
    folder = tempfile.mkdtemp(prefix="referee-hidden-")
    path = os.path.join(folder, "empty")
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return path


def _parents(path: str, masks: tuple[str, ...], made: set[str]) -> list[str]:
    """``--dir`` options making the directories between a mask (or private tmpfs) and
    ``path`` traversable (bwrap would create them mode 0700, closed to the seat's user)."""
    args: list[str] = []
    for mask in masks:
        if _inside(path, mask) and path != mask:
            parts = Path(path).relative_to(mask).parts[:-1]
            current = mask
            for part in parts:
                current = os.path.join(current, part)
                if current not in made:
                    made.add(current)
                    args += ["--perms", "0755", "--dir", current]
            break
    return args


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def make_plan(
    argv: tuple[str, ...],
    *,
    cwd: str,
    copy: bool,
    env: Mapping[str, str],
    limits: Limits,
    network: bool,
    hide: Iterable[Path],
    uid: int | None,
    fds: tuple[int, int, int, int],
) -> Plan:
    """The :class:`Plan` of a bot, from its resolved ``argv`` and what the host's file
    system holds: which masked paths it needs (its directory, its program's installation,
    the referee's own Python when it runs that), and which of the paths to ``hide`` exist
    — all but those that hold the bot's own working directory (its ``dir``, or the
    referee's directory when it has none), which it needs. ``fds``: the bot's stdin and
    stdout, the status and the seccomp descriptors. Raises :class:`SandboxError` when the
    bot's ``dir`` cannot be copied (see :func:`_tree_size`)."""
    masks = _masks()
    private = tuple(path for path in PRIVATE if os.path.isdir(path))
    wanted = list(_needed_paths(argv, cwd, network))
    if not copy:
        wanted.append(cwd)
    roots = (*masks, *private)
    closed: list[str] = []
    for path, folder, bits in _program_files(argv, cwd):
        if copy and _inside(path, cwd):
            continue  # in the copy, which is the bot's own
        if uid is not None and not os.stat(path).st_mode & bits:
            what, letter = ("executable", "x") if bits == 0o001 else ("readable", "r")
            raise SandboxError(
                f"in the sandbox, {path} is not {what} by the bot's user (mode"
                f" {stat.S_IMODE(os.stat(path).st_mode):o}): chmod o+{letter} it, or give the"
                " player a dir that holds it"
            )
        shut = _shut_ancestor(path, roots) if uid is not None else None
        if shut is None and folder not in (*roots, "/"):
            wanted.append(folder)
            continue
        # Only the file is bound back: its folder is a whole private or masked one, or
        # one the seat's user cannot enter (a mask, bound back file by file, can be).
        wanted.append(path)
        if shut is not None and not any(_inside(shut, root) for root in roots):
            closed.append(shut)
    masks = tuple(dict.fromkeys((*masks, *closed)))
    exposed = _exposures(wanted, (*masks, *private))
    hiding = [str(path) for path in dict.fromkeys(hide) if not _inside(cwd, str(path))]
    hidden = tuple((path, os.path.isdir(path)) for path in hiding if os.path.exists(path))
    scrubbed = tuple(path for path in hiding if copy and _inside(path, cwd))
    copy_size = None
    if copy:
        size = _tree_size(cwd, skip=frozenset(scrubbed))
        copy_size = None if limits.file_size is None else size + limits.file_size
    stdin_fd, stdout_fd, status_fd, seccomp = fds
    return Plan(
        argv=argv,
        cwd=cwd,
        env=tuple(env.items()),
        limits=limits,
        network=network,
        uid=uid,
        masks=masks,
        exposed=exposed,
        hidden=hidden,
        stand_in=stand_in_file() if hidden else "/dev/null",
        scrubbed=scrubbed,
        private=private,
        copy_from=cwd if copy else None,
        copy_size=copy_size,
        stdin_fd=stdin_fd,
        stdout_fd=stdout_fd,
        status_fd=status_fd,
        seccomp_fd=seccomp,
    )


def _masks() -> tuple[str, ...]:
    """:data:`MASKED` and the referee's home, those that exist, none inside another."""
    found: list[str] = []
    for mask in sorted({*MASKED, os.path.expanduser("~")}):
        if mask == "/" or not os.path.isdir(mask) or os.path.islink(mask):
            continue
        if not any(_inside(mask, other) for other in found):
            found.append(mask)
    return tuple(found)


def _needed_paths(argv: tuple[str, ...], cwd: str, network: bool) -> Iterator[str]:
    """Folders the bot's command needs to see, wherever they are, besides its program's
    and its scripts' (:func:`_program_files`)."""
    program = os.path.join(cwd, argv[0])
    if os.path.realpath(program) == os.path.realpath(sys.executable):
        yield from (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
        yield from (entry for entry in sys.path if entry and os.path.isdir(entry))
        yield from _editable_sources()
    if network:
        yield os.path.realpath("/etc/resolv.conf")


def _program_files(argv: tuple[str, ...], cwd: str) -> Iterator[tuple[str, str, int]]:
    """``(file, folder to bind, permission bit others need)`` for the bot's program (its
    installation: the folder above a ``bin/``) and for its first argument naming a file
    that exists (a script: ``python /tmp/a/bot.py``), as given and with links resolved."""
    program = os.path.join(cwd, argv[0])
    for path in dict.fromkeys((program, os.path.realpath(program))):
        folder = os.path.dirname(path)
        if os.path.basename(folder) in ("bin", "sbin"):
            folder = os.path.dirname(folder)
        yield path, folder, 0o001
    for argument in argv[1:]:
        given = os.path.join(cwd, argument)
        if not argument.startswith("-") and os.path.isfile(given):
            for path in dict.fromkeys((os.path.abspath(given), os.path.realpath(given))):
                yield path, os.path.dirname(path), 0o004
            break  # the script; what a later argument names is the bot's own business


def _shut_ancestor(path: str, roots: tuple[str, ...]) -> str | None:
    """The first folder above ``path`` that others may not enter (no ``o+x``), leaving out
    those inside ``roots`` (masks and private folders, where the sandbox remakes the
    folders above what it binds back open) but ``path``'s own."""
    current = "/"
    folder = os.path.dirname(path)
    for part in Path(folder).parts[1:]:
        current = os.path.join(current, part)
        if current != folder and any(_inside(current, root) for root in roots):
            continue
        try:
            if not os.stat(current).st_mode & 0o001:
                return current
        except OSError:
            return None
    return None


@functools.cache
def _editable_sources() -> tuple[str, ...]:
    """The source folders of the packages installed in editable mode in this Python
    (``pip install -e``; PEP 610's ``direct_url.json``): their import hooks point there,
    outside ``sys.path``."""
    import importlib.metadata
    import json
    from urllib.parse import unquote, urlsplit

    found: list[str] = []
    for distribution in importlib.metadata.distributions():
        try:
            text = distribution.read_text("direct_url.json")
            described = json.loads(text) if text else {}
        except (OSError, ValueError):
            continue
        if not isinstance(described, dict) or not isinstance(described.get("dir_info"), dict):
            continue
        url = described.get("url")
        if described["dir_info"].get("editable") and isinstance(url, str):
            parts = urlsplit(url)
            if parts.scheme == "file" and os.path.isdir(unquote(parts.path)):
                found.append(os.path.realpath(unquote(parts.path)))
    return tuple(dict.fromkeys(found))


def _exposures(wanted: Iterable[str], masks: tuple[str, ...]) -> tuple[str, ...]:
    """The paths of ``wanted`` that lie inside a mask, without those inside another."""
    inside = sorted(
        {os.path.normpath(path) for path in wanted if any(_inside(path, m) for m in masks)}
    )
    kept: list[str] = []
    for path in inside:
        if os.path.exists(path) and not any(_inside(path, other) for other in kept):
            kept.append(path)
    return tuple(kept)


def _tree_size(folder: str, skip: frozenset[str] = frozenset()) -> int:
    """Bytes a copy of ``folder`` takes in a tmpfs (the data of its files, plus a page per
    entry), not counting what lies in the paths ``skip`` (hidden: never copied).

    The data is what the copy holds, not the files' apparent sizes: ``cp
    --preserve=links`` copies a file hard-linked under several names once, and a sparse
    file's holes stay holes. Counting apparent sizes would let a player's ``dir`` that
    holds a 100 GiB sparse file (or one file linked a thousand times) give its bot a
    tmpfs of that size, to fill with real memory.

    Walked with a stack of its own, not by recursion, so no nesting can exhaust the
    referee's; raises :class:`SandboxError` naming the cause when a folder in it cannot be
    read (a path too long, no permission) or it holds more than :data:`MAX_DIR_ENTRIES`.
    """
    total, entries = 4096, 0
    seen: set[tuple[int, int]] = set()  # files with several names, counted once
    pending = [folder]
    while pending:
        path = pending.pop()
        try:
            with os.scandir(path) as listing:
                for entry in listing:
                    entries += 1
                    if entries > MAX_DIR_ENTRIES:
                        raise SandboxError(
                            f"its dir {folder!r} holds more than {MAX_DIR_ENTRIES} files"
                            " and folders"
                        )
                    if entry.path in skip:
                        continue
                    info = entry.stat(follow_symlinks=False)
                    total += 4096
                    if stat.S_ISREG(info.st_mode):
                        if info.st_nlink > 1:
                            if (info.st_dev, info.st_ino) in seen:
                                continue
                            seen.add((info.st_dev, info.st_ino))
                        total += _data_size(entry.path, info)
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(entry.path)
        except OSError as error:
            where = error.filename if isinstance(error.filename, str) else path
            raise SandboxError(
                f"cannot read its dir {folder!r}: {error.strerror or error}"
                f" ({where[:200]}{'…' if len(where) > 200 else ''})"
            ) from None
    return total


def _data_size(path: str, info: os.stat_result) -> int:
    """The bytes of data a copy of the regular file ``path`` holds: its size, less its
    holes when it has fewer blocks than its size needs (a sparse file, whose holes ``cp``
    keeps). A file that cannot be opened counts whole (its copy fails anyway)."""
    if info.st_blocks * 512 >= info.st_size:
        return info.st_size
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return info.st_size
    data, offset = 0, 0
    try:
        while offset < info.st_size:  # each turn moves past one extent of data
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError:  # ENXIO: no data after offset
                break
            offset = os.lseek(fd, start, os.SEEK_HOLE)
            data += offset - start
    except OSError:
        return info.st_size
    finally:
        os.close(fd)
    return min(data, info.st_size)


# --- the system-call filter ------------------------------------------------------------

_COMPAT_ARCHES = {"X86_64": ("X86", "X32"), "AARCH64": ("ARM",)}
"""The other ABIs a process of the machine may call the kernel through (by the names of
:class:`pyseccomp.Arch`): the filter covers them too, or it could be sidestepped."""

_UNKNOWN_CALL = -1
"""What libseccomp's ``resolve_syscall`` says of a name it does not know (other negative
numbers stand for calls that exist on another ABI of the filter, such as ``socketcall``)."""


@functools.cache
def seccomp_program() -> bytes:
    """The system-call filter of every sandbox, as the compiled BPF program that bwrap
    loads (``--seccomp``) just before it starts the launch script; raises
    :class:`SandboxUnavailable` when it cannot be made here.

    An allow list, following Docker's default profile (:mod:`referee.syscall_filter` says
    which version, what it allows, what it denies and with which errno, and where it
    differs). A name this libseccomp does not know is left out: that call gets the
    default, ``ENOSYS``.
    """
    try:
        import pyseccomp as seccomp
    except ImportError:
        raise SandboxUnavailable(
            "the Python package pyseccomp is not installed (pip install pyseccomp)"
        ) from None
    except RuntimeError:  # pyseccomp's way of saying that libseccomp.so is missing
        raise SandboxUnavailable(
            "libseccomp is not installed (Debian/Ubuntu: apt-get install libseccomp2)"
        ) from None
    try:
        native = seccomp.system_arch()
        names = {value: name for name, value in vars(seccomp.Arch).items() if name.isupper()}
        rules = seccomp.SyscallFilter(seccomp.ERRNO(syscall_filter.DEFAULT_ERRNO))
        for arch in _COMPAT_ARCHES.get(names.get(native, ""), ()):
            rules.add_arch(getattr(seccomp.Arch, arch))
        for call in ("clone", "clone3", "unshare", "socket", "personality"):
            if seccomp.resolve_syscall(seccomp.Arch.NATIVE, call) == _UNKNOWN_CALL:
                raise SandboxUnavailable(
                    f"libseccomp does not know the system call {call} (version 2.5 or later"
                    " is needed)"
                )

        def add(fails: int | None, call: str, *args: Any) -> None:
            """A rule: ``call`` (with ``args``) is allowed, or fails with ``fails``."""
            if fails == syscall_filter.DEFAULT_ERRNO:
                return  # libseccomp refuses a rule that says what the default says
            if seccomp.resolve_syscall(seccomp.Arch.NATIVE, call) != _UNKNOWN_CALL:
                rules.add_rule(
                    seccomp.ALLOW if fails is None else seccomp.ERRNO(fails), call, *args
                )

        for calls in syscall_filter.ALLOWED.values():
            for call in calls:
                add(None, call)
        for calls in syscall_filter.DENIED.values():
            for call in calls:
                add(syscall_filter.DENIED_ERRNO, call)
        # clone takes its flags first, but second on s390.
        flags = 1 if names.get(native) in ("S390", "S390X") else 0
        every = sum(syscall_filter.CLONE_NAMESPACES.values())
        add(None, "clone", seccomp.Arg(flags, seccomp.MASKED_EQ, every, 0))
        for bit in syscall_filter.CLONE_NAMESPACES.values():
            add(errno.EPERM, "clone", seccomp.Arg(flags, seccomp.MASKED_EQ, bit, bit))
        add(syscall_filter.CLONE3_ERRNO, "clone3")
        # socket: allowed for every address family but the denied ones (one comparison
        # per rule: the gaps between them are single families).
        previous = None
        for family in sorted(syscall_filter.SOCKET_FAMILIES_DENIED.values()):
            if previous is None:
                add(None, "socket", seccomp.Arg(0, seccomp.LT, family))
            for between in range(family if previous is None else previous + 1, family):
                add(None, "socket", seccomp.Arg(0, seccomp.EQ, between))
            add(errno.EPERM, "socket", seccomp.Arg(0, seccomp.EQ, family))
            previous = family
        add(None, "socket", seccomp.Arg(0, seccomp.GT, previous))
        add(syscall_filter.FILE_LOCKS_ERRNO, "flock")
        for call in ("fcntl", "fcntl64"):  # its command is its second argument
            for command in syscall_filter.FCNTL_ALLOWED:
                add(None, call, seccomp.Arg(1, seccomp.EQ, command))
            for command in syscall_filter.FCNTL_LOCKS:
                add(syscall_filter.FILE_LOCKS_ERRNO, call, seccomp.Arg(1, seccomp.EQ, command))
            for command in syscall_filter.FCNTL_WATCHES:
                add(syscall_filter.DENIED_ERRNO, call, seccomp.Arg(1, seccomp.EQ, command))
        for persona in syscall_filter.PERSONALITIES_ALLOWED:
            add(None, "personality", seccomp.Arg(0, seccomp.EQ, persona))
        with tempfile.TemporaryFile() as file:
            rules.export_bpf(file)
            file.seek(0)
            return file.read()
    except OSError as error:
        raise SandboxUnavailable(
            f"libseccomp cannot make the system-call filter: {error}"
        ) from None


@contextlib.contextmanager
def seccomp_fd() -> Iterator[int]:
    """A descriptor holding :func:`seccomp_program`, for one bwrap to read (``--seccomp``):
    each sandbox gets its own, since bwrap reads it to its end."""
    with filter_fd(seccomp_program()) as fd:
        yield fd


@contextlib.contextmanager
def filter_fd(program: bytes) -> Iterator[int]:
    """A descriptor holding the compiled filter ``program``, read from its start."""
    fd = os.memfd_create("referee-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


# --- can it be had here? ----------------------------------------------------------------


@functools.cache
def find_tools() -> Tools | None:
    """The programs a sandbox needs, or ``None`` when one is missing."""
    found = {
        name: shutil.which(name) for name in ("bwrap", "bash", "env", "setpriv", "cp", "chown")
    }
    bwrap, bash, env = found["bwrap"], found["bash"], found["env"]
    if bwrap is None or bash is None or env is None:
        return None
    return Tools(bwrap, bash, env, found["setpriv"], found["cp"], found["chown"])


@functools.cache
def sandbox_problem() -> str | None:
    """Why bots cannot be sandboxed here, or ``None`` when they can (checked once: a real
    sandbox is started, with its system-call filter, as a seat's user when the referee
    runs as root)."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux (this is {sys.platform})"
    tools = find_tools()
    if tools is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    try:
        seccomp_program()
    except SandboxUnavailable as error:
        return str(error)
    if is_root():
        if tools.setpriv is None:
            return "setpriv (util-linux) is not installed"
        if not _uids_mapped(SEAT_UID_BASE, SEAT_UID_COUNT):
            return (
                f"user ids {SEAT_UID_BASE}…{SEAT_UID_BASE + SEAT_UID_COUNT - 1}"
                " are not mapped in this user namespace"
            )
    return _try_sandbox(tools)


def _try_sandbox(tools: Tools) -> str | None:
    """Start ``true`` in a sandbox as a bot would be; the reason when that fails."""
    with contextlib.ExitStack() as stack:
        try:
            lease = stack.enter_context(UID_POOL.lease()) if is_root() else None
        except SandboxUnavailable as error:
            return str(error)
        fds = [os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC) for _ in range(3)]
        for fd in fds:
            stack.callback(os.close, fd)
        fds.append(stack.enter_context(seccomp_fd()))
        plan = Plan(
            argv=(shutil.which("true") or "/bin/true",),
            cwd="/",
            env=(("PATH", SAFE_PATH),),
            limits=Limits(),
            uid=lease,
            masks=_masks(),
            private=tuple(path for path in PRIVATE if os.path.isdir(path)),
            stdin_fd=fds[0],
            stdout_fd=fds[1],
            status_fd=fds[2],
            seccomp_fd=fds[3],
        )
        try:
            done = subprocess.run(
                bwrap_command(plan, tools),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=fds,
                env={},
                timeout=_PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bwrap does not run: {error}"
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return f"bwrap does not work here: {lines[-1] if lines else done.returncode}"
    return None


def use_sandbox(mode: str) -> bool:
    """Whether bots run sandboxed in ``mode``; raises :class:`SandboxUnavailable` for ``on``
    when the sandbox cannot be had."""
    if mode not in MODES:
        raise SandboxError(f"unknown sandbox mode {mode!r} (known: {', '.join(MODES)})")
    if mode == "off":
        return False
    problem = sandbox_problem()
    if problem is not None and mode == "on":
        raise SandboxUnavailable(
            f"cannot sandbox bots: {problem}; install it, or run with --sandbox off"
        )
    return problem is None


def sandbox_warning(policy: SandboxPolicy) -> str | None:
    """Check ``policy`` before any bot starts: raises :class:`SandboxUnavailable` (mode
    ``on``) or :class:`SandboxError` (a limit the system does not allow); returns the one
    warning line to show when ``auto`` runs bots without a sandbox, or (``auto``, ``on``)
    without control groups, else ``None``."""
    check_limits(policy.limits)
    if policy.mode == "off":
        return None
    groups = group_problem()
    without = (
        None
        if groups is None
        else f"bots run without control groups ({groups}): memory and processes are limited"
        " per process"
    )
    if use_sandbox(policy.mode):
        return None if without is None else f"{without} (--sandbox off hides this warning)"
    warning = f"bots run without a sandbox: {sandbox_problem()}"
    if without is not None:
        warning += f"; {without}"
    return f"{warning} (--sandbox off hides this warning)"


def check_limits(limits: Limits) -> None:
    """Refuse limits above what this process may grant (its hard limits)."""
    import resource

    if is_root():
        return
    for key, which, scale in (
        ("memory", resource.RLIMIT_AS, 1024),
        ("processes", resource.RLIMIT_NPROC, 1),
        ("file_size", resource.RLIMIT_FSIZE, 1024),
        ("open_files", resource.RLIMIT_NOFILE, 1),
    ):
        value = getattr(limits, key)
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY and (value is None or value // scale > hard // scale):
            shown = "unlimited" if value is None else value
            raise SandboxError(f"{key} {shown} is above this system's limit ({hard})")


def is_root() -> bool:
    return os.geteuid() == 0


def _uids_mapped(first: int, count: int) -> bool:
    try:
        text = Path("/proc/self/uid_map").read_text()
    except OSError:
        return True
    for line in text.splitlines():
        inside, _, length = (int(part) for part in line.split())
        if inside <= first and first + count <= inside + length:
            return True
    return False


# --- leases: what a running sandbox holds ------------------------------------------------


class _UidPool:
    """Hands out the seat users (one per running sandbox, across every referee process of
    the machine): a user is taken by holding an exclusive lock on its file in a root-only
    directory, released when the sandbox has stopped (or the process died)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held: set[int] = set()
        self._next = os.getpid() % SEAT_UID_COUNT

    @contextlib.contextmanager
    def lease(self) -> Iterator[int]:
        folder = _lock_folder()
        with self._mutex:
            taken = self._take(folder)
        uid, fd = taken
        try:
            yield uid
        finally:
            os.close(fd)
            with self._mutex:
                self._held.discard(uid)

    def _take(self, folder: str) -> tuple[int, int]:
        for step in range(SEAT_UID_COUNT):
            offset = (self._next + step) % SEAT_UID_COUNT
            uid = SEAT_UID_BASE + offset
            if uid in self._held:
                continue
            try:
                fd = os.open(
                    os.path.join(folder, f"uid-{uid}"),
                    os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                    0o600,
                )
            except OSError as error:
                raise SandboxUnavailable(f"cannot lock a seat user in {folder}: {error}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._held.add(uid)
            self._next = offset + 1
            return uid, fd
        raise SandboxUnavailable(f"all {SEAT_UID_COUNT} seat users are in use")


def _lock_folder() -> str:
    """A directory only root can write, for the seat users' lock files."""
    for parent in ("/run", tempfile.gettempdir()):
        folder = os.path.join(parent, "referee-sandbox")
        with contextlib.suppress(FileExistsError, FileNotFoundError, PermissionError):
            os.mkdir(folder, 0o700)
        try:
            info = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            return folder
    raise SandboxUnavailable("no root-only directory for the seat users' locks (/run, /tmp)")


class _CpuPool:
    """Which CPUs the running bots are pinned to: each new bot gets the least used CPU of
    those the referee may use (bots share a CPU only when more run than there are CPUs),
    or the CPUs it asks for (its player's own, or those of the bot it replaces)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._use: dict[int, int] = {}
        self._share: tuple[int, ...] | None = None

    def confine(self, cpus: Iterable[int]) -> None:
        """From now on, give new bots the least used of ``cpus`` only: this process's share
        of the machine's CPUs, when several processes start bots (a tournament's worker
        processes), each leasing from a share of its own."""
        with self._mutex:
            self._share = tuple(sorted(cpus))

    @contextlib.contextmanager
    def lease(self, cpus: tuple[int, ...] | None) -> Iterator[tuple[int, ...]]:
        with self._mutex:
            if cpus is None:
                share = self._share or sorted(os.sched_getaffinity(0))
                cpus = (min(share, key=lambda cpu: (self._use.get(cpu, 0), cpu)),)
            for cpu in cpus:
                self._use[cpu] = self._use.get(cpu, 0) + 1
        try:
            yield cpus
        finally:
            with self._mutex:
                for cpu in cpus:
                    self._use[cpu] -= 1


UID_POOL = _UidPool()
CPU_POOL = _CpuPool()


def allowed_cpus() -> frozenset[int]:
    """The CPUs this process may run on."""
    return frozenset(os.sched_getaffinity(0))


def check_cpus(cpus: tuple[int, ...]) -> None:
    """Refuse CPUs this process may not use."""
    unknown = sorted(set(cpus) - allowed_cpus())
    if unknown:
        raise SandboxError(
            f"CPU {unknown[0]} is not one this referee may use"
            f" (allowed: {','.join(map(str, sorted(allowed_cpus())))})"
        )
