"""``vrsd eval haystack``: Haystack's rankers beside the default, on
the same candidates.

For every question the corpus's FAISS store gives the same ``fetch_k`` candidates
with their vectors (``pools.build_pools``); each row picks k of
them: ``similarity`` (plain top-k), ``default`` (``vrsd_core.DEFAULT_METHOD``) and
the rows of ``haystack_peers.haystack_peer_rows``. Scores are the evidence
protocol's (evidence recall and all-evidence rate at each k); the tables and the
JSON are ``evidence``'s formats, written as ``haystack.md`` and ``haystack.json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from vrsd_core import DEFAULT_METHOD, MethodName, select
from vrsd_kit.lexical import pool_relevance
from vrsd_kit.rerank import pool_keywords

from .evidence import EVIDENCE_REPORT, EvidenceCorpus, EvidenceResult, empty_scores
from .geometries import Geometry
from .haystack_peers import TextPicker, haystack_peer_rows
from .pools import Pools, build_pools, pool_reach, score
from .report import progress, write_outputs


def _core(method: MethodName, words: bool = False) -> TextPicker:
    """``select`` on the candidates with the keywords the rerank body builds
    (``vrsd_kit.rerank.pool_keywords``: the judge of copies for the default and, with
    ``words``, what the pool's words say): what ``DiverseRanker`` picks."""
    def pick(q: np.ndarray, cands: np.ndarray, k: int, texts: Sequence[str], query: str
             ) -> list[int]:
        signals = pool_relevance(query, texts, q, cands) if words else None
        keywords, _ = pool_keywords(method, signals, texts)
        return [int(i) for i in select(q, cands, k, method=method, **keywords).indices]

    return pick


def evaluate_haystack(corpus: EvidenceCorpus, pools: Pools, ks: Sequence[int], *,
                      model: str = "", reembed: bool = False, show: bool = True
                      ) -> EvidenceResult:
    """Every row at every k for every question of ``corpus``, on its ``pools``."""
    start = time.perf_counter()
    ks = [int(k) for k in ks]
    pickers: dict[str, TextPicker] = {"similarity": _core("similarity"),
                                      "default": _core(DEFAULT_METHOD, words=True),
                                      **haystack_peer_rows(max_k=max(ks), reembed=reembed)}
    labels = list(pickers)
    recall, complete = empty_scores(ks, labels, len(corpus.questions))
    owner = np.asarray(corpus.passage_of)
    for qi, question in enumerate(progress(corpus.questions, desc=f"haystack/{corpus.name}",
                                           unit="question", enabled=show)):
        rows = pools.rows[qi]
        texts = [corpus.texts[r] for r in rows]
        q, vectors = pools.queries[qi], pools.vectors[qi].astype(np.float64)
        for label, pick in pickers.items():
            for k in ks:
                recall[k][label][qi], complete[k][label][qi] = score(
                    rows[pick(q, vectors, k, texts, question)], owner, corpus.gold[qi])
    return EvidenceResult(
        variant=corpus.name, n_questions=len(corpus.questions), n_corpus=len(corpus.texts),
        fetch_k=pools.rows.shape[1], model=model, ks=ks, labels=labels, peers=labels[2:],
        recall=recall, complete=complete, seconds=time.perf_counter() - start,
        reach=pool_reach(pools, owner, corpus.gold),
    )


def run_haystack_protocol(corpora: Sequence[EvidenceCorpus], geometry: Geometry,
                          ks: Sequence[int], fetch_k: int, *, out: str | Path,
                          reembed: bool = False, show: bool = True,
                          log: Callable[[str], None] = print) -> list[EvidenceResult]:
    """``evaluate_haystack`` on every corpus; prints the report, writes haystack.md/.json."""
    results = []
    for corpus in corpora:
        pools = build_pools(corpus.texts, corpus.questions, geometry.fit(corpus.texts), fetch_k,
                            desc=f"{geometry.name}/{corpus.name}", show=show)
        res = evaluate_haystack(corpus, pools, ks, model=geometry.label, reembed=reembed,
                                show=show)
        log(f"haystack/{corpus.name}: {res.n_questions} questions x {len(ks)} k x "
            f"{len(res.labels)} rows, {res.seconds:.0f} s")
        results.append(res)
    runs = {geometry.name: results}
    report = EVIDENCE_REPORT.document(runs)
    print(report)
    for what, path in write_outputs(out, "haystack", report, EVIDENCE_REPORT.json(runs)).items():
        log(f"wrote {what}: {path}")
    return results
