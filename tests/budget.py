"""Hypothesis budgets: a thorough ``ci`` profile and a fast default for the developer loop.

The profile is ``$HYPOTHESIS_PROFILE`` when set, else ``ci`` where ``$CI`` is set (as CI sets
it), else ``fast``, as polars' ``tests/unit/conftest.py`` chooses its own. A test that names its
budget says it with :func:`examples`: the full number under ``ci``, a tenth of it (at least
five) under ``fast``. Neither profile has a deadline: CI runs on a shared two-core machine,
where one example can take far longer than it does alone.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "examples"]

settings.register_profile(
    "ci", deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fast", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

#: The profile this run uses.
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "fast")
settings.load_profile(PROFILE)


def examples(full: int) -> int:
    """The number of examples for a test whose thorough budget is ``full``."""
    return full if PROFILE == "ci" else max(5, full // 10)
