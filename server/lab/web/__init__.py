"""Measuring ``tulips-server --web`` from outside: a scripted tab
(:mod:`~server.lab.web.probe`), what a tab costs the host
(:mod:`~server.lab.web.measure`) and a siege of the web port
(:mod:`~server.lab.web.siege`). Importing this package does not import
:mod:`server.web`; the tools that need the ``web`` extra's aiohttp import it
themselves.
"""
