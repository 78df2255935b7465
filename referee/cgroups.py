"""Control groups: one per bot, holding its whole process tree.

A bot's group is made under the referee's own group before the bot starts, and the bot's
first process joins it before it runs anything (:meth:`Group.join_paths`, written by
the launcher before it execs the bot's first program), so every process it ever starts is
in it. The group gives what per-process limits cannot:

- a memory limit for the whole tree, its tmpfs pages included (a page is charged to the
  group of the process that first touches it);
- a process limit for the whole tree;
- the CPU time the whole tree used (what the ``cpu`` clock charges);
- a kill of the whole group that leaves nothing, and leftovers of a killed referee found
  again by their names.

Two backends behind one interface (:class:`Hierarchy` makes :class:`Group`\\ s): cgroup v2
(one unified tree, where a subtree is delegated to the referee) and cgroup v1 (one tree
per controller: ``memory``, ``pids``, ``cpuacct``, ``freezer``). Both are written
directly against the kernel's files, as isolate does.

**Names.** Every bot group lives in a parent owned by the referee, ``referee-bots``,
made beside (v2: under) the referee's own group; a bot's group is named
``<pid>-<start time>-<n>`` after the referee process that made it. A group whose maker
is no longer alive (no process with that pid and start time) is a leftover of a killed
referee: :func:`sweep_leftovers` kills what is in it and removes it. Groups of a live
referee, another run at the same time, are never touched.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import signal
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from referee.errors import RefereeError

PARENT = "referee-bots"
"""The group, owned by the referee, that holds every bot's group."""

SELF = "referee-self"
"""v2 only: the leaf group the referee moves itself into, so that its own group may
enable controllers for its children (cgroup v2 lets only a group without processes)."""

V1_CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
"""The v1 hierarchies a bot's group needs (``freezer``: to kill it whole)."""

V2_CONTROLLERS = ("memory", "pids")
"""The v2 controllers a bot's group needs (CPU time, ``cpu.stat``, needs none)."""

_FREEZE_WAIT = 1.0
"""A hang guard: seconds to wait for a v1 group to read ``FROZEN``."""

_ROUNDS = 100
"""A hang guard: how many times a kill goes round the processes of a v1 group."""


class GroupUnavailable(RefereeError):
    """Control groups cannot be had here (the reason is the message)."""


class GroupFault(RefereeError):
    """A group could not be made, limited, joined or removed: the referee's fault."""


@dataclass(frozen=True, slots=True)
class Breach:
    """A limit a group hit: ``limit`` is the setting (``memory``, ``processes``) and
    ``detail`` the figures, in words."""

    limit: str
    detail: str


def _read(path: str) -> str:
    with open(path, encoding="ascii") as file:
        return file.read()


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def _keyed(text: str) -> dict[str, int]:
    """A flat keyed file (``key value`` lines) as numbers."""
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            found[key] = int(value)
    return found


def _size(value: int) -> str:
    """``67108864`` → ``64M`` (as the settings are written)."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if value >= 1 << shift and value % (1 << shift) == 0:
            return f"{value >> shift}{unit}"
    return f"{value / (1 << 20):.1f}M" if value >= 1 << 20 else str(value)


class Group(ABC):
    """One bot's control group."""

    name: str

    @abstractmethod
    def limit(self, *, memory: int | None, processes: int | None) -> None:
        """Set the whole tree's memory (bytes) and process (tasks) limits (``None``: none)."""

    @abstractmethod
    def join_paths(self) -> tuple[str, ...]:
        """The files a process writes ``0`` to, to join this group (one per tree)."""

    @abstractmethod
    def cpu_time(self) -> float:
        """Seconds of CPU the whole tree used since the group was made."""

    @abstractmethod
    def breach(self) -> Breach | None:
        """The limit the group hit (an out-of-memory kill, a refused fork), if any."""

    @abstractmethod
    def pids(self) -> list[int]:
        """The processes in the group now."""

    @abstractmethod
    def kill(self) -> None:
        """``SIGKILL`` every process in the group, those it starts meanwhile included."""

    @abstractmethod
    def _remove_dirs(self) -> None:
        """rmdir the group (raises ``OSError``: ``EBUSY`` while a process is in it)."""

    _cpu_fd: int | None = None

    def _read_cpu(self, path: str) -> str:
        """The CPU time file's text, from a descriptor kept open (read at every turn of
        the cpu clock: an open and a close would cost as much again)."""
        if self._cpu_fd is None:
            self._cpu_fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        return os.pread(self._cpu_fd, 4096, 0).decode("ascii")

    def remove(self) -> bool:
        """Remove the group once it is empty; whether it is gone (``False``: a process
        is still in it — kill it, let it die and try again)."""
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        try:
            self._remove_dirs()
        except FileNotFoundError:
            return True
        except OSError as error:
            if error.errno == errno.EBUSY:
                return False
            raise GroupFault(f"cannot remove the control group {self.name}: {error}") from None
        return True


class Hierarchy(ABC):
    """Where bot groups are made: the referee-owned parent of one backend."""

    version: int

    @abstractmethod
    def create(self, name: str) -> Group:
        """Make the group ``name`` in the parent (raises :class:`GroupFault`)."""

    @abstractmethod
    def open(self, name: str) -> Group:
        """The existing group ``name`` (a leftover to kill and remove)."""

    @abstractmethod
    def names(self) -> list[str]:
        """The groups in the parent."""

    @abstractmethod
    def where(self) -> str:
        """The parent's path, for messages."""


# --- cgroup v2 ------------------------------------------------------------------------


class V2Group(Group):
    def __init__(self, path: str) -> None:
        self.path = path
        self.name = os.path.basename(path)
        self._limits: tuple[int | None, int | None] = (None, None)

    def _file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def limit(self, *, memory: int | None, processes: int | None) -> None:
        self._limits = (memory, processes)
        _write(self._file("memory.max"), "max" if memory is None else str(memory))
        with contextlib.suppress(FileNotFoundError):  # a kernel without swap accounting
            _write(self._file("memory.swap.max"), "0")
        _write(self._file("pids.max"), "max" if processes is None else str(processes))
        # An out-of-memory kill takes the whole bot, not the one process the kernel picks.
        with contextlib.suppress(FileNotFoundError):  # before Linux 4.19
            _write(self._file("memory.oom.group"), "1")

    def join_paths(self) -> tuple[str, ...]:
        return (self._file("cgroup.procs"),)

    def cpu_time(self) -> float:
        return _keyed(self._read_cpu(self._file("cpu.stat"))).get("usage_usec", 0) / 1e6

    def breach(self) -> Breach | None:
        memory, processes = self._limits
        events = _keyed(_read(self._file("memory.events")))
        if events.get("oom_kill", 0) > 0:
            limit = "" if memory is None else f" of {_size(memory)}"
            return Breach("memory", f"the whole bot used its memory limit{limit}: killed")
        if _keyed(_read(self._file("pids.events"))).get("max", 0) > 0:
            limit = "" if processes is None else f" of {processes}"
            return Breach("processes", f"the whole bot reached its process limit{limit}")
        return None

    def pids(self) -> list[int]:
        return [int(word) for word in _read(self._file("cgroup.procs")).split()]

    def kill(self) -> None:
        try:
            _write(self._file("cgroup.kill"), "1")
        except FileNotFoundError:  # before Linux 5.14: kill, round and round
            _kill_rounds(self.pids)

    def _remove_dirs(self) -> None:
        os.rmdir(self.path)


class V2Hierarchy(Hierarchy):
    """Bot groups in ``<delegated group>/referee-bots`` of a cgroup2 tree."""

    version = 2

    def __init__(self, parent: str) -> None:
        self.parent = parent

    @classmethod
    def setup(cls, mount: str, own: str) -> V2Hierarchy:
        """Take charge of the delegated group ``own`` (a path in the tree mounted at
        ``mount``, as /proc/self/cgroup gives it): move this process into its leaf
        ``referee-self`` (unless it is there already: then its parent is the delegated
        group), enable the controllers for its children, and make ``referee-bots``."""
        here = os.path.join(mount, own.lstrip("/"))
        base = os.path.dirname(here) if os.path.basename(here) == SELF else here
        _check_delegated(base)  # before anything is moved or made
        if base == here:
            leaf = os.path.join(base, SELF)
            with contextlib.suppress(FileExistsError):
                os.mkdir(leaf)
            _write(os.path.join(leaf, "cgroup.procs"), "0")
        parent = os.path.join(base, PARENT)
        with contextlib.suppress(FileExistsError):
            os.mkdir(parent)
        for group in (base, parent):
            _enable(group)
        return cls(parent)

    def create(self, name: str) -> Group:
        path = os.path.join(self.parent, name)
        try:
            os.mkdir(path)
        except OSError as error:
            raise GroupFault(f"cannot make the control group {path}: {error}") from None
        return V2Group(path)

    def open(self, name: str) -> Group:
        return V2Group(os.path.join(self.parent, name))

    def names(self) -> list[str]:
        return sorted(entry.name for entry in os.scandir(self.parent) if entry.is_dir())

    def where(self) -> str:
        return self.parent


def _check_delegated(group: str) -> list[str]:
    """The controllers ``group`` may hand its children; raises :class:`GroupUnavailable`
    when it lacks one of :data:`V2_CONTROLLERS` or this user may not write its files."""
    available = _read(os.path.join(group, "cgroup.controllers")).split()
    missing = [name for name in V2_CONTROLLERS if name not in available]
    if missing:
        raise GroupUnavailable(f"the {', '.join(missing)} controller is not delegated to {group}")
    if not os.access(os.path.join(group, "cgroup.subtree_control"), os.W_OK):
        raise GroupUnavailable(f"{group} is not delegated to this user")
    return available


def _enable(group: str) -> None:
    """Enable :data:`V2_CONTROLLERS` (and ``cpu``, where it can be had) for ``group``'s
    children."""
    available = _check_delegated(group)
    wanted = [*V2_CONTROLLERS, *(["cpu"] if "cpu" in available else [])]
    _write(os.path.join(group, "cgroup.subtree_control"), " ".join(f"+{c}" for c in wanted))


# --- cgroup v1 ------------------------------------------------------------------------


class V1Group(Group):
    def __init__(self, paths: dict[str, str]) -> None:
        self.paths = paths
        self.name = os.path.basename(paths["memory"])
        self._limits: tuple[int | None, int | None] = (None, None)

    def _file(self, controller: str, name: str) -> str:
        return os.path.join(self.paths[controller], name)

    def limit(self, *, memory: int | None, processes: int | None) -> None:
        self._limits = (memory, processes)
        # memory first: memsw (memory + swap) may never be below it. memsw at the same
        # figure leaves no room for swap, so the limit holds in memory and swap together.
        value = "-1" if memory is None else str(memory)
        _write(self._file("memory", "memory.limit_in_bytes"), value)
        with contextlib.suppress(FileNotFoundError):  # swap accounting is off
            _write(self._file("memory", "memory.memsw.limit_in_bytes"), value)
        value = "max" if processes is None else str(processes)
        _write(self._file("pids", "pids.max"), value)

    def join_paths(self) -> tuple[str, ...]:
        return tuple(self._file(controller, "cgroup.procs") for controller in V1_CONTROLLERS)

    def cpu_time(self) -> float:
        return int(self._read_cpu(self._file("cpuacct", "cpuacct.usage"))) / 1e9

    def breach(self) -> Breach | None:
        memory, processes = self._limits
        if _keyed(_read(self._file("memory", "memory.oom_control"))).get("oom_kill", 0) > 0:
            peak = int(_read(self._file("memory", "memory.max_usage_in_bytes")))
            limit = "" if memory is None else f" of {_size(memory)}"
            return Breach(
                "memory", f"the whole bot used its memory limit{limit} (peak {_size(peak)}): killed"
            )
        if _keyed(_read(self._file("pids", "pids.events"))).get("max", 0) > 0:
            limit = "" if processes is None else f" of {processes}"
            return Breach("processes", f"the whole bot reached its process limit{limit}")
        return None

    def pids(self) -> list[int]:
        return [int(word) for word in _read(self._file("pids", "cgroup.procs")).split()]

    def kill(self) -> None:
        # Frozen, no process of it can fork while its processes are listed and killed;
        # thawed, they die.
        state = self._file("freezer", "freezer.state")
        _write(state, "FROZEN")
        deadline = time.monotonic() + _FREEZE_WAIT
        while _read(state).strip() != "FROZEN" and time.monotonic() < deadline:
            time.sleep(0.0005)
        try:
            _kill_rounds(self.pids)
        finally:
            _write(state, "THAWED")

    def _remove_dirs(self) -> None:
        for controller in V1_CONTROLLERS:
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(self.paths[controller])


class V1Hierarchy(Hierarchy):
    """Bot groups in ``<own group>/referee-bots`` of each v1 controller's tree."""

    version = 1

    def __init__(self, parents: dict[str, str]) -> None:
        self.parents = parents

    @classmethod
    def setup(cls, bases: dict[str, str]) -> V1Hierarchy:
        """Make ``referee-bots`` in each of ``bases`` (controller → the referee's own
        group's directory)."""
        parents = {}
        for controller in V1_CONTROLLERS:
            parent = os.path.join(bases[controller], PARENT)
            with contextlib.suppress(FileExistsError):
                os.mkdir(parent)
            parents[controller] = parent
        return cls(parents)

    def _paths(self, name: str) -> dict[str, str]:
        return {
            controller: os.path.join(self.parents[controller], name)
            for controller in V1_CONTROLLERS
        }

    def create(self, name: str) -> Group:
        paths = self._paths(name)
        made: list[str] = []
        try:
            for path in paths.values():
                os.mkdir(path)
                made.append(path)
        except OSError as error:
            for path in made:
                with contextlib.suppress(OSError):
                    os.rmdir(path)
            raise GroupFault(f"cannot make the control group {path}: {error}") from None
        return V1Group(paths)

    def open(self, name: str) -> Group:
        return V1Group(self._paths(name))

    def names(self) -> list[str]:
        found: set[str] = set()
        for parent in self.parents.values():
            found.update(entry.name for entry in os.scandir(parent) if entry.is_dir())
        return sorted(found)

    def where(self) -> str:
        return self.parents["memory"]


def _kill_rounds(pids: Callable[[], list[int]]) -> None:
    """SIGKILL what ``pids()`` lists until it lists nothing new (bounded)."""
    killed: set[int] = set()
    for _ in range(_ROUNDS):
        fresh = [pid for pid in pids() if pid not in killed]
        if not fresh:
            return
        for pid in fresh:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)


# --- finding the trees ----------------------------------------------------------------


def _own_groups(text: str) -> dict[str, str]:
    """/proc/self/cgroup as ``controller → path`` (``""`` for the v2 line)."""
    groups = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            groups[controller] = path
    return groups


def _mounts(text: str) -> Iterator[tuple[str, str, set[str]]]:
    """/proc/self/mounts as ``(mount point, type, options)`` of the cgroup trees."""
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
            yield fields[1].replace("\\040", " "), fields[2], set(fields[3].split(","))


def discover(proc_cgroup: str, proc_mounts: str) -> Hierarchy:
    """The hierarchy bot groups are made in, from the text of /proc/self/cgroup and
    /proc/self/mounts; raises :class:`GroupUnavailable` saying why there is none.

    cgroup v2 first, where its tree holds this process and the controllers are delegated
    to it; else v1, where each of :data:`V1_CONTROLLERS` has a tree of its own."""
    own = _own_groups(proc_cgroup)
    mounts = list(_mounts(proc_mounts))
    reasons = []
    for point, kind, _ in mounts:
        if kind == "cgroup2" and "" in own:
            try:
                return V2Hierarchy.setup(point, own[""])
            except (OSError, GroupUnavailable) as error:
                reasons.append(f"cgroup v2: {_reason(error)}")
            break
    bases = {}
    for point, kind, options in mounts:
        if kind != "cgroup":
            continue
        for controller in V1_CONTROLLERS:
            if controller in options and controller in own and controller not in bases:
                bases[controller] = os.path.join(point, own[controller].lstrip("/"))
    missing = [controller for controller in V1_CONTROLLERS if controller not in bases]
    if not missing:
        try:
            return V1Hierarchy.setup(bases)
        except OSError as error:
            reasons.append(f"cgroup v1: {_reason(error)}")
    elif any(kind == "cgroup" for _, kind, _ in mounts):
        reasons.append(f"cgroup v1: no {', '.join(missing)} tree")
    if not reasons:
        reasons.append("no cgroup file system is mounted")
    raise GroupUnavailable("; ".join(reasons))


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError):
        return f"{error.strerror or error} ({error.filename})" if error.filename else str(error)
    return str(error)


_lock = threading.Lock()
_found: dict[int, Hierarchy | GroupUnavailable] = {}


def hierarchy() -> Hierarchy:
    """This process's hierarchy (found once per process; leftovers swept then); raises
    :class:`GroupUnavailable`."""
    pid = os.getpid()
    with _lock:
        if pid not in _found:
            try:
                found: Hierarchy | GroupUnavailable = discover(
                    Path("/proc/self/cgroup").read_text(), Path("/proc/self/mounts").read_text()
                )
            except OSError as error:
                found = GroupUnavailable(f"cannot read /proc: {error}")
            except GroupUnavailable as error:
                found = error
            _found[pid] = found
            if isinstance(found, Hierarchy):
                sweep_leftovers(found)
        found = _found[pid]
    if isinstance(found, GroupUnavailable):
        raise found
    return found


def group_problem() -> str | None:
    """Why bots cannot have control groups here, or ``None`` when they can."""
    try:
        hierarchy()
    except GroupUnavailable as error:
        return str(error)
    return None


@functools.cache
def _start_time(pid: int) -> str | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()[19]


_counter = itertools.count(1)


def new_group(
    memory: int | None, processes: int | None, hierarchy_: Hierarchy | None = None
) -> Group:
    """A fresh group for one bot, limited; raises :class:`GroupFault` or
    :class:`GroupUnavailable`."""
    where = hierarchy_ or hierarchy()
    pid = os.getpid()
    group = where.create(f"{pid}-{_start_time(pid)}-{next(_counter)}")
    try:
        group.limit(memory=memory, processes=processes)
    except OSError as error:
        group.remove()
        raise GroupFault(f"cannot limit the control group {group.name}: {error}") from None
    return group


def _alive(name: str) -> bool:
    """Whether the referee process that made the group ``name`` still lives."""
    parts = name.split("-")
    if len(parts) != 3 or not parts[0].isdigit():
        return True  # not one of ours: leave it
    pid, started = int(parts[0]), parts[1]
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text.rpartition(")")[2].split()[19] == started


def sweep_leftovers(where: Hierarchy) -> int:
    """Kill and remove the groups whose maker is gone (a killed referee's); → how many."""
    swept = 0
    try:
        names = where.names()
    except OSError:
        return 0
    for name in names:
        if _alive(name):
            continue
        group = where.open(name)
        with contextlib.suppress(OSError):
            group.kill()
        for _ in range(_ROUNDS):
            try:
                if group.remove():
                    break
            except GroupFault:
                break
            time.sleep(0.001)
        swept += 1
    return swept
