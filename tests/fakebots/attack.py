"""A hostile fake bot: ``python -u attack.py MODE [ARG...]``.

It makes one attack at its first turn (before it answers it), reports what the attack
achieved (and its user id) as one line ``attack: {json}`` on stderr, then plays like
``pass_bot.py``. The tests read the report and check that the referee, the opponent and
the record came out unharmed. Modes (ARG in brackets):

- ``kill_opponent [MARK]``: ``SIGKILL`` every process whose environment holds
  ``VICTIM_MARK=MARK``, found through /proc; ``stop_opponent [MARK]``: ``SIGSTOP`` them;
- ``hijack_pipes [MARK]``: write a forged turn into those processes' stdout, through
  ``/proc/PID/fd/1``, and try to read their stdin;
- ``kill_parent``: ``SIGTERM`` then ``SIGKILL`` its parent (the referee, when it is not
  sandboxed);
- ``forge_pgn [PGN]``: read the referee's command line (through its parent), then append
  a forged game to PGN (given, as a bot that guessed it would);
- ``orphan``: leaves a double-forked child in a session of its own that sleeps on, holding
  nothing the referee gave it (it closes every descriptor);
- ``burn [N]``: starts N CPU burners, each in a session of its own, which first try to
  move themselves to every CPU of the machine (as a bot whose burners would slow its
  opponent does); reports the CPUs it and each burner may run on (``burn 0``: only its
  own), and how each attempt to move ended;
- ``userns``: tries to make a user namespace of its own (where it would be root, free to
  mount a tmpfs of any size): ``unshare -Ur`` and ``unshare(CLONE_NEWUSER)``;
- ``fork_bomb``: forks until it cannot; the children sleep;
- ``memory_hog``: allocates memory until it cannot;
- ``huge_file``: writes /tmp/huge and ./huge until it cannot;
- ``environment``: reports its environment as it was given (``/proc/self/environ``);
- ``network [PORT]``: connects to 127.0.0.1:PORT and sends a line;
- ``write [PATH...]``: tries to create each PATH (relative paths in its directory) and
  reports the outcome;
- ``read [PATH...]``: tries to read each PATH;
- ``leave [MARK]``: leaves what another bot could find in the kernel or the file system,
  named after MARK — a kernel key, System V shared memory, a message queue and a
  semaphore set, a POSIX message queue, an abstract unix socket (held by a double-forked
  child in a session of its own, and by itself while it plays), files in ``/tmp``,
  ``/var/tmp``, ``/dev/shm``, its directory and ``HOME`` — and reports how each attempt
  ended and what of it it then sees itself (the check ``seek`` makes);
- ``seek [MARK]``: looks for what ``leave`` leaves, and reports what it finds.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from pass_bot import requests, send

SLEEP_SECONDS = 600
FORGED_GAME = (
    '[Event "Forged"]\n[Site "?"]\n[Date "2024.01.01"]\n[Round "1"]\n'
    '[White "attacker"]\n[Black "victim"]\n[Result "1-0"]\n[Game "ivy"]\n\n1-0\n\n'
)

Report = dict[str, Any]


def report(**fields: Any) -> None:
    sys.stderr.write("attack: " + json.dumps(fields, sort_keys=True) + "\n")
    sys.stderr.flush()


def others() -> Iterator[int]:
    """The pids this process can see in /proc, except its own."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            yield int(entry)


def marked(mark: str) -> list[int]:
    """Processes whose environment holds ``VICTIM_MARK=mark`` (when readable)."""
    wanted = f"VICTIM_MARK={mark}".encode()
    found = []
    for pid in others():
        try:
            with open(f"/proc/{pid}/environ", "rb") as file:
                if wanted in file.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    return found


def signal_all(pids: list[int], signum: int) -> Report:
    outcome: Report = {"seen": len(pids), "signalled": 0, "errors": []}
    for pid in pids:
        try:
            os.kill(pid, signum)
            outcome["signalled"] += 1
        except OSError as error:
            outcome["errors"].append(error.strerror)
    return outcome


def kill_opponent(mark: str) -> Report:
    return signal_all(marked(mark), signal.SIGKILL)


def stop_opponent(mark: str) -> Report:
    return signal_all(marked(mark), signal.SIGSTOP)


def hijack_pipes(mark: str) -> Report:
    outcome: Report = {"seen": 0, "written": 0, "read": 0, "errors": []}
    forged = json.dumps({"type": "turn", "id": 2, "actions": [{"type": "pass"}]}) + "\n"
    for pid in marked(mark):
        outcome["seen"] += 1
        try:
            with open(f"/proc/{pid}/fd/1", "w") as out:
                out.write(forged * 50)
            outcome["written"] += 1
        except OSError as error:
            outcome["errors"].append(error.strerror)
        try:
            fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
            try:
                os.read(fd, 4096)
                outcome["read"] += 1
            finally:
                os.close(fd)
        except OSError as error:
            outcome["errors"].append(error.strerror)
    return outcome


def kill_parent() -> Report:
    parent = os.getppid()
    terminated = signal_all([parent], signal.SIGTERM)
    killed = signal_all([parent], signal.SIGKILL)
    return {"parent": parent, "signalled": terminated["signalled"] + killed["signalled"]}


def forge_pgn(pgn: str) -> Report:
    outcome: Report = {"parent_cmdline": None, "appended": False, "error": None}
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as file:
            outcome["parent_cmdline"] = file.read().replace(b"\0", b" ").decode()
    except OSError as error:
        outcome["cmdline_error"] = error.strerror
    try:
        with open(pgn, "a") as file:
            file.write(FORGED_GAME)
        outcome["appended"] = True
    except OSError as error:
        outcome["error"] = error.strerror
    return outcome


def orphan() -> Report:
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write, str(os.getpid()).encode())
            os.closerange(0, 1 << 16)
            time.sleep(SLEEP_SECONDS)
        os._exit(0)
    os.waitpid(child, 0)
    os.close(write)
    grandchild = int(os.read(read, 64) or b"0")
    os.close(read)
    return {"orphan": grandchild}


def burn(count: str) -> Report:
    allowed: Report = {"moved": [spread()], "main": allowed_cpus()}
    read, write = os.pipe()
    for _ in range(int(count)):
        if os.fork() == 0:
            os.setsid()
            moved = spread()
            os.write(write, (json.dumps([moved, allowed_cpus()]) + "\n").encode())
            while True:
                pass
    os.close(write)
    lines = b""
    with os.fdopen(read, "rb") as pipe:
        for _ in range(int(count)):
            lines += pipe.readline()
    reports = [json.loads(line) for line in lines.splitlines()]
    allowed["moved"] += [moved for moved, _ in reports]
    allowed["burners"] = [cpus for _, cpus in reports]
    return allowed


def spread() -> str:
    """Try to run on every CPU of the machine; how that ended."""
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
        return "moved"
    except OSError as error:
        return error.strerror or str(error)


def userns() -> Report:
    import ctypes
    import subprocess

    outcome: Report = {}
    done = subprocess.run(["unshare", "-Ur", "true"], capture_output=True, check=False)
    outcome["unshare_tool"] = done.returncode
    libc = ctypes.CDLL(None, use_errno=True)
    clone_newuser = 0x10000000
    if libc.unshare(clone_newuser) == 0:
        outcome["unshare_call"] = "made"
    else:
        outcome["unshare_call"] = os.strerror(ctypes.get_errno())
    return outcome


def allowed_cpus() -> str:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return "?"


def fork_bomb() -> Report:
    forked = 0
    error = None
    while forked < 100_000:
        try:
            child = os.fork()
        except OSError as failure:
            error = failure.strerror
            break
        if child == 0:
            time.sleep(SLEEP_SECONDS)
            os._exit(0)
        forked += 1
    return {"forked": forked, "error": error}


def memory_hog() -> Report:
    chunks = []
    step = 16 << 20
    try:
        while len(chunks) * step < 64 << 30:
            chunks.append(bytearray(step))
    except MemoryError:
        pass
    return {"allocated": len(chunks) * step}


def huge_file() -> Report:
    outcome: Report = {}
    block = b"x" * (1 << 20)
    for path in ("/tmp/huge", "huge"):
        written = 0
        error = None
        try:
            with open(path, "wb", buffering=0) as file:
                while written < 8 << 30:
                    written += file.write(block)
        except OSError as failure:
            error = failure.strerror
        outcome[path] = {"written": written, "error": error}
    return outcome


def environment() -> Report:
    with open("/proc/self/environ", "rb") as file:
        pairs = [item.decode() for item in file.read().split(b"\0") if item]
    return {"environ": dict(pair.split("=", 1) for pair in pairs)}


def network(port: str) -> Report:
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as connection:
            connection.sendall(b"attack\n")
        return {"connected": True}
    except OSError as error:
        return {"connected": False, "error": error.strerror or str(error)}


def write(*paths: str) -> Report:
    outcome: Report = {}
    for path in paths:
        try:
            with open(path, "w") as file:
                file.write("attack\n")
            outcome[path] = "written"
        except OSError as error:
            outcome[path] = error.strerror
    return outcome


def read(*paths: str) -> Report:
    outcome: Report = {}
    for path in paths:
        try:
            with open(path, "rb") as file:
                outcome[path] = len(file.read())
        except OSError as error:
            outcome[path] = error.strerror
    return outcome


KEY_SPEC_USER_KEYRING = -4
IPC_CREAT = 0o1000


def traces(mark: str) -> dict[str, Any]:
    """The names ``leave`` and ``seek`` use for MARK."""
    home = os.environ.get("HOME", "/tmp")
    return {
        "ipc_key": int(mark[:7], 16),
        "mqueue": f"/referee-{mark[:16]}".encode(),
        "abstract": f"\0referee-{mark}",
        "files": [f"/tmp/{mark}", f"/var/tmp/{mark}", f"/dev/shm/{mark}", mark, f"{home}/.{mark}"],
        "locked": sys.executable,  # a host file every sandbox sees (read-only)
    }


def leave(mark: str) -> Report:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    names = traces(mark)
    key = names["ipc_key"]

    def outcome(result: int) -> str:
        return "made" if result >= 0 else os.strerror(ctypes.get_errno())

    made: Report = {}
    payload = mark.encode()
    add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]  # libc has no wrapper
    made["key"] = outcome(
        libc.syscall(
            add_key,
            b"user",
            f"referee-{mark}".encode(),
            payload,
            len(payload),
            KEY_SPEC_USER_KEYRING,
        )
    )
    made["shm"] = outcome(libc.shmget(key, 4096, IPC_CREAT | 0o666))
    made["msg"] = outcome(libc.msgget(key, IPC_CREAT | 0o666))
    made["sem"] = outcome(libc.semget(key, 1, IPC_CREAT | 0o666))
    made["mqueue"] = outcome(libc.mq_open(names["mqueue"], os.O_CREAT | os.O_RDWR, 0o666, None))
    for path in names["files"]:
        try:
            with open(path, "w") as file:
                file.write(mark)
            made[path] = "made"
        except OSError as error:
            made[path] = error.strerror
    global LOCKED
    LOCKED = open(names["locked"], "rb")  # noqa: SIM115 (kept open, and locked if it could be)
    try:
        fcntl.flock(LOCKED, fcntl.LOCK_EX | fcntl.LOCK_NB)
        made["flock"] = "made"
    except OSError as error:
        made["flock"] = error.strerror
    try:
        fcntl.fcntl(LOCKED, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))
        made["fcntl lock"] = "made"
    except OSError as error:
        made["fcntl lock"] = error.strerror
    holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    holder.bind(names["abstract"])
    holder.listen(8)
    made["abstract"] = "made"
    global HELD
    HELD = holder  # kept open while this bot plays
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # Holds the socket on, in a session of its own, after its parent is gone.
            time.sleep(SLEEP_SECONDS)
        os._exit(0)
    return {"made": made, "seen": look(mark)}


HELD: socket.socket | None = None
LOCKED: BinaryIO | None = None


def held_lock(path: str) -> bool:
    """Whether another process holds a lock on ``path`` (as far as this one can tell)."""
    with open(path, "rb") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            pass  # no locks here at all
        try:
            wanted = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0)
            found = fcntl.fcntl(file, fcntl.F_GETLK, wanted)
        except OSError:
            return False
        return struct.unpack("hhqqi", found)[0] != fcntl.F_UNLCK


def look(mark: str) -> Report:
    """What of ``leave``'s traces for MARK this process finds."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    names = traces(mark)
    key = names["ipc_key"]
    found: Report = {}
    try:
        with open("/proc/keys") as keys:
            found["key"] = mark in keys.read()
    except OSError:
        found["key"] = False
    found["shm"] = libc.shmget(key, 0, 0) >= 0
    found["msg"] = libc.msgget(key, 0) >= 0
    found["sem"] = libc.semget(key, 0, 0) >= 0
    found["mqueue"] = libc.mq_open(names["mqueue"], os.O_RDONLY, 0, None) >= 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(names["abstract"])
            found["abstract"] = True
        except OSError:
            found["abstract"] = False
    for path in names["files"]:
        found[path] = os.path.exists(path)
    found["lock"] = held_lock(names["locked"])
    return found


def seek(mark: str) -> Report:
    return {"seen": look(mark)}


ATTACKS: dict[str, Callable[..., Report]] = {
    "kill_opponent": kill_opponent,
    "stop_opponent": stop_opponent,
    "hijack_pipes": hijack_pipes,
    "kill_parent": kill_parent,
    "forge_pgn": forge_pgn,
    "orphan": orphan,
    "burn": burn,
    "userns": userns,
    "fork_bomb": fork_bomb,
    "memory_hog": memory_hog,
    "huge_file": huge_file,
    "environment": environment,
    "network": network,
    "write": write,
    "read": read,
    "leave": leave,
    "seek": seek,
}


def main() -> None:
    mode, *args = sys.argv[1:]
    attack = ATTACKS[mode]
    attacked = False
    for message in requests():
        if message.get("type") == "new_game":
            send({"type": "ready", "id": message["id"], "name": "attack"})
        elif message.get("type") == "turn":
            if not attacked:
                attacked = True
                report(mode=mode, uid=os.getuid(), **attack(*args))
            send({"type": "turn", "id": message["id"], "actions": []})


if __name__ == "__main__":
    main()
