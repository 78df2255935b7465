"""The documented ways of naming a bot, sandboxed: a module of a package installed in
editable mode from a clone under /tmp, run from another directory; the minimal bot of
docs/protocol.md run by an absolute path under /tmp; a bot in a folder of mode 700 (bots
run as users of their own). Each is a real ``referee match`` with ``--sandbox on``."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import referee.sandbox as sandbox

REPO = Path(__file__).resolve().parent.parent
GUARD = 120

needs_sandbox = pytest.mark.skipif(
    sandbox.sandbox_problem() is not None, reason=f"no sandbox here: {sandbox.sandbox_problem()}"
)
needs_seat_users = pytest.mark.skipif(
    not sandbox.is_root(), reason="bots run as users of their own only under a root referee"
)


def minimal_bot() -> str:
    """The minimal bot, as docs/protocol.md gives it."""
    text = (REPO / "docs" / "protocol.md").read_text()
    section = text.split("## A complete minimal bot", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def match(
    *players: str, cwd: Path, python: str = sys.executable, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [python, "-m", "referee.cli", "match", *players, "--games", "1"]
    command += ["--option", "turn_limit=4", "--tc", "60+1", "--sandbox", "on"]
    command += ["--pgn", str(cwd / "games.pgn"), "--log-dir", str(cwd / "logs")]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=GUARD, cwd=cwd, env=env, check=False
    )


def played(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(turn limit 4 reached; 4 turns)" in done.stdout, done.stdout


@needs_sandbox
def test_a_module_of_an_editable_install_under_tmp_from_another_directory(
    tmp_path: Path,
) -> None:
    # What `pip install -e .` of a clone leaves: an import hook outside sys.path, pointing
    # into the clone, and direct_url.json saying where the clone is (PEP 610).
    clone = tmp_path / "clone"
    (clone / "tinybot").mkdir(parents=True)
    (clone / "tinybot" / "__init__.py").write_text("")
    (clone / "tinybot" / "__main__.py").write_text(minimal_bot())
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # The referee itself comes from this suite's environment.
    (Path(site) / "referee-under-test.pth").write_text(
        f"{sysconfig.get_paths()['purelib']}\n{REPO}\n"
    )
    info = Path(site) / "tinybot-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinybot\nVersion: 0\n")
    (info / "direct_url.json").write_text(
        json.dumps({"url": clone.as_uri(), "dir_info": {"editable": True}})
    )
    (Path(site) / "__editable___tinybot_finder.py").write_text(
        "import importlib.abc, importlib.util, sys\n"
        f"MAPPING = {{'tinybot': {str(clone / 'tinybot')!r}}}\n"
        "class Finder(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in MAPPING:\n"
        "            return importlib.util.spec_from_file_location(\n"
        "                name, MAPPING[name] + '/__init__.py',\n"
        "                submodule_search_locations=[MAPPING[name]])\n"
        "def install():\n"
        "    sys.meta_path.append(Finder())\n"
    )
    (Path(site) / "__editable__.tinybot-0.pth").write_text(
        "import __editable___tinybot_finder; __editable___tinybot_finder.install()\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"}
    bot = "name=tiny cmd='python -u -m tinybot'"
    played(
        match(bot, "name=other cmd='python -u -m tinybot'", cwd=elsewhere, python=python, env=env)
    )


@needs_sandbox
def test_the_minimal_bot_by_an_absolute_path_under_tmp(tmp_path: Path) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "passer.py").write_text(minimal_bot())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = shlex.join(["python3", "-u", str(folder / "passer.py")])
    played(
        match(
            f"name=a cmd={shlex.quote(command)}",
            f"name=b cmd={shlex.quote(command)}",
            cwd=elsewhere,
        )
    )


@needs_sandbox
@needs_seat_users
def test_a_bot_in_a_folder_of_mode_700(tmp_path: Path) -> None:
    closed = tmp_path / "closed" / "inner"
    closed.mkdir(parents=True)
    (closed / "passer.py").write_text(minimal_bot())
    (closed / "passer.py").chmod(0o644)
    for folder in (closed, closed.parent):
        folder.chmod(0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Readable by all, in folders only its owner may enter: it runs.
    command = shlex.quote(shlex.join(["python3", "-u", str(closed / "passer.py")]))
    played(match(f"name=a cmd={command}", f"name=b cmd={command}", cwd=elsewhere))
    # Readable by its owner only: refused at the start, in one line that says why.
    (closed / "passer.py").chmod(0o600)
    done = match(f"name=a cmd={command}", f"name=b cmd={command}", cwd=elsewhere)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert "cannot start 'python3': in the sandbox," in line
    assert f"{closed / 'passer.py'} is not readable by the bot's user (mode 600)" in line
    assert "chmod o+r" in line and "dir" in line
