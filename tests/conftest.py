"""Shared test fixtures: the bundled model (offline) and the paper's data."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb: no phone-home attempts

import pytest


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
