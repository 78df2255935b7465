"""Self-contained HTML pages: one file, no network, nothing from a record run as markup.

A page is a template of ``assets/`` with its style sheet and script written into it,
so it opens offline from a file. A replay page embeds its game as JSON in a
``<script type="application/json">`` element (:func:`embed_json` escapes ``<``,
``>`` and ``&``, so no text of the record can close that element or open a
comment), and its script puts every text into the page with ``textContent``.
A Content Security Policy in the page itself allows exactly its own style sheet and
script (by their SHA-256) and nothing else: no other script, no request to any
server, even if some text ever got through as markup. A live page (served by
:mod:`referee.server.spectate`) may also connect to the server it came from.
"""

from __future__ import annotations

import base64
import contextlib
import functools
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
from referee.viewer.views import NOTATION_VIEW, Json

_PLACEHOLDER = re.compile(r"@@([A-Z]+)@@")

_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
"""Characters JSON may hold that must not reach the HTML parser as themselves."""


@functools.cache  # read once: a tournament writes a page for every game
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
    for character, escape in _JSON_ESCAPES:  # five replaces: many times faster than translate
        text = text.replace(character, escape)
    return text


def _digest(text: str) -> str:
    """A CSP source expression for an inline element holding exactly ``text``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_policy(*, style: str, script: str | None = None, connect: bool = False) -> str:
    """The page's Content Security Policy: its one style sheet and script, nothing else.

    With ``connect``, its script may also make requests to the server the page came
    from (a live page's event stream, :mod:`referee.server.spectate`), and nowhere else.
    """
    scripts = "'none'" if script is None else _digest(script)
    requests = " connect-src 'self';" if connect else ""
    return (
        f"default-src 'none'; style-src {_digest(style)}; script-src {scripts};{requests}"
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
    return document_page(game_document(record, links=links))


def document_page(document: Json, *, live: bool = False) -> str:
    """The viewer page of a :func:`~referee.viewer.document.game_document`.

    With ``live``, the page also runs ``assets/live.js``: it follows the game in
    progress on the event stream named by the document's ``live`` entry (see
    :mod:`referee.server.spectate`), and may connect to the server it came from.
    """
    script, style, policy = _viewer_parts(document["view"], live)
    players = " vs ".join(seat["player"] for seat in document["seats"])
    title = f"{players} — {dict(document['tags']).get('Game', document['game'])} replay"
    return fill(
        asset("game.html"),
        {
            "CSP": policy,
            "TITLE": html.escape(title),
            "STYLE": style,
            "SCRIPT": script,
            "DATA": embed_json(document),
        },
    )


@functools.cache  # the same for every page of a board view
def _viewer_parts(view: str, live: bool) -> tuple[str, str, str]:
    """The script, style sheet and content policy of the viewer page of ``view``."""
    views = [NOTATION_VIEW.script]
    if view + ".js" not in views:
        views.append(view + ".js")
    script = "\n".join(
        [
            "(function () {",
            '"use strict";',
            "const VIEWS = {};",
            *(asset(name) for name in views),
            asset("viewer.js"),
            *([asset("live.js")] if live else []),
            "})();",
        ]
    )
    style = asset("common.css") + asset("viewer.css") + _view_style(view)
    if live:
        style += asset("live.css")
    return script, style, content_policy(style=style, script=script, connect=live)


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


def live_index_page(*, title: str) -> str:
    """The live index of a tournament served by ``referee serve``: the games in progress,
    followed on the server's event stream, above the tournament's ``index.html``, fetched
    again whenever the standings change (``assets/live-site.js``)."""
    style = asset("common.css") + asset("site.css") + asset("live.css")
    script = asset("live-site.js")
    return fill(
        asset("live-site.html"),
        {
            "CSP": content_policy(style=style, script=script, connect=True),
            "TITLE": html.escape(title),
            "STYLE": style,
            "SCRIPT": script,
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
