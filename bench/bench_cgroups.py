"""Control groups and the cpu clock, measured; every figure beside its reference from the
same run.

1. **Fair clocks**: a round-robin of 4 bots that each need 60 ms of CPU a turn (a helper
   process burns it while the bot waits: ``tests/fakebots/clock_bot.py burn 0.06``), at
   ``0.1/turn``, concurrency 4, played with ``--clock wall`` and with ``--clock cpu``:
   printed, the games lost on time by each (want 0 with cpu).
2. **Start cost**: the median time to start and stop a bot (``cat``, unsandboxed) with a
   group of its own and without: printed, the extra cost per start (want ≤ 2 ms).
3. **Turn cost**: the cpu clock reads the group's CPU time at least twice a turn: printed,
   the median cost of two reads, beside one pipe round trip to ``cat`` (want ≤ 10 µs).
4. **Memory**: a bot that allocates 1 GB across 8 processes under a 512 MB limit, and one
   that fills its ``/tmp`` (a 2 GB tmpfs) past it: printed, how many of the runs ended with
   the ``memory`` verdict (want all).

Run: ``python bench/bench_cgroups.py [--games 144] [--turn-limit 10] [--starts 50]
[--runs 5] [--skip-tournament]`` (as root, or with a delegated cgroup v2 subtree).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import trio

from referee import cgroups
from referee.clock import TimeControl
from referee.process import BotCommand, open_bot
from referee.sandbox import Limits, SandboxPolicy, sandbox_problem
from tournaments.config import Entrant, TournamentConfig
from tournaments.runner import run_tournament

REPO = Path(__file__).resolve().parent.parent
CLOCK_BOT = REPO / "tests" / "fakebots" / "clock_bot.py"


@contextlib.contextmanager
def without_groups() -> Iterator[None]:
    """Bots start as on a machine without control groups."""
    saved = cgroups.group_problem
    cgroups.group_problem = lambda: "switched off by the benchmark"  # type: ignore[assignment]
    try:
        yield
    finally:
        cgroups.group_problem = saved  # type: ignore[assignment]


def tournament(clock: str, games: int, turn_limit: int) -> tuple[int, int]:
    """→ (games lost on time, games played) of the round-robin on ``clock``."""
    players = tuple(
        Entrant(
            f"burner{n}",
            BotCommand((sys.executable, "-u", str(CLOCK_BOT), "burn", "0.06", "1")),
        )
        for n in range(4)
    )
    output = Path(tempfile.mkdtemp(prefix=f"bench-cgroups-{clock}-"))
    try:
        config = TournamentConfig(
            players=players,
            output=output,
            tc=TimeControl.parse("0.1/turn", clock),
            options={"turn_limit": turn_limit},
            games=max(1, games // 6),  # per pairing: 4 bots make 6
            concurrency=4,
            sandbox=SandboxPolicy(mode="auto"),
        )
        trio.run(lambda: run_tournament(config))
        pgn = (output / "games.pgn").read_text(encoding="utf-8")
        return pgn.count('[Termination "time forfeit"]'), pgn.count("[Event ")
    finally:
        shutil.rmtree(output, ignore_errors=True)


async def start_stop(n: int) -> float:
    """Median seconds to start and stop an unsandboxed ``cat``."""
    times = []
    for _ in range(n):
        began = time.perf_counter()
        async with open_bot(BotCommand(("cat",)), sandbox=SandboxPolicy(mode="off")):
            pass
        times.append(time.perf_counter() - began)
    return statistics.median(times)


async def turn_costs(n: int) -> tuple[float, float]:
    """(median seconds of two CPU-time reads, median seconds of a round trip to ``cat``)."""
    async with open_bot(BotCommand(("cat",)), sandbox=SandboxPolicy(mode="off")) as bot:
        reads, trips = [], []
        for _ in range(n):
            began = time.perf_counter()
            bot.cpu_time()
            bot.cpu_time()
            reads.append(time.perf_counter() - began)
            began = time.perf_counter()
            await bot.send_all(b"x\n")
            await bot.receive_some()
            trips.append(time.perf_counter() - began)
    return statistics.median(reads), statistics.median(trips)


HOG = """
    import os, time
    for _ in range(7):
        if os.fork() == 0:
            break
    chunk = bytearray(128 << 20)
    for i in range(0, len(chunk), 4096):
        chunk[i] = 1
    time.sleep(30)
"""

FILLER = """
    block = b"x" * (1 << 20)
    with open("/tmp/fill", "wb", buffering=0) as file:
        for _ in range(1024):
            file.write(block)
"""


async def verdict(source: str, mode: str) -> str:
    """The limit the bot's group hit (``-`` for none)."""
    limits = Limits(memory=512 << 20, file_size=2 << 30)
    command = BotCommand((sys.executable, "-c", textwrap.dedent(source)))
    async with open_bot(command, sandbox=SandboxPolicy(mode=mode, limits=limits)) as bot:
        with trio.move_on_after(60):
            await bot.wait()
        breach = bot.limit_breach()
    return "-" if breach is None else breach.limit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=144)
    parser.add_argument("--turn-limit", type=int, default=10)
    parser.add_argument("--starts", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-tournament", action="store_true")
    args = parser.parse_args()
    problem = cgroups.group_problem()
    if problem is not None:
        raise SystemExit(f"no control groups here: {problem}")
    print(f"control groups: v{cgroups.hierarchy().version} at {cgroups.hierarchy().where()}")

    if not args.skip_tournament:
        for clock in ("wall", "cpu"):
            lost, played = tournament(clock, args.games, args.turn_limit)
            print(f"tournament --clock {clock}: {lost} of {played} games lost on time")

    with without_groups():
        bare = trio.run(start_stop, args.starts)
    grouped = trio.run(start_stop, args.starts)
    print(
        f"start+stop of a bot: {bare * 1e3:.2f} ms without a group, {grouped * 1e3:.2f} ms"
        f" with: {(grouped - bare) * 1e3:+.2f} ms a start (want <= 2 ms)"
    )
    reads, trip = trio.run(turn_costs, 2000)
    print(
        f"cpu clock per turn: {reads * 1e6:.1f} µs for two reads of the group's CPU time,"
        f" beside {trip * 1e6:.1f} µs a pipe round trip (want <= 10 µs)"
    )

    mode = "on" if sandbox_problem() is None else "off"
    hogs = [trio.run(verdict, HOG, mode) for _ in range(args.runs)]
    print(f"1 GB in 8 processes under 512M: memory verdict {hogs.count('memory')}/{len(hogs)}")
    if mode == "on":
        fills = [trio.run(verdict, FILLER, mode) for _ in range(args.runs)]
        print(f"1 GB into /tmp under 512M: memory verdict {fills.count('memory')}/{len(fills)}")


if __name__ == "__main__":
    main()
