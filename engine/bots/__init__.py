"""Bots that play Gift of Tulips, built on the rules in :mod:`engine` and
never part of them.

Every bot is a *policy*: a callable ``(observation, rng) -> Action`` that
decides from one seat's :class:`~engine.observation.Observation` only — what
that seat may know (R24–R25) — and never reads the match it plays in.

* :mod:`engine.bots.policies` — the simple bots: *easy* (uniformly random),
  *greedy* (the most points at once, :func:`engine.action_points`) and
  *medium* (one action ahead, with the majorities in view), and
  :func:`~engine.bots.policies.bot_policy`, every bot by name.
* :mod:`engine.bots.search` — the *hard* bot: at 4 players under the
  standard ruleset the lookahead of :mod:`engine.bots.lookahead`, elsewhere
  Monte Carlo search over deals sampled from what its seat can see; bounded
  by time or by simulations.
* :mod:`engine.bots.lookahead` — one round of lookahead on a light table
  (:mod:`engine.bots.table`), or to the end near it, scored by a learned network
  (:mod:`engine.bots.value`, trained by :mod:`engine.lab.train_value`),
  with the others' secret cards dealt by :mod:`engine.bots.inference`.
* :mod:`engine.bots.determinize` — those samples: whole matches, built with
  :meth:`engine.Match.assemble`, that the seat cannot tell from the real one.

The rules modules import nothing from here; the server, the tools
(:mod:`engine.tools`) and the lab (:mod:`engine.lab`) do.
"""
