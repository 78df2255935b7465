"""Attacks of round 3 (after issues 18 and 19), each pinned where it was found to work.

- A player's ``dir`` holding a sparse file, or one file under many hard-linked names,
  gave its bot a copy tmpfs of the files' *apparent* total size (100 GiB for a 100 GiB
  sparse file on 8 MiB of disk), which the bot could then fill with real memory: far past
  docs/security.md's "the directory's size plus ``file_size`` bytes".
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

import referee.sandbox as sandbox

FAKEBOTS = Path(__file__).resolve().parent / "fakebots"
MIB = 1 << 20

needs_sandbox = pytest.mark.skipif(
    sandbox.sandbox_problem() is not None, reason=f"no sandbox here: {sandbox.sandbox_problem()}"
)

# Reports the size of the tmpfs it runs in, and how much it could write there, then passes.
STATVFS_BOT = """\
import os, sys
sys.path.insert(0, {fakebots!r})
from pass_bot import play
fs = os.statvfs(".")
sys.stderr.write("attack: {{\\"tmpfs\\": %d}}\\n" % (fs.f_blocks * fs.f_frsize))
sys.stderr.flush()
play()
"""


def _sparse_and_linked(folder: Path) -> int:
    """Fill ``folder`` with a 10 GiB sparse file, 1 MiB of data in it, and a 1 MiB file
    under 20 names; → the bytes of data they really hold."""
    with open(folder / "sparse.bin", "wb") as file:
        file.truncate(10 << 30)
        file.seek(5 << 30)
        file.write(b"\1" * MIB)
    (folder / "real.bin").write_bytes(b"\2" * MIB)
    for n in range(19):
        os.link(folder / "real.bin", folder / f"link{n}.bin")
    return 2 * MIB


def test_a_dir_is_sized_by_the_data_its_copy_holds(tmp_path: Path) -> None:
    data = _sparse_and_linked(tmp_path)
    entries = len(list(tmp_path.iterdir()))
    size = sandbox._tree_size(str(tmp_path))
    if os.stat(tmp_path / "sparse.bin").st_blocks * 512 >= 10 << 30:
        pytest.skip("this file system keeps no holes")
    # The sparse file's 1 MiB (SEEK_DATA may round it up to a block) and the linked one once.
    assert data + 4096 * (entries + 1) <= size <= data + 4096 * (entries + 1) + 2 * MIB


@needs_sandbox
def test_a_sparse_or_linked_dir_gives_no_larger_tmpfs(tmp_path: Path) -> None:
    from test_sandbox import referee, victim

    folder = tmp_path / "dir"
    folder.mkdir()
    data = _sparse_and_linked(folder)
    if os.stat(folder / "sparse.bin").st_blocks * 512 >= 10 << 30:
        pytest.skip("this file system keeps no holes")
    (folder / "bot.py").write_text(STATVFS_BOT.format(fakebots=str(FAKEBOTS)))
    command = shlex.join([sys.executable, "-u", "bot.py"])
    attacker = f"name=attacker cmd={shlex.quote(command)} dir={folder}"
    run = referee(tmp_path, attacker, victim(), "--file-size", "4M")
    assert run.returncode == 0, run.stderr
    [report] = run.reports()
    # Its copy's tmpfs: the dir's data plus file_size and a page per entry, not 10 GiB.
    assert report["tmpfs"] <= data + 4 * MIB + 4096 * 40 + MIB
