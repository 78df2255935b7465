"""Self-contained HTML pages: one file, no network, nothing from a record run as markup.

A page is a template of ``assets/`` with its style sheet and script written into it,
so it opens offline from a file. A replay page embeds its game as JSON in a
``<script type="application/json">`` element (:func:`embed_json` escapes ``<``,
``>`` and ``&``, so no text of the record can close that element or open a
comment), and its script puts every text into the page with ``textContent``.
A Content Security Policy in the page itself allows exactly its own style sheet and
script (by their SHA-256) and nothing else: no other script, no request to any
server, even if some text ever got through as markup.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import os
import re
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from referee.pgn import GameRecord
from referee.viewer.document import game_document
from referee.viewer.views import NOTATION_VIEW

_PLACEHOLDER = re.compile(r"@@([A-Z]+)@@")

_JSON_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)
"""Characters JSON may hold that must not reach the HTML parser as themselves."""


def asset(name: str) -> str:
    """The text of the file ``name`` of ``referee/viewer/assets/``."""
    return resources.files("referee.viewer").joinpath("assets", name).read_text(encoding="utf-8")


def embed_json(value: Any) -> str:
    """``value`` as JSON that can sit inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` (and the two line separators JavaScript once refused) are
    written as ``\\u`` escapes: ``JSON.parse`` gives the same value back, and the HTML
    parser never sees ``</script>`` or ``<!--`` in it.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_JSON_ESCAPES)


def _digest(text: str) -> str:
    """A CSP source expression for an inline element holding exactly ``text``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_policy(*, style: str, script: str | None = None) -> str:
    """The page's Content Security Policy: its one style sheet and script, nothing else."""
    scripts = "'none'" if script is None else _digest(script)
    return (
        f"default-src 'none'; style-src {_digest(style)}; script-src {scripts};"
        " img-src data:; base-uri 'none'; form-action 'none'"
    )


def fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``@@NAME@@`` replaced by ``values[NAME]`` in one pass, so a
    value is never searched for placeholders itself."""
    for name, value in values.items():
        closing = "</" + name.lower()
        if name in ("STYLE", "SCRIPT") and closing in value.lower():
            raise ValueError(f"the page's {name.lower()} must not hold {closing!r}")
    return _PLACEHOLDER.sub(lambda match: values[match[1]], template)


def game_page(record: GameRecord, *, links: Sequence[tuple[str, str]] = ()) -> str:
    """The replay page of ``record``, one self-contained HTML document.

    ``links`` are ``(text, relative URL)`` pairs shown above the game. Raises
    :class:`~referee.errors.RecordError` when the record cannot be set up.
    """
    document = game_document(record, links=links)
    views = [NOTATION_VIEW.script]
    if document["view"] + ".js" not in views:
        views.append(document["view"] + ".js")
    script = "\n".join(
        [
            "(function () {",
            '"use strict";',
            "const VIEWS = {};",
            *(asset(name) for name in views),
            asset("viewer.js"),
            "})();",
        ]
    )
    style = asset("common.css") + asset("viewer.css") + _view_style(document["view"])
    players = " vs ".join(seat["player"] for seat in document["seats"])
    title = f"{players} — {record.tags.get('Game', document['game'])} replay"
    return fill(
        asset("game.html"),
        {
            "CSP": content_policy(style=style, script=script),
            "TITLE": html.escape(title),
            "STYLE": style,
            "SCRIPT": script,
            "DATA": embed_json(document),
        },
    )


def _view_style(view: str) -> str:
    """The style sheet of a board view: ``assets/<view>.css``, when it has one."""
    sheet = resources.files("referee.viewer").joinpath("assets", f"{view}.css")
    return sheet.read_text(encoding="utf-8") if sheet.is_file() else ""


def static_page(*, title: str, body: str, refresh: int | None = None) -> str:
    """A page without script: ``body`` (markup made by the caller, every text in it
    escaped) under an ``<h1>`` of ``title``, with the site's style sheet. With
    ``refresh``, the page reloads itself every that many seconds."""
    style = asset("common.css") + asset("site.css")
    reload = "" if refresh is None else f'<meta http-equiv="refresh" content="{int(refresh)}">\n'
    return fill(
        asset("site.html"),
        {
            "CSP": content_policy(style=style),
            "TITLE": html.escape(title),
            "STYLE": style,
            "REFRESH": reload,
            "BODY": body,
        },
    )


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Replace the file at ``path`` with ``text``: a reader sees the old file or the new one.

    The folder is created when missing. The text goes to a temporary file beside
    ``path`` first, which is renamed over it.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.chmod(partial, 0o644)
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
