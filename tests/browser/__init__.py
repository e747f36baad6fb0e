"""Real-browser tests (Chromium via playwright)."""
