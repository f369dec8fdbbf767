"""The adapter contract (``vrsd_core.contract``): one payload, one set of checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vrsd_core import contract, select

rng = np.random.default_rng(11)
Q = rng.standard_normal(6)
C = rng.standard_normal((9, 6))


def test_metadata_key():
    assert contract.METADATA_KEY == "vrsd"


def test_payload_per_pick():
    sel = select(Q, C, 4, method="mmr", lambda_mult=0.7)
    entries = contract.selection_metadata_all(sel)
    assert [e["rank"] for e in entries] == [0, 1, 2, 3]
    for i, entry in enumerate(entries):
        assert entry == contract.selection_metadata(sel, i)
        assert set(entry) == {"rank", "relevance", "gain", "method"}
        assert entry["relevance"] == pytest.approx(float(sel.relevance[i]))
        assert entry["gain"] == pytest.approx(float(sel.gains[i]))
        assert entry["method"] == "mmr"
        assert type(entry["relevance"]) is float and type(entry["rank"]) is int
    json.dumps(entries)  # plain Python values


def test_payload_carries_the_prior_when_one_was_used():
    prior = np.linspace(0.0, 1.0, len(C))
    sel = select(Q, C, 3, method="similarity", prior=prior, prior_weight=0.5)
    for i, entry in enumerate(contract.selection_metadata_all(sel)):
        assert entry["prior"] == pytest.approx(prior[sel.indices[i]])


def test_payload_position_is_checked():
    sel = select(Q, C, 2)
    for bad in (2, -1, 1.0, True, "0"):
        with pytest.raises(ValueError, match="position"):
            contract.selection_metadata(sel, bad)
    assert contract.selection_metadata(sel, np.int64(1))["rank"] == 1
    assert contract.selection_metadata_all(select(Q, C, 0)) == []


def test_check_query_text():
    assert contract.check_query_text("what is vrsd?") == "what is vrsd?"
    assert contract.check_query_text("") == ""
    for bad, kind in ((None, "NoneType"), (b"q", "bytes"), (3, "int")):
        with pytest.raises(ValueError, match=f"^query: expected a string, got {kind}"):
            contract.check_query_text(bad)
    with pytest.raises(ValueError, match=r"^query_bundle: not valid Unicode.*position 2"):
        contract.check_query_text("ab\udcff", "query_bundle")


@pytest.mark.parametrize(
    ("k", "fetch_k", "name"),
    [(-1, 5, "k"), (2, -1, "fetch_k"), (True, 5, "k"), (2, 5.0, "fetch_k"), ("2", 5, "k"),
     (5, 4, "fetch_k")],
)
def test_check_counts_refuses(k, fetch_k, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        contract.check_counts(k, fetch_k)


def test_check_counts_accepts_and_renames():
    assert contract.check_counts(0, 0) == (0, 0)
    assert contract.check_counts(np.int64(3), 3) == (3, 3)
    with pytest.raises(ValueError, match=r"^fetch_k: must be >= top_n .*fetch_k=2 < top_n=3"):
        contract.check_counts(3, 2, minimum=1, k_name="top_n")
    with pytest.raises(ValueError, match="^top_n:"):
        contract.check_counts(0, 2, minimum=1, k_name="top_n")


def test_check_prior_values():
    out = contract.check_prior_values([1, 0.5, np.float32(2.0), np.int64(-1)], 4)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 0.5, 2.0, -1.0]
    with pytest.raises(ValueError, match="prior: expected 3 values"):
        contract.check_prior_values([1.0, 2.0], 3)
    for bad in ("0.5", None, True, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="^prior: candidate 1 has"):
            contract.check_prior_values([0.0, bad], 2)


def test_contract_imports_no_framework():
    import subprocess
    import sys

    code = (
        "import sys, vrsd_core.contract; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'llama_index', 'pydantic', 'torch')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
