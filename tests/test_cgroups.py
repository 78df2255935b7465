"""A control group per bot: limits for the whole tree, CPU time, a kill that leaves nothing,
and the leftovers of a killed referee found again.

The v2 backend is checked against a fake cgroup2 tree (its file protocol); everything else
runs for real on whichever version this machine has, with small figures.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import trio

from referee import cgroups
from referee.process import BotCommand, BotProcess, open_bot
from referee.sandbox import Limits, SandboxPolicy, sandbox_problem

GROUPS = cgroups.group_problem()
needs_groups = pytest.mark.skipif(GROUPS is not None, reason=f"no control groups: {GROUPS}")
needs_sandbox = pytest.mark.skipif(
    GROUPS is not None or sandbox_problem() is not None,
    reason=f"needs control groups and the sandbox: {GROUPS or sandbox_problem()}",
)

GUARD = 30.0
"""A hang guard (seconds), never a measure."""


# --- the v2 backend's file protocol, on a fake tree -------------------------------------


def _fake_group(path: Path, **files: str) -> None:
    """What the kernel puts in a new cgroup2 group (the fake makes it by hand)."""
    path.mkdir(exist_ok=True)
    defaults = {
        "cgroup.procs": "",
        "cgroup.controllers": "cpu memory pids",
        "cgroup.subtree_control": "",
        "memory.max": "max",
        "pids.max": "max",
        "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
        "pids.events": "max 0\n",
        "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
        "cgroup.kill": "",
    }
    for name, text in {**defaults, **files}.items():
        (path / name).write_text(text)


def test_v2_takes_charge_of_a_delegated_group(tmp_path: Path) -> None:
    scope = tmp_path / "user.slice" / "run-1.scope"
    scope.parent.mkdir()
    _fake_group(scope)
    _fake_group(scope / cgroups.SELF)
    _fake_group(scope / cgroups.PARENT)
    where = cgroups.V2Hierarchy.setup(str(tmp_path), "/user.slice/run-1.scope")
    assert where.where() == str(scope / cgroups.PARENT)
    # The referee moved itself into its leaf, then gave the controllers to the children.
    assert (scope / cgroups.SELF / "cgroup.procs").read_text() == "0"
    assert (scope / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (scope / cgroups.PARENT / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


def test_v2_a_worker_already_in_the_leaf_stays_there(tmp_path: Path) -> None:
    scope = tmp_path / "run.scope"
    _fake_group(scope)
    _fake_group(scope / cgroups.SELF, **{"cgroup.procs": "123\n"})
    _fake_group(scope / cgroups.PARENT)
    where = cgroups.V2Hierarchy.setup(str(tmp_path), f"/run.scope/{cgroups.SELF}")
    assert where.where() == str(scope / cgroups.PARENT)
    assert (scope / cgroups.SELF / "cgroup.procs").read_text() == "123\n"  # untouched


def test_v2_without_delegated_controllers_is_refused_before_anything_moves(
    tmp_path: Path,
) -> None:
    _fake_group(tmp_path, **{"cgroup.controllers": "cpu io"})
    with pytest.raises(cgroups.GroupUnavailable, match="memory, pids controller is not"):
        cgroups.V2Hierarchy.setup(str(tmp_path), "/")
    assert not (tmp_path / cgroups.SELF).exists()


def test_v2_group_limits_usage_verdicts_and_kill(tmp_path: Path) -> None:
    where = cgroups.V2Hierarchy(str(tmp_path))
    group = where.create("123-456-1")
    _fake_group(tmp_path / "123-456-1")
    group.limit(memory=64 << 20, processes=18)
    path = tmp_path / "123-456-1"
    assert (path / "memory.max").read_text() == str(64 << 20)
    assert (path / "pids.max").read_text() == "18"
    (path / "cpu.stat").write_text("usage_usec 12500\nuser_usec 10000\nsystem_usec 2500\n")
    assert group.cpu_time() == pytest.approx(0.0125)
    assert group.breach() is None
    (path / "pids.events").write_text("max 3\n")
    assert group.breach() == cgroups.Breach(
        "processes", "the whole bot reached its process limit of 18"
    )
    (path / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n")
    breach = group.breach()
    assert breach is not None and breach.limit == "memory" and "64M" in breach.detail
    (path / "cgroup.procs").write_text("41\n42\n")
    assert group.pids() == [41, 42]
    group.kill()
    assert (path / "cgroup.kill").read_text() == "1"
    assert group.join_paths() == (str(path / "cgroup.procs"),)
    assert where.names() == ["123-456-1"]


def test_discover_prefers_a_delegated_v2_tree_and_falls_back_to_v1(tmp_path: Path) -> None:
    v1 = tmp_path / "v1"
    for controller in cgroups.V1_CONTROLLERS:
        (v1 / controller / "me").mkdir(parents=True)
    unified = tmp_path / "unified"
    _fake_group(unified, **{"cgroup.controllers": "hugetlb"})  # a hybrid machine's
    mounts = (
        "".join(f"cgroup {v1 / c} cgroup rw,relatime,{c} 0 0\n" for c in cgroups.V1_CONTROLLERS)
        + f"cgroup2 {unified} cgroup2 rw 0 0\n"
    )
    own = "".join(f"{i}:{c}:/me\n" for i, c in enumerate(cgroups.V1_CONTROLLERS, 1)) + "0::/\n"
    found = cgroups.discover(own, mounts)
    assert isinstance(found, cgroups.V1Hierarchy)
    assert found.where() == str(v1 / "memory" / "me" / cgroups.PARENT)
    assert not (unified / cgroups.SELF).exists()  # v2 was looked at, nothing moved
    with pytest.raises(cgroups.GroupUnavailable, match="no cgroup file system"):
        cgroups.discover("0::/\n", "proc /proc proc rw 0 0\n")


# --- for real ---------------------------------------------------------------------------


def _bot(source: str, **keys: object) -> BotCommand:
    return BotCommand((sys.executable, "-u", "-c", textwrap.dedent(source)), **keys)  # type: ignore[arg-type]


async def _run(command: BotCommand, policy: SandboxPolicy) -> tuple[BotProcess, bytes]:
    """Run ``command`` to its end; → the stopped process and what it wrote."""
    async with open_bot(command, sandbox=policy) as bot:
        out = b""
        with trio.fail_after(GUARD):
            while data := await bot.receive_some():
                out += data
            await bot.wait()
    return bot, out


MODES = [pytest.param("on", marks=needs_sandbox), pytest.param("off", marks=needs_groups)]


@pytest.mark.parametrize("mode", MODES)
async def test_memory_of_the_whole_tree_is_limited(mode: str) -> None:
    # Four processes of 32 MiB each: none is over the limit alone, together they are.
    # Three processes of 24 MiB: none is over the limit alone, together they are. The
    # bot's main process allocates last and most: the kernel kills it.
    source = """
        import os, sys, time
        def fill(size):
            chunk = bytearray(size)
            for i in range(0, size, 4096):
                chunk[i] = 1
            return chunk
        for _ in range(2):
            if os.fork() == 0:
                kept = fill(24 << 20)
                print(flush=True)
                time.sleep(60)
        assert sys.stdin.read(2)
        kept = [fill(24 << 20), fill(24 << 20)]
        time.sleep(60)
    """
    policy = SandboxPolicy(mode=mode, limits=Limits(memory=64 << 20))
    async with open_bot(_bot(source), sandbox=policy) as bot:
        with trio.fail_after(GUARD):
            seen = b""
            while seen.count(b"\n") < 2:
                seen += await bot.receive_some()
            await bot.send_all(b"go\n")
            await bot.wait()
    breach = bot.limit_breach()
    assert breach is not None and breach.limit == "memory", breach
    assert "memory limit of 64M" in breach.detail


@needs_sandbox
async def test_filling_tmp_counts_against_the_memory_limit() -> None:
    source = """
        block = b"x" * (1 << 20)
        with open("/tmp/fill", "wb", buffering=0) as file:
            for _ in range(200):
                file.write(block)
        print("survived")
    """
    limits = Limits(memory=64 << 20, file_size=256 << 20)  # /tmp could hold 256M
    bot, out = await _run(_bot(source), SandboxPolicy(mode="on", limits=limits))
    assert b"survived" not in out
    breach = bot.limit_breach()
    assert breach is not None and breach.limit == "memory", breach


@pytest.mark.parametrize("mode", MODES)
async def test_processes_of_the_whole_tree_are_limited(mode: str) -> None:
    source = """
        import os, time
        for n in range(100):
            if os.fork() == 0:
                time.sleep(20)
                os._exit(0)
    """
    policy = SandboxPolicy(mode=mode, limits=Limits(processes=8))
    bot, _ = await _run(_bot(source), policy)
    assert bot.returncode not in (0, None)  # the refused fork raised
    assert bot.limit_breach() == cgroups.Breach(
        "processes", f"the whole bot reached its process limit of {8 + (mode == 'on') * 2}"
    )


@pytest.mark.parametrize("mode", MODES)
async def test_cpu_time_is_the_whole_trees(mode: str) -> None:
    source = """
        import os, sys, time
        def burn():
            end = time.process_time() + 0.2
            while time.process_time() < end:
                pass
        child = os.fork()
        burn()
        if child:
            os.waitpid(child, 0)
            os.write(1, b"done\\n")
            sys.stdin.read()
    """
    async with open_bot(_bot(source), sandbox=SandboxPolicy(mode=mode)) as bot:
        with trio.fail_after(GUARD):
            assert await bot.receive_some() == b"done\n", bot.stderr_tail()
        used = bot.cpu_time()
        assert used is not None and used >= 0.4  # both processes' time (none sleeps)


@needs_groups
async def test_a_stop_kills_every_process_of_the_group_and_removes_it() -> None:
    # Unsandboxed, a child that leaves the bot's session survives a kill of its process
    # group: not of its control group.
    source = """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                print(os.getpid(), flush=True)
                time.sleep(60)
            os._exit(0)
        time.sleep(60)
    """
    async with open_bot(_bot(source), sandbox=SandboxPolicy(mode="off")) as bot:
        with trio.fail_after(GUARD):
            escaped = int(await bot.receive_some())
        pidfd = os.pidfd_open(escaped)
        group = bot.group
        assert group is not None and escaped in group.pids()
    try:
        assert select.select([pidfd], [], [], GUARD)[0] == [pidfd]  # it has ended
    finally:
        os.close(pidfd)
    assert group.name not in cgroups.hierarchy().names()


@needs_groups
def test_a_killed_referees_groups_are_found_and_emptied(tmp_path: Path) -> None:
    # A referee process makes a group, puts a process in it that would outlive it (its
    # own session, no parent-death signal), and is killed: the next one sweeps it.
    script = textwrap.dedent(
        """
        import os, subprocess, sys
        from referee import cgroups
        group = cgroups.new_group(64 << 20, 16)
        paths = group.join_paths()
        def join():
            for path in paths:
                with open(path, "w") as file:
                    file.write("0")
        child = subprocess.Popen(
            ["sleep", "60"], preexec_fn=join, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        print(group.name, child.pid, flush=True)
        os.kill(os.getpid(), 9)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
        timeout=GUARD,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    name, pid = done.stdout.split()
    pidfd = os.pidfd_open(int(pid))
    try:
        where = cgroups.hierarchy()
        assert name in where.names()
        assert cgroups.sweep_leftovers(where) >= 1
        assert select.select([pidfd], [], [], GUARD)[0] == [pidfd]  # it has ended
    finally:
        os.close(pidfd)
    assert name not in where.names()


@needs_groups
def test_a_live_referees_groups_are_left_alone() -> None:
    group = cgroups.new_group(None, None)
    try:
        cgroups.sweep_leftovers(cgroups.hierarchy())
        assert group.name in cgroups.hierarchy().names()
    finally:
        assert group.remove()
