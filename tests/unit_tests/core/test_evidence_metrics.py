"""Evidence recall and the all-evidence rate on hand-made cases."""

from __future__ import annotations

import pytest

from vrsd_core import metrics


@pytest.mark.parametrize(
    ("retrieved", "gold", "recall", "complete"),
    [
        ([1, 2, 3], [1, 2], 1.0, True),
        ([1, 5, 6], [1, 2], 0.5, False),
        ([5, 6], [1, 2], 0.0, False),
        ([], [1, 2], 0.0, False),
        ([2, 2, 2], [1, 2], 0.5, False),  # a passage returned twice is found once
        (["a", "b"], ["b"], 1.0, True),
        ((p for p in [3, 1]), {1, 2, 3}, 2 / 3, False),  # any iterables
    ],
)
def test_evidence_metrics(retrieved, gold, recall, complete):
    retrieved = list(retrieved)
    assert metrics.evidence_recall(retrieved, gold) == pytest.approx(recall)
    assert metrics.all_evidence(retrieved, gold) is complete


def test_evidence_metrics_need_gold():
    for fn in (metrics.evidence_recall, metrics.all_evidence):
        with pytest.raises(ValueError, match="gold"):
            fn([1, 2], [])
