"""The replay viewer: a game record as one self-contained HTML page.

- :mod:`~referee.viewer.document` — a record replayed through its rules, as the JSON
  data a page embeds (one frame per state);
- :mod:`~referee.viewer.views` — how each game's table is drawn (Ivy's house in
  :mod:`~referee.viewer.ivy`; any other game as its notation);
- :mod:`~referee.viewer.page` — the HTML pages, their safety policy, atomic writes.

The pages' style sheets, scripts and templates are the package data files of
``assets/``.
"""

from referee.viewer.document import game_document
from referee.viewer.page import embed_json, game_page, static_page, write_atomically

__all__ = ["embed_json", "game_document", "game_page", "static_page", "write_atomically"]
