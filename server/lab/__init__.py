"""The server's lab: commands that measure a running server, apart from it.

Each starts ``tulips-server`` (or ``python -m server``) in a process of its own
and measures it from outside, as a client would; nothing that serves imports
them (the import-linter contracts in ``pyproject.toml``). A tool keeps its
place in the server's own tree below ``server/lab/``.

* ``python -m server.lab.budget`` (:mod:`server.lab.budget`) — the deterministic
  budget: instructions, frames and bytes per action and memory per player, on
  a fixed script, against the record in ``server/lab/budget.json``
  (:mod:`server.lab.budget_server` is the server it measures).
* ``python -m server.lab.bench`` (:mod:`server.lab.bench`) — what clients that
  never read cost a server's memory.
* ``python -m server.lab.web.measure`` (:mod:`server.lab.web.measure`) — what
  one browser player costs the host.
* ``python -m server.lab.web.siege`` (:mod:`server.lab.web.siege`) — the game
  port while someone lays siege to the web port.
* :mod:`server.lab.web.probe` — a scripted browser tab, for the measuring
  commands and the tests.
"""
