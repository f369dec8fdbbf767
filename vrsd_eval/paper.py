"""``vrsd eval``: the VRSD paper's quality protocol, run through the LangChain path.

Protocol (``data/datasets/README.md``, paper Table 1): the first 20% of each
dataset are the queries, the remaining 80% the corpus; for every query the
``fetch_k`` nearest corpus items by cosine are over-fetched and each method
selects ``k`` of them. Per method we report the mean over queries of

* Sim. = cos(sum of the k selected vectors, query)  (``metrics.sum_vector_similarity``)
* Div. = mean pairwise cosine of the k selected vectors, lower is more diverse
  (``metrics.intra_list_similarity``)

and VRSD's win rate against each method (share of queries where VRSD's Sim. is
strictly higher; the same for Div., where lower wins).

Nothing here re-implements retrieval: the corpus goes into a LangChain vector
store (FAISS flat inner product on L2-normalised vectors, i.e. exact cosine, or
``InMemoryVectorStore``) and every method is a ``vrsd_langchain.DiverseRetriever``
called once per query and k. Embeddings come from ``disk_embeddings`` (on disk,
documents and queries), so each text is encoded once, ever.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, metrics

from . import report
from .methods import REFERENCE, SWAP_LABEL, MethodSpec
from .report import save_figure
from .store import build_store

DEFAULT_KS = (6, 12, 18)
DEFAULT_FETCH_K = 50


@dataclass
class DatasetResult:
    """Per-query Sim. and Div. of every method at every k, for one dataset."""

    name: str
    n_queries: int
    n_corpus: int
    fetch_k: int
    model: str
    specs: list[MethodSpec]
    ks: list[int]
    sim: dict[int, dict[str, np.ndarray]]
    div: dict[int, dict[str, np.ndarray]]
    seconds: float = 0.0
    encoded: int = 0

    def rows(self, k: int) -> list[dict[str, Any]]:
        """One row per method at ``k``: means and VRSD's win rates against it."""
        ref_sim, ref_div = self.sim[k][REFERENCE], self.div[k][REFERENCE]
        out = []
        for spec in self.specs:
            s, d = self.sim[k][spec.label], self.div[k][spec.label]
            is_ref = spec.label == REFERENCE
            out.append({
                "method": spec.label,
                "options": spec.options_text(),
                "sim_mean": float(s.mean()),
                "div_mean": float(d.mean()),
                "vrsd_win_sim": None if is_ref else metrics.win_rate(ref_sim, s),
                "vrsd_win_div": None if is_ref else metrics.win_rate(
                    ref_div, d, lower_is_better=True
                ),
            })
        return out

    def swap_never_below_greedy(self, k: int) -> tuple[int, int] | None:
        """(queries where vrsd_swap's Sim. >= greedy's, all queries), if both ran."""
        if SWAP_LABEL not in self.sim[k]:
            return None
        swap, greedy = self.sim[k][SWAP_LABEL], self.sim[k][REFERENCE]
        return int((swap >= greedy - 1e-9).sum()), len(greedy)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def format_table(result: DatasetResult, k: int) -> str:
    """The markdown table of one dataset at one k, with a heading and a summary line."""
    rows = result.rows(k)
    lines = [
        f"#### {result.name}, k = {k}",
        "",
        f"{result.n_queries} queries, corpus {result.n_corpus}, fetch_k = {result.fetch_k}, "
        f"model {result.model}",
        "",
        "| method | options | Sim. mean | Div. mean | VRSD wins Sim. | VRSD wins Div. |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r['options']} | {_fmt(r['sim_mean'])} | {_fmt(r['div_mean'])} "
            f"| {_fmt(r['vrsd_win_sim'])} | {_fmt(r['vrsd_win_div'])} |"
        )
    best = max(rows, key=lambda r: r["sim_mean"])
    notes = [f"highest mean Sim.: {best['method']}"]
    if best["method"] == SWAP_LABEL:
        runner_up = max((r for r in rows if r["method"] != SWAP_LABEL),
                        key=lambda r: r["sim_mean"])
        notes[0] += f" (without it: {runner_up['method']})"
    swap = result.swap_never_below_greedy(k)
    if swap is not None:
        notes.append(f"{SWAP_LABEL} Sim. >= {REFERENCE} on {swap[0]}/{swap[1]} queries")
    lines += ["", "; ".join(notes) + "."]
    return "\n".join(lines)


def format_report(results: Sequence[DatasetResult]) -> str:
    """Every table of every dataset, as one markdown document."""
    parts = []
    for res in results:
        parts += [format_table(res, k) for k in res.ks]
    return "\n\n".join(parts) + "\n"


def _short_label(spec: MethodSpec) -> str:
    if spec.method == "mmr" and set(spec.options) == {"lambda_mult"}:
        return f"{spec.options['lambda_mult']}"
    return spec.label


def plot_result(result: DatasetResult, path: str | Path) -> Path:
    """PNG of mean Sim. against mean Div., one panel per k, one point per method
    (the MMR points, labelled by lambda, joined by a line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = result.ks
    fig, axes = plt.subplots(1, len(ks), figsize=(5.2 * len(ks), 4.6), squeeze=False)
    for ax, k in zip(axes[0], ks, strict=True):
        mmr = [s for s in result.specs if s.method == "mmr"]
        if len(mmr) > 1:
            ax.plot(
                [result.div[k][s.label].mean() for s in mmr],
                [result.sim[k][s.label].mean() for s in mmr],
                color="tab:gray", lw=1, zorder=1, label="mmr (by lambda)",
            )
        for spec in result.specs:
            x, y = result.div[k][spec.label].mean(), result.sim[k][spec.label].mean()
            color = (
                "tab:red" if spec.method == "vrsd"
                else "tab:gray" if spec.method == "mmr" else "tab:blue"
            )
            ax.scatter([x], [y], color=color, s=36, zorder=2)
            # swap lands just up-left of greedy vrsd (higher Sim., lower Div.): label it
            # on its left so each label sits beside its own point
            swap = spec.label == SWAP_LABEL
            ax.annotate(_short_label(spec), (x, y), textcoords="offset points",
                        xytext=(-5, 3) if swap else (4, 3), ha="right" if swap else "left",
                        fontsize=8)
        ax.set_title(f"{result.name}, k = {k}")
        ax.set_xlabel("Div. mean (mean pairwise cosine, lower = more diverse)")
        ax.set_ylabel("Sim. mean (cos(sum of selected, query))")
        ax.grid(alpha=0.3)
    fig.suptitle(
        f"{result.name}: {result.n_queries} queries, fetch_k = {result.fetch_k}, {result.model}"
    )
    return save_figure(fig, path)


def evaluate_dataset(
    name: str,
    queries: Sequence[str],
    corpus: Sequence[str],
    embeddings: Any,
    specs: Sequence[MethodSpec],
    ks: Sequence[int] = DEFAULT_KS,
    fetch_k: int = DEFAULT_FETCH_K,
    *,
    model: str = "",
    store: str = "faiss",
    progress: bool = True,
) -> DatasetResult:
    """Run every spec at every k for every query through ``DiverseRetriever``.

    Args:
        embeddings: a LangChain ``Embeddings`` (``disk_embeddings.cached_embeddings``
            in the CLI), used for the corpus, the queries and the store.
        specs: the methods (``parse_methods``).
        store: ``"faiss"`` or ``"memory"`` (see ``build_store``).
    """
    from vrsd_langchain import DiverseRetriever

    from .disk_embeddings import count_uncached
    from .geometries import embed_questions
    from .pools import embed_corpus

    if not queries:
        raise ValueError("queries: no queries to evaluate")
    if not corpus:
        raise ValueError("corpus: no corpus texts to retrieve from")
    ks = [int(k) for k in ks]
    if any(k <= 0 for k in ks):
        raise ValueError(f"k: every k must be >= 1, got {ks}")
    if fetch_k < max(ks):
        raise ValueError(f"fetch_k: {fetch_k} is smaller than the largest k ({max(ks)})")
    start = time.perf_counter()
    corpus = list(corpus)
    encoded = count_uncached(embeddings, corpus) if hasattr(
        embeddings, "document_embedding_store") else len(corpus)
    vectors = embed_corpus(corpus, embeddings, f"{name}: corpus embeddings ({encoded} to encode)",
                           progress)
    matrix = np.asarray(vectors, dtype=np.float64)
    vs = build_store(store, corpus, vectors, embeddings)
    query_vecs = embed_questions(embeddings, queries)
    retrievers = {
        (k, s.label): DiverseRetriever(
            vectorstore=vs, k=k, fetch_k=fetch_k, method=s.method or DEFAULT_METHOD,
            method_kwargs=dict(s.options),
        )
        for k in ks for s in specs
    }
    sim = {k: {s.label: np.zeros(len(queries)) for s in specs} for k in ks}
    div = {k: {s.label: np.zeros(len(queries)) for s in specs} for k in ks}
    for qi, query in enumerate(report.progress(queries, unit="query", enabled=progress,
                                               desc=f"{name}: {len(retrievers)} retrievers")):
        for (k, label), retriever in retrievers.items():
            docs = retriever.invoke(query)
            picked = matrix[[int(d.metadata["row"]) for d in docs]]
            sim[k][label][qi] = metrics.sum_vector_similarity(query_vecs[qi], picked)
            div[k][label][qi] = metrics.intra_list_similarity(picked)
    return DatasetResult(
        name=name, n_queries=len(queries), n_corpus=len(corpus), fetch_k=fetch_k, model=model,
        specs=list(specs), ks=ks, sim=sim, div=div,
        seconds=time.perf_counter() - start, encoded=encoded,
    )


def paper_json(results: Sequence[DatasetResult]) -> dict[str, Any]:
    """Means and win rates of every dataset and k, as plain JSON data."""
    return {
        res.name: {
            "n_queries": res.n_queries, "n_corpus": res.n_corpus, "fetch_k": res.fetch_k,
            "model": res.model, "seconds": round(res.seconds, 1),
            "k": {str(k): res.rows(k) for k in res.ks},
        }
        for res in results
    }


def write_paper_outputs(results: Sequence[DatasetResult], out_dir: str | Path) -> dict[str, Path]:
    """Write ``eval.md`` (the tables), ``eval.json`` and ``eval_<dataset>.png`` into
    ``out_dir``; returns their paths by name."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {"markdown": out / "eval.md", "json": out / "eval.json"}
    paths["markdown"].write_text(format_report(results), encoding="utf-8")
    paths["json"].write_text(json.dumps(paper_json(results), indent=1), encoding="utf-8")
    for res in results:
        paths[f"plot_{res.name}"] = plot_result(res, out / f"eval_{res.name}.png")
    return paths

