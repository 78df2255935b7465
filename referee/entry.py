"""The ``referee`` command's entry point.

Loading the command (trio, msgspec, rich, the games) takes a moment; Ctrl-C in that
moment exits with status 130, as it does once the command runs, instead of printing a
traceback.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from referee.cli import main as command
    except KeyboardInterrupt:
        sys.exit(130)
    command()
