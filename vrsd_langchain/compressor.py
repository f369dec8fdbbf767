"""``VRSDCompressor``: choose k of any retriever's documents (BM25, ensembles, ...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray
from pydantic import (
    ConfigDict,
    Field,
    SkipValidation,
    field_validator,
    model_validator,
)

from vrsd_core import DEFAULT_METHOD, MethodName, check_count
from vrsd_kit.contract import (
    METADATA_KEY,
    GroupKey,
    RelevanceFn,
    check_budget_options,
    check_flag,
    check_group_options,
    check_metadata_key,
    check_method_options,
    check_model_keywords,
    check_relevance_spec,
    resolve_method_fields,
)
from vrsd_kit.steps import Steps, arun_steps, run_steps
from vrsd_kit.tokens import TokenCounter

from .cache import DEFAULT_CACHE_SIZE, EmbeddingCache, built_cache
from .candidates import Candidates
from .pipeline import (
    PRIOR_FORM,
    RELEVANCE_FORM,
    PlanCache,
    SearchPlan,
    choose,
    query_vector_steps,
)

# The fields a plan is built from (``_checked_plan``).
_PLAN_FIELDS = ("k", "method", "method_kwargs", "relevance", "group_by", "max_per_group",
                "max_tokens", "token_counter", "lexical", "metadata_key")


class VRSDCompressor(BaseDocumentCompressor):
    """Rerank a retriever's output: embed query and documents, keep ``k`` chosen by ``method``.

    For ``langchain_classic.retrievers.ContextualCompressionRetriever``: the base
    retriever over-fetches, this picks k relevant *and* diverse documents. The
    documents' text is embedded with ``embeddings`` through a bounded cache
    keyed by content (shareable with a ``VRSDRetriever``), the query once per
    call. Output: copies in selection order with ``metadata["vrsd"]``
    (``vrsd_langchain.METADATA_KEY``); the input documents are not changed.

    Example:
        .. code-block:: python

            from langchain_classic.retrievers import ContextualCompressionRetriever
            from langchain_community.retrievers import BM25Retriever

            retriever = ContextualCompressionRetriever(
                base_compressor=VRSDCompressor(embeddings=default_embeddings(), k=4),
                base_retriever=BM25Retriever.from_texts(texts, k=20),
            )
    """

    embeddings: Embeddings
    """Embeds the query and the documents."""
    k: int = 4
    """How many documents to keep."""
    # the fields checked by the validators (below) are not coerced by pydantic: SkipValidation
    method: SkipValidation[MethodName] = DEFAULT_METHOD
    """A ``vrsd_core.METHOD_INFO`` name."""
    method_kwargs: dict[str, Any] = Field(default_factory=dict)
    """The method's options (``prior`` may name a numeric metadata field)."""
    relevance: SkipValidation[str | RelevanceFn[Document] | None] = None
    """Outside relevance (as in ``VRSDRetriever``): a numeric metadata field or a
    callable ``(query, documents) -> scores``, e.g. a hybrid or cross-encoder score."""
    group_by: SkipValidation[str | GroupKey[Document] | None] = None
    """Each document's source, for ``max_per_group`` (a metadata field or a callable)."""
    max_per_group: SkipValidation[int | None] = None
    """At most this many documents per ``group_by`` label."""
    max_tokens: SkipValidation[int | None] = None
    """A token budget: the kept documents' ``page_content`` token counts sum to at most
    this (as in ``VRSDRetriever``). None: no budget."""
    token_counter: SkipValidation[TokenCounter | None] = None
    """text -> int for ``max_tokens`` (the LLM's tokenizer); None: ``approx_token_count``."""
    lexical: bool = True
    """The default method's relevance reads the documents' words as well as their vectors
    (as in ``VRSDRetriever``); False: the vectors only."""
    metadata_key: str = METADATA_KEY
    """The metadata key of vrsd's entry; a key the document's own metadata holds is kept
    and the entry goes under this key + ``"_"`` (warned once)."""
    cache: EmbeddingCache | None = None
    """Document-embedding cache; default a new one of ``cache_size`` entries."""
    cache_size: int = DEFAULT_CACHE_SIZE

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @cached_property
    def _plans(self) -> PlanCache:
        """The checked plan of the fields, kept until one of them changes (a
        cached_property, in the instance's dict: a pydantic private attribute costs more
        to read than the check it saves)."""
        return PlanCache(_PLAN_FIELDS)

    @field_validator("k", mode="before")
    @classmethod
    def _strict_k(cls, value: Any) -> int:
        # Strict like VRSDRetriever's: no 2.0, "3" or True (pydantic would coerce them).
        return check_count(value, "k")

    @field_validator("lexical", mode="before")
    @classmethod
    def _strict_lexical(cls, value: Any) -> bool:
        return check_flag(value, "lexical")  # pydantic would read "no" or 0 as False

    @model_validator(mode="before")
    @classmethod
    def _check_input(cls, data: Any) -> Any:
        check_model_keywords(cls, data)  # fetchk=4: a ValueError naming fetch_k
        return resolve_method_fields(data)  # "vrsd_swap" -> "vrsd" + refine="swap"

    @model_validator(mode="after")
    def _check(self) -> VRSDCompressor:
        plan = self._checked_plan({})
        self.max_per_group, self.max_tokens = plan.max_per_group, plan.max_tokens
        self.token_counter = plan.token_counter
        self._plan()  # kept, with the fields as they now are
        if self.cache is None:
            self.cache = EmbeddingCache(self.cache_size)
        return self

    def _checked_plan(self, overrides: Mapping[str, Any]) -> SearchPlan:
        """The fields checked (the compressor's calls override nothing). Nothing is
        fetched: the caller's documents are the candidates, so ``fetch_k`` is ``k``."""
        k = check_count(self.k, "k")
        check_method_options(self.method, self.method_kwargs, PRIOR_FORM)
        check_relevance_spec(self.method, self.relevance, RELEVANCE_FORM)
        cap = check_group_options(self.group_by, self.max_per_group)
        budget, counter = check_budget_options(self.max_tokens, self.token_counter)
        return SearchPlan(k, k, self.method, dict(self.method_kwargs),
                          relevance=self.relevance, group_by=self.group_by, max_per_group=cap,
                          max_tokens=budget, token_counter=counter,
                          lexical=check_flag(self.lexical, "lexical"),
                          metadata_key=check_metadata_key(self.metadata_key))

    def _plan(self) -> SearchPlan:
        """The plan of the fields, checked again only when one of them changed."""
        return self._plans.plan(self, self._checked_plan, {})

    def _vector_steps(self, documents: list[Document], query: str
                      ) -> Steps[tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """(the query vector, the documents' vectors) as steps (``vrsd_kit.steps``):
        ``embed_query`` and the cache's ``embed_documents``, or their async forms."""
        query_vector = yield from query_vector_steps(self.embeddings, query)
        vectors = yield from built_cache(self).embed_steps(
            self.embeddings, [d.page_content for d in documents])
        return query_vector, vectors

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The chosen documents, as annotated copies in selection order."""
        docs, plan = list(documents), self._plan()
        if not docs:
            return []
        query_vector, vectors = run_steps(self._vector_steps(docs, query))
        return choose(query_vector, Candidates(docs, vectors), plan, query)

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """Async ``compress_documents`` (``aembed_query``, ``aembed_documents``)."""
        docs, plan = list(documents), self._plan()
        if not docs:
            return []
        query_vector, vectors = await arun_steps(self._vector_steps(docs, query))
        return choose(query_vector, Candidates(docs, vectors), plan, query)
