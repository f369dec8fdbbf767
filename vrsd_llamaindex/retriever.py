"""``DiverseRerankRetriever``: any LlamaIndex retriever, over-fetched and reranked by VRSD.

Usage::

    from llama_index.core.query_engine import RetrieverQueryEngine
    from vrsd_llamaindex import DiverseRerankRetriever

    retriever = DiverseRerankRetriever(index.as_retriever(), top_n=5, fetch_k=50)
    nodes = retriever.retrieve("What do plants need to grow?")
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)

The reranking is ``DiversePostprocessor``'s, run on the wrapped retriever's
``fetch_k`` candidates: the two share one implementation (the retriever holds
a postprocessor, available as ``.postprocessor``).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar, overload

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks import CallbackManager
from llama_index.core.indices.vector_store.retrievers.retriever import VectorIndexRetriever
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle

from vrsd_core import DEFAULT_METHOD, MethodName, check_count
from vrsd_kit.rerank import METADATA_KEY
from vrsd_kit.settings import (
    DEFAULT_FETCH_K,
    GroupKey,
    RelevanceFn,
    Settings,
    SettingsFields,
    keywords_checked,
)
from vrsd_kit.steps import Steps, arun_steps, call, run_steps
from vrsd_kit.stores import Reembed
from vrsd_kit.tokens import TokenCounter

from ._compat import index_embed_model, index_vector_store, replace_index_vector_store
from .base import NODE_SETTING_FIELDS, DiversePostprocessor, node_settings
from .stores import with_vectors

dispatcher = get_dispatcher(__name__)

Value = TypeVar("Value")


class _PostprocessorField(Generic[Value]):
    """A setting the retriever keeps on its postprocessor: read from it, and assigned to
    it once the retriever has checked the value (``DiverseRerankRetriever._checked_settings``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> _PostprocessorField[Value]: ...
    @overload
    def __get__(self, obj: DiverseRerankRetriever, owner: type) -> Value: ...
    def __get__(self, obj: DiverseRerankRetriever | None, owner: type) -> Any:
        return self if obj is None else getattr(obj.postprocessor, self.name)

    def __set__(self, obj: DiverseRerankRetriever, value: Value) -> None:
        setattr(obj.postprocessor, self.name, value)


class DiverseRerankRetriever(SettingsFields, BaseRetriever):
    """Wrap ``retriever``: fetch ``fetch_k`` candidates, keep ``top_n`` picked by ``method``.

    Args:
        retriever: any LlamaIndex retriever. A ``VectorIndexRetriever`` (what
            ``index.as_retriever()`` returns) is asked for ``fetch_k`` nodes on a
            per-call shallow copy, so the caller's retriever is never changed and
            concurrent calls do not race. Any other retriever is called as it
            is and returns as many candidates as it is configured to; ``fetch_k``
            then has no effect.
        top_n: how many nodes to return.
        fetch_k: how many candidates to fetch from a vector index retriever (>= top_n).
        method, method_kwargs, relevance, group_by, max_per_group, max_tokens,
            token_counter: as for ``DiversePostprocessor``.
        embed_model: embeds the query and candidates without vectors. Default:
            the vector index retriever's own model (the one the index used),
            else ``Settings.embed_model`` (see ``DiversePostprocessor``).
        vector_store: where candidate vectors can be read back. Default: the
            vector index retriever's store.
        reembed: ``"warn"``, ``"allow"`` or ``"refuse"``, for nodes whose vectors cannot
            be read (see ``DiversePostprocessor``).
        lexical: the default's relevance reads the nodes' words too (see
            ``DiversePostprocessor``); False: the vectors only.
        language: the nodes' language, whose Snowball stemmer the words are read with
            (see ``DiversePostprocessor``); None: the words as written.
        background: what is common outside the pool (see ``DiversePostprocessor``).
        fill_with_copies: copies of kept nodes make up ``top_n`` when nothing else is
            left (see ``DiversePostprocessor``); False: fewer come back.
        metadata_key: the metadata key of vrsd's entry (see ``DiversePostprocessor``).

    The settings are checked when the retriever is built and at every assignment
    (``vrsd_kit.settings.SettingsFields``): ``retriever.fetch_k = 0`` or
    ``retriever.top_n = 50`` (above ``fetch_k``) is a ValueError naming the field there,
    and the retriever keeps its previous settings. The settings it shares with
    ``DiversePostprocessor`` (``top_n``, ``method``, ...) live on its ``.postprocessor``,
    which reranks the candidates; assign them through the retriever, which checks them
    with ``fetch_k``.
    """

    SETTING_FIELDS: ClassVar[frozenset[str]] = frozenset({"fetch_k", *NODE_SETTING_FIELDS})

    top_n: _PostprocessorField[int] = _PostprocessorField()
    method: _PostprocessorField[MethodName] = _PostprocessorField()
    method_kwargs: _PostprocessorField[dict[str, Any]] = _PostprocessorField()
    relevance: _PostprocessorField[str | RelevanceFn[BaseNode] | None] = _PostprocessorField()
    group_by: _PostprocessorField[str | GroupKey[BaseNode] | None] = _PostprocessorField()
    max_per_group: _PostprocessorField[int | None] = _PostprocessorField()
    max_tokens: _PostprocessorField[int | None] = _PostprocessorField()
    token_counter: _PostprocessorField[TokenCounter | None] = _PostprocessorField()
    lexical: _PostprocessorField[bool] = _PostprocessorField()
    language: _PostprocessorField[str | None] = _PostprocessorField()
    background: _PostprocessorField[Any] = _PostprocessorField()
    fill_with_copies: _PostprocessorField[bool] = _PostprocessorField()
    metadata_key: _PostprocessorField[str] = _PostprocessorField()
    reembed: _PostprocessorField[Reembed] = _PostprocessorField()

    @keywords_checked  # DiverseRerankRetriever(r, topn=2): a ValueError naming top_n
    def __init__(
        self,
        retriever: BaseRetriever,
        top_n: int = 4,
        fetch_k: int = DEFAULT_FETCH_K,
        method: MethodName = DEFAULT_METHOD,
        method_kwargs: dict[str, Any] | None = None,
        relevance: str | RelevanceFn[BaseNode] | None = None,
        group_by: str | GroupKey[BaseNode] | None = None,
        max_per_group: int | None = None,
        max_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
        embed_model: BaseEmbedding | None = None,
        vector_store: Any | None = None,
        reembed: Reembed = "warn",
        lexical: bool = True,
        language: str | None = None,
        background: Any = None,
        fill_with_copies: bool = False,
        metadata_key: str = METADATA_KEY,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if not isinstance(retriever, BaseRetriever):
            raise ValueError(
                f"retriever: expected a LlamaIndex BaseRetriever, got {type(retriever).__name__}"
            )
        # every setting checked before anything is built: a ValueError naming the argument
        fields = {
            "top_n": top_n, "method": method, "method_kwargs": dict(method_kwargs or {}),
            "relevance": relevance, "group_by": group_by, "max_per_group": max_per_group,
            "max_tokens": max_tokens, "token_counter": token_counter, "reembed": reembed,
            "lexical": lexical, "language": language, "background": background,
            "fill_with_copies": fill_with_copies,
            "metadata_key": metadata_key}
        self._checked_settings({**fields, "fetch_k": fetch_k})
        self.retriever = retriever
        self.fetch_k = fetch_k
        self.postprocessor = DiversePostprocessor(
            **fields,
            embed_model=embed_model or index_embed_model(retriever),
            vector_store=index_vector_store(retriever) if vector_store is None else vector_store,
            callback_manager=callback_manager or CallbackManager(),
        )
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self._keep_settings()

    def _checked_settings(self, fields: Mapping[str, Any]) -> Settings:
        """The fields mapped onto the kit's settings with ``fetch_k`` (an integer >= 1,
        at least ``top_n``), checked (``node_settings``)."""
        return node_settings(fields, check_count(fields["fetch_k"], "fetch_k"))

    def _fetcher(self, fetch_k: int) -> BaseRetriever:
        """The wrapped retriever, asked for ``fetch_k`` results if it takes a top-k."""
        if isinstance(self.retriever, VectorIndexRetriever):
            fetcher = copy.copy(self.retriever)
            fetcher.similarity_top_k = fetch_k
            # A store that can return the candidates' vectors with them (Postgres) is
            # queried through a view that does; the caller's retriever keeps its store.
            store = index_vector_store(fetcher)
            if store is not None:
                replace_index_vector_store(fetcher, with_vectors(store))
            return fetcher
        return self.retriever

    def _bundles(
        self, query_bundle: QueryBundle, embedding: list[float]
    ) -> tuple[QueryBundle, QueryBundle]:
        """(bundle for the wrapped retriever, bundle for the reranking): copies, so the
        caller's bundle is never written. A vector index retriever whose model is
        ours gets the query vector too, instead of embedding the query again."""
        ranked = dataclasses.replace(query_bundle, embedding=embedding)
        model = index_embed_model(self.retriever)
        same_model = model is not None and self.postprocessor.embed_model is model
        return (ranked if same_model else dataclasses.replace(query_bundle)), ranked

    def _fetch_steps(self, query_bundle: QueryBundle
                     ) -> Steps[tuple[list[NodeWithScore], QueryBundle]]:
        """(the wrapped retriever's candidates, the bundle to rerank them for) as steps
        (``vrsd_kit.steps``): the query is embedded once, for both."""
        fetch_k = self.settings().fetch_k
        if fetch_k is None:  # the retriever's settings always have one
            raise RuntimeError("the retriever's settings have no fetch_k")
        embedding = yield from self.postprocessor.query_vector_steps(query_bundle)
        fetch, ranked = self._bundles(query_bundle, embedding.tolist())
        fetcher = self._fetcher(fetch_k)
        nodes = yield call(fetcher.retrieve, fetcher.aretrieve, fetch)
        return nodes, ranked

    @dispatcher.span
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes, ranked = run_steps(self._fetch_steps(query_bundle))
        return self.postprocessor.postprocess_nodes(nodes, query_bundle=ranked)

    @dispatcher.span
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes, ranked = await arun_steps(self._fetch_steps(query_bundle))
        return await self.postprocessor.apostprocess_nodes(nodes, query_bundle=ranked)
