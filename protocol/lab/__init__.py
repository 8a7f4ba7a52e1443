"""The protocol's lab: tools that measure the wire, apart from the protocol itself.

Nothing outside the lab imports them (the import-linter contracts in
``pyproject.toml``); they import the protocol like any other user.

* ``python -m protocol.lab.bench`` (:mod:`protocol.lab.bench`) — microseconds
  per decode and validate, and per encode, beside a bare msgpack call.
"""
