"""``DiversePostprocessor``: relevant *and* diverse node selection for query engines.

Usage::

    from vrsd_llamaindex import DiversePostprocessor

    query_engine = index.as_query_engine(
        similarity_top_k=50,                      # over-fetch n candidates ...
        node_postprocessors=[DiversePostprocessor(top_n=5, embed_model=embed_model)],
    )                                             # ... keep the k that VRSD picks

The postprocessor needs one vector per candidate node and one for the query.
Candidate vectors come, in this order of preference, from ``node.embedding``;
from ``vector_store`` (when given and it can return them, e.g.
``index.vector_store`` for the default ``SimpleVectorStore`` or a Chroma store);
else from ``embed_model.get_text_embedding_batch`` on
``node.get_content(metadata_mode=MetadataMode.EMBED)``, the very text the index
embedded, in one batch for just the nodes that lack a vector. The query vector
is the bundle's ``embedding`` (a synchronous vector-index retriever leaves it
there), else the embed model on the bundle's embedding strings (LlamaIndex's
async retriever hands postprocessors a bundle without one).

The selection is the kit's one rerank body (``vrsd_kit.rerank``), reading the nodes
through ``NodeView``. Each returned node is a new ``NodeWithScore`` around a copy of the
node, in selection order, with ``score`` = its relevance (what the method ranked it by:
for a method that reads the words, the relevance in pool units; else the cosine of the
node's vector to the query, or the outside ``relevance``), and
``node.metadata["vrsd"] = {"rank", "relevance", "gain", "method"}`` (rank
0-based; the entry every adapter puts on its results, ``vrsd_kit.rerank``). The copy
lists ``"vrsd"`` in its excluded LLM and embed metadata keys: the ranking
bookkeeping is for the application, not text for the LLM or the embedder. The
caller's nodes are never modified.
"""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, ClassVar, TypeVar

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    model_validator,
)
from llama_index.core.callbacks import CBEventType, EventPayload
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.settings import Settings as LlamaSettings
from numpy.typing import NDArray
from pydantic import SkipValidation, WithJsonSchema

from vrsd_core import DEFAULT_METHOD, MethodName
from vrsd_core.callers import user_stacklevel
from vrsd_kit.rerank import METADATA_KEY, ItemView, check_query_text, check_query_vector, rerank
from vrsd_kit.settings import (
    DEFAULT_FETCH_K,
    DEFAULTS,
    GroupKey,
    RelevanceFn,
    Settings,
    SettingsModel,
    build_settings,
    check_model_keywords,
)
from vrsd_kit.steps import Steps, arun_steps, call, run_steps
from vrsd_kit.stores import Reembed, check_reembedding
from vrsd_kit.tokens import TokenCounter

from ._compat import settings_embed_model_is_set
from .stores import reembedding_reason, vectors_from_store

dispatcher = get_dispatcher(__name__)

# METADATA_KEY (re-exported): the entry every returned node gets, as in vrsd_langchain
# (``vrsd_kit.rerank.entries``). The node's score is its relevance too.

FIELD_NAMES = {"k": "top_n", "options": "method_kwargs"}
"""The settings a LlamaIndex field names otherwise (``vrsd_kit.settings.SETTINGS``)."""
NODE_SETTING_FIELDS = frozenset({
    "top_n", "method", "method_kwargs", "relevance", "group_by", "max_per_group",
    "max_tokens", "token_counter", "lexical", "language", "background", "fill_with_copies",
    "metadata_key", "reembed"})
"""The fields of ``DiversePostprocessor`` (and ``DiverseRerankRetriever``) that are settings."""


def node_settings(fields: Mapping[str, Any], fetch_k: int | None = None) -> Settings:
    """The LlamaIndex fields (``NODE_SETTING_FIELDS``) mapped onto the kit's settings and
    checked (``fetch_k``: the retriever's; None for the postprocessor, whose nodes are
    given)."""
    values = {name: fields[FIELD_NAMES.get(name, name)] for name in DEFAULTS
              if FIELD_NAMES.get(name, name) in fields}
    return build_settings({**values, "fetch_k": fetch_k}, names=FIELD_NAMES)


def _with_key(keys: Sequence[str], key: str) -> list[str]:
    return list(keys) if key in keys else [*keys, key]


class NodeView(ItemView[NodeWithScore]):
    """How the rerank body reads a ``NodeWithScore``: the words, the profiles, the judge of
    copies and the excerpts read the node's own text (``get_content(MetadataMode.NONE)``:
    not the ``file_path: ...`` lines LlamaIndex prints before it, which would make two
    nodes of one folder look alike and a path the excerpt); the token budget counts what
    the LLM reads (``MetadataMode.LLM``); the user's callables get the node; the copy is a
    new ``NodeWithScore`` around a copy of the node, scored by the entry's relevance."""

    def id(self, item: NodeWithScore) -> Any:
        return item.node.node_id

    def text(self, item: NodeWithScore) -> str:
        return item.node.get_content(metadata_mode=MetadataMode.NONE)

    def prompt_text(self, item: NodeWithScore) -> str:
        return item.node.get_content(metadata_mode=MetadataMode.LLM)

    def metadata(self, item: NodeWithScore) -> Mapping[str, Any]:
        return item.node.metadata

    def vector(self, item: NodeWithScore) -> Sequence[float] | None:
        return item.node.embedding

    def subject(self, item: NodeWithScore) -> Any:
        return item.node

    def annotated(self, item: NodeWithScore, metadata: dict[str, Any],
                  entry: dict[str, Any]) -> NodeWithScore:
        """The copy carries ``metadata`` (with the entry) and new excluded-key lists that
        hide the entry from the LLM's and the embedder's view; fields vrsd does not touch
        (text, relationships, embedding) are shared with the original, as a shallow copy
        does."""
        key = next(name for name, value in metadata.items() if value is entry)
        node: BaseNode = item.node
        annotated = node.model_copy(update={
            "metadata": metadata,
            "excluded_llm_metadata_keys": _with_key(node.excluded_llm_metadata_keys, key),
            "excluded_embed_metadata_keys": _with_key(node.excluded_embed_metadata_keys, key),
        })
        return NodeWithScore(node=annotated, score=entry["relevance"])


NODES = NodeView()


def _require_query(query_bundle: QueryBundle | None) -> QueryBundle:
    if query_bundle is None:
        raise ValueError(
            "query_bundle: DiversePostprocessor needs the query; pass query_bundle= or query_str="
        )
    if not any(text.strip() for text in [query_bundle.query_str, *query_bundle.embedding_strs]):
        # as the LangChain adapter and the CLI: the store returned arbitrary nodes
        raise ValueError("query_bundle: the query is empty or only whitespace; ask a question")
    if query_bundle.embedding is None and not query_bundle.embedding_strs:
        raise ValueError("query_bundle: has neither an embedding nor a query string to embed")
    if query_bundle.embedding is None:
        for text in query_bundle.embedding_strs:
            check_query_text(text, "query_bundle")
    return query_bundle


def _has_vector(vector: Sequence[float] | None) -> bool:
    return vector is not None and len(vector) > 0


_Setting = TypeVar("_Setting")
WithCallable = Annotated[_Setting, SkipValidation, WithJsonSchema({})]
"""A field that may hold a callable, checked by the kit like every ``SkipValidation``
field below (pydantic neither coerces nor refuses it first, so the errors are the
adapters' own); in a JSON schema any value (a callable has no JSON form)."""


class DiversePostprocessor(SettingsModel, BaseNodePostprocessor):
    """Keep the ``top_n`` nodes that are relevant to the query *and* diverse.

    See the module docstring for where vectors come from and what the output
    nodes carry. Methods are those of ``vrsd_core.METHOD_INFO``: ``"complement"``
    (the default and the project's recommendation: relevance from the nodes' vectors
    and words, ``lexical``, then the most relevant set that spans the most),
    ``"vrsd"`` (the paper's greedy sum-vector selection;
    ``method_kwargs={"refine": "swap"}`` adds local search), ``"vrsd_exact"``,
    ``"mmr"`` (``lambda_mult``), ``"dpp"`` (``theta``), ``"similarity"``. The
    per-candidate inputs ``relevance``, ``group_by``/``max_per_group`` and the
    quality prior (``method_kwargs["prior"]``) read each node's metadata or call a
    function, as in the LangChain adapter. ``max_tokens`` fills the LLM's context
    up to a token budget, counted on each node's LLM text with ``token_counter``.

    ``embed_model`` left as None means ``Settings.embed_model``, looked up only
    when a vector must actually be computed. If Settings has no model either,
    that is a ValueError rather than LlamaIndex's silent OpenAI default: the
    vectors must come from the model the index was built with.
    ``vrsd_llamaindex.default_embed_model()`` gives the bundled all-MiniLM-L6-v2.

    The settings are checked into one frozen ``vrsd_kit.settings.Settings`` when the
    postprocessor is built and at every assignment (``vrsd_kit.settings.SettingsModel``):
    ``pp.top_n = 0`` is a ValueError naming ``top_n`` there, and the postprocessor keeps
    its previous settings. The selection is the kit's one body (``vrsd_kit.rerank``).
    """

    # the settings are checked by the kit (vrsd_kit.settings), not coerced by pydantic
    # ("3" is refused, not read as 3): SkipValidation
    top_n: SkipValidation[int] = Field(default=4, description="How many nodes to keep.")
    method: SkipValidation[MethodName] = Field(
        default=DEFAULT_METHOD,
        description="A method of vrsd_core.METHOD_INFO; default 'complement', the recommendation.",
    )
    method_kwargs: SkipValidation[dict[str, Any]] = Field(
        default_factory=dict, description="The method's options, e.g. {'lambda_mult': 0.5}."
    )
    embed_model: BaseEmbedding | None = Field(
        default=None,
        description="Embeds the query and nodes without vectors; None = Settings.embed_model.",
        exclude=True,
    )
    vector_store: Any | None = Field(
        default=None,
        description="A vector store to read candidate vectors from (e.g. index.vector_store).",
        exclude=True,
    )
    relevance: WithCallable[str | RelevanceFn[BaseNode] | None] = Field(
        default=None,
        description="Outside relevance for methods that take one (not vrsd): a numeric "
        "metadata field, or a callable (query, nodes) -> scores; None = cosine to the query.",
        exclude=True,
    )
    group_by: WithCallable[str | GroupKey[BaseNode] | None] = Field(
        default=None,
        description="Each node's source for max_per_group: a metadata field or (node) -> label.",
        exclude=True,
    )
    max_per_group: SkipValidation[int | None] = Field(
        default=None, description="At most this many nodes per group_by label."
    )
    max_tokens: SkipValidation[int | None] = Field(
        default=None,
        description="Token budget: the kept nodes' LLM text (get_content(MetadataMode.LLM)) "
        "sums to at most this many tokens (at most top_n nodes still); None = no budget.",
    )
    token_counter: WithCallable[TokenCounter | None] = Field(
        default=None,
        description="text -> int counting tokens for max_tokens (the LLM's tokenizer); "
        "None = vrsd_kit.tokens.approx_token_count (offline).",
        exclude=True,
    )
    lexical: SkipValidation[bool] = Field(
        default=True,
        description="The default method reads the nodes' words as well as their vectors: "
        "its relevance is z(z(cosine) + z(BM25 of the nodes' text against the query)), each "
        "z within the pool, and its similarity of two nodes the mean of their vectors' "
        "cosine and their word profiles' (vrsd_kit.lexical); False = the vectors only.",
    )
    language: SkipValidation[str | None] = Field(
        default=None,
        description="The nodes' language: the words are read as their Snowball stems (an ISO "
        "639-1 code or its name, 'en', 'german': vrsd_kit.lexical.LANGUAGES), the query's "
        "too; None = the words as written.",
    )
    background: SkipValidation[Any] = Field(
        default=None,
        description="What is common outside the pool (vrsd_kit.lexical.Background, e.g. "
        "Background.of_texts(your documents), or a list of them; () for none); None = the "
        "language's common words (Background.of_language: wordfreq's list, extra "
        "background; with no language, the common words of ten languages, shipped).",
        exclude=True,
    )
    fill_with_copies: SkipValidation[bool] = Field(
        default=False,
        description="The default keeps no copy of a kept node (vrsd_kit.lexical.Judge): when only "
        "copies are left, fewer than top_n come back (the entry's 'stopped' is "
        "'restatements'). True: the copies make up top_n (their entry's 'copy_of' names the "
        "node each repeats).",
    )
    metadata_key: SkipValidation[str] = Field(
        default=METADATA_KEY,
        description="The metadata key of vrsd's entry; a key the node's own metadata holds "
        "is kept and the entry goes under this key + '_' (warned once).",
    )
    reembed: SkipValidation[Reembed] = Field(
        default="warn",
        description="Nodes whose vectors neither they nor vector_store hold are embedded "
        "again: 'warn' (once per store class, naming the reason), 'allow' (silently) or "
        "'refuse' (a ValueError, for embedding APIs paid per token).",
    )

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    SETTING_FIELDS: ClassVar[frozenset[str]] = NODE_SETTING_FIELDS

    # set once this instance has warned that it had nothing to choose from
    _warned_few: bool = PrivateAttr(default=False)
    _warn_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @model_validator(mode="before")
    @classmethod
    def _check_input(cls, data: Any) -> Any:
        check_model_keywords(cls, data)  # fetchk=4: a ValueError naming fetch_k
        return data

    @model_validator(mode="after")
    def _check(self) -> DiversePostprocessor:
        self._keep_settings()
        return self

    def _checked_settings(self, fields: Mapping[str, Any]) -> Settings:
        """The fields mapped onto the kit's settings, checked (``node_settings``). Nothing
        is fetched: the caller's nodes are the candidates (``fetch_k`` None)."""
        return node_settings(fields)

    @classmethod
    def class_name(cls) -> str:
        return "DiversePostprocessor"

    # -- the query and candidate vectors ---------------------------------------------

    def resolved_embed_model(self) -> BaseEmbedding:
        """``embed_model``, else ``Settings.embed_model`` if one was set; else ValueError."""
        if self.embed_model is not None:
            return self.embed_model
        # Settings.embed_model would resolve an unset model to OpenAI (a network
        # call, and not the model that embedded the index): only take a set one.
        if not settings_embed_model_is_set():
            raise ValueError(
                "embed_model: none given and Settings.embed_model is not set; pass "
                "embed_model= (the model that built the index, e.g. "
                "vrsd_llamaindex.default_embed_model()) or set Settings.embed_model"
            )
        return LlamaSettings.embed_model

    def query_vector_steps(self, query_bundle: QueryBundle) -> Steps[NDArray[np.float64]]:
        """The bundle's embedding, else the embed model's on its embedding strings, checked
        (``vrsd_kit.rerank.check_query_vector``), as steps (``vrsd_kit.steps``)."""
        query_bundle = _require_query(query_bundle)
        if query_bundle.embedding is not None:
            return check_query_vector(query_bundle.embedding, "query_bundle", "its embedding is")
        model = self.resolved_embed_model()
        vector = yield call(model.get_agg_embedding_from_queries,
                            model.aget_agg_embedding_from_queries, query_bundle.embedding_strs)
        return check_query_vector(vector, "embed_model", "returned")

    def query_vector(self, query_bundle: QueryBundle) -> NDArray[np.float64]:
        """The bundle's embedding, else the embed model's on its embedding strings."""
        return run_steps(self.query_vector_steps(query_bundle))

    async def aquery_vector(self, query_bundle: QueryBundle) -> NDArray[np.float64]:
        """Async ``query_vector``."""
        return await arun_steps(self.query_vector_steps(query_bundle))

    def _known_vectors(self, nodes: Sequence[NodeWithScore]) -> list[Sequence[float] | None]:
        """Vectors the nodes carry, completed from ``vector_store``; None where neither has one."""
        vectors: list[Sequence[float] | None] = [NODES.vector(n) for n in nodes]
        missing = [
            n.node.node_id for n, v in zip(nodes, vectors, strict=True) if not _has_vector(v)
        ]
        if missing and self.vector_store is not None:
            found = vectors_from_store(self.vector_store, missing)
            vectors = [v if _has_vector(v) else found.get(n.node.node_id)
                       for n, v in zip(nodes, vectors, strict=True)]
        return [v if _has_vector(v) else None for v in vectors]

    def _texts_to_embed(self, nodes: Sequence[NodeWithScore],
                        vectors: list[Sequence[float] | None], reembed: Reembed
                        ) -> tuple[list[int], list[str]]:
        """Positions and texts of the nodes without a vector, once ``reembed`` allows it."""
        positions = [i for i, v in enumerate(vectors) if v is None]
        store = self.vector_store
        name = type(store).__name__ if store is not None else "no vector_store"
        check_reembedding(reembed, name, reembedding_reason(store), len(positions))
        texts = [nodes[i].node.get_content(metadata_mode=MetadataMode.EMBED) for i in positions]
        return positions, texts

    def _candidate_vector_steps(self, nodes: Sequence[NodeWithScore], reembed: Reembed
                                ) -> Steps[list[Sequence[float]]]:
        """One vector per node: its own, the store's, else embedded (one batch), as steps;
        async, the store lookup runs in a worker thread (store clients are synchronous)."""
        if self.vector_store is None:
            vectors = self._known_vectors(nodes)
        else:
            vectors = yield call(self._known_vectors,
                                 lambda nodes: asyncio.to_thread(self._known_vectors, nodes), nodes)
        positions, texts = self._texts_to_embed(nodes, vectors, reembed)
        if texts:
            model = self.resolved_embed_model()
            embedded = yield call(model.get_text_embedding_batch,
                                  model.aget_text_embedding_batch, texts)
            for i, v in zip(positions, embedded, strict=True):
                vectors[i] = v
        return vectors  # type: ignore[return-value]

    def candidate_vectors(self, nodes: Sequence[NodeWithScore]) -> list[Sequence[float]]:
        """One vector per node: its own, the store's, else embedded (one batch)."""
        return run_steps(self._candidate_vector_steps(nodes, self.settings().reembed))

    async def acandidate_vectors(self, nodes: Sequence[NodeWithScore]) -> list[Sequence[float]]:
        """Async ``candidate_vectors`` (the store lookup runs in a worker thread)."""
        return await arun_steps(self._candidate_vector_steps(nodes, self.settings().reembed))

    # -- one call ----------------------------------------------------------------------

    @contextmanager
    def _rerank_event(self, nodes: list[NodeWithScore], query_bundle: QueryBundle,
                      settings: Settings) -> Iterator[list[NodeWithScore]]:
        """Rerank start/end events (instrumentation and legacy callbacks), as
        LlamaIndex's own rerankers emit them; the caller fills the yielded list."""
        model_name = f"vrsd:{settings.method}"
        dispatcher.event(ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=settings.k,
                                          model_name=model_name))
        result: list[NodeWithScore] = []
        payload: dict[str, Any] = {
            EventPayload.NODES: nodes,
            EventPayload.MODEL_NAME: model_name,
            EventPayload.QUERY_STR: query_bundle.query_str,
            EventPayload.TOP_K: settings.k,
        }
        with self.callback_manager.event(CBEventType.RERANKING, payload=payload) as event:
            yield result
            event.on_end(payload={EventPayload.NODES: result})
        dispatcher.event(ReRankEndEvent(nodes=result))

    def _warn_if_nothing_to_choose(self, count: int, top_n: int) -> None:
        """Warn (once per instance) when the candidates are no more than ``top_n``: the
        selection then returns them all, which is plain top-k, and nothing else says so.
        The usual cause is LlamaIndex's ``similarity_top_k`` default of 2."""
        if count > top_n or self._warned_few:
            return
        with self._warn_lock:
            if self._warned_few:
                return
            self._warned_few = True
        warnings.warn(
            f"DiversePostprocessor(top_n={top_n}) received {count} candidate node(s): "
            "nothing to choose from, so they come back as retrieved (plain top-k). Fetch "
            "more candidates than top_n: similarity_top_k on the index's retriever or query "
            "engine (LlamaIndex's default is 2), e.g. "
            f"similarity_top_k={max(DEFAULT_FETCH_K, 4 * top_n)}; "
            "for vrsd_llamaindex.DiverseRerankRetriever, its fetch_k. (Warned once per "
            "postprocessor.)",
            UserWarning,
            stacklevel=user_stacklevel(),
        )

    def _checked_call(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None
                      ) -> tuple[Settings, QueryBundle]:
        """(the settings, the checked bundle: ``_require_query``), warning when ``nodes``
        leave nothing to choose from."""
        settings = self.settings()
        query_bundle = _require_query(query_bundle)
        if nodes:
            self._warn_if_nothing_to_choose(len(nodes), settings.k)
        return settings, query_bundle

    def _vector_steps(self, nodes: list[NodeWithScore], query_bundle: QueryBundle,
                      settings: Settings
                      ) -> Steps[tuple[NDArray[np.float64], list[Sequence[float]]]]:
        """(the query vector, one vector per node) as steps (``vrsd_kit.steps``), for the
        rerank body."""
        query_vector = yield from self.query_vector_steps(query_bundle)
        vectors = yield from self._candidate_vector_steps(nodes, settings.reembed)
        return query_vector, vectors

    @dispatcher.span
    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        settings, query_bundle = self._checked_call(nodes, query_bundle)
        if not nodes:
            return []
        with self._rerank_event(nodes, query_bundle, settings) as result:
            query_vector, vectors = run_steps(self._vector_steps(nodes, query_bundle, settings))
            result.extend(rerank(NODES, nodes, query=query_bundle.query_str,
                                 query_vector=query_vector, vectors=vectors, settings=settings))
        return result

    @dispatcher.span
    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: QueryBundle | None = None
                                  ) -> list[NodeWithScore]:
        settings, query_bundle = self._checked_call(nodes, query_bundle)
        if not nodes:
            return []
        with self._rerank_event(nodes, query_bundle, settings) as result:
            query_vector, vectors = await arun_steps(
                self._vector_steps(nodes, query_bundle, settings))
            result.extend(rerank(NODES, nodes, query=query_bundle.query_str,
                                 query_vector=query_vector, vectors=vectors, settings=settings))
        return result
