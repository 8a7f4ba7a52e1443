"""``python -m client.tui``: the same as ``tulips``."""

from .cli import main

raise SystemExit(main())
