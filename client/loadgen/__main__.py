"""``python -m client.loadgen``: the same as ``tulips-loadtest``."""

from .cli import main

raise SystemExit(main())
