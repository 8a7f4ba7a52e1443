"""The headless Chromium the browser tests drive: :mod:`server.lab.web.cdp`
(it lives in the lab, so that ``python -m server.lab.web.measure --phone``
drives the same browser the tests do)."""

from server.lab.web.cdp import Browser, Page, chromium_path, launch

__all__ = ["Browser", "Page", "chromium_path", "launch"]
