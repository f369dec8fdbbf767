"""No telemetry: what the libraries vrsd runs on send home by default, turned off.

One table for the command (``vrsd`` sets these unless the user did) and the tests
(which force them). Each is read when its library is imported or its client made, so
they are set before any heavy import.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

NO_TELEMETRY = {
    "ANONYMIZED_TELEMETRY": "False",  # chromadb: posthog product events from every client
    "HAYSTACK_TELEMETRY_ENABLED": "False",  # haystack-ai: posthog events on pipeline runs
    "HF_HUB_DISABLE_TELEMETRY": "1",  # huggingface_hub: usage pings on downloads
    "DO_NOT_TRACK": "1",  # the cross-tool convention (huggingface_hub and others read it)
    "RAY_USAGE_STATS_ENABLED": "0",  # ray: usage statistics from a local cluster
}


def disable_telemetry(environ: MutableMapping[str, str] | None = None, *,
                      force: bool = False) -> None:
    """Set ``NO_TELEMETRY`` in ``environ`` (default ``os.environ``): where unset, or
    everywhere with ``force``."""
    env = os.environ if environ is None else environ
    for name, value in NO_TELEMETRY.items():
        if force:
            env[name] = value
        else:
            env.setdefault(name, value)
