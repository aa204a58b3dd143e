import os

from hypothesis import HealthCheck, settings

# Property tests: enough examples to find a broken law, few enough to keep the suite fast.
settings.register_profile(
    "course", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))
