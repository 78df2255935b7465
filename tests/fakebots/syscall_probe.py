"""Makes raw system calls and reports how each ended: ``python syscall_probe.py JSON``.

JSON is a list of ``[label, number, [arg, ...]]``; an argument is a number, a string
(passed as a pointer to its bytes) or ``"$pid"`` (this process's id). Prints one JSON
object, label → ``"ok"`` or the errno's name (``"EPERM"``, ``"ENOSYS"``…).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import sys


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    outcome = {}
    for label, number, args in json.loads(sys.argv[1]):
        values = []
        for arg in args:
            if arg == "$pid":
                values.append(ctypes.c_long(os.getpid()))
            elif isinstance(arg, str):
                values.append(ctypes.c_char_p(arg.encode()))
            else:
                values.append(ctypes.c_long(arg))
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(number), *values)
        code = ctypes.get_errno()
        outcome[label] = "ok" if result >= 0 else errno.errorcode.get(code, str(code))
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
