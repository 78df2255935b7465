"""The quick start says what the quick tournament and the test suite are: the README and
``examples/quick.toml`` agree on its games and its time, and the README names the
packages the skipped tests ask for."""

from __future__ import annotations

import re
from pathlib import Path

from tournaments.config import load_config

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
QUICK = REPO / "examples" / "quick.toml"


def test_readme_and_quick_toml_give_the_same_games_and_time() -> None:
    said = re.search(r"\((\d+) games, (about [a-z ]+) on\s+two cores\)", README)
    assert said is not None, "the quick start gives the tournament's games and time"
    games, time = said.groups()
    comment = QUICK.read_text(encoding="utf-8").splitlines()[0]
    assert f"({games} games, {time} on two cores)" in comment
    assert len(load_config(QUICK).schedule()) == int(games)


def test_readme_names_the_packages_of_the_tests_that_skip_without_them() -> None:
    browser = (REPO / "tests" / "browser.py").read_text(encoding="utf-8")
    packages = re.findall(r'"(chromium(?:-driver)?)"\)', browser)
    assert sorted(packages) == ["chromium", "chromium-driver"]
    assert "apt-get install chromium chromium-driver" in README
    assert "apt-get install pgn-extract" in README
