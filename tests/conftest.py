"""Shared test fixtures: the bundled model (offline), the paper's data, and no network.

Before any library is imported, everything that phones home by default is turned off
(``vrsd_cli.telemetry``, forced: a developer's own settings do not leak into a test
run), Hugging Face is offline and LangSmith tracing off. During the session a guard
refuses and records every connection or name lookup leaving this machine
(``tests/helpers/network.py``); the session fails if there was one.
"""

from __future__ import annotations

import os

from vrsd_cli.telemetry import disable_telemetry

disable_telemetry(force=True)
os.environ.update({
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
    "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",
})

# the settings above come before any library is imported
import pytest  # noqa: E402

from tests.helpers.network import NetworkGuard  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def no_network():
    """Refuse and record every attempt to reach another machine; fail the session on one."""
    guard = NetworkGuard()
    guard.install()
    yield guard
    guard.uninstall()
    assert not guard.attempts, "the tests tried to use the network:\n" + "\n".join(
        guard.attempts)


@pytest.fixture(scope="session")
def data_dir():
    """The data vendored with vrsd_eval (or $VRSD_DATA_DIR)."""
    from vrsd_eval.datasets import default_data_dir

    return default_data_dir()


@pytest.fixture(scope="session")
def arc_da(data_dir):
    from vrsd_eval.datasets import load_dataset

    return load_dataset("arc_da", data_dir)


@pytest.fixture(scope="session")
def openbookqa(data_dir):
    from vrsd_eval.datasets import load_dataset

    return load_dataset("openbookqa", data_dir)


@pytest.fixture(scope="session")
def model_path() -> str:
    from vrsd_kit.bundled_model import bundled_model_path

    return bundled_model_path()


@pytest.fixture
def fresh_reembed_warnings():
    """Every store class warns again about re-embedding, before and after the test."""
    from vrsd_kit.stores import forget_warnings

    forget_warnings()
    yield
    forget_warnings()
