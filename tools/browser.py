"""Headless Chromium for the browser tests and the browser benchmark: one way to find and launch it.

Debian's Chromium (``/usr/bin/chromium``) is used, driven by Playwright for Python; Playwright's
own browser download (``playwright install``) is never needed. The flags keep Chromium from
reaching for the network at start-up, and every request that leaves 127.0.0.1 is aborted, so a
page that needs the network fails at once instead of waiting.
"""

from __future__ import annotations

import os
import re
import shutil

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOT_LOCAL = re.compile(r"^https?://(?!127\.0\.0\.1[:/])")


def chromium_path() -> str | None:
    """Debian's Chromium: /usr/bin/chromium, or `chromium` / `chromium-browser` on PATH."""
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def launch_offline(playwright, profile: str, executable: str, viewport=(1400, 1000)):
    """A headless Chromium context with the fresh profile folder ``profile``, local pages only."""
    context = playwright.chromium.launch_persistent_context(
        profile,
        executable_path=executable,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": viewport[0], "height": viewport[1]},
    )
    context.route(NOT_LOCAL, lambda route: route.abort())
    return context
