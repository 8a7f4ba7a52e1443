"""Post-game analyses of a seat's decisions, computed away from the matches
and stored once computed (issue 32: learn the game).

* :mod:`.moments` — a seat's decisions in a match record, each with the
  seat's observation then (computed in a worker).
* :mod:`.report` — an analysis as the protocol's ``analysis`` message.
* :mod:`.store` — analyses kept in SQLite (or memory), by match and seat.
* :mod:`.service` — :class:`~.service.Analyst`, the one owner of the queue:
  at most so many analyses at once, the rest queued, progress per decision.
"""
