"""Haystack's rankers as peer rows of ``vrsd eval evidence``, on the same candidates.

Each row is a picker ``(query vector, candidate vectors, k, candidate texts, query text)
-> picked positions``, like ``evidence.peer_rows()``'s but also given the texts:

* Haystack's ``SentenceTransformersDiversityRanker`` (sentence-transformers-haystack),
  both strategies, ``greedy_diversity_order`` and ``maximum_margin_relevance`` with
  its default ``lambda_threshold=0.5``. In a Haystack pipeline it embeds the query
  and the candidates' texts again with its own model (the bundled
  all-MiniLM-L6-v2 here, offline). ``reembed=False`` (the default) gives its
  ranking code the candidates' vectors and the query vector instead, so every
  row ranks the same geometry (equal picks when the run's model is MiniLM, and
  about 7 s less per question on one core for 50 candidates); ``reembed=True``
  runs it as a pipeline would, MiniLM whatever model retrieved the candidates.
* pyversity-haystack's ``PyversityRanker`` with its defaults (DPP, diversity 0.5),
  on the candidates' vectors with their cosine to the query as the documents'
  scores (what a retriever sets).
* ``vrsd_haystack.DiverseRanker`` with its defaults, on the candidates' vectors: it
  must match the project's ``default`` row.

Both greedy strategies pick in an order that does not depend on ``top_k``, so
each ranker runs once per question (all candidates ranked) and every k takes a
prefix; the two strategies share one embedding of the question's texts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

TextPicker = Callable[[np.ndarray, np.ndarray, int, Sequence[str], str], list[int]]
ST_MMR_LAMBDA = 0.5  # SentenceTransformersDiversityRanker's default lambda_threshold


def _documents(cands: np.ndarray, texts: Sequence[str], q: np.ndarray | None = None
               ) -> list[Any]:
    """Haystack Documents ``"0"``, ``"1"``, ... (ids = positions; unique, so the
    diversity ranker's de-duplication by id removes nothing)."""
    from haystack import Document

    scores = None
    if q is not None:  # cosine to the query, as a retriever's score
        unit = cands / np.linalg.norm(cands, axis=1, keepdims=True)
        scores = unit @ (q / np.linalg.norm(q))
    return [Document(id=str(i), content=text, embedding=cands[i].tolist(),
                     score=None if scores is None else float(scores[i]))
            for i, text in enumerate(texts)]


class _DiversityOrders:
    """Both strategies of ``SentenceTransformersDiversityRanker`` on one shared model,
    each question's ranking computed once and its embeddings shared by both."""

    def __init__(self, model_path: str, max_k: int | None, reembed: bool) -> None:
        from ._compat import memoised_diversity_ranker

        memo: dict[tuple[str, tuple[str, ...]], Any] = {}
        # its embedding step looks in memo first (a private method: see vrsd_eval._compat)
        ranker = memoised_diversity_ranker(memo)
        greedy = ranker(model=model_path, strategy="greedy_diversity_order")
        greedy.warm_up()
        mmr = ranker(model=model_path, strategy="maximum_margin_relevance",
                     lambda_threshold=ST_MMR_LAMBDA)
        mmr.model = greedy.model  # one model in memory
        self.rankers = {"greedy": greedy, "mmr": mmr}
        self.max_k = max_k
        self.reembed = reembed
        self._memo = memo
        self._orders: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}

    def order(self, strategy: str, texts: Sequence[str], query: str, k: int,
              q: np.ndarray, cands: np.ndarray) -> list[int]:
        """The first ``k`` of the strategy's order (run again only for a longer prefix;
        its MMR is a Python loop over candidates and picks, so it stops at ``max_k``)."""
        key = (strategy, query, tuple(texts))
        known = self._orders.get(key, [])
        if len(known) < min(k, len(texts)):
            if key not in self._orders and len(self._orders) >= 2:
                self._orders.clear()  # the previous question's
            if not self.reembed:  # the ranker's embedding step finds these, normalised
                import torch

                unit = cands / np.linalg.norm(cands, axis=1, keepdims=True)
                self._memo.clear()
                self._memo[(query, tuple(texts))] = (
                    torch.as_tensor(unit, dtype=torch.float32),
                    torch.as_tensor((q / np.linalg.norm(q))[None, :], dtype=torch.float32))
            docs = _documents(np.zeros((len(texts), 1)), texts)
            top_k = min(len(docs), max(k, self.max_k or len(docs)))
            out = self.rankers[strategy].run(query=query, documents=docs, top_k=top_k)
            self._orders[key] = known = [int(d.id) for d in out["documents"]]
        return known[:k]


def _diversity_picker(orders: _DiversityOrders, strategy: str) -> TextPicker:
    def pick(q: np.ndarray, cands: np.ndarray, k: int, texts: Sequence[str], query: str
             ) -> list[int]:
        return orders.order(strategy, texts, query, k, q, cands)

    return pick


def _pyversity_ranker(q: np.ndarray, cands: np.ndarray, k: int, texts: Sequence[str],
                      query: str) -> list[int]:
    from haystack_integrations.components.rankers.pyversity import PyversityRanker

    out = PyversityRanker(top_k=k).run(documents=_documents(cands, texts, q))
    return [int(d.id) for d in out["documents"]]


def _vrsd_ranker(q: np.ndarray, cands: np.ndarray, k: int, texts: Sequence[str],
                 query: str) -> list[int]:
    from vrsd_haystack import DiverseRanker

    out = DiverseRanker(top_k=k).run(documents=_documents(cands, texts), query_embedding=q.tolist(),
                                  query=query)
    return [int(d.id) for d in out["documents"]]


def haystack_peer_rows(model_path: str | None = None, max_k: int | None = None,
                       reembed: bool = False) -> dict[str, TextPicker]:
    """label -> picker for every Haystack row (haystack-ai, sentence-transformers-haystack
    and pyversity-haystack must be installed). ``model_path``: the diversity ranker's
    model, default the bundled all-MiniLM-L6-v2; ``max_k``: the largest k that will be
    asked (each question's ranking is computed that far once); ``reembed``: whether the
    diversity ranker embeds the texts again (see the module docstring)."""
    from vrsd_kit.bundled_model import bundled_model_path

    orders = _DiversityOrders(model_path or bundled_model_path(), max_k, reembed)
    return {
        "haystack diversity greedy_diversity_order": _diversity_picker(orders, "greedy"),
        f"haystack diversity mmr({ST_MMR_LAMBDA})": _diversity_picker(orders, "mmr"),
        "haystack PyversityRanker (dpp, 0.5)": _pyversity_ranker,
        "haystack DiverseRanker (default)": _vrsd_ranker,
    }
