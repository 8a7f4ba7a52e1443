"""``python -m client.tui.locales``: see :mod:`client.tui.locales.tool`."""

from .tool import main

raise SystemExit(main())
