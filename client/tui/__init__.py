"""The terminal client of Gift of Tulips, built on :mod:`client.sdk` and Textual.

``tulips play`` (:mod:`.cli`) starts a local server and a match against bots;
``tulips connect ws://HOST:PORT`` joins a server on the LAN. The app
(:mod:`.app`) renders views (:mod:`.viewmodel`) of what the server sent and
never decides a rule: legal actions come in prompts, with what each scores
(``prompt.points``), and points scored come in events.

This package imports nothing on start-up; the entry points import what they
use, so ``tulips --help`` and the first screen stay fast.
"""
