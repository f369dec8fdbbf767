"""Ray Data batch reranking (examples/ray_batch_rerank.py): ``select_batch`` inside
``map_batches`` gives, for every query, the picks of one ``vrsd_core.select`` call.

Ray in local mode, 2 CPUs, no dashboard, started once for the module and shut down.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import ray  # the dev extra installs it: a missing ray fails, never skips

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "ray_batch_rerank.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("vrsd_ray_batch_rerank", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.parametrize(("method", "options"), [
    ("vrsd", {}), ("mmr", {"lambda_mult": 0.3}), ("dpp", {}), ("similarity", {}),
])
def test_batches_equal_single_calls(example, local_ray, method, options):
    rows = example.make_rows(150, seed=3)
    got = example.run(rows, 4, method, batch_size=32, **options)
    assert sorted(got) == [r["query_id"] for r in rows]
    for row in rows:
        assert got[row["query_id"]] == example.single(row, 4, method, **options)


def test_rows_are_not_mutated(example, local_ray):
    import numpy as np

    rows = example.make_rows(40, seed=5)
    before = [(r["query"].copy(), r["cand_ids"].copy(), r["cand_vecs"].copy()) for r in rows]
    example.run(rows, 3, "vrsd", batch_size=16)
    for r, (q, ids, vecs) in zip(rows, before, strict=True):
        assert np.array_equal(r["query"], q) and np.array_equal(r["cand_ids"], ids)
        assert np.array_equal(r["cand_vecs"], vecs)
