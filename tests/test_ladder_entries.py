"""The ladder's entries folder (tournaments/ladder/entries.py) and its commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import main
from tournaments.ladder.entries import (
    MANIFEST,
    EntryError,
    manifest_command,
    next_version,
    retire,
    scan,
    write_version,
)


def test_a_version_without_its_manifest_is_not_seen(tmp_path: Path) -> None:
    half = tmp_path / "alice" / "v1"
    half.mkdir(parents=True)
    (half / "bot.py").write_text("print('half a copy')\n")
    assert scan(tmp_path).submissions == ()
    (half / MANIFEST).write_text('cmd = "python bot.py"\n')
    (found,) = scan(tmp_path).submissions
    assert (found.entrant, found.version, found.player) == ("alice", "v1", "alice@v1")
    command = found.command()
    assert command.argv == ("python", "bot.py") and command.cwd == str(half.resolve())


def test_hidden_and_badly_named_folders_are_skipped(tmp_path: Path) -> None:
    for folder in (".incoming-x/v1", "alice/.incoming-1", "bad name/v1"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / MANIFEST).write_text('cmd = "true"\n')
    assert scan(tmp_path).submissions == ()


def test_versions_are_ordered_naturally(tmp_path: Path) -> None:
    for version in ("v10", "v2", "v1"):
        write_version(tmp_path, "bob", version, "true", None)
    assert [s.version for s in scan(tmp_path).submissions] == ["v1", "v2", "v10"]
    assert next_version(tmp_path, "bob") == "v11"
    assert next_version(tmp_path, "carol") == "v1"


def test_write_version_copies_a_folder_and_refuses_to_overwrite(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.py").write_text("")
    entries = tmp_path / "entries"
    target = write_version(entries, "alice", "v1", "python bot.py", source)
    assert (target / "bot.py").exists() and (target / MANIFEST).exists()
    assert [p.name for p in (entries / "alice").iterdir()] == ["v1"]  # no temporary left
    with pytest.raises(EntryError, match="already has a version 'v1'"):
        write_version(entries, "alice", "v1", "python bot.py", source)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("cmd = ", "not valid TOML"),
        ('cmd = "x"\ndir = "/"\n', "unknown key 'dir'"),
        ("env = {}\n", "cmd is missing"),
        ('cmd = "x"\x00', "not a manifest"),
    ],
)
def test_a_bad_manifest_is_one_line(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(EntryError, match=problem) as caught:
        manifest_command(text, tmp_path)
    assert "\n" not in str(caught.value)


def test_retire_marks_the_entrant(tmp_path: Path) -> None:
    write_version(tmp_path, "alice", "v1", "true", None)
    retire(tmp_path, "alice")
    assert scan(tmp_path).retired == {"alice"}
    with pytest.raises(EntryError, match="no entrant 'zed'"):
        retire(tmp_path, "zed")


def test_the_commands_add_update_retire_and_list(tmp_path: Path) -> None:
    ladder = tmp_path / "spring.toml"
    ladder.write_text('sandbox = "off"\n')
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        result = runner.invoke(main, ["ladder", *args])
        return result.exit_code, result.output

    assert run("add", str(ladder), "alice", "--cmd", "python -m bots.random") == (
        0,
        f"alice@v1 written to {tmp_path / 'entries' / 'alice' / 'v1'};"
        " the ladder checks it at its next scan\n",
    )
    code, out = run("add", str(ladder), "alice", "--cmd", "x")
    assert code == 1 and "already an entrant: use `referee ladder update`" in out
    code, out = run("update", str(ladder), "bob", "--cmd", "x")
    assert code == 1 and "not an entrant yet: use `referee ladder add`" in out
    assert run("update", str(ladder), "alice", "--cmd", "python -m bots.greedy")[0] == 0
    code, out = run("retire", str(ladder), "alice")
    assert code == 0 and out.startswith("alice retired")
    assert run("list", str(ladder)) == (0, "alice@v1 waiting\nalice@v2 waiting\n")
    code, out = run("add", str(ladder), "no/slash", "--cmd", "x")
    assert code == 1 and "entrant 'no/slash' must be" in out
