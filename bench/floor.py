"""The floor of per-turn overhead: the least a trio + msgspec referee must do per turn.

Two bot processes, one request a turn in alternation: encode a ``turn`` request
(a msgspec struct carrying a fixed view of an Ivy-sized board), write it, read until
the reply's newline, decode the reply. No rules, clock, deadlines or records: what is
left is the event loop, the pipes and the JSON, which any referee in Python pays.
``bench/bench_overhead.py`` compares the referee against it.

Run alone: ``python bench/floor.py BOT_EXECUTABLE [--turns 4000]``.
"""

from __future__ import annotations

import argparse
import subprocess
import time

import msgspec
import trio

# The start of an Ivy game as a view, so that the requests weigh what the referee's do.
VIEW = msgspec.Raw(
    b'{"position":"./.../...../.#...#./........./........./..#...#../........./........./'
    b'....#..../....#..../..g...p.. g 1 2 1","to_move":"green","turn":1,'
    b'"sun":{"green":1,"purple":2},"cells":[{"kind":"vine","cell":"c1","owner":"green",'
    b'"leaf":false,"lit":true},{"kind":"vine","cell":"g1","owner":"purple","leaf":false,'
    b'"lit":true}]}'
)


class Request(msgspec.Struct, tag_field="type", tag="turn"):
    id: int
    turn: int
    view: msgspec.Raw
    remaining_ms: int


class Reply(msgspec.Struct, tag_field="type", tag="turn"):
    id: int
    actions: msgspec.Raw


class _Bot:
    """One bot process and the bytes read from it past the last reply."""

    def __init__(self, process: trio.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout
        self.buffer = bytearray()

    async def reply(self) -> bytes:
        while (end := self.buffer.find(b"\n")) < 0:
            data = await self.stdout.receive_some(65536)
            if not data:
                raise RuntimeError("the bot closed its stdout")
            self.buffer += data
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return line


async def play(executable: str, turns: int) -> None:
    """Play ``turns`` request/reply round trips, alternating between two ``executable``s."""
    encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder(Reply)
    processes = [
        await trio.lowlevel.open_process(
            [executable], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        for _ in range(2)
    ]
    bots = [_Bot(process) for process in processes]
    try:
        for number in range(1, turns + 1):
            bot = bots[number % 2]
            request = Request(id=number, turn=number, view=VIEW, remaining_ms=60000)
            await bot.stdin.send_all(encoder.encode(request) + b"\n")
            reply = decoder.decode(await bot.reply())
            if reply.id != number:
                raise RuntimeError(f"reply {reply.id} to request {number}")
    finally:
        for bot in bots:
            await bot.stdin.aclose()
            await bot.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bot", help="an instant bot's executable (bench/instant_bot.c, compiled)")
    parser.add_argument("--turns", type=int, default=4000)
    args = parser.parse_args()
    wall, cpu = time.perf_counter(), time.process_time()
    trio.run(play, args.bot, args.turns)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"floor: {1e6 * wall / args.turns:.1f} µs/turn wall, {1e6 * cpu / args.turns:.1f} CPU")


if __name__ == "__main__":
    main()
