"""Thin clients of the Gift of Tulips protocol: they know no rules.

:mod:`client.sdk` is the asyncio SDK (connect, join, act, reconnect) every
other part is built on: the Textual terminal client (:mod:`client.tui`), the
bot kit (:mod:`client.bots`, ``tulips-bot``) and the load generator
(:mod:`client.loadtest`). Clients import :mod:`protocol` only, never the
engine or the server.
"""
