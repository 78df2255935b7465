"""Who may wait in the server's handshake, sans-I/O: the per-address cap, the global cap,
and whom a newcomer evicts when one is reached.

A connection is *pending* from its opening until its ``hello`` is judged. The rule, at
each new connection from an address ``A``:

1. If ``A`` already holds :attr:`Admission.per_address` pending connections, the oldest
   of them is evicted if it is at least :attr:`Admission.min_age` seconds old; if it is
   younger, the newcomer is turned away instead.
2. Otherwise, if :attr:`Admission.max_pending` connections are pending, one is evicted:
   the oldest of those at least ``min_age`` old from the address holding the most
   pending connections (``A`` counted with the newcomer; on a tie, the address whose
   oldest is oldest), provided that address holds at least as many as ``A`` would. If
   there is none, the newcomer is turned away.
3. The newcomer is then pending.

So no connection is ever evicted in its first ``min_age`` seconds, and one address
cannot take more than ``per_address`` of the ``max_pending`` places: clients flooding
from fewer than ``max_pending / per_address`` addresses always leave room for others.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False)
class Ticket:
    """One pending connection: its address, when it opened, and (once evicted) why."""

    host: str
    since: float
    evicted_by: str = ""


@dataclass(frozen=True, slots=True)
class Entry:
    """What a new connection met: its ticket (``None``: turned away), the ticket it
    evicted (if any), and which cap said so (``""`` when no cap was reached)."""

    ticket: Ticket | None
    evicted: Ticket | None
    cap: str


class Admission:
    """The pending connections, by address, oldest first."""

    def __init__(self, *, max_pending: int, per_address: int, min_age: float) -> None:
        self.max_pending = max_pending
        self.per_address = per_address
        self.min_age = min_age
        self._by_host: dict[str, dict[Ticket, None]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def held(self, host: str) -> int:
        """How many pending connections ``host`` holds."""
        return len(self._by_host.get(host, ()))

    def enter(self, host: str, now: float) -> Entry:
        """A new connection from ``host`` at ``now``: let in (evicting one first if a cap
        is reached) or turned away. The evicted ticket is no longer pending."""
        mine = self._by_host.get(host, {})
        evicted: Ticket | None = None
        cap = ""
        if len(mine) >= self.per_address:
            cap = "address"
            oldest = next(iter(mine))
            if now - oldest.since < self.min_age:
                return Entry(None, None, cap)
            evicted = oldest
        elif self._count >= self.max_pending:
            cap = "global"
            evicted = self._victim(host, len(mine) + 1, now)
            if evicted is None:
                return Entry(None, None, cap)
        if evicted is not None:
            self.leave(evicted)
        ticket = Ticket(host, now)
        self._by_host.setdefault(host, {})[ticket] = None
        self._count += 1
        return Entry(ticket, evicted, cap)

    def _victim(self, host: str, would_hold: int, now: float) -> Ticket | None:
        """The oldest connection old enough to evict from the address holding the most
        (at least ``would_hold``, what ``host`` would hold with the newcomer)."""
        best: tuple[int, float] | None = None
        victim: Ticket | None = None
        for other, tickets in self._by_host.items():
            held = len(tickets) + (other == host)
            oldest = next(iter(tickets))
            if held < would_hold or now - oldest.since < self.min_age:
                continue
            rank = (held, -oldest.since)
            if best is None or rank > best:
                best, victim = rank, oldest
        return victim

    def leave(self, ticket: Ticket) -> None:
        """``ticket`` is no longer pending (its handshake ended, or it was evicted)."""
        mine = self._by_host.get(ticket.host)
        if mine is None or ticket not in mine:
            return
        del mine[ticket]
        self._count -= 1
        if not mine:
            del self._by_host[ticket.host]
