"""The match server (``referee serve``): remote bots over the network, live spectators.

- :mod:`~referee.server.settings`: the ``[server]`` table of a tournament file.
- :mod:`~referee.server.tokens`: the remote players' tokens, kept hashed.
- :mod:`~referee.server.handshake`: the ``hello`` line and its answer (sans-I/O).
- :mod:`~referee.server.transport`: a connection's bytes over TCP, TLS or WebSocket.
- :mod:`~referee.server.lobby`: admitting connections (handshake, bounds, refusals).
- :mod:`~referee.server.remote`: remote players' connections and sessions, played
  through the match runner like local bots.
- :mod:`~referee.server.serve`: the server itself, running a tournament.
- :mod:`~referee.server.spectate`: the spectators' site and live event streams.
- :mod:`~referee.server.client` and :mod:`~referee.server.loadtest`: a small bot client,
  and a load test built on it.

docs/server.md is the same server as an organiser and a bot author read it.
"""
