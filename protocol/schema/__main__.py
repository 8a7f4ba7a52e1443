"""``python -m protocol.schema``: write or check the JSON Schema and AsyncAPI files."""

from __future__ import annotations

from . import main

raise SystemExit(main())
