"""How each game's table is shown in the viewer: one :class:`BoardView` per game.

The page is generic (controls, decisions, clocks, result); what differs between
games is how one state is drawn and what one decision changed. A board view says
that twice over: in Python, :meth:`BoardView.state` and :meth:`BoardView.changes`
turn the rules' own states into plain JSON data, and in the page, the script named
by :attr:`BoardView.script` (a file of ``assets/``) draws that data. The rules are
never run in the browser, so the page shows exactly the states ``referee replay``
computes.

A game without a view of its own gets :data:`NOTATION_VIEW`: each state's one-line
notation (``Game.notation``) and the decision that led to it. Adding a view is one
module here (with its script, and its style sheet ``assets/<name>.css`` when it needs
one) and one line in :data:`_VIEWS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from referee.games import Game

Json = dict[str, Any]
"""A JSON object as the viewer embeds it (keys and values JSON can hold)."""


class BoardView(Protocol):
    """What the viewer needs from one game to draw its table."""

    @property
    def script(self) -> str:
        """The name of the board-drawing script in ``referee/viewer/assets/``; it registers
        itself under the same name, without ``.js`` (see ``assets/viewer.js``)."""
        ...

    def layout(self, game: Game[Any, Any], first: Any) -> Json:
        """What never changes during the game (the board's geometry, the seats' colours)."""
        ...

    def state(self, game: Game[Any, Any], state: Any) -> Json:
        """Everything a spectator may see of ``state``, as JSON data."""
        ...

    def changes(
        self, game: Game[Any, Any], before: Any, actor: int, decision: Any, after: Any
    ) -> Json:
        """What ``actor``'s ``decision`` did, from ``before`` to ``after``, for highlighting."""
        ...

    def sentence(self, game: Game[Any, Any], before: Any, actor: int, decision: Any) -> str | None:
        """``actor``'s ``decision``, made in ``before``, as a clause without its subject
        (the page puts the seat's name in front and keeps the notation beside it), or
        ``None`` when the notation is the clearest way to say it."""
        ...


@dataclass(frozen=True, slots=True)
class NotationView:
    """The view of any game: the state's one-line notation, nothing drawn."""

    script: str = "notation.js"

    def layout(self, game: Game[Any, Any], first: Any) -> Json:
        """Nothing: the notation says it all."""
        return {}

    def state(self, game: Game[Any, Any], state: Any) -> Json:
        """The state's notation (``Game.notation``)."""
        return {"notation": game.notation(state)}

    def changes(
        self, game: Game[Any, Any], before: Any, actor: int, decision: Any, after: Any
    ) -> Json:
        """Nothing beyond the decision itself, which the page shows anyway."""
        return {}

    def sentence(self, game: Game[Any, Any], before: Any, actor: int, decision: Any) -> str | None:
        """None: the notation is all this view knows of a decision."""
        return None


NOTATION_VIEW = NotationView()
"""The fallback view of a game that has none of its own."""

_VIEWS: Mapping[str, str] = {
    "ivy": "referee.viewer.ivy",
    "verdant": "referee.viewer.verdant",
}
"""Each game with a view of its own, and the module whose ``VIEW`` it is."""


def view_for(game: Game[Any, Any]) -> BoardView:
    """The board view of ``game``: its own, or :data:`NOTATION_VIEW`."""
    module = _VIEWS.get(game.name)
    if module is None:
        return NOTATION_VIEW
    view: BoardView = importlib.import_module(module).VIEW
    return view
