"""The evidence protocol at equal token budgets on a 10-question slice: every row keeps
its budget, the ranked-list baselines are what they say, the outputs are written."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vrsd_eval import budget as be
from vrsd_eval.evidence import evidence_specs, load_evidence_corpora
from vrsd_eval.pools import build_pools
from vrsd_kit.tokens import approx_token_count

LIMIT = 10
ROWS = ["default", "default-nolinks-prf", "similarity", "mmr:lambda_mult=0.7", "top_m"]


def test_budget_helpers():
    assert be.cut_at_budget([3, 0, 1, 2], [10, 20, 30, 40], 75) == [3, 0, 1]  # 40 + 10 + 20
    assert be.cut_at_budget([2, 0], [5, 5, 9], 8) == []
    assert be.parse_budgets("200,400, 800") == [200, 400, 800]
    assert be.parse_budgets(None) is None
    for bad in ("200,-1", "200,0", "two", ""):
        with pytest.raises(ValueError, match="^budgets: "):
            be.parse_budgets(bad)


@pytest.fixture(scope="module")
def budget_run(tmp_path_factory, data_dir):
    from vrsd_eval.geometries import geometry

    corpora = load_evidence_corpora(data_dir, limit=LIMIT)[:2]
    out = tmp_path_factory.mktemp("budget_out")
    budgets = be.passage_budgets(corpora[0])
    embeddings = geometry("minilm").fit([])
    pools = [build_pools(corpus.texts, corpus.questions, embeddings, 30, show=False)
             for corpus in corpora]
    results = [be.evaluate_budgets(corpus, found, evidence_specs(ROWS), budgets,
                                   model="all-MiniLM-L6-v2", show=False)
               for corpus, found in zip(corpora, pools, strict=True)]
    be.BUDGET_REPORT.write({"minilm": results}, out)
    return corpora, results, out, pools


def test_default_budgets_are_typical_passages(budget_run):
    corpora, results, _, _ = budget_run
    median = float(np.median([approx_token_count(t) for t in corpora[0].texts]))
    assert results[0].budgets == [round(m * median) for m in be.BUDGET_PASSAGES]


def test_every_row_keeps_its_budget_and_the_baselines_order(budget_run):
    _, results, _, _ = budget_run
    for res in results:
        assert {"default", "similarity", "mmr(0.7)", "top_m", be.RANKED_CUT} <= set(res.labels)
        for b in res.budgets:
            for label in res.labels:
                if label != be.LOST_IN_THE_MIDDLE:  # it keeps the passage that crosses
                    assert res.tokens[b][label].max() <= b, (res.variant, b, label)
            # filling while items fit keeps the cut list's passages and maybe more
            assert (res.recall[b]["similarity"] >= res.recall[b][be.RANKED_CUT]).all()
            assert (res.tokens[b]["similarity"] >= res.tokens[b][be.RANKED_CUT]).all()
        # a larger budget never finds less with the ranked list
        cut = [res.recall[b][be.RANKED_CUT] for b in res.budgets]
        assert all((a <= c).all() for a, c in zip(cut, cut[1:], strict=False))


def test_the_prf_row_is_the_default_without_links_on_the_expanded_question(budget_run):
    from vrsd_eval.pools import score, select_rows
    from vrsd_eval.prf import with_feedback
    from vrsd_kit.tokens import count_tokens

    corpora, results, _, pools = budget_run
    spec = next(s for s in evidence_specs(ROWS) if s.feedback)
    assert spec.label == "default without links + PRF" and not spec.links
    for corpus, res, found in zip(corpora, results, pools, strict=True):
        counts = count_tokens(approx_token_count, corpus.texts)
        fed = with_feedback(found, corpus.questions)
        for b in res.budgets:
            picked = select_rows(fed, spec, found.rows.shape[1], max_tokens=b,
                                 token_counts=counts[found.rows])
            recall = [score(rows, np.asarray(corpus.passage_of), gold)[0]
                      for rows, gold in zip(picked, corpus.gold, strict=True)]
            assert np.allclose(res.recall[b][spec.label], recall), (corpus.name, b)


def test_outputs(budget_run):
    _, results, out, _ = budget_run
    table = (out / "budget.md").read_text()
    assert "**plain** corpus" in table and "**redundant** corpus" in table
    assert "lowest recall, default − filled list" in table
    # lost-in-the-middle spends more than the budget: never the summary's best other row
    assert "lost-in-the-middle" not in table.split("## all-MiniLM-L6-v2")[0]
    report = json.loads((out / "budget.json").read_text())["minilm"]
    b = str(results[0].budgets[0])
    assert set(report["plain"]["budget"][b]["default"]) == {"recall", "all_evidence",
                                                            "tokens_used"}
    assert (out / "budget_minilm.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_line_flag(vrsd, data_dir, tmp_path):
    run = vrsd("eval", "budget", "--budgets", "120,240", "--data-dir", data_dir,
               "--limit", 4, "--fetch-k", 20, "--methods", "default", "similarity",
               "--out", tmp_path, "--no-progress")
    assert run.code == 0, run.err
    assert "| 120 tokens | 240 tokens |" in run.out
    assert json.loads((tmp_path / "budget.json").read_text())["minilm"]["plain"][
        "budget"].keys() == {"120", "240"}
    bad = vrsd("eval", "budget", "--budgets", "lots", "--out", tmp_path)
    assert bad.code != 0 and "--budgets: " in bad.err


def test_no_row_that_reranks_the_pool_finds_more_than_the_pool_holds(budget_run):
    """``reach``: all the fetched candidates' evidence, question by question the most a
    row that picks among them finds (the hybrid search's rows fetch their own)."""
    from vrsd_eval.hybrid import HYBRID_ROWS
    from vrsd_eval.pools import score

    corpora, results, out, pools = budget_run
    report = json.loads((out / "budget.json").read_text())["minilm"]
    for corpus, res, found in zip(corpora, results, pools, strict=True):
        held = [score(rows, np.asarray(corpus.passage_of), gold)
                for rows, gold in zip(found.rows, corpus.gold, strict=True)]
        recall = np.array([r for r, _ in held])
        assert res.reach == pytest.approx((recall.mean(), np.mean([a for _, a in held])))
        assert report[corpus.name]["reach"] == pytest.approx(
            {"recall": res.reach[0], "all_evidence": res.reach[1]})
        for b in res.budgets:
            for label in set(res.labels) - set(HYBRID_ROWS):
                assert (res.recall[b][label] <= recall + 1e-12).all(), (corpus.name, b, label)
    assert "fetched hold all the evidence of" in (out / "budget.md").read_text()
