"""End-to-end tests in a real browser (Debian Chromium driven by Playwright)."""
