"""Thin clients of the Gift of Tulips protocol: they know no rules.

:mod:`client.sdk` is the asyncio SDK (connect, join, act, reconnect) every
other part is built on: the Textual terminal client (:mod:`client.tui`), the
bot kit (:mod:`client.bots`, ``tulips-bot``) and, in a room of their own,
the load, soak and bench tools (:mod:`client.loadgen`, ``tulips-loadtest``).
:mod:`client.localserver` starts a local server for ``tulips play``, the tools
and the tests. Clients import :mod:`protocol` only, never the engine or the
server.
"""
