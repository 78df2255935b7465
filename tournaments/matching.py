"""Perfect matchings in general graphs: Edmonds' blossom algorithm.

Swiss pairing asks, over and over, "can these players still all be paired
without a rematch?" — whether a graph (players, and an edge between two who may
meet) has a perfect matching. The graph is not bipartite, so augmenting paths
must pass odd cycles (blossoms); Edmonds' algorithm shrinks each blossom to its
base while searching, which keeps the search polynomial (O(V³) here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

Vertex = TypeVar("Vertex")


def perfect_matching(
    vertices: Sequence[Vertex], allowed: Callable[[Vertex, Vertex], bool]
) -> dict[Vertex, Vertex] | None:
    """A perfect matching of ``vertices`` using only pairs that ``allowed`` accepts
    (both ways: each vertex maps to its partner), or ``None`` when there is none.

    ``allowed`` must be symmetric. Deterministic: the same arguments give the same
    matching.
    """
    size = len(vertices)
    if size % 2:
        return None
    neighbours: list[list[int]] = [[] for _ in range(size)]
    for i in range(size):
        for j in range(i + 1, size):
            if allowed(vertices[i], vertices[j]):
                neighbours[i].append(j)
                neighbours[j].append(i)
    mate = [-1] * size
    for v in range(size):  # a greedy start leaves few vertices to augment from
        if mate[v] < 0:
            for u in neighbours[v]:
                if mate[u] < 0:
                    mate[v], mate[u] = u, v
                    break
    for root in range(size):
        # A vertex that no augmenting path reaches now stays unmatched in every maximum
        # matching (Berge), so one failure settles it.
        if mate[root] < 0 and not _augment(root, neighbours, mate):
            return None
    return {vertices[v]: vertices[mate[v]] for v in range(size)}


def _augment(root: int, neighbours: list[list[int]], mate: list[int]) -> bool:
    """Grow an alternating tree from the free vertex ``root``; when it reaches another free
    vertex, flip the path's edges (the matching grows by one) and say so."""
    size = len(mate)
    base = list(range(size))  # each vertex's blossom base (itself outside blossoms)
    parent = [-1] * size  # the tree edge into an odd (outer-matched) vertex
    outer = [False] * size  # even vertices: the root and the mates of odd ones
    outer[root] = True
    queue = [root]

    def common_base(a: int, b: int) -> int:
        """The base of the blossom closed by the edge ``a``–``b``: where their paths to the
        root meet."""
        on_path = [False] * size
        while True:
            a = base[a]
            on_path[a] = True
            if mate[a] < 0:
                break
            a = parent[mate[a]]
        while True:
            b = base[b]
            if on_path[b]:
                return b
            b = parent[mate[b]]

    def mark(v: int, stop: int, child: int, in_blossom: list[bool]) -> None:
        """Mark the blossom's vertices from ``v`` down to the base ``stop``, pointing the odd
        ones' parents across the closing edge so that paths through the blossom exist."""
        while base[v] != stop:
            in_blossom[base[v]] = in_blossom[base[mate[v]]] = True
            parent[v] = child
            child = mate[v]
            v = parent[mate[v]]

    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        for u in neighbours[v]:
            if base[v] == base[u] or mate[v] == u:
                continue
            if u == root or (mate[u] >= 0 and parent[mate[u]] >= 0):
                # u is even too: the edge closes an odd cycle; shrink it.
                stop = common_base(v, u)
                in_blossom = [False] * size
                mark(v, stop, u, in_blossom)
                mark(u, stop, v, in_blossom)
                for w in range(size):
                    if in_blossom[base[w]]:
                        base[w] = stop
                        if not outer[w]:
                            outer[w] = True
                            queue.append(w)
            elif parent[u] < 0:
                parent[u] = v
                if mate[u] < 0:  # a free vertex: flip the path back to the root
                    while u >= 0:
                        previous = mate[parent[u]]
                        mate[u], mate[parent[u]] = parent[u], u
                        u = previous
                    return True
                outer[mate[u]] = True
                queue.append(mate[u])
    return False
