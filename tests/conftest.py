from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# a loaded 2-core CI machine: health checks on speed and data size are not findings
_RELAXED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
settings.register_profile("ci", deadline=None, suppress_health_check=_RELAXED, print_blob=True)
settings.register_profile("dev", deadline=None, suppress_health_check=_RELAXED)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
