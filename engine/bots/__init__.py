"""Bots that play Gift of Tulips, built on the rules in :mod:`engine` and
never part of them.

Every bot is a *policy*: a callable ``(observation, rng) -> Action`` that
decides from one seat's :class:`~engine.observation.Observation` only — what
that seat may know (R24–R25) — and never reads the match it plays in.

* :mod:`engine.bots.policies` — the simple bots: *easy* (uniformly random),
  *greedy* (the most points at once, :func:`engine.action_points`) and
  *medium* (one action ahead, with the majorities in view), and
  :func:`~engine.bots.policies.bot_policy`, every bot by name.
* :mod:`engine.bots.search` — the *hard* bot: Monte Carlo search over deals
  sampled from what its seat can see, bounded by time or by simulations.
* :mod:`engine.bots.determinize` — those samples: whole matches, built with
  :meth:`engine.Match.assemble`, that the seat cannot tell from the real one.

The rules modules import nothing from here; the server and the tools
(:mod:`engine.tools`) do.
"""
