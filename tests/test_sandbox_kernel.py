"""The sandbox against the kernel: the system-call filter, call by call, and what a sandbox
could leave in the kernel for another to find.

Each call of the filter's denied groups is made raw (``syscall()`` through ctypes, by
``fakebots/syscall_probe.py``) in a sandbox made by :func:`bwrap_command`, as a bot is:
once under the real filter, where it must fail with the errno docs/security.md gives,
and once under a filter that allows everything, where at least one call of each group
must end otherwise — so that the errno seen is the filter's, not just the kernel's
refusal of a user without capabilities.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import subprocess
import sys
import tempfile
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

import referee.sandbox as sandbox
from referee import syscall_filter
from referee.sandbox import Limits, bwrap_command, make_plan

FAKEBOTS = Path(__file__).resolve().parent / "fakebots"
GUARD = 120

needs_sandbox = pytest.mark.skipif(
    sandbox.sandbox_problem() is not None, reason=f"no sandbox here: {sandbox.sandbox_problem()}"
)

KEY_SPEC_PROCESS_KEYRING = -2
AF_ALG, AF_VSOCK, SOCK_STREAM, SOCK_SEQPACKET = 38, 40, 1, 5
ADDR_NO_RANDOMIZE = 0x0040000
SIGCHLD = 17

# (group, call, arguments): harmless arguments (a bad magic for reboot, missing paths,
# bad descriptors), chosen so that, unfiltered, the kernel mostly answers something other
# than EPERM for at least one call of each group.
PROBES: list[tuple[str, str, list[Any]]] = [
    ("kernel keys", "add_key", ["user", "referee-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING]),
    ("kernel keys", "keyctl", [0, KEY_SPEC_PROCESS_KEYRING, 1]),
    ("kernel keys", "request_key", ["user", "referee-probe-none", 0, 0]),
    ("BPF and performance counters", "bpf", [0x7FFF, 0, 0]),
    ("BPF and performance counters", "perf_event_open", [0, 0, -1, -1, 0]),
    ("userfaultfd", "userfaultfd", [1]),
    ("io_uring", "io_uring_setup", [1, 0]),
    ("io_uring", "io_uring_enter", [-1, 0, 0, 0, 0, 0]),
    ("io_uring", "io_uring_register", [-1, 0, 0, 0]),
    ("mounts", "mount", ["none", "/nonexistent", "tmpfs", 0, 0]),
    ("mounts", "umount2", ["/nonexistent", 0]),
    ("mounts", "pivot_root", ["/nonexistent", "/nonexistent"]),
    ("mounts", "chroot", ["/nonexistent"]),
    ("mounts", "fsopen", ["tmpfs", 0]),
    ("mounts", "open_tree", [-1, "/nonexistent", 0]),
    ("mounts", "move_mount", [-1, "", -1, "", 0]),
    ("mounts", "mount_setattr", [-1, "", 0, 0, 0]),
    ("namespaces", "setns", [-1, 0]),
    ("namespaces", "unshare", [0]),
    ("kernel modules", "init_module", [0, 0, ""]),
    ("kernel modules", "finit_module", [-1, "", 0]),
    ("kernel modules", "delete_module", ["referee-probe-none", 0]),
    ("kexec and reboot", "kexec_load", [0, 0, 0, 0]),
    ("kexec and reboot", "kexec_file_load", [-1, -1, 0, "", 0]),
    ("kexec and reboot", "reboot", [0, 0, 0, 0]),  # no magic: never a reboot
    ("setting the clocks", "settimeofday", [0, 0]),
    ("setting the clocks", "clock_settime", [0, 0]),
    ("the machine's administration", "swapon", ["/nonexistent", 0]),
    ("the machine's administration", "acct", ["/nonexistent"]),
    ("the machine's administration", "sethostname", ["x", 1]),
    ("the machine's administration", "syslog", [10, 0, 0]),
    ("the machine's administration", "iopl", [0]),
    ("the machine's administration", "fanotify_init", [0, 0]),
    ("other processes' files and memory", "kcmp", ["$pid", "$pid", 0, 0, 0]),
    ("other processes' files and memory", "pidfd_getfd", [-1, -1, 0]),
    ("other processes' files and memory", "process_madvise", [-1, 0, 0, 0, 0]),
    ("files by handle", "open_by_handle_at", [-1, 0, 0]),
    ("memory placement (NUMA)", "get_mempolicy", [0, 0, 0, 0, 0]),
    ("memory placement (NUMA)", "set_mempolicy", [0, 0, 0]),
    ("memory placement (NUMA)", "move_pages", [0, 0, 0, 0, 0, 0]),
    ("CPU affinity", "sched_setaffinity", [0, 0, 0]),
]

# The calls with a rule of their own, and what they return under the filter.
SPECIAL: list[tuple[str, str, list[Any], str]] = [
    ("socket AF_ALG", "socket", [AF_ALG, SOCK_SEQPACKET, 0], "EPERM"),
    ("socket AF_VSOCK", "socket", [AF_VSOCK, SOCK_STREAM, 0], "EPERM"),
    ("clone3", "clone3", [0, 0], "ENOSYS"),
    ("personality ADDR_NO_RANDOMIZE", "personality", [ADDR_NO_RANDOMIZE], "ENOSYS"),
    # A new namespace through clone: refused before any child is made.
    ("clone CLONE_NEWUSER", "clone", [0x10000000 | SIGCHLD, 0, 0, 0, 0], "EPERM"),
    ("clone CLONE_NEWNET", "clone", [0x40000000 | SIGCHLD, 0, 0, 0, 0], "EPERM"),
    # File locks and watches: host files are shared by every sandbox (refused before the
    # kernel looks at the descriptor, which unfiltered would be EBADF).
    ("flock", "flock", [-1, 2], "ENOLCK"),
    ("fcntl F_SETLK", "fcntl", [-1, 6, 0], "ENOLCK"),
    ("fcntl F_GETLK", "fcntl", [-1, 5, 0], "ENOLCK"),
    ("fcntl F_OFD_SETLK", "fcntl", [-1, 37, 0], "ENOLCK"),
    ("fcntl F_SETLEASE", "fcntl", [-1, 1024, 0], "EPERM"),
    ("fcntl F_NOTIFY", "fcntl", [-1, 1026, 0], "EPERM"),
    ("fcntl unknown command", "fcntl", [-1, 99, 0], "ENOSYS"),
    ("inotify_init1", "inotify_init1", [0], "ENOSYS"),
]
# What a bot needs, still allowed.
ALLOWED: list[tuple[str, str, list[Any]]] = [
    ("getpid", "getpid", []),
    ("socket AF_UNIX", "socket", [1, SOCK_STREAM, 0]),
    ("socket AF_INET", "socket", [2, SOCK_STREAM, 0]),
    ("personality query", "personality", [0xFFFFFFFF]),
    ("memfd_create", "memfd_create", ["probe", 0]),
    ("sched_getaffinity", "sched_getaffinity", [0, 0, 0]),  # EINVAL is the kernel's
    ("fcntl F_GETFD", "fcntl", [1, 1, 0]),
    ("fcntl F_DUPFD_CLOEXEC", "fcntl", [1, 1030, 10]),
    ("fcntl F_GETPIPE_SZ", "fcntl", [-1, 1032, 0]),  # EBADF is the kernel's
]


def number(call: str) -> int:
    import pyseccomp

    found = int(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, call))
    assert found >= 0, f"{call} is not a call of this machine"
    return found


def allow_everything() -> bytes:
    import pyseccomp

    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    with tempfile.TemporaryFile() as file:
        rules.export_bpf(file)
        file.seek(0)
        return file.read()


def probe(calls: list[tuple[str, str, list[Any]]], program: bytes) -> dict[str, str]:
    """Run the probe on ``calls`` as a sandboxed bot under the filter ``program``."""
    tools = sandbox.find_tools()
    assert tools is not None
    wanted = json.dumps([[label, number(call), args] for label, call, args in calls])
    with ExitStack() as stack:
        uid = stack.enter_context(sandbox.UID_POOL.lease()) if sandbox.is_root() else None
        stdin, stdout, status = os.pipe(), os.pipe(), os.pipe()
        seccomp = stack.enter_context(sandbox.filter_fd(program))
        # The plan of a bot as the referee makes it (its Python, its folder; under /tmp
        # too, where a clone of the repository may be).
        made = make_plan(
            (sys.executable, str(FAKEBOTS / "syscall_probe.py"), wanted),
            cwd=str(FAKEBOTS),
            copy=False,
            env={"PATH": "/usr/bin:/bin"},
            limits=Limits(),
            network=False,
            hide=(),
            uid=uid,
            fds=(stdin[0], stdout[1], status[1], seccomp),
        )
        try:
            done = subprocess.run(
                bwrap_command(made, tools),
                pass_fds=(stdin[0], stdout[1], status[1], seccomp),
                capture_output=True,
                timeout=GUARD,
                check=False,
            )
        finally:
            for fd in (stdin[0], stdin[1], stdout[1], status[1]):
                os.close(fd)
        with os.fdopen(stdout[0]) as out, os.fdopen(status[0]):
            said = out.read()
    assert said, done.stderr.decode(errors="replace")
    result: dict[str, str] = json.loads(said)
    return result


def test_every_denied_group_is_probed() -> None:
    assert {group for group, _, _ in PROBES} == set(syscall_filter.DENIED)
    for group, call, _ in PROBES:
        assert call in syscall_filter.DENIED[group]
    assert syscall_filter.DENIED_ERRNO == errno.EPERM
    assert syscall_filter.DEFAULT_ERRNO == errno.ENOSYS
    # Nothing is both allowed and denied.
    allowed = {call for calls in syscall_filter.ALLOWED.values() for call in calls}
    denied = {call for calls in syscall_filter.DENIED.values() for call in calls}
    assert not allowed & denied


@needs_sandbox
def test_each_denied_group_fails_with_eperm_and_the_filter_is_why() -> None:
    labelled = [(f"{group}: {call}", call, args) for group, call, args in PROBES]
    filtered = probe(labelled, sandbox.seccomp_program())
    assert filtered == {label: "EPERM" for label, _, _ in labelled}
    unfiltered = probe(labelled, allow_everything())
    for group in syscall_filter.DENIED:
        # Without the filter, the kernel answers at least one call of the group otherwise.
        others = {
            label: unfiltered[label]
            for label, _, _ in labelled
            if label.startswith(f"{group}: ") and unfiltered[label] != "EPERM"
        }
        assert others, f"{group}: every call is EPERM without the filter too ({unfiltered})"


@needs_sandbox
def test_the_calls_with_rules_of_their_own_and_what_stays_allowed() -> None:
    special = probe(
        [(label, call, args) for label, call, args, _ in SPECIAL], sandbox.seccomp_program()
    )
    assert special == {label: expected for label, _, _, expected in SPECIAL}
    allowed = probe(ALLOWED, sandbox.seccomp_program())
    assert allowed == {
        "getpid": "ok",
        "socket AF_UNIX": "ok",
        "socket AF_INET": "ok",
        "personality query": "ok",
        "memfd_create": "ok",
        "sched_getaffinity": "EINVAL",
        "fcntl F_GETFD": "ok",
        "fcntl F_DUPFD_CLOEXEC": "ok",
        "fcntl F_GETPIPE_SZ": "EBADF",
    }
    locks = [(label, call, args) for label, call, args, _ in SPECIAL if "LK" in label]
    locks.append(("flock", "flock", [-1, 2]))
    assert probe(locks, allow_everything()) == {label: "EBADF" for label, _, _ in locks}
    # A call this filter does not name fails with ENOSYS, as an unknown call would; unfiltered
    # the same call is the kernel's to answer.
    unnamed = [("unnamed", "personality", [ADDR_NO_RANDOMIZE])]
    assert probe(unnamed, allow_everything()) == {"unnamed": "ok"}


# --- what a sandbox leaves behind -------------------------------------------------------


def player(name: str, mode: str, mark: str, folder: Path) -> str:
    command = shlex.join([sys.executable, "-u", str(FAKEBOTS / "attack.py"), mode, mark])
    return f"name={name} cmd={shlex.quote(command)} dir={folder}"


@needs_sandbox
def test_no_channel_between_sandboxes_at_once_or_in_later_runs(tmp_path: Path) -> None:
    from test_sandbox import referee, victim

    mark = uuid.uuid4().hex
    folders = {name: tmp_path / name for name in ("leaver", "seeker", "later")}
    for folder in folders.values():
        folder.mkdir()
    # The leaver leaves everything it can, and keeps it (a daemon child holds the socket
    # on) while its opponent, a bot of another player, looks at its first turn.
    for run in ("run-1", "run-2"):
        (tmp_path / run).mkdir()
    first = referee(
        tmp_path / "run-1",
        player("leaver", "leave", mark, folders["leaver"]),
        player("seeker", "seek", mark, folders["seeker"]),
    )
    assert first.returncode == 0, first.stderr
    assert first.left_alive == 0, first.stderr
    [left] = first.reports("leaver")
    # Everything but the key was made — and the leaver itself sees it all: the look works.
    assert left["made"].pop("key") == "Operation not permitted"
    # Locks on a host file all sandboxes see: refused, as the filter says (no bit to pass).
    assert left["made"].pop("flock") == left["made"].pop("fcntl lock") == "No locks available"
    assert set(left["made"].values()) == {"made"}, left["made"]
    assert left["seen"].pop("key") is False
    assert left["seen"].pop("lock") is False
    assert all(left["seen"].values()), left["seen"]
    [during] = first.reports("seeker")
    assert not any(during["seen"].values()), during["seen"]
    # A later run: a bot of a third player finds nothing either.
    later = referee(tmp_path / "run-2", player("later", "seek", mark, folders["later"]), victim())
    assert later.returncode == 0 and later.left_alive == 0, later.stderr
    [after] = later.reports("later")
    assert not any(after["seen"].values()), after["seen"]
    assert sorted(path.name for path in folders["leaver"].iterdir()) == []  # only its copy
