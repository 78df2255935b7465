"""Tests for referee.sandbox: the settings, the bwrap command line, and hostile bots.

The attacks run as real processes: ``referee match`` between ``fakebots/attack.py`` and a
victim (the pass bot), under ``fakebots/reaper.py``, a child subreaper that reports any
process the match left alive. Each attack must end with the victim unharmed (the game
reaches its turn limit: a draw, no forfeit), the record complete and valid (``referee
replay``), the referee's exit status 0, and nothing left alive.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

import referee.sandbox as sandbox
from referee import cgroups
from referee.games.ivy.position import Position
from referee.preflight import PreflightError
from referee.process import BotCommand, open_bot
from referee.sandbox import (
    COPY_SOURCE,
    PRIVATE,
    Limits,
    Plan,
    SandboxError,
    SandboxPolicy,
    SandboxUnavailable,
    Tools,
    bwrap_command,
    clean_environment,
    parse_count,
    parse_cpus,
    parse_size,
    parse_switch,
    sandbox_problem,
    sandbox_warning,
    use_sandbox,
)
from tournaments.config import load_config
from tournaments.runner import BOT_PIDS, run_tournament

REPO = Path(__file__).resolve().parent.parent
FAKEBOTS = REPO / "tests" / "fakebots"
GUARD = 120
"""Seconds after which a test that waits for processes is stuck: a hang guard."""

needs_sandbox = pytest.mark.skipif(
    sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}"
)
TOOLS = Tools("/usr/bin/bwrap", "/bin/bash", "/usr/bin/env", "/usr/bin/setpriv", "/bin/cp")


# --- settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("4096", 4096),
        (4096, 4096),
        ("512K", 512 << 10),
        ("64M", 64 << 20),
        ("64MiB", 64 << 20),
        ("2g", 2 << 30),
        ("1.5G", 3 << 29),
        ("unlimited", None),
    ],
)
def test_sizes(text: str | int, size: int | None) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1", "0", "0.1", "5X", "1e9", True])
def test_bad_sizes(text: Any) -> None:
    with pytest.raises(SandboxError):
        parse_size(text)


def test_counts_cpus_and_switches() -> None:
    assert parse_count("64") == 64
    assert parse_count(8) == 8
    assert parse_count("unlimited") is None
    for bad in ("0", 0, "-3", "many", True):
        with pytest.raises(SandboxError):
            parse_count(bad)  # type: ignore[arg-type]
    assert parse_cpus("3,0-1") == (0, 1, 3)
    assert parse_cpus([2, 2, 0]) == (0, 2)
    for bad_cpus in ("", "a", "1-", [-1], [True]):
        with pytest.raises(SandboxError):
            parse_cpus(bad_cpus)  # type: ignore[arg-type]
    assert parse_switch("yes") and parse_switch(True) and not parse_switch("off")
    with pytest.raises(SandboxError):
        parse_switch("maybe")


def test_limits_and_policies_are_checked_and_merged() -> None:
    limits = Limits(memory=1 << 30)
    assert limits.merged({"processes": 8, "open_files": None}) == Limits(
        memory=1 << 30, processes=8, open_files=None
    )
    assert limits.merged({}) is limits
    with pytest.raises(SandboxError):
        Limits(processes=0)
    with pytest.raises(SandboxError, match="unknown sandbox mode 'sometimes'"):
        SandboxPolicy(mode="sometimes")
    policy = SandboxPolicy().hiding("games.pgn", None, Path("/abs/logs"))
    assert policy.hide == (Path.cwd() / "games.pgn", Path("/abs/logs"))


def test_the_environment_is_a_fixed_list_plus_the_declared() -> None:
    base = {"PATH": "/bin", "LANG": "C.UTF-8", "HOME": "/root", "SECRET": "x", "TZ": "UTC"}
    declared = {"SEED": "3", "PATH": "/opt/bin"}
    assert clean_environment(declared, sandboxed=True, base=base) == {
        "PATH": "/opt/bin",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "SEED": "3",
    }
    assert clean_environment({}, sandboxed=False, base=base) == {
        "PATH": "/bin",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "HOME": "/root",
    }
    assert clean_environment({}, sandboxed=False, base={})["PATH"] == sandbox.SAFE_PATH


def test_auto_warns_on_refuses_off_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: "bwrap is not installed")
    assert not use_sandbox("auto")
    assert not use_sandbox("off")
    with pytest.raises(SandboxUnavailable, match="cannot sandbox bots: bwrap is not installed"):
        use_sandbox("on")
    warning = sandbox_warning(SandboxPolicy(mode="auto"))
    assert warning is not None and "bots run without a sandbox: bwrap is not installed" in warning
    assert "\n" not in warning
    assert sandbox_warning(SandboxPolicy(mode="off")) is None
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: None)
    assert use_sandbox("auto") and use_sandbox("on")
    assert sandbox_warning(SandboxPolicy(mode="auto")) is None


def test_without_libseccomp_on_refuses_and_auto_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes.util

    # pyseccomp, imported afresh where the library cannot be found, says so.
    monkeypatch.delitem(sys.modules, "pyseccomp", raising=False)
    found = ctypes.util.find_library
    monkeypatch.setattr(
        ctypes.util, "find_library", lambda name: None if name == "seccomp" else found(name)
    )
    monkeypatch.setattr(sandbox, "seccomp_program", sandbox.seccomp_program.__wrapped__)
    problem = sandbox.sandbox_problem.__wrapped__()
    assert problem == "libseccomp is not installed (Debian/Ubuntu: apt-get install libseccomp2)"
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: problem)
    with pytest.raises(SandboxUnavailable, match=f"cannot sandbox bots: {re.escape(problem)}"):
        use_sandbox("on")
    assert sandbox_warning(SandboxPolicy(mode="auto")) == (
        f"bots run without a sandbox: {problem} (--sandbox off hides this warning)"
    )


def test_the_filter_covers_every_abi_of_the_machine() -> None:
    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    import pyseccomp

    program = sandbox.seccomp_program()
    assert program and len(program) % 8 == 0  # whole BPF instructions
    if pyseccomp.system_arch() == pyseccomp.Arch.X86_64:
        # Each ABI's architecture number is checked in the program (32-bit x86, x86-64).
        for arch in (pyseccomp.Arch.X86, pyseccomp.Arch.X86_64):
            assert arch.to_bytes(4, sys.byteorder) in program


def test_limits_above_what_the_system_grants_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import resource

    monkeypatch.setattr(sandbox, "is_root", lambda: False)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        pytest.skip("no hard limit on open files here")
    with pytest.raises(SandboxError, match=f"open_files {hard + 1} is above"):
        sandbox.check_limits(Limits(open_files=hard + 1))
    sandbox.check_limits(Limits(open_files=hard))


def test_seat_users_are_distinct_and_released() -> None:
    if not sandbox.is_root():
        pytest.skip("seat users are for a referee running as root")
    with sandbox.UID_POOL.lease() as first, sandbox.UID_POOL.lease() as second:
        assert first != second
        assert min(first, second) >= sandbox.SEAT_UID_BASE
        assert max(first, second) < sandbox.SEAT_UID_BASE + sandbox.SEAT_UID_COUNT
    with sandbox.UID_POOL.lease() as again:
        assert again >= sandbox.SEAT_UID_BASE


def test_each_new_bot_gets_the_least_used_cpu() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    pool = sandbox._CpuPool()
    with pool.lease(None) as first, pool.lease(None) as second:
        assert first == (cpus[0],)
        assert second == ((cpus[1],) if len(cpus) > 1 else (cpus[0],))
        with pool.lease((cpus[-1],)) as pinned:
            assert pinned == (cpus[-1],)
    with pool.lease(None) as again:
        assert again == (cpus[0],)


# --- the command line ------------------------------------------------------------------


def plan(**changes: Any) -> Plan:
    settings: dict[str, Any] = {
        "argv": ("/usr/bin/python3", "-u", "bot.py"),
        "cwd": "/srv/bots/alice",
        "env": (("PATH", "/usr/bin"), ("SEED", "it's 3")),
        "limits": Limits(memory=1 << 30, processes=32, file_size=8 << 20, open_files=64),
        "masks": ("/home", "/root", "/run"),
        "exposed": ("/root/.pyenv/versions/3.11",),
        "hidden": (("/srv/out", True), ("/srv/games.pgn", False)),
        "private": PRIVATE,
        "stdin_fd": 7,
        "stdout_fd": 9,
        "status_fd": 11,
        "seccomp_fd": 13,
    }
    return Plan(**{**settings, **changes})


def after(args: list[str], option: str) -> list[list[str]]:
    """The operands of every ``option`` in ``args`` (bwrap takes one or two)."""
    arity = {"--ro-bind": 2, "--perms": 1, "--size": 1, "--tmpfs": 1, "--dir": 1}
    count = arity.get(option, 1)
    return [args[i + 1 : i + 1 + count] for i, arg in enumerate(args) if arg == option]


def test_the_view_is_read_only_with_masks_private_tmp_and_the_outputs_hidden() -> None:
    args = bwrap_command(plan(), TOOLS)
    assert args[:5] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev"]
    tmpfs = [operands[0] for operands in after(args, "--tmpfs")]
    assert tmpfs[:3] == ["/home", "/root", "/run"]
    assert set(PRIVATE) <= set(tmpfs) and "/srv/out" in tmpfs
    for private in PRIVATE:
        at = args.index(private)
        assert args[at - 5 : at] == ["--perms", "1777", "--size", str(8 << 20), "--tmpfs"]
    # The interpreter under /root is bound back, its parents made passable first.
    assert args.index("/root/.pyenv") < args.index("/root/.pyenv/versions")
    assert ["/root/.pyenv/versions/3.11", "/root/.pyenv/versions/3.11"] in after(args, "--ro-bind")
    assert ["/dev/null", "/srv/games.pgn"] in after(args, "--ro-bind")
    assert args[args.index("/srv/out") + 1 : args.index("/srv/out") + 3] == [
        "--remount-ro",
        "/srv/out",
    ]
    assert "--unshare-net" in args and "--die-with-parent" in args
    assert args[args.index("--chdir") + 1] == "/srv/bots/alice"
    assert args[args.index("--json-status-fd") + 1] == "11"


def test_a_user_namespace_without_root_a_seat_user_with_root() -> None:
    args = bwrap_command(plan(), TOOLS)
    assert "--unshare-user" in args and "--disable-userns" in args
    assert "setpriv" not in args[args.index("--") + 3]
    rooted = bwrap_command(plan(uid=1_900_000_007), TOOLS)
    assert "--unshare-user" not in rooted
    assert rooted[rooted.index("--cap-drop") + 1] == "ALL"
    script = rooted[rooted.index("-c") + 1]
    assert (
        "/usr/bin/setpriv --reuid 1900000007 --regid 1900000007 --clear-groups"
        " --inh-caps=-all --bounding-set=-all --no-new-privs --" in script
    )


def test_the_launch_script_limits_cleans_and_moves_the_pipes() -> None:
    args = bwrap_command(plan(network=True), TOOLS)
    assert "--unshare-net" not in args
    separator = args.index("--")
    assert args[separator + 1 : separator + 3] == ["/bin/bash", "-c"]
    assert args[separator + 4 :] == ["referee-bot", "/usr/bin/python3", "-u", "bot.py"]
    script = args[separator + 3].splitlines()
    assert script[:5] == [
        "set -e",
        f"ulimit -v {1 << 20}",
        "ulimit -u 32",
        f"ulimit -f {8 << 10}",
        "ulimit -n 64",
    ]
    assert script[-1] == (
        "exec /usr/bin/env -i PATH=/usr/bin 'SEED=it'\"'\"'s 3' \"$@\" <&7 >&9 7<&- 9>&-"
    )
    unlimited = bwrap_command(plan(limits=Limits(memory=None, processes=None)), TOOLS)
    assert "ulimit -v" not in unlimited[unlimited.index("--") + 3]
    assert "ulimit -u" not in unlimited[unlimited.index("--") + 3]


def test_a_players_dir_is_a_private_copy() -> None:
    args = bwrap_command(
        plan(
            copy_from="/srv/bots/alice", copy_size=1 << 20, hidden=(("/srv/bots/alice/out", True),)
        ),
        TOOLS,
    )
    assert ["/srv/bots/alice", COPY_SOURCE] in after(args, "--ro-bind")
    at = args.index("/srv/bots/alice", args.index(COPY_SOURCE))
    assert args[at - 5 : at] == ["--perms", "0755", "--size", str(1 << 20), "--tmpfs"]
    # An output inside the dir is hidden from the copy's source, so never copied.
    assert f"{COPY_SOURCE}/out" in [operands[0] for operands in after(args, "--tmpfs")]
    script = args[args.index("--") + 3]
    assert f"/bin/cp -R --preserve=mode,timestamps,links {COPY_SOURCE}/. ." in script


def test_a_plan_exposes_what_the_bot_needs_under_the_masks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "alice" / "bots" / "x").mkdir(parents=True)
    (home / "alice" / "data.txt").write_text("secret")
    (home / "alice" / "bots" / "x" / "bot.py").write_text("")
    (home / "bob").mkdir()
    outputs = tmp_path / "out"
    outputs.mkdir()
    monkeypatch.setattr(sandbox, "MASKED", (str(home),))
    monkeypatch.setenv("HOME", str(home / "alice"))
    made = sandbox.make_plan(
        ("/usr/bin/python3", "bots/x/bot.py", str(home / "bob")),
        cwd=str(home / "alice"),
        copy=False,
        env={"PATH": "/usr/bin"},
        limits=Limits(),
        network=False,
        hide=[outputs, tmp_path / "missing.pgn"],
        uid=None,
        fds=(3, 4, 5, 6),
    )
    assert made.masks == (str(home),)  # the referee's home is inside it already
    assert made.exposed == (str(home / "alice"),)  # not what its arguments name
    assert made.hidden == ((str(outputs), True),)
    assert made.copy_from is None


def nest(folder: Path, depth: int, name: str = "d") -> Path:
    """Make ``folder`` and ``depth`` folders, each in the one before, in it; → ``folder``.
    Made through descriptors, so that a path may be longer than the system allows."""
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    return folder


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """A folder with 1100 folders nested in it, removed afterwards without recursion
    (pytest's own clean-up of ``tmp_path`` would recurse too deep)."""
    folder = nest(tmp_path / "deep", 1100)
    yield folder
    pending = [str(folder)]
    while pending:
        with os.scandir(pending[-1]) as listing:
            inside = [entry.path for entry in listing]
        if inside:
            pending += inside  # folders only, as made
        else:
            os.rmdir(pending.pop())


def test_a_deep_or_large_dir_is_measured_without_recursion(
    deep: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sandbox._tree_size(str(deep)) == 4096 * 1101
    monkeypatch.setattr(sandbox, "MAX_DIR_ENTRIES", 1000)
    with pytest.raises(SandboxError, match="holds more than 1000 files and folders"):
        sandbox._tree_size(str(deep))


def test_a_dir_that_cannot_be_read_is_named_in_one_line(tmp_path: Path) -> None:
    folder = nest(tmp_path / "long", 20, "x" * 250)  # a path of more than 4096 bytes
    with pytest.raises(SandboxError) as caught:
        sandbox._tree_size(str(folder))
    message = str(caught.value)
    assert message.startswith(f"cannot read its dir {str(folder)!r}: File name too long (")
    assert "\n" not in message and len(message) < 600


def test_a_plan_hides_every_path_but_those_holding_the_bots_own_dir(tmp_path: Path) -> None:
    own, other, parent_file = tmp_path / "own", tmp_path / "other", tmp_path / "openings.txt"
    for folder in (own, other):
        folder.mkdir()
    parent_file.write_text("")
    made = sandbox.make_plan(
        ("/usr/bin/python3", "bot.py"),
        cwd=str(own),
        copy=True,
        env={},
        limits=Limits(),
        network=False,
        hide=[own, other, parent_file, tmp_path],
        uid=None,
        fds=(3, 4, 5, 6),
    )
    # Its own dir, and the folder that holds it, stay (it runs in a copy of its own).
    assert made.hidden == ((str(other), True), (str(parent_file), False))
    assert made.copy_from == str(own)


def test_what_a_dir_holds_of_the_hidden_is_left_out_of_its_copy(tmp_path: Path) -> None:
    own = tmp_path / "own"
    (own / "out").mkdir(parents=True)
    (own / "out" / "big.log").write_bytes(b"x" * 100_000)
    (own / "contest.toml").write_text("players = []\n")
    later = own / "games.pgn"  # not there yet: it may be by the time the copy is made
    made = sandbox.make_plan(
        ("/usr/bin/python3", "bot.py"),
        cwd=str(own),
        copy=True,
        env={},
        limits=Limits(file_size=1 << 20),
        network=False,
        hide=[own / "contest.toml", own / "out", later],
        uid=None,
        fds=(3, 4, 5, 6),
    )
    assert made.scrubbed == (str(own / "contest.toml"), str(own / "out"), str(later))
    assert made.copy_size == 4096 + (1 << 20)  # the hidden are not measured
    args = bwrap_command(made, TOOLS)
    # The hidden file is an empty regular file in the copy's source (cp refuses a device).
    binds = after(args, "--ro-bind")
    assert [made.stand_in, COPY_SOURCE + "/contest.toml"] in binds
    assert os.path.isfile(made.stand_in) and os.path.getsize(made.stand_in) == 0
    script = args[args.index("-c") + 1]
    for name in ("contest.toml", "out", "games.pgn"):
        assert f"rm -rf -- ./{name}" in script
    assert script.index("cp ") < script.index("rm -rf")


# --- whole processes -------------------------------------------------------------------


@dataclasses.dataclass
class Run:
    """A ``referee`` command run under the reaper."""

    returncode: int
    stdout: str
    stderr: str
    pgn: Path
    logs: Path

    @property
    def left_alive(self) -> int:
        """How many processes the command left alive (per the reaper)."""
        [line] = [line for line in self.stderr.splitlines() if line.endswith("left alive")]
        return int(line.split()[1])

    def reports(self, name: str = "attacker") -> list[dict[str, Any]]:
        """The attack reports that bot ``name`` wrote to its stderr logs."""
        found = []
        for log in sorted(self.logs.glob(f"{name}-*.stderr.log")):
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith("attack: "):
                    found.append(json.loads(line.removeprefix("attack: ")))
        return found

    def check_record(self, games: int = 1) -> str:
        """The PGN text, after checking it holds ``games`` valid games."""
        replay = subprocess.run(
            [sys.executable, "-m", "referee.cli", "replay", str(self.pgn)],
            capture_output=True,
            text=True,
            timeout=GUARD,
            cwd=REPO,
            check=False,
        )
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert replay.stdout.count(", valid") == games
        return self.pgn.read_text()


def attacker(mode: str, *args: str, keys: str = "") -> str:
    command = shlex.join([sys.executable, "-u", str(FAKEBOTS / "attack.py"), mode, *args])
    return f"name=attacker cmd={shlex.quote(command)} {keys}".strip()


def victim(mark: str = "none", script: str = "pass_bot.py", *args: str) -> str:
    command = shlex.join([sys.executable, "-u", str(FAKEBOTS / script), *args])
    return f"name=victim cmd={shlex.quote(command)} env=VICTIM_MARK={mark}"


def referee(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, sandbox_mode: str = "on"
) -> Run:
    """``referee match`` of one game, ``args`` being the bots and any more flags."""
    pgn, logs = tmp_path / "games.pgn", tmp_path / "logs"
    command = [
        *(sys.executable, str(FAKEBOTS / "reaper.py"), sys.executable, "-m", "referee.cli"),
        *("match", *args, "--games", "1", "--option", "turn_limit=10", "--tc", "60+1"),
        *("--pgn", str(pgn), "--log-dir", str(logs), "--sandbox", sandbox_mode),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=GUARD, cwd=REPO, env=env, check=False
    )
    return Run(done.returncode, done.stdout, done.stderr, pgn, logs)


def unharmed(run: Run) -> dict[str, Any]:
    """Check the match ended well for everyone but the attacker; its (single) report."""
    assert run.returncode == 0, run.stderr
    assert run.left_alive == 0, run.stderr
    assert "game 1: attacker vs victim  1/2-1/2  (turn limit 10 reached; 10 turns)" in run.stdout
    text = run.check_record()
    assert text.count("[Event ") == 1
    [report] = run.reports()
    return report


@pytest.fixture
def mark() -> str:
    return uuid.uuid4().hex


@needs_sandbox
@pytest.mark.parametrize("mode", ["kill_opponent", "stop_opponent", "hijack_pipes"])
def test_a_bot_cannot_find_its_opponent(tmp_path: Path, mark: str, mode: str) -> None:
    report = unharmed(referee(tmp_path, attacker(mode, mark), victim(mark)))
    assert report["seen"] == 0


def test_without_the_sandbox_the_opponent_is_killed(tmp_path: Path, mark: str) -> None:
    # The same attack, unsandboxed: it works, so the test above has teeth.
    run = referee(tmp_path, attacker("kill_opponent", mark), victim(mark), sandbox_mode="off")
    assert run.returncode == 0, run.stderr
    assert run.reports()[0]["signalled"] >= 1
    assert "game 1: attacker vs victim  1-0" in run.stdout
    run.check_record()


@needs_sandbox
def test_a_bot_cannot_kill_the_referee(tmp_path: Path) -> None:
    report = unharmed(referee(tmp_path, attacker("kill_parent"), victim()))
    assert report["parent"] == 1  # the sandbox's own first process, which ignores it


@needs_sandbox
def test_a_bot_cannot_forge_the_record(tmp_path: Path) -> None:
    run = referee(tmp_path, attacker("forge_pgn", str(tmp_path / "games.pgn")), victim())
    report = unharmed(run)
    assert report["appended"] is False
    assert report["error"] in ("Read-only file system", "Permission denied")
    assert "referee.cli" not in (report["parent_cmdline"] or "")
    assert "Forged" not in run.pgn.read_text()


@needs_sandbox
def test_a_bot_cannot_leave_a_process_behind(tmp_path: Path) -> None:
    report = unharmed(referee(tmp_path, attacker("orphan"), victim()))
    assert report["orphan"] > 0  # it was made; the reaper saw nothing left alive


@needs_sandbox
def test_cpu_burners_stay_on_their_bots_cpu(tmp_path: Path) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    burner = attacker("burn", "3")
    calm = victim("none", "attack.py", "burn", "0")
    run = referee(tmp_path, burner, calm, "--affinity")
    report = unharmed(run)
    # They tried to spread to every CPU: the system-call filter refused, so the pinning
    # holds for the bot and every burner.
    assert report["moved"] == ["Operation not permitted"] * 4
    assert report["burners"] == [report["main"]] * 3
    assert "," not in report["main"] and "-" not in report["main"]  # one CPU
    [calm_report] = run.reports("victim")
    assert calm_report["main"] != report["main"]


@needs_sandbox
def test_a_bot_cannot_make_a_user_namespace(tmp_path: Path) -> None:
    # In one it would be root, and could mount a tmpfs of any size outside every limit.
    report = unharmed(referee(tmp_path, attacker("userns"), victim()))
    assert report["unshare_tool"] != 0
    assert report["unshare_call"] == "Operation not permitted"


@needs_sandbox
def test_a_deep_dir_is_copied_and_one_that_cannot_be_is_the_players_fault(
    tmp_path: Path, deep: Path
) -> None:
    # A deep dir was once a RecursionError in the referee.
    report = unharmed(referee(tmp_path, attacker("read", "d", keys=f"dir={deep}"), victim()))
    assert report["d"] == "Is a directory"  # its copy holds the nest
    long = nest(tmp_path / "long", 20, "x" * 250)
    run = referee(tmp_path, attacker("read", keys=f"dir={long}"), victim())
    assert run.returncode == 1 and run.left_alive == 0
    [error] = [line for line in run.stderr.splitlines() if not line.startswith("reaper: ")]
    assert error.startswith("Error: a player failed the start-up check (attacker: cannot start")
    assert "File name too long" in error


@needs_sandbox
async def test_a_tournament_refuses_a_dir_it_cannot_copy_before_it_starts(
    tmp_path: Path,
) -> None:
    long = nest(tmp_path / "long", 20, "x" * 250)
    config = load_config(
        players=[attacker("read", keys=f"dir={long}"), victim()],
        output=str(tmp_path / "out"),
        options={"turn_limit": 4},
        sandbox="on",
    )
    with trio.fail_after(GUARD), pytest.raises(PreflightError) as caught:
        await run_tournament(config)
    assert "attacker: cannot start" in str(caught.value)
    assert "File name too long" in str(caught.value)


@needs_sandbox
def test_a_fork_bomb_is_limited(tmp_path: Path) -> None:
    report = unharmed(referee(tmp_path, attacker("fork_bomb"), victim(), "--processes", "16"))
    assert 0 < report["forked"] < 16
    assert report["error"] == "Resource temporarily unavailable"


@needs_sandbox
def test_a_memory_hog_is_limited(tmp_path: Path) -> None:
    run = referee(tmp_path, attacker("memory_hog"), victim(), "--memory", "256M")
    if cgroups.group_problem() is not None:  # per process: its allocation fails
        assert 0 < unharmed(run)["allocated"] < 256 << 20
        return
    # The whole tree's limit, in its control group: the kernel kills it, its fault.
    assert run.returncode == 0, run.stderr
    assert run.left_alive == 0, run.stderr
    assert "game 1: attacker vs victim  0-1" in run.stdout, run.stdout
    assert "memory limit of 256M" in run.check_record()


@needs_sandbox
def test_a_huge_file_is_limited(tmp_path: Path) -> None:
    report = unharmed(referee(tmp_path, attacker("huge_file"), victim(), "--file-size", "4M"))
    assert report["/tmp/huge"]["written"] <= 4 << 20
    assert report["/tmp/huge"]["error"] == "File too large"
    # Without a dir of its own, a bot runs in the referee's directory, read-only.
    assert report["huge"] == {"written": 0, "error": "Read-only file system"}


@needs_sandbox
def test_a_bot_writes_only_its_private_copy_and_tmp(tmp_path: Path) -> None:
    own = tmp_path / "bot"
    own.mkdir()
    (own / "kept.txt").write_text("original\n")
    targets = ["note.txt", "kept.txt", "/tmp/x", str(REPO / "x"), str(tmp_path / "games.pgn")]
    run = referee(tmp_path, attacker("write", *targets, keys=f"dir={own}"), victim())
    report = unharmed(run)
    assert report["note.txt"] == report["kept.txt"] == report["/tmp/x"] == "written"
    assert report[str(REPO / "x")] == "Read-only file system"
    assert report[str(tmp_path / "games.pgn")] in ("Read-only file system", "Permission denied")
    assert sorted(path.name for path in own.iterdir()) == ["kept.txt"]  # only a copy changed
    assert (own / "kept.txt").read_text() == "original\n"
    assert not (REPO / "x").exists()


@needs_sandbox
def test_a_bot_reads_no_secret_and_no_output(tmp_path: Path) -> None:
    home_file = Path.home() / f".referee-test-secret-{os.getpid()}"  # two suites at once
    home_file.write_text("secret")
    try:
        targets = [str(home_file), "/etc/shadow", str(tmp_path / "games.pgn")]
        report = unharmed(referee(tmp_path, attacker("read", *targets), victim()))
    finally:
        home_file.unlink()
    assert report[str(home_file)] == "No such file or directory"
    assert report["/etc/shadow"] == "Permission denied"
    assert report[str(tmp_path / "games.pgn")] in (0, "Permission denied")  # a stand-in


@pytest.fixture
def visible() -> Iterator[Path]:
    """A folder that a bot would see were it not hidden: ``tmp_path`` is in ``/tmp``, which
    every sandbox has a private one of; this is in the repository's folder."""
    folder = Path(tempfile.mkdtemp(prefix=".sandbox-test-", dir=REPO))
    try:
        folder.chmod(0o755)
        (folder / "public.txt").write_text("anyone may read this\n")
        yield folder
    finally:
        shutil.rmtree(folder)


def seen(report: dict[str, Any], visible: Path) -> None:
    """Check that the bot did see ``visible``'s public file (else a hidden file's absence
    would prove nothing)."""
    if report[str(visible / "public.txt")] != len("anyone may read this\n"):
        pytest.skip(f"{REPO} is not visible to a bot here")


@needs_sandbox
def test_a_bot_reads_its_own_dir_but_not_its_opponents(visible: Path, tmp_path: Path) -> None:
    mine, theirs = visible / "mine", visible / "theirs"
    for folder in (mine, theirs):
        folder.mkdir()
        (folder / "source.txt").write_text(f"{folder.name}'s source\n")
    targets = [str(visible / "public.txt"), "source.txt", str(mine / "source.txt")]
    attack = attacker("read", *targets, str(theirs / "source.txt"), keys=f"dir={mine}")
    report = unharmed(referee(tmp_path, attack, f"{victim()} dir={theirs}"))
    seen(report, visible)
    assert report["source.txt"] == report[str(mine / "source.txt")] == len("mine's source\n")
    assert report[str(theirs / "source.txt")] == "No such file or directory"


@needs_sandbox
async def test_a_tournament_hides_the_openings_and_the_other_players_dirs(
    visible: Path, tmp_path: Path
) -> None:
    mine, theirs = visible / "mine", visible / "theirs"
    for folder in (mine, theirs):
        folder.mkdir()
        (folder / "source.txt").write_text("source\n")
    openings = visible / "openings.txt"
    openings.write_text(str(Position.START) + "\n")
    targets = [str(visible / "public.txt"), str(openings), str(theirs / "source.txt")]
    targets.append("source.txt")
    output = tmp_path / "out"
    config = load_config(
        players=[attacker("read", *targets, keys=f"dir={mine}"), f"{victim()} dir={theirs}"],
        output=str(output),
        openings=str(openings),
        games=1,
        options={"turn_limit": 4},
        tc="60+1",
        sandbox="on",
    )
    with trio.fail_after(GUARD):
        await run_tournament(config)
    [log] = output.glob("logs/run-*/worker-*/attacker-*.stderr.log")
    [line] = [line for line in log.read_text().splitlines() if line.startswith("attack: ")]
    report = json.loads(line.removeprefix("attack: "))
    seen(report, visible)
    assert report[str(openings)] in (0, "Permission denied")  # a stand-in
    assert report[str(theirs / "source.txt")] == "No such file or directory"
    assert report["source.txt"] == len("source\n")


@needs_sandbox
def test_the_tournament_command_hides_its_own_file(visible: Path, tmp_path: Path) -> None:
    config = visible / "contest.toml"
    output = tmp_path / "out"
    targets = [str(visible / "public.txt"), str(config)]
    players = [attacker("read", *targets), victim()]
    config.write_text(
        f"players = {json.dumps(players)}\n"
        f'output = "{output}"\ntc = "60+1"\nsandbox = "on"\ngames = 1\n[options]\nturn_limit = 4\n'
    )
    command = [sys.executable, "-m", "referee.cli", "tournament", str(config), "--quiet"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=GUARD, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    [log] = output.glob("logs/run-*/worker-*/attacker-*.stderr.log")
    [line] = [line for line in log.read_text().splitlines() if line.startswith("attack: ")]
    report = json.loads(line.removeprefix("attack: "))
    seen(report, visible)
    assert report[str(config)] in (0, "Permission denied")  # a stand-in


@needs_sandbox
def test_a_dir_that_holds_the_tournament_file_and_the_output_works(visible: Path) -> None:
    # dir = "." beside the tournament file, and the output directory inside it: the bot
    # starts (cp once refused the stand-in of the hidden file) and its copy holds neither.
    (visible / "kept.txt").write_text("kept\n")
    config = visible / "contest.toml"
    targets = [str(visible / "public.txt"), "kept.txt", "contest.toml", "out", "out/games.pgn"]
    players = [attacker("read", *targets, keys="dir=."), victim()]
    config.write_text(
        f"players = {json.dumps(players)}\n"
        'output = "out"\ngames = 2\ntc = "60+1"\nsandbox = "on"\n[options]\nturn_limit = 4\n'
    )
    command = [sys.executable, "-m", "referee.cli", "tournament", str(config), "--quiet"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=GUARD, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    logs = sorted((visible / "out").glob("logs/run-*/worker-*/attacker-*.stderr.log"))
    assert len(logs) == 2  # the second game's copy was made with the PGN and store there
    for log in logs:
        [line] = [line for line in log.read_text().splitlines() if line.startswith("attack: ")]
        report = json.loads(line.removeprefix("attack: "))
        seen(report, visible)
        assert report["kept.txt"] == len("kept\n")
        for hidden in ("contest.toml", "out", "out/games.pgn"):
            assert report[hidden] == "No such file or directory"


@needs_sandbox
def test_the_environment_is_only_the_fixed_list_and_the_declared(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "HOME": str(Path.home()),
        "REFEREE_SECRET": "hunter2",
    }
    run = referee(tmp_path, attacker("environment", keys="env=DECLARED=1"), victim(), env=env)
    report = unharmed(run)
    assert report["environ"] == {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "DECLARED": "1",
    }
    if sandbox.is_root():
        assert report["uid"] >= sandbox.SEAT_UID_BASE  # a user of its own


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server


@needs_sandbox
@pytest.mark.parametrize("allowed", [False, True])
def test_the_network_only_where_the_player_allows_it(
    tmp_path: Path, listener: socket.socket, allowed: bool
) -> None:
    port = str(listener.getsockname()[1])
    keys = "network=yes" if allowed else ""
    report = unharmed(referee(tmp_path, attacker("network", port, keys=keys), victim()))
    assert report["connected"] is allowed
    if allowed:
        connection, _ = listener.accept()
        connection.close()
    else:
        assert report["error"] in ("Connection refused", "Network is unreachable")
        with pytest.raises(BlockingIOError):
            listener.accept()


@needs_sandbox
async def test_each_bot_runs_as_its_own_user() -> None:
    if not sandbox.is_root():
        pytest.skip("seat users are for a referee running as root")
    command = BotCommand((sys.executable, "-c", "import os; print(os.getuid(), os.getgroups())"))
    async with open_bot(command) as first, open_bot(command) as second:
        with trio.fail_after(GUARD):
            lines = [(await bot.receive_some()).split() for bot in (first, second)]
    assert lines[0][0] != lines[1][0]
    assert all(int(line[0]) >= sandbox.SEAT_UID_BASE and line[1] == b"[]" for line in lines)


# --- bots never outlive the referee ---------------------------------------------------------


def tree(pid: int) -> list[int]:
    """The processes descended from ``pid`` (started by this test), from the children lists
    of /proc: no other process of the machine is looked at."""
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}") else ():
        try:
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *tree(child)]
    return found


@pytest.mark.parametrize("mode", [pytest.param("on", marks=needs_sandbox), "off"])
async def test_bots_die_with_a_killed_referee(tmp_path: Path, mode: str) -> None:
    # Sandboxed, even a double-forked child in a session of its own dies with it.
    first = attacker("orphan") if mode == "on" else victim()
    command = [
        *(sys.executable, "-m", "referee.cli", "match", first, victim()),
        *("--games", "100000", "--option", "turn_limit=10", "--tc", "60+1", "--sandbox", mode),
        *("--pgn", str(tmp_path / "games.pgn"), "--log-dir", str(tmp_path / "logs")),
    ]
    process = await trio.lowlevel.open_process(command, cwd=REPO, stdout=subprocess.PIPE)
    held: list[int] = []
    try:
        assert process.stdout is not None
        with trio.fail_after(GUARD):
            seen = b""
            while b"game 2:" not in seen:  # the match's bots run, reused from game to game
                seen += await process.stdout.receive_some()
        pids = tree(process.pid)
        held = [os.pidfd_open(pid) for pid in pids]
        # Sandboxed: per bot bwrap, its first process, the bot (and the orphan).
        assert len(held) == (7 if mode == "on" else 2)
        process.send_signal(signal.SIGKILL)
        with trio.fail_after(GUARD):
            await process.wait()
            for pidfd in held:
                await trio.lowlevel.wait_readable(pidfd)
    finally:
        for pidfd in held:
            os.close(pidfd)
        with trio.CancelScope(shield=True):
            process.kill()
            await process.wait()


async def test_a_resumed_tournament_stops_what_a_killed_run_left(tmp_path: Path) -> None:
    output = tmp_path / "run"
    output.mkdir()
    # A stand-in for a sandbox a killed run left alive, noted in its ledger.
    leftover = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        started = Path(f"/proc/{leftover.pid}/stat").read_text().rpartition(")")[2].split()[19]
        (output / BOT_PIDS).write_text(f"{boot} {leftover.pid} {started} sandbox\n")
        pass_bot = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
        config = load_config(
            players=[f"name=a cmd={shlex.quote(pass_bot)}", f"name=b cmd={shlex.quote(pass_bot)}"],
            output=str(output),
            options={"turn_limit": 4},
            tc="60+1",
        )
        with trio.fail_after(GUARD):
            await run_tournament(config)
        assert leftover.wait(timeout=GUARD) == -signal.SIGKILL
        # This run's bots were noted, and all were stopped.
        assert (output / BOT_PIDS).read_text().strip()
    finally:
        leftover.kill()
        leftover.wait()


def run_in_sandbox(
    script: str, *, uid: int | None, prefix: tuple[str, ...] = ()
) -> tuple[list[str], str, subprocess.CompletedProcess[bytes]]:
    """Run the bash ``script`` as a bot, in a sandbox made by :func:`bwrap_command` (as the
    seat user ``uid``, or in a user namespace), after ``prefix`` (e.g. becoming another
    user); → the words it wrote, bwrap's status reports, and bwrap's outcome."""
    tools = sandbox.find_tools()
    assert tools is not None
    stdin, stdout, status = os.pipe(), os.pipe(), os.pipe()
    with sandbox.seccomp_fd() as seccomp:
        made = Plan(
            argv=("/bin/bash", "-c", script),
            cwd="/",
            env=(("PATH", "/usr/bin:/bin"),),
            limits=Limits(),
            uid=uid,
            masks=("/root", "/home", "/run"),
            private=tuple(path for path in PRIVATE if os.path.isdir(path)),
            stdin_fd=stdin[0],
            stdout_fd=stdout[1],
            status_fd=status[1],
            seccomp_fd=seccomp,
        )
        try:
            done = subprocess.run(
                [*prefix, *bwrap_command(made, tools)],
                pass_fds=(stdin[0], stdout[1], status[1], seccomp),
                capture_output=True,
                timeout=GUARD,
                check=False,
            )
        finally:
            for fd in (stdin[0], stdin[1], stdout[1], status[1]):
                os.close(fd)
    with os.fdopen(stdout[0]) as out, os.fdopen(status[0]) as reports:
        return out.read().split(), reports.read(), done


NOBODY = ("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--")
"""Becomes an ordinary user, as a referee that is not root runs."""


def test_a_referee_that_is_not_root_gets_a_user_namespace(tmp_path: Path) -> None:
    # The command line a referee running as an ordinary user makes, run as one (nobody).
    if not sandbox.is_root() or sandbox_problem() is not None:
        pytest.skip("needs the sandbox and root (to become an ordinary user)")
    script = (
        "echo uid=$(id -u) pid=$$ init=$(cat /proc/1/comm)"
        " env=$(tr '\\0' '\\n' < /proc/$$/environ | wc -l);"
        " echo x > /tmp/x && echo tmp=written;"
        " (echo > /dev/tcp/127.0.0.1/9) 2>/dev/null && echo net=yes || echo net=no;"
        " unshare --user true 2>/dev/null && echo userns=yes || echo userns=no"
    )
    said, reported, done = run_in_sandbox(script, uid=None, prefix=NOBODY)
    if done.returncode != 0 and b"bwrap" in done.stderr:
        pytest.skip(f"no unprivileged user namespaces here: {done.stderr.decode().strip()}")
    assert said[:4] == ["uid=65534", "pid=2", "init=bwrap", "env=1"]
    assert said[4:] == ["tmp=written", "net=no", "userns=no"]
    assert '"exit-code": 0' in reported


NO_ESCAPE = (
    # A user namespace of its own, where it would be root and could mount a tmpfs of any
    # size (the limits bind no tmpfs's pages to the bot): refused, as is what it needs.
    "unshare -Ur true 2>/dev/null && echo unshare=yes || echo unshare=no;"
    " unshare -Urm mount -t tmpfs -o size=100g none /tmp 2>/dev/null"
    " && echo mount=yes || echo mount=no;"
    # Moving itself to other CPUs: refused, so pinning cannot be undone.
    " taskset -p -c 0 $$ >/dev/null 2>&1 && echo taskset=yes || echo taskset=no;"
    # The filter leaves everything else alone: a child process, a thread (glibc tries
    # clone3 first, refused with ENOSYS, then clone).
    " (true) && echo fork=yes;"
    " python3 -c 'import threading; t = threading.Thread(target=print); t.start(); t.join()'"
    " >/dev/null && echo thread=yes"
)


@needs_sandbox
@pytest.mark.parametrize("as_root", [True, False])
def test_no_user_namespace_and_no_affinity_change_inside(as_root: bool) -> None:
    if not sandbox.is_root():
        pytest.skip("this runs the sandbox both ways, as root and as an ordinary user")
    expected = ["unshare=no", "mount=no", "taskset=no", "fork=yes", "thread=yes"]
    if as_root:
        with sandbox.UID_POOL.lease() as uid:
            said, reported, _ = run_in_sandbox(NO_ESCAPE, uid=uid)
    else:
        said, reported, done = run_in_sandbox(NO_ESCAPE, uid=None, prefix=NOBODY)
        if done.returncode != 0 and b"bwrap" in done.stderr:
            pytest.skip(f"no unprivileged user namespaces here: {done.stderr.decode().strip()}")
    assert said == expected
    assert '"exit-code": 0' in reported


def test_a_tournament_file_sets_the_sandbox_and_each_players_own(tmp_path: Path) -> None:
    from tournaments.config import ConfigError

    path = tmp_path / "t.toml"
    path.write_text(
        'sandbox = "off"\nmemory = "1G"\nprocesses = 64\nfile_size = 1048576\n'
        'open_files = "unlimited"\naffinity = true\n'
        '[[players]]\nname = "a"\ncmd = "./a"\nmemory = "512M"\nnetwork = true\ncpus = [0]\n'
        '[[players]]\nname = "b"\ncmd = "./b"\n'
    )
    config = load_config(path)
    assert config.sandbox.mode == "off"
    assert config.sandbox.affinity
    assert config.sandbox.limits == Limits(
        memory=1 << 30, processes=64, file_size=1 << 20, open_files=None
    )
    a, b = (player.command for player in config.players)
    assert dict(a.limits) == {"memory": 512 << 20} and a.network and a.cpus == (0,)
    assert dict(b.limits) == {} and not b.network and b.cpus is None
    # The run's policy hides the output directory from every bot.
    assert config.match_config().sandbox.hide == (Path(os.path.abspath(config.output)),)
    overridden = load_config(path, sandbox="on", memory=256 << 20, affinity=False)
    assert overridden.sandbox.mode == "on" and not overridden.sandbox.affinity
    assert overridden.sandbox.limits.memory == 256 << 20
    for bad, message in [
        ('sandbox = "maybe"', "sandbox must be one of auto, on, off"),
        ('memory = "lots"', "bad size 'lots'"),
        ("affinity = 1", "affinity must be true or false"),
    ]:
        path.write_text(f'{bad}\nplayers = ["./a", "./b"]\n')
        with pytest.raises(ConfigError, match=message):
            load_config(path)


def test_the_cli_refuses_on_and_warns_on_auto_without_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from referee.cli import main

    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    bot = f"{sys.executable} -u {FAKEBOTS / 'pass_bot.py'}"
    flags = ["--games", "1", "--option", "turn_limit=2", "--pgn", str(tmp_path / "m.pgn")]
    flags += ["--log-dir", str(tmp_path / "logs")]
    refused = CliRunner().invoke(main, ["match", bot, bot, *flags, "--sandbox", "on"])
    assert refused.exit_code == 1
    assert refused.stderr == (
        "Error: cannot sandbox bots: bubblewrap (bwrap) is not installed;"
        " install it, or run with --sandbox off\n"
    )
    assert not (tmp_path / "m.pgn").exists()
    warned = CliRunner().invoke(main, ["match", bot, bot, *flags])
    assert warned.exit_code == 0, warned.output
    assert warned.stderr == (
        "Warning: bots run without a sandbox: bubblewrap (bwrap) is not installed"
        " (--sandbox off hides this warning)\n"
    )
    quiet = CliRunner().invoke(main, ["match", bot, bot, *flags, "--sandbox", "off"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    bad = CliRunner().invoke(main, ["match", bot, bot, *flags, "--memory", "lots"])
    assert bad.exit_code == 2 and "bad size 'lots'" in bad.stderr
