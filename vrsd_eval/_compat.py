"""Where ``vrsd_eval`` reaches past a framework's public API: the evaluation's Haystack peer
rows override one private method of ``SentenceTransformersDiversityRanker``. Each such
member is used in this module only and is an entry of ``PRIVATE_MEMBERS``
(``vrsd_kit.stores.PrivateMember``; tests/integration_tests/adapters/test_store_registry.py checks
the installed version, that the member exists, and that nothing else touches it)."""

from __future__ import annotations

from typing import Any

from vrsd_kit.stores import private_members

PRIVATE_MEMBERS = private_members("sentence-transformers-haystack", "==2.0.0", {
    "SentenceTransformersDiversityRanker._embed_and_normalize": "overridden (its ranking "
    "code runs unchanged) to embed a question's texts once for both strategies and to hand "
    "the ranking code the candidates' own vectors (haystack_peers, reembed=False); missing: "
    "the override is never called and the ranker embeds the texts itself, as with "
    "reembed=True",
})


def memoised_diversity_ranker(memo: dict[tuple[str, tuple[str, ...]], Any]) -> type:
    """A ``SentenceTransformersDiversityRanker`` subclass whose embedding step returns
    ``memo[(query, tuple(texts))]`` (the unit text embeddings and the unit query
    embedding, as torch tensors) when present and otherwise computes it with the
    ranker's model and stores it there, keeping one question's entry at a time."""
    from haystack_integrations.components.rankers.sentence_transformers import (
        SentenceTransformersDiversityRanker,
    )

    class MemoisedDiversityRanker(SentenceTransformersDiversityRanker):  # type: ignore[misc]
        def _embed_and_normalize(self, query: str, texts_to_embed: list[str]) -> Any:
            key = (query, tuple(texts_to_embed))
            if key not in memo:
                memo.clear()  # one question at a time
                memo[key] = super()._embed_and_normalize(query, texts_to_embed)
            return memo[key]

    return MemoisedDiversityRanker
