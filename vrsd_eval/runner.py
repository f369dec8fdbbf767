"""``vrsd eval evidence`` and ``vrsd eval budget``: the evidence protocol at fixed k
(``evidence``) and at equal token budgets (``budget``) on every geometry asked for
(``geometries``), each corpus' candidate pools fetched once for both; the reports printed
and written.

``--docs`` runs both and writes the two generated parts of the docs, each headed by
the command and what it was measured on: ``evaluation_summary.md``, the block of
docs/evaluation.md between its markers (the summaries), and ``evaluation_tables.md``,
the page docs/evaluation_tables.md (every row, every cell); and per model the results
file of docs/results, ``evidence_<model>.json`` (``vrsd_eval.figures``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .budget import BUDGET_REPORT, BudgetResult, evaluate_budgets, passage_budgets
from .evidence import (
    EVIDENCE_FETCH_K,
    EVIDENCE_KS,
    EVIDENCE_REPORT,
    EvidenceCorpus,
    EvidenceResult,
    evaluate_evidence,
)
from .figures import dump, evidence_results, summary_block
from .geometries import Geometry
from .hybrid import HybridSearch
from .lsa import one_blas_thread
from .methods import MethodSpec
from .pools import build_pools

DOCS_SUMMARY = "evaluation_summary.md"
DOCS_TABLES = "evaluation_tables.md"
DOCS_RESULTS = "evidence_"  # evidence_<model>.json: the results files of the docs


def run_evidence_protocol(
    corpora: Sequence[EvidenceCorpus],
    geometries: Sequence[Geometry],
    specs: Sequence[MethodSpec],
    *,
    ks: Sequence[int] = EVIDENCE_KS,
    fetch_k: int = EVIDENCE_FETCH_K,
    at_k: bool = True,
    budgets: Sequence[int] | None = None,
    at_budgets: bool = False,
    docs_command: str | None = None,
    out: str | Path = "results",
    show: bool = True,
    log: Callable[[str], None] = print,
) -> dict[str, Path]:
    """Run the protocol(s) on every geometry and corpus; print the report (with
    ``docs_command``: the docs block) and write the outputs to ``out``.

    Args:
        budgets: token budgets (None: 2, 4 and 8 typical passages of the first corpus).
        at_k, at_budgets: which protocols run (``docs_command`` runs both).
        docs_command: the command line, for the docs block's heading.
        log: where progress lines and the written paths go.
    """
    if docs_command is not None:
        at_k = at_budgets = True
    at_k_runs, budget_runs = _run_all(corpora, geometries, specs, ks, fetch_k, at_k, budgets,
                                      at_budgets, show, log)
    paths: dict[str, Path] = {}
    if at_k:
        paths.update({f"evidence {what}": path for what, path in
                      EVIDENCE_REPORT.write(at_k_runs, out).items()})
    if at_budgets:
        paths.update({f"budget {what}": path for what, path in
                      BUDGET_REPORT.write(budget_runs, out).items()})
    if docs_command is not None:
        block, page = docs_block(docs_command, at_k_runs, budget_runs)
        paths["docs block"] = Path(out) / DOCS_SUMMARY
        paths["docs block"].write_text(block, encoding="utf-8")
        paths["docs tables"] = Path(out) / DOCS_TABLES
        paths["docs tables"].write_text(page, encoding="utf-8")
        for name in at_k_runs:  # the results files docs/results holds (vrsd_eval.figures)
            paths[f"docs results {name}"] = Path(out) / f"{DOCS_RESULTS}{name}.json"
            paths[f"docs results {name}"].write_text(dump(evidence_results(
                docs_command, at_k_runs[name], budget_runs[name])), encoding="utf-8")
        print(block)
    elif at_k:
        print(paths["evidence markdown"].read_text(encoding="utf-8"))
    if at_budgets and docs_command is None:
        print(paths["budget markdown"].read_text(encoding="utf-8"))
    for what, path in paths.items():
        log(f"wrote {what}: {path}")
    return paths


def _run_all(corpora: Sequence[EvidenceCorpus], geometries: Sequence[Geometry],
             specs: Sequence[MethodSpec], ks: Sequence[int], fetch_k: int, at_k: bool,
             budgets: Sequence[int] | None, at_budgets: bool, show: bool,
             log: Callable[[str], None]
             ) -> tuple[dict[str, list[EvidenceResult]], dict[str, list[BudgetResult]]]:
    """Every geometry and corpus: its pools, then the protocols asked for."""
    chosen = list(budgets) if budgets is not None else passage_budgets(corpora[0])
    at_k_runs: dict[str, list[EvidenceResult]] = {}
    budget_runs: dict[str, list[BudgetResult]] = {}
    for geo in geometries:
        for corpus in corpora:
            start = time.perf_counter()
            pools = build_pools(corpus.texts, corpus.questions, geo.fit(corpus.texts), fetch_k,
                                desc=f"{geo.name}/{corpus.name}", show=show)
            rows = len(specs)
            hybrid = HybridSearch(corpus.texts, pools)  # one BM25 index for both protocols
            with one_blas_thread():  # the selections' products are small (see lsa)
                if at_k:
                    res = evaluate_evidence(corpus, pools, specs, ks, hybrid=hybrid,
                                            model=geo.label, show=show)
                    at_k_runs.setdefault(geo.name, []).append(res)
                    rows = len(res.labels)
                if at_budgets:
                    budget_runs.setdefault(geo.name, []).append(evaluate_budgets(
                        corpus, pools, specs, chosen, hybrid=hybrid, model=geo.label,
                        show=show))
            log(f"evidence/{geo.name}/{corpus.name}: {len(corpus.questions)} questions x "
                f"{rows} rows, {time.perf_counter() - start:.0f} s")
    return at_k_runs, budget_runs


def docs_block(command: str, at_k: Mapping[str, Sequence[EvidenceResult]],
               at_budgets: Mapping[str, Sequence[BudgetResult]]) -> tuple[str, str]:
    """(the block of docs/evaluation.md: what was measured and both summaries; the page
    docs/evaluation_tables.md: the same heading, then every model's tables)."""
    summary = summary_block([command], at_k, at_budgets)
    heading = f"<!-- generated by `{command}`: paste as it is -->"
    page = ["# Evaluation: every row, every cell",
            "The tables behind [the evaluation](evaluation.md), generated; what each row and "
            "corpus is, and how to read them, is on that page.", heading,
            summary.split("\n\n", 1)[0]]
    for name, results in at_k.items():
        label = results[0].model
        page.append(f"## {label}: at fixed k")
        page.extend(map(EVIDENCE_REPORT.table, results))
        page.append(f"## {label}: at equal token budgets")
        page.extend(map(BUDGET_REPORT.table, at_budgets[name]))
    return f"{heading}\n\n{summary}\n", "\n\n".join(page) + "\n"
