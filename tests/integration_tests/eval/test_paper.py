"""``vrsd eval`` on a slice of ARC-DA: outputs, the numbers themselves, the cache, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vrsd_core import metrics, select
from vrsd_eval.methods import MMR_LAMBDAS, parse_method, parse_methods
from vrsd_eval.paper import DEFAULT_KS

LIMIT, CORPUS, K, FETCH = 5, 150, 6, 20
METHODS = ["similarity", "vrsd", "vrsd:refine=swap", "mmr:lambda_mult=0.5", "dpp"]


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory, data_dir):
    """One small eval (in-process), run twice: the second must hit the cache."""
    from vrsd_cli.cli import main

    out = tmp_path_factory.mktemp("eval_out")
    args = [
        "eval", "paper", "--data-dir", str(data_dir), "--datasets", "arc_da", "--limit", str(LIMIT),
        "--corpus-limit", str(CORPUS), "--k", str(K), "--fetch-k", str(FETCH),
        "--methods", *METHODS, "--out", str(out), "--no-progress",
    ]
    first = main(args)
    second = main(args)
    return out, first, second


def test_eval_writes_table_json_and_plot(eval_run):
    out, first, second = eval_run
    assert first == 0 and second == 0
    table = (out / "eval.md").read_text()
    assert f"#### arc_da, k = {K}" in table
    assert "| method | options | Sim. mean | Div. mean | VRSD wins Sim. | VRSD wins Div. |" in table
    for label in ("similarity", "vrsd", "vrsd_swap", "mmr(0.5)", "dpp"):
        assert f"| {label} |" in table
    png = (out / "eval_arc_da.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_eval_numbers_match_the_core_on_the_same_vectors(eval_run, arc_da, embeddings):
    """The LangChain path (FAISS + DiverseRetriever) gives what select() gives on the
    same fetch_k nearest vectors: an independent recomputation of every mean."""
    out, _, _ = eval_run
    report = json.loads((out / "eval.json").read_text())["arc_da"]
    assert report["n_queries"] == LIMIT and report["n_corpus"] == CORPUS
    rows = {r["method"]: r for r in report["k"][str(K)]}
    corpus = np.asarray(embeddings.embed_documents(arc_da.corpus[:CORPUS]))
    unit = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    specs = {s.label: s for tok in METHODS for s in parse_method(tok)}
    sims: dict[str, list[float]] = {label: [] for label in specs}
    divs: dict[str, list[float]] = {label: [] for label in specs}
    for query in arc_da.queries[:LIMIT]:
        q = np.asarray(embeddings.embed_query(query))
        nearest = np.argsort(-(unit @ (q / np.linalg.norm(q))), kind="stable")[:FETCH]
        for label, spec in specs.items():
            sel = select(q, corpus[nearest], K, method=spec.method, **spec.options)
            picked = corpus[nearest[sel.indices]]
            sims[label].append(metrics.sum_vector_similarity(q, picked))
            divs[label].append(metrics.intra_list_similarity(picked))
    for label in specs:
        assert rows[label]["sim_mean"] == pytest.approx(np.mean(sims[label]), abs=1e-5)
        assert rows[label]["div_mean"] == pytest.approx(np.mean(divs[label]), abs=1e-5)
        if label != "vrsd":
            assert rows[label]["vrsd_win_sim"] == pytest.approx(
                metrics.win_rate(sims["vrsd"], sims[label]))
    assert rows["vrsd"]["vrsd_win_sim"] is None
    # swap refinement never lowers the greedy objective, query by query
    assert all(s >= g - 1e-9 for s, g in zip(sims["vrsd_swap"], sims["vrsd"], strict=True))
    assert f"vrsd_swap Sim. >= vrsd on {LIMIT}/{LIMIT} queries" in (out / "eval.md").read_text()


def test_second_run_encodes_nothing(vrsd, tmp_path, data_dir, eval_run):
    run = vrsd("eval", "paper", "--data-dir", data_dir, "--datasets", "arc_da", "--limit", LIMIT,
               "--corpus-limit", CORPUS, "--k", K, "--fetch-k", FETCH, "--methods", "vrsd",
               "--out", tmp_path, "--no-progress")
    assert run.code == 0
    assert f"0 corpus texts encoded ({CORPUS} from cache)" in run.err
    assert "#### arc_da, k = 6" in run.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--datasets", "nope"], "--datasets: unknown dataset 'nope'"),
        (["--methods", "bogus"], "--methods: unknown method 'bogus'"),
        (["--methods", "mmr:gamma=1"], "'gamma' is not an option of 'mmr'"),
        (["--methods", "mmr:lambda_mult=2"],
         "--methods: 'mmr:lambda_mult=2': lambda_mult: must be in [0, 1], got 2"),
        (["--methods", "mmr:0.5"], "options are written key=value"),
        (["--k", "6", "--fetch-k", "5"], "--fetch-k: 5 is smaller than the largest --k (6)"),
        (["--data-dir", "/nonexistent/vrsd"], "cannot read arc_da from /nonexistent/vrsd"),
    ],
)
def test_eval_input_errors_exit_2_with_a_message(vrsd, tmp_path, args, message):
    run = vrsd("eval", "paper", "--datasets", "arc_da", "--out", tmp_path, "--no-progress", *args)
    assert run.code == 2
    assert message in run.err
    assert "Traceback" not in run.err
    assert not (tmp_path / "eval.md").exists()


def test_eval_usage_errors_from_argparse(vrsd):
    run = vrsd("eval", "paper", "--k", "0")
    assert run.code == 2 and "expected a number >= 1" in run.err


def test_default_methods_follow_the_paper_and_the_registry():
    labels = [s.label for s in parse_methods(None)]
    assert labels[:3] == ["similarity", "vrsd", "vrsd_swap"]
    assert [f"mmr({lam})" for lam in MMR_LAMBDAS] == labels[3:11]
    assert "dpp" in labels and "vrsd_exact" not in labels
    assert DEFAULT_KS == (6, 12, 18)
    # vrsd (the reference of the win rates) is always run
    assert [s.label for s in parse_methods(["dpp"])] == ["vrsd", "dpp"]


def test_in_memory_store_gives_the_same_numbers_as_faiss(vrsd, tmp_path, data_dir, eval_run):
    out, _, _ = eval_run
    run = vrsd("eval", "paper", "--data-dir", data_dir, "--datasets", "arc_da", "--limit", LIMIT,
               "--corpus-limit", CORPUS, "--k", K, "--fetch-k", FETCH, "--methods", *METHODS,
               "--store", "memory", "--out", tmp_path, "--no-progress")
    assert run.code == 0, run.err
    faiss_rows = json.loads((out / "eval.json").read_text())["arc_da"]["k"][str(K)]
    memory_rows = json.loads((tmp_path / "eval.json").read_text())["arc_da"]["k"][str(K)]
    for a, b in zip(faiss_rows, memory_rows, strict=True):
        assert a["method"] == b["method"]
        assert a["sim_mean"] == pytest.approx(b["sim_mean"], abs=1e-5)
        assert a["div_mean"] == pytest.approx(b["div_mean"], abs=1e-5)
