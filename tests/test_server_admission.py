"""Fair admission to the handshake (docs/server.md, "Admission"): the rule itself,
sans-I/O, then a bot's hello 100–500 ms after it connects, admitted while ~1,000
connections a second churn from 16 other loopback addresses (a process of their own)."""

from __future__ import annotations

import logging
import random
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from test_server_helpers import HOST, open_lobby

from referee.server.admission import Admission
from referee.server.client import BotClient
from referee.server.lobby import MIN_PENDING_AGE, PENDING_PER_ADDRESS
from referee.server.settings import DEFAULT_MAX_PENDING


def admission(max_pending: int = 4, per_address: int = 3, min_age: float = 1.0) -> Admission:
    return Admission(max_pending=max_pending, per_address=per_address, min_age=min_age)


def test_an_address_at_its_cap_evicts_its_own_oldest_once_it_is_old_enough() -> None:
    door = admission(max_pending=10)
    first = door.enter("a", 0.0).ticket
    door.enter("a", 0.1)
    door.enter("a", 0.2)
    young = door.enter("a", 0.5)
    assert young.ticket is None and young.evicted is None and young.cap == "address"
    old = door.enter("a", 1.0)
    assert old.ticket is not None and old.evicted is first and old.cap == "address"
    assert door.held("a") == 3 and len(door) == 3


def test_the_global_cap_evicts_from_the_address_holding_the_most() -> None:
    door = admission(max_pending=5)
    b_oldest = door.enter("b", 0.0).ticket
    door.enter("a", 0.1)
    a_oldest_of_the_busiest = door.enter("a", 0.2).ticket
    door.enter("a", 0.3)
    door.enter("b", 0.4)
    # a holds 3, b 2: a's oldest goes, though b's is older.
    entry = door.enter("c", 2.0)
    assert entry.cap == "global" and entry.ticket is not None
    assert entry.evicted is not None and entry.evicted.host == "a"
    assert entry.evicted.since == 0.1 and b_oldest is not None
    assert a_oldest_of_the_busiest is not None and door.held("a") == 2
    # a and b now hold 2 each: the tie goes to the one whose oldest is oldest (b).
    entry = door.enter("d", 2.0)
    assert entry.evicted is b_oldest


def test_no_connection_younger_than_the_minimum_age_is_ever_evicted() -> None:
    door = admission(max_pending=3, per_address=3)
    for n in range(3):
        door.enter("a", 0.1 * n)
    turned = door.enter("b", 0.9)  # every one of a's is younger than 1 s
    assert turned.ticket is None and turned.evicted is None and turned.cap == "global"
    let_in = door.enter("b", 1.05)  # a's oldest is now 1.05 s old
    assert let_in.ticket is not None and let_in.evicted is not None
    assert let_in.evicted.since == 0.0


def test_a_newcomer_never_evicts_from_an_address_holding_fewer_than_its_own() -> None:
    door = admission(max_pending=4, per_address=4)
    door.enter("a", 0.0)  # a holds 1, old
    for n in range(3):
        door.enter("b", 1.5 + 0.1 * n)  # b holds 3, all young at 2.0
    entry = door.enter("b", 2.0)  # b would hold 4; a holds 1: a's is not taken
    assert entry.ticket is None
    assert door.enter("c", 2.0).ticket is not None  # c would hold 1, a holds 1: fair


def test_leaving_frees_the_place() -> None:
    door = admission(max_pending=1)
    ticket = door.enter("a", 0.0).ticket
    assert ticket is not None
    door.leave(ticket)
    door.leave(ticket)  # twice is harmless
    assert len(door) == 0 and door.enter("b", 0.0).evicted is None


CHURN = """
import sys, trio

async def hold(address, port, seconds):
    sock = trio.socket.socket()
    try:
        await sock.bind((address, 0))
        await sock.connect(("127.0.0.1", port))
        with trio.move_on_after(seconds):
            while await sock.recv(4096):  # silent, until the server closes it
                pass
    except OSError:
        pass
    finally:
        sock.close()

async def main(port, addresses, most):
    made = 0
    async with trio.open_nursery() as nursery:
        async def stop():
            await trio.wrap_file(sys.stdin).read()  # until the test closes our stdin
            nursery.cancel_scope.cancel()
        nursery.start_soon(stop)
        print("ready", flush=True)
        while made < most:
            address = addresses[made % len(addresses)]
            nursery.start_soon(hold, address, port, 0.5 + (made % 7) * 0.4)
            made += 1
            await trio.sleep(0.001)  # about 1,000 connections a second
    print(made, flush=True)

port, most = int(sys.argv[1]), int(sys.argv[2])
trio.run(main, port, [f"127.0.0.{n}" for n in range(2, 18)], most)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="127.0.0.2-17 are loopback on Linux")
async def test_bots_get_in_while_16_addresses_churn_a_thousand_connections_a_second(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "referee.server")
    bots = [f"bot{n}" for n in range(8)]
    delays = random.Random(18).sample([0.1 + 0.4 * n / 7 for n in range(8)], 8)  # 100-500 ms
    welcomed: dict[str, dict[str, object]] = {}
    async with open_lobby(
        tmp_path,
        bots,
        hello_timeout=5,  # the documented defaults throughout
        max_pending=DEFAULT_MAX_PENDING,
        max_pending_per_address=PENDING_PER_ADDRESS,
        min_pending_age=MIN_PENDING_AGE,
    ) as (lobby, port, tokens):
        churn = await trio.lowlevel.open_process(
            [sys.executable, "-c", CHURN, str(port), "4000"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert churn.stdin is not None and churn.stdout is not None
        try:
            with trio.fail_after(60):
                assert (await churn.stdout.receive_some(64)).startswith(b"ready")
                while lobby.waiting < 16:  # the churn is on
                    await trio.sleep(0.01)

                async def bot(name: str, delay: float) -> None:
                    client = await BotClient.connect(HOST, port)
                    try:
                        await trio.sleep(delay)  # what TLS over a real network may take
                        welcomed[name] = await client.hello(name, tokens[name])
                    finally:
                        await client.aclose()

                async with trio.open_nursery() as nursery:
                    for name, delay in zip(bots, delays, strict=True):
                        nursery.start_soon(bot, name, delay)
                        await trio.sleep(0.15)
                await churn.stdin.aclose()
                made = b""
                while chunk := await churn.stdout.receive_some(64):
                    made += chunk
                assert await churn.wait() == 0
        finally:
            if churn.returncode is None:
                churn.kill()
                await churn.wait()
    assert {name: answer["type"] for name, answer in welcomed.items()} == dict.fromkeys(
        bots, "welcome"
    )
    assert int(made) >= 16 * PENDING_PER_ADDRESS  # the churn filled its addresses' places
    said = [record.getMessage() for record in caplog.records]
    assert any("turned away, the 8 from 127.0.0." in line for line in said), said[:5]
