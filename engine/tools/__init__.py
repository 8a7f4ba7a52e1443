"""Command-line tools around the engine: none of them is part of the rules,
and nothing in :mod:`engine` or :mod:`engine.bots` imports them.

* ``python -m engine.tools.bench`` (:mod:`engine.tools.bench`) — random
  playouts per second per player count, through the public API only.
* ``python -m engine.tools.arena`` (:mod:`engine.tools.arena`) — bots play
  each other over many seeded matches; win rates with 95% intervals.
* ``tulips-demo`` (:mod:`engine.tools.demo`) — one bot match told in the
  terminal.
* ``python -m engine.tools.playthrough`` (:mod:`engine.tools.playthrough`) —
  the golden playthroughs, every step as every seat saw it, which
  ``tests/engine/test_golden.py`` diffs; ``--regenerate`` rewrites them.

:mod:`engine.tools.describe` tells events and scoring in plain English for the
demo and the playthroughs.
"""
