"""Shared test fixtures: the bundled model (offline) and the paper's data."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb: no phone-home attempts

import pytest

from vrsd_core.datasets import default_data_dir, load_dataset


@pytest.fixture(scope="session")
def data_dir():
    path = default_data_dir()
    if path is None:
        pytest.fail("../shared/data not found beside the checkout (set VRSD_DATA_DIR)")
    return path


@pytest.fixture(scope="session")
def arc_da(data_dir):
    return load_dataset("arc_da", data_dir)


@pytest.fixture(scope="session")
def openbookqa(data_dir):
    return load_dataset("openbookqa", data_dir)


@pytest.fixture(scope="session")
def model_path() -> str:
    from vrsd_core.models import bundled_model_path

    return bundled_model_path()
