"""``python -m server``: the same as ``tulips-server``."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
