"""Command-line tools around the engine that a player or a reader uses: none of
them is part of the rules, and nothing in :mod:`engine` or :mod:`engine.bots`
imports them. The tools that measure or train live apart, in :mod:`engine.lab`.

* ``tulips-demo`` (:mod:`engine.tools.demo`) — one bot match told in the
  terminal.
* ``python -m engine.tools.playthrough`` (:mod:`engine.tools.playthrough`) —
  the golden playthroughs, every step as every seat saw it, which
  ``tests/engine/test_golden.py`` diffs; ``--regenerate`` rewrites them.

:mod:`engine.tools.describe` tells events and scoring in plain English for the
demo and the playthroughs; :mod:`engine.tools.version` gives ``tulips-demo``
its ``--version``.
"""
