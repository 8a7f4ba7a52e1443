"""One match, one owner.

A match is a sans-I/O core and the actor that runs it, as websockets runs a
pure protocol object under a thin asyncio connection:

- :mod:`.core`: :class:`~.core.MatchCore`, the match itself — no asyncio, no
  sockets, no clock; one command in (:mod:`.commands`), what to do out, in
  order (:mod:`.outputs`);
- :mod:`.actor`: :class:`~.actor.MatchActor`, one task per match, which takes
  commands from a mailbox one at a time and carries out the outputs;
- :mod:`.views`: the frames a match sends, built from plain values;
- :mod:`.settings`, :mod:`.seats`, :mod:`.records`, :mod:`.info`: the plain
  values a match is made of, stores, and shows;
- :mod:`.bots`, :mod:`.thinker`: the server's bots, and the pool that runs
  their searches; :mod:`.commitment`: an open box's seed commitment (R27).

Everything but the actor and the thinker is free of asyncio (a contract in
pyproject.toml says so).
"""
