"""Comparing results whose scores were computed: scores with a tolerance, the rest exactly.

The last digits of a BLAS result differ between machines, between one and several
BLAS threads, and with what a process has loaded (alignment picks other kernels):
``0.349890354744845`` on one machine is ``0.3498903547528645`` on another. Which
documents were picked, in which order, with which text and ids does not differ, so
those stay exact; every float (relevance, gain, score, objective, ...) is compared
with ``REL``/``ABS``, loose enough for float32 arithmetic, far tighter than any
difference a wrong pick makes.

    assert results(got) == approx_scores(results(want))
    assert [d.meta["vrsd"] for d in got] == approx_scores(selection_metadata_all(sel))
    assert_scores_close(sel.gains, want.gains)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

REL = 1e-6
ABS = 1e-9


def approx_scores(value: Any) -> Any:
    """``value`` with every float in it (Python or numpy, in dicts, lists, tuples and
    float arrays) wrapped in ``pytest.approx(rel=REL, abs=ABS)``; ints, bools, strings
    and everything else are left to compare exactly."""
    if isinstance(value, bool | np.bool_ | int | np.integer | str | bytes) or value is None:
        return value
    if isinstance(value, float | np.floating):
        return pytest.approx(float(value), rel=REL, abs=ABS)
    if isinstance(value, np.ndarray):
        return pytest.approx(value, rel=REL, abs=ABS) if value.dtype.kind == "f" else value
    if isinstance(value, Mapping):
        return {key: approx_scores(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(approx_scores(item) for item in value)
    return value


def assert_scores_close(actual: Any, desired: Any, err_msg: str = "") -> None:
    """``np.testing.assert_allclose`` with ``REL``/``ABS``: arrays of computed scores."""
    np.testing.assert_allclose(actual, desired, rtol=REL, atol=ABS, err_msg=err_msg)


def result(item: Any) -> Any:
    """One returned item as plain data to compare: a LangChain ``Document`` (id, text,
    metadata), a LlamaIndex ``NodeWithScore`` (node id, text, score, metadata) or a
    Haystack ``Document`` (id, content, score, meta, embedding)."""
    if hasattr(item, "node") and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        node = item.node
        return (node.node_id, node.get_content(), item.score, dict(node.metadata))
    if hasattr(item, "page_content"):  # LangChain Document
        return (item.id, item.page_content, dict(item.metadata))
    if hasattr(item, "meta") and hasattr(item, "content"):  # Haystack Document
        embedding = None if item.embedding is None else list(item.embedding)
        return (item.id, item.content, item.score, dict(item.meta), embedding)
    return item


def results(items: Any) -> Any:
    """``result`` of every item, walking lists, tuples and dicts (batches, pipeline
    outputs such as ``{"documents": [...]}``)."""
    if isinstance(items, Mapping):
        return {key: results(value) for key, value in items.items()}
    if isinstance(items, list | tuple):
        return type(items)(results(item) for item in items)
    return result(items)
