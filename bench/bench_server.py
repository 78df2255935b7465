"""The match server under load: ``python bench/bench_server.py [--bots 200] [--rounds 5]``.

Connects ``--bots`` remote bots (a process of their own, one in four over WebSocket)
to the server's door on loopback and plays ``--rounds`` rounds in which every bot plays
one Ivy game, every game of a round at once (``--bots / 2`` games), each bot passing
every turn at once (``--turn-limit`` turns a game). It prints games per second, the
bots' turn latency and the time the referee charged per request (percentiles), and this
process's resident memory after each round, which must stay flat (the soak check:
``--rounds 50`` for a long one). See referee/server/loadtest.py for what each figure
measures. Bounded in time: ``--timeout`` seconds (default 300) at most.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout

from referee.server.loadtest import load_test  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=200, help="remote bots (even, default 200)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--turn-limit", type=int, default=20, help="turns a game (default 20)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds at most")
    args = parser.parse_args()
    if args.bots < 2 or args.bots % 2:
        parser.error("--bots must be an even number, at least 2")

    async def run() -> None:
        with tempfile.TemporaryDirectory() as folder, trio.fail_after(args.timeout):
            report = await load_test(
                Path(folder), bots=args.bots, rounds=args.rounds, turn_limit=args.turn_limit
            )
        for line in report.lines():
            print(line)
        if len(report.resident) > 2:
            grown = (report.resident[-1] - report.resident[2]) / 2**20
            print(
                f"soak: {grown:+.2f} MiB from the end of round 2 to the end of round {args.rounds}"
            )

    trio.run(run)


if __name__ == "__main__":
    main()
