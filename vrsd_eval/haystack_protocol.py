"""``vrsd eval --protocol evidence --haystack``: Haystack's rankers beside the default, on
the same candidates.

For every question the corpus's FAISS store gives the same ``fetch_k`` candidates
with their vectors (as in ``evidence.evaluate_evidence``); each row picks k of
them: ``similarity`` (plain top-k), ``default`` (``vrsd_core.DEFAULT_METHOD``) and
the rows of ``haystack_peers.haystack_peer_rows``. Scores are the evidence
protocol's (evidence recall and all-evidence rate at each k); the tables and the
JSON are ``evidence``'s formats, written as ``haystack.md`` and ``haystack.json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, metrics, select

from .evidence import EvidenceCorpus, EvidenceResult, evidence_json, format_evidence_report
from .haystack_peers import TextPicker, haystack_peer_rows
from .report import write_outputs


def _core(method: str) -> TextPicker:
    def pick(q: np.ndarray, cands: np.ndarray, k: int, texts: Sequence[str], query: str
             ) -> list[int]:
        return [int(i) for i in select(q, cands, k, method=method).indices]

    return pick


def evaluate_haystack(corpus: EvidenceCorpus, embeddings: Any, ks: Sequence[int], fetch_k: int,
                      *, model: str = "", reembed: bool = False, progress: bool = True
                      ) -> EvidenceResult:
    """Every row at every k for every question of ``corpus`` (see the module doc)."""
    from tqdm.auto import tqdm

    from vrsd_core.contract import check_query_vector
    from vrsd_langchain import EmbeddingCache, fetch_candidates

    from .store import build_store

    start = time.perf_counter()
    ks = [int(k) for k in ks]
    store = build_store("faiss", corpus.texts, embeddings.embed_documents(corpus.texts),
                        embeddings)
    pickers: dict[str, TextPicker] = {"similarity": _core("similarity"),
                                      "default": _core(DEFAULT_METHOD),
                                      **haystack_peer_rows(max_k=max(ks), reembed=reembed)}
    labels = list(pickers)
    nq = len(corpus.questions)
    recall = {k: {lab: np.zeros(nq) for lab in labels} for k in ks}
    complete = {k: {lab: np.zeros(nq, dtype=bool) for lab in labels} for k in ks}
    owner, cache = np.asarray(corpus.passage_of), EmbeddingCache()
    for qi, question in enumerate(tqdm(corpus.questions, desc=f"haystack/{corpus.name}",
                                       disable=not progress, unit="question")):
        gold = set(corpus.gold[qi])
        qvec = check_query_vector(embeddings.embed_query(question))
        cands = fetch_candidates(store, question, qvec, fetch_k, {}, embeddings, cache)
        rows = [int(d.metadata["row"]) for d in cands.documents]
        texts = [d.page_content for d in cands.documents]
        vectors = np.asarray(cands.vectors, dtype=np.float64)
        for label, pick in pickers.items():
            for k in ks:
                found = {int(owner[rows[i]]) for i in pick(qvec, vectors, k, texts, question)}
                recall[k][label][qi] = metrics.evidence_recall(found & gold, gold)
                complete[k][label][qi] = metrics.all_evidence(found & gold, gold)
    return EvidenceResult(
        variant=corpus.name, n_questions=nq, n_corpus=len(corpus.texts), fetch_k=fetch_k,
        model=model, ks=ks, labels=labels, peers=labels[2:], recall=recall,
        complete=complete, seconds=time.perf_counter() - start,
    )


def run_haystack_protocol(corpora: Sequence[EvidenceCorpus], embeddings: Any,
                          ks: Sequence[int], fetch_k: int, *, out: str | Path, model: str,
                          reembed: bool = False, progress: bool = True,
                          log: Callable[[str], None] = print) -> list[EvidenceResult]:
    """``evaluate_haystack`` on every corpus; prints the report, writes haystack.md/.json."""
    results = []
    for corpus in corpora:
        res = evaluate_haystack(corpus, embeddings, ks, fetch_k, model=model, reembed=reembed,
                                progress=progress)
        log(f"haystack/{corpus.name}: {res.n_questions} questions x {len(ks)} k x "
            f"{len(res.labels)} rows, {res.seconds:.0f} s")
        results.append(res)
    report = format_evidence_report(results)
    print(report)
    for what, path in write_outputs(out, "haystack", report, evidence_json(results)).items():
        log(f"wrote {what}: {path}")
    return results
