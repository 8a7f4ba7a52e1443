"""The authoritative Gift of Tulips server: asyncio and websockets.

:class:`~server.app.TulipsServer` accepts connections and says hello; the
:class:`~server.lobby.Lobby` answers requests and owns the rooms; each
:class:`~server.room.Room` owns one match, its members, seats, bots and
timers; :mod:`server.views` is the only place engine and protocol meet;
:mod:`server.storage` keeps every accepted action on disk. Run it with
``tulips-server`` (:mod:`server.cli`).
"""
