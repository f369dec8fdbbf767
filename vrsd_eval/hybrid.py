"""The hybrid search a user would build instead of reranking, and the default over it:
peer rows of the evidence protocol (``evidence`` at fixed k, ``budget`` at token budgets).

* ``hybrid bm25+dense (rrf)``: LangChain's ``EnsembleRetriever`` (equal weights, its
  weighted reciprocal rank fusion, c = 60) over a ``BM25Retriever`` of the *whole*
  corpus (rank-bm25's ``BM25Okapi`` at its defaults, words as the default reads them:
  ``vrsd_kit.lexical.tokenize``, so the two differ in where the statistics come from,
  not in the tokeniser) and the protocol's FAISS store as a retriever. At fixed k each
  sub-retriever is asked for k and the fused list is cut to k; at a token budget each
  is asked for ``fetch_k // 2`` and the fused list is filled while items fit (as the
  ranked list is, ``budget.fill_to_budget``).
* ``default over hybrid``: ``ContextualCompressionRetriever(base_compressor=
  DiverseCompressor(embeddings=..., k=k), base_retriever=EnsembleRetriever(...))``, each
  sub-retriever fetching ``fetch_k // 2`` (at most ``fetch_k`` candidates, like the
  pools): the path for users who already run a hybrid search. The BM25 side's documents
  carry no vectors, so the compressor embeds the candidates' texts with the protocol's
  embeddings (the neural models' come from the disk cache) through one
  ``EmbeddingCache`` per corpus: each text is read once per corpus, not once per question.

Each sub-retriever is asked once per question, at the deepest cut any row needs: a
BM25 or exact dense top-k is a prefix of a deeper one, and the fusion is the ensemble's
own ``weighted_reciprocal_rank`` on the cut lists (the tests hold every row equal to
the direct ``EnsembleRetriever`` and ``ContextualCompressionRetriever`` calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vrsd_kit.lexical import tokenize
from vrsd_kit.tokens import TokenCounter, approx_token_count

from .pools import Pools

HYBRID = "hybrid bm25+dense (rrf)"
DEFAULT_OVER_HYBRID = "default over hybrid"
HYBRID_ROWS = (HYBRID, DEFAULT_OVER_HYBRID)


def _rows(documents: Sequence[Any]) -> list[int]:
    return [int(doc.metadata["row"]) for doc in documents]


class HybridSearch:
    """One corpus' BM25 index beside its dense store (built once per corpus), and the
    hybrid rows run on them question by question.

    Args:
        texts: the corpus (every indexed text; each document's metadata holds its ``row``).
        pools: the corpus' pools: their ``store`` and ``embeddings`` serve the dense side
            and the compressor.
    """

    def __init__(self, texts: Sequence[str], pools: Pools) -> None:
        from langchain_community.retrievers import BM25Retriever

        from vrsd_langchain import EmbeddingCache

        self.bm25 = BM25Retriever.from_texts(
            list(texts), metadatas=[{"row": i} for i in range(len(texts))],
            ids=[str(i) for i in range(len(texts))], preprocess_func=tokenize)
        self.store = pools.store
        self.embeddings = pools.embeddings
        self.each = max(1, int(pools.rows.shape[1]) // 2)
        self.cache = EmbeddingCache(max(1, len(texts)))
        self._ensembles: dict[int, Any] = {}
        self._compressors: dict[tuple[int, int | None, TokenCounter], Any] = {}

    def ensemble(self, k: int) -> Any:
        """``EnsembleRetriever`` over the BM25 and the dense retriever, each asked for ``k``
        (equal weights, reciprocal rank fusion): the hybrid search a user builds."""
        if k not in self._ensembles:
            from langchain_classic.retrievers import EnsembleRetriever

            self._ensembles[k] = EnsembleRetriever(retrievers=[
                self.bm25.model_copy(update={"k": k}),
                self.store.as_retriever(search_kwargs={"k": k}),
            ], weights=[0.5, 0.5])  # its default, said
        return self._ensembles[k]

    def compressor(self, k: int, max_tokens: int | None = None,
                   token_counter: TokenCounter = approx_token_count) -> Any:
        """The default as a ``DiverseCompressor`` keeping ``k`` (or filling ``max_tokens``),
        embedding through the corpus' cache."""
        key = (k, max_tokens, token_counter)
        if key not in self._compressors:
            from vrsd_langchain import DiverseCompressor

            self._compressors[key] = DiverseCompressor(
                embeddings=self.embeddings, k=k, cache=self.cache, max_tokens=max_tokens,
                token_counter=token_counter)
        return self._compressors[key]

    def retriever(self, k: int, **budget: Any) -> Any:
        """``ContextualCompressionRetriever``: the default over the hybrid search, each
        sub-retriever fetching ``each``: what a user who runs a hybrid search builds."""
        from langchain_classic.retrievers import ContextualCompressionRetriever

        return ContextualCompressionRetriever(base_compressor=self.compressor(k, **budget),
                                              base_retriever=self.ensemble(self.each))

    def _fused(self, lists: Sequence[list[Any]], k: int) -> list[Any]:
        """The ensemble's fusion of the sub-retrievers' lists cut at ``k``: what
        ``ensemble(k).invoke`` returns, from lists fetched deeper once."""
        return self.ensemble(k).weighted_reciprocal_rank([docs[:k] for docs in lists])

    def _lists(self, question: str, depth: int) -> list[list[Any]]:
        return [r.invoke(question) for r in self.ensemble(depth).retrievers]

    def rows_at_k(self, question: str, ks: Sequence[int]) -> dict[str, dict[int, list[int]]]:
        """row label -> k -> the corpus rows it returns for ``question``."""
        lists = self._lists(question, max(*ks, self.each))
        candidates = self._fused(lists, self.each)
        return {
            HYBRID: {k: _rows(self._fused(lists, k)[:k]) for k in ks},
            DEFAULT_OVER_HYBRID: {k: _rows(self.compressor(k).compress_documents(
                candidates, question)) for k in ks},
        }

    def rows_at_budgets(self, question: str, budgets: Sequence[int],
                        token_counter: TokenCounter = approx_token_count
                        ) -> tuple[list[int], dict[int, list[int]]]:
        """(the hybrid's fused list, to fill to each budget; budget -> the rows the
        default over the hybrid keeps within it) for ``question``."""
        candidates = self._fused(self._lists(question, self.each), self.each)
        fetched = 2 * self.each  # k never binds: the budget does
        return _rows(candidates), {
            b: _rows(self.compressor(fetched, b, token_counter).compress_documents(
                candidates, question)) for b in budgets}
