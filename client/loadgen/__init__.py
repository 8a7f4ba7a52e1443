"""The load, soak and bench tools of Gift of Tulips: ``tulips-loadtest``.

They are clients like any other — they speak to a server through
:mod:`client.sdk` or raw WebSocket frames, and start one with
:class:`client.localserver.LocalServer` — but nothing a player runs imports
them: not the SDK, not the terminal app, not the bots. The modules:

- :mod:`.cli`: ``tulips-loadtest`` and its subcommands
- :mod:`.load`: many concurrent matches of SDK clients (``run``)
- :mod:`.report`: the one report every mode prints
- :mod:`.reference`: a bare websockets + MessagePack server to measure against
- :mod:`.cluster`: a cluster's nodes, and a local one (``cluster``)
- :mod:`.redisproc`: a private ``redis-server`` for the cluster and its tests
- :mod:`.hostile`, :mod:`.hostile_frames`: the hostile-frame soak and its frames
- :mod:`.crashsoak`: kill and restart the server, lose nothing
- :mod:`.serverlog`: what a soak's server log holds
- :mod:`.connbench`: connection set-up times, TLS against plain
- :mod:`.startup_bench`: the terminal client's start-up time
"""
