"""``vrsd inspect`` on corpora whose answer is known, and what it costs.

1. The figures of ``vrsd_cli.inspection.inspect_store`` at its defaults (k = 4 of
   ``vrsd_kit.settings.DEFAULT_FETCH_K``) on the demo's folder (copies labelled by
   their facts: crowded), the paraphrase corpus (paraphrases labelled by their ids:
   the words cannot see them),
   HotpotQA plain (no passage restates another: clean) and HotpotQA redundant (every
   paragraph plus an overlapping chunk of it: crowded), each asked its own questions
   and a sample of its own passages; with how the held-back passages agree with the
   labels: precision (held-back passages that restate the kept passage the report
   names), recall (top-k slots that restate a higher-ranked one, by the labels, that
   the default holds back) and the crowding rate the labels give.
2. The crowding rate at k = 2, 4, 6, 10 (the corpora's own questions), against the
   verdict's threshold; plotted to ``--out``/inspect_corpora.png.
3. Cost: 200 distinct questions on the paraphrase corpus with the bundled model, nothing
   cached: through the ``vrsd`` command's disk-cached embeddings and through plain
   ``HuggingFaceEmbeddings`` (the questions embedded in batches), and as a model that
   embeds a query unlike a document costs (one ``embed_query`` each), with torch's
   default threads and with one (on a busy machine a single query's forward pass on
   two threads waits for the other thread).

The bundled all-MiniLM-L6-v2; stores: LangChain ``InMemoryVectorStore`` (demo) and FAISS
(HotpotQA, exact cosine). Embeddings come from the disk cache ``vrsd eval`` fills.

    .venv/bin/python benchmarks/inspect_corpora.py [--limit N] [--out results/]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

KS = (2, 4, 6, 10)
SAMPLE = 200
COST_QUESTIONS = 200


def corpora(limit: int | None) -> list:
    from vrsd_cli.inspection.known import demo_corpus, hotpotqa_corpora, paraphrase_corpus

    return [demo_corpus(), paraphrase_corpus(), *hotpotqa_corpora(limit)]


def figures_table(known: list, stores: dict) -> list[str]:
    from vrsd_cli.inspection import inspect_store
    from vrsd_cli.inspection.known import agreement

    rows = ["| corpus | questions | crowded questions | crowding rate | slots changed | "
            "sources gained | distinct sources (top-k -> default) | verdict | "
            "precision | recall | labelled rate | s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for corpus in known:
        for asked in ("its questions", "a sample"):
            questions = corpus.questions if asked == "its questions" else None
            found = inspect_store(stores[corpus.name], questions, sample=SAMPLE)
            agree = agreement(found, corpus)
            rows.append(
                f"| {corpus.name} | {len(found.questions)} ({asked}) | "
                f"{found.crowded_share:.1%} | {found.crowding_rate:.1%} | "
                f"{found.slots_changed:.2f} of {found.k} | {found.sources_gained:+.2f} | "
                f"{found.distinct_sources():.2f} -> "
                f"{found.distinct_sources('default'):.2f} | "
                f"{'crowded' if found.crowded else 'not crowded'} | "
                f"{agree.precision:.0%} ({agree.restating}/{agree.held_back}) | "
                f"{f'{agree.recall:.0%}' if agree.labelled else '–'} "
                f"({agree.caught}/{agree.labelled}) | "
                f"{agree.labelled_rate:.1%} | {found.seconds:.1f} |")
    return rows


def k_table(known: list, stores: dict, out: Path) -> list[str]:
    from matplotlib.figure import Figure

    from vrsd_cli.inspection import inspect_store
    from vrsd_kit.inspection import CROWDED_RATE
    from vrsd_kit.settings import DEFAULT_FETCH_K

    rows = ["| corpus | " + " | ".join(f"k = {k}" for k in KS) + " |",
            "|---|" + "---|" * len(KS)]
    fig = Figure(figsize=(6, 3.6), dpi=110)
    ax = fig.subplots()
    for corpus in known:
        rates = [inspect_store(stores[corpus.name], corpus.questions, k=k).crowding_rate
                 for k in KS]
        rows.append(f"| {corpus.name} | " + " | ".join(f"{r:.1%}" for r in rates) + " |")
        ax.plot(KS, rates, "o-", label=corpus.name)
    ax.axhline(CROWDED_RATE, color="#888", ls="--", lw=1, label="verdict threshold")
    ax.set_xlabel(f"k (fetch_k = {DEFAULT_FETCH_K})")
    ax.set_ylabel("crowding rate")
    ax.set_xticks(KS)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "inspect_corpora.png")
    return rows


def cost_questions(corpus: Any) -> list[str]:
    """COST_QUESTIONS distinct questions: the demo's ordinary questions and its passages,
    then the same with a lead-in, and so on."""
    base = [*corpus.questions, *corpus.texts]
    out: list[str] = []
    for lead in ("", "Briefly: ", "In one line: ", "Explain: "):
        out += [lead + q for q in base]
    return out[:COST_QUESTIONS]


def cost_table(demo: Any) -> list[str]:
    import torch
    from langchain_core.embeddings import Embeddings

    from vrsd_cli.inspection import inspect_store
    from vrsd_cli.inspection._eval import cached_embeddings
    from vrsd_langchain import default_embeddings

    class OneAtATime(Embeddings):
        """The bundled model as a model with a query prompt looks: queries one by one."""

        def __init__(self, inner: Embeddings) -> None:
            self.inner = inner

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.inner.embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            return self.inner.embed_query(text)

    questions = cost_questions(demo)
    assert len(set(questions)) == COST_QUESTIONS
    threads = torch.get_num_threads()
    rows = ["| embeddings | questions embedded | torch threads | seconds | ms per question |",
            "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as cache:
        runs = (
            ("the vrsd command's (its disk cache, empty)", "in batches",
             cached_embeddings(None, cache), threads),
            ("HuggingFaceEmbeddings", "in batches", default_embeddings(), threads),
            ("a model with a query prompt (here: the same, wrapped)", "one embed_query each",
             OneAtATime(default_embeddings()), threads),
            ("a model with a query prompt (here: the same, wrapped)", "one embed_query each",
             OneAtATime(default_embeddings()), 1),
        )
        for label, how, embeddings, count in runs:
            store = demo.langchain_store(embeddings)  # built before the clock starts
            torch.set_num_threads(count)
            start = time.perf_counter()
            found = inspect_store(store, questions)
            seconds = time.perf_counter() - start
            torch.set_num_threads(threads)
            rows.append(f"| {label} | {how} | {count} | {seconds:.1f} | "
                        f"{1000 * seconds / len(found.questions):.0f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None,
                        help="HotpotQA: the first N questions and their paragraphs (all 500)")
    parser.add_argument("--out", default="results", help="where the plot goes (results/)")
    args = parser.parse_args()

    import torch

    from vrsd_cli.inspection._eval import cached_embeddings
    from vrsd_kit.settings import DEFAULT_FETCH_K

    embeddings = cached_embeddings()
    known = corpora(args.limit)
    small = ("demo", "paraphrases")
    stores = {c.name: c.langchain_store(embeddings, "memory" if c.name in small else "faiss")
              for c in known}
    print(f"bundled all-MiniLM-L6-v2, k = 4 of fetch_k = {DEFAULT_FETCH_K} unless said; "
          f"torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores\n")
    print("\n".join(figures_table(known, stores)), "\n")
    print("crowding rate by k (each corpus's own questions):\n")
    print("\n".join(k_table(known, stores, Path(args.out))), "\n")
    print("cost: 200 questions on the paraphrase corpus:\n")
    print("\n".join(cost_table(known[1])))
    print(f"\nwrote {Path(args.out) / 'inspect_corpora.png'}")


if __name__ == "__main__":
    main()
