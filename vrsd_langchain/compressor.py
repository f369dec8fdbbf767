"""``DiverseCompressor``: choose k of any retriever's documents (BM25, ensembles, ...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray
from pydantic import (
    ConfigDict,
    Field,
    SkipValidation,
    model_validator,
)

from vrsd_core import DEFAULT_METHOD, MethodName
from vrsd_kit.rerank import METADATA_KEY
from vrsd_kit.settings import (
    GroupKey,
    RelevanceFn,
    Settings,
    SettingsModel,
    build_settings,
    check_model_keywords,
)
from vrsd_kit.steps import Steps, arun_steps, run_steps
from vrsd_kit.tokens import TokenCounter

from .cache import DEFAULT_CACHE_SIZE, EmbeddingCache, built_cache
from .candidates import Candidates, choose, query_vector_steps
from .settings import FIELD_NAMES, PER_CANDIDATE, retriever_values


class DiverseCompressor(SettingsModel, BaseDocumentCompressor):
    """Rerank a retriever's output: embed query and documents, keep ``k`` chosen by ``method``.

    For ``langchain_classic.retrievers.ContextualCompressionRetriever``: the base
    retriever over-fetches, this picks k relevant *and* diverse documents. The
    documents' text is embedded with ``embeddings`` through a bounded cache
    keyed by content (shareable with a ``DiverseRetriever``), the query once per
    call. Output: copies in selection order with ``metadata["vrsd"]``
    (``vrsd_langchain.METADATA_KEY``); the input documents are not changed.

    Example:
        .. code-block:: python

            from langchain_classic.retrievers import ContextualCompressionRetriever
            from langchain_community.retrievers import BM25Retriever

            retriever = ContextualCompressionRetriever(
                base_compressor=DiverseCompressor(embeddings=default_embeddings(), k=4),
                base_retriever=BM25Retriever.from_texts(texts, k=20),
            )
    """

    embeddings: Embeddings
    """Embeds the query and the documents."""
    # the settings are checked by the kit (vrsd_kit.settings), not coerced by pydantic
    k: SkipValidation[int] = 4
    """How many documents to keep."""
    method: SkipValidation[MethodName] = DEFAULT_METHOD
    """A ``vrsd_core.METHOD_INFO`` name."""
    method_kwargs: SkipValidation[dict[str, Any]] = Field(default_factory=dict)
    """The method's options (``prior`` may name a numeric metadata field)."""
    relevance: SkipValidation[str | RelevanceFn[Document] | None] = None
    """Outside relevance (as in ``DiverseRetriever``): a numeric metadata field or a
    callable ``(query, documents) -> scores``, e.g. a hybrid or cross-encoder score."""
    group_by: SkipValidation[str | GroupKey[Document] | None] = None
    """Each document's source, for ``max_per_group`` (a metadata field or a callable)."""
    max_per_group: SkipValidation[int | None] = None
    """At most this many documents per ``group_by`` label."""
    max_tokens: SkipValidation[int | None] = None
    """A token budget: the kept documents' ``page_content`` token counts sum to at most
    this (as in ``DiverseRetriever``). None: no budget."""
    token_counter: SkipValidation[TokenCounter | None] = None
    """text -> int for ``max_tokens`` (the LLM's tokenizer); None: ``approx_token_count``."""
    lexical: SkipValidation[bool] = True
    """The default method's relevance reads the documents' words as well as their vectors
    (as in ``DiverseRetriever``); False: the vectors only."""
    language: SkipValidation[str | None] = None
    """The texts' language, whose Snowball stemmer the words are read with (as in
    ``DiverseRetriever``); None: the words as written."""
    background: SkipValidation[Any] = None
    """What is common outside the pool (``vrsd_kit.lexical.Background``, as in
    ``DiverseRetriever``); None: the language's common words (``Background.of_language``)."""
    fill_with_copies: SkipValidation[bool] = False
    """True: copies of kept documents make up k when nothing else is left (as in
    ``DiverseRetriever``); False: fewer come back."""
    metadata_key: SkipValidation[str] = METADATA_KEY
    """The metadata key of vrsd's entry; a key the document's own metadata holds is kept
    and the entry goes under this key + ``"_"`` (warned once)."""
    cache: EmbeddingCache | None = None
    """Document-embedding cache; default a new one of ``cache_size`` entries."""
    cache_size: int = DEFAULT_CACHE_SIZE

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    SETTING_FIELDS: ClassVar[frozenset[str]] = frozenset({
        "k", "method", "method_kwargs", *PER_CANDIDATE})

    @model_validator(mode="before")
    @classmethod
    def _check_input(cls, data: Any) -> Any:
        check_model_keywords(cls, data)  # fetchk=4: a ValueError naming fetch_k
        return data

    @model_validator(mode="after")
    def _check(self) -> DiverseCompressor:
        self._keep_settings()
        if self.cache is None:
            self.cache = EmbeddingCache(self.cache_size)
        return self

    def _checked_settings(self, fields: Mapping[str, Any]) -> Settings:
        """The fields mapped onto the kit's settings, checked. Nothing is fetched: the
        caller's documents are the candidates (``fetch_k`` None)."""
        return build_settings({**retriever_values(fields), "fetch_k": None}, names=FIELD_NAMES)

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
        docs, settings = list(documents), self.settings()
        if not docs:
            return []
        query_vector, vectors = run_steps(self._vector_steps(docs, query))
        return choose(query_vector, Candidates(docs, vectors), settings, query)

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """Async ``compress_documents`` (``aembed_query``, ``aembed_documents``)."""
        docs, settings = list(documents), self.settings()
        if not docs:
            return []
        query_vector, vectors = await arun_steps(self._vector_steps(docs, query))
        return choose(query_vector, Candidates(docs, vectors), settings, query)
