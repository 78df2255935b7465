"""The match server under load, on loopback and bounded in time: many remote bots (in a
process of their own) playing at once, and memory that stays flat over many games."""

from __future__ import annotations

from pathlib import Path

import trio

from referee.server.loadtest import load_test, percentiles


async def test_two_hundred_remote_bots_play_at_once(tmp_path: Path) -> None:
    with trio.fail_after(120):  # a hang guard only
        report = await load_test(tmp_path, bots=200, rounds=2, turn_limit=10)
    assert report.games == 200 and report.endings == {"normal": 200}
    assert report.turn_latency and sum(report.charged_ms.values()) == 200 * 10
    assert all(line.isprintable() for line in report.lines())


async def test_memory_stays_flat_over_many_games(tmp_path: Path) -> None:
    with trio.fail_after(60):
        report = await load_test(tmp_path, bots=20, rounds=40, turn_limit=4)
    assert report.games == 400 and report.endings == {"normal": 400}
    # After a few rounds (caches warm), 360 more games add less than 2 MiB.
    assert report.resident[-1] - report.resident[4] < 2 << 20, report.lines()


def test_percentiles_by_nearest_rank() -> None:
    assert percentiles([]) == {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    assert percentiles([7.0]) == {"p50": 7.0, "p90": 7.0, "p99": 7.0, "max": 7.0}
    values = [float(n) for n in range(100, 0, -1)]
    assert percentiles(values) == {"p50": 50.0, "p90": 90.0, "p99": 99.0, "max": 100.0}
