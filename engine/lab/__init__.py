"""The engine's lab: tools that measure the engine and its bots, or train them.

None of them is part of the rules or of a player's tools, and nothing outside
the lab imports them (the import-linter contracts in ``pyproject.toml``); they
import the engine and its bots like any other user.

* ``python -m engine.lab.bench`` (:mod:`engine.lab.bench`) — random playouts
  per CPU second per player count, through the public API only; its inner
  loop is :mod:`engine.lab.playouts`; ``--minimal`` measures it beside a
  minimal rules loop, :mod:`engine.lab.minimal`, and ``--bot`` counts the
  hard bot's simulations in its 300 ms budget (:mod:`engine.lab.botspeed`).
* ``python -m engine.lab.arena`` (:mod:`engine.lab.arena`) — bots play each
  other over many seeded matches; win rates with 95% intervals.
* ``python -m engine.lab.analysis`` (:mod:`engine.lab.analysis`) — what the
  post-game analysis costs per match, and the mean loss per decision it finds
  for easy, medium and hard bots.
* ``python -m engine.lab.train_value`` (:mod:`engine.lab.train_value`) —
  trains the lookahead bot's value network, ``engine/bots/value_net.json``.
* ``python -m engine.lab.vectors`` (:mod:`engine.lab.vectors`) — writes the
  deal's test vectors, ``docs/deal-vectors.json``, that go with docs/DEAL.md.
"""
