"""``VRSDPostprocessor``: relevant *and* diverse node selection for query engines.

Usage::

    from vrsd_llamaindex import VRSDPostprocessor

    query_engine = index.as_query_engine(
        similarity_top_k=20,                      # over-fetch n candidates ...
        node_postprocessors=[VRSDPostprocessor(top_n=5, embed_model=embed_model)],
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

Each returned node is a new ``NodeWithScore`` around a copy of the node, in
selection order, with ``score`` = its relevance (cosine similarity of the node's
vector to the query, unless an outside ``relevance`` is given), and
``node.metadata["vrsd"] = {"rank", "relevance", "gain", "method"}`` (rank
0-based; the payload both adapters share, ``vrsd_kit.contract``). The copy
lists ``"vrsd"`` in its excluded LLM and embed metadata keys: the ranking
bookkeeping is for the application, not text for the LLM or the embedder. The
caller's nodes are never modified.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)
from llama_index.core.callbacks import CBEventType, EventPayload
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.settings import Settings
from pydantic import SkipValidation, WithJsonSchema

from vrsd_core import (
    DEFAULT_METHOD,
    METHOD_ALIASES,
    MethodName,
    Selection,
    check_count,
    resolve_method,
    select,
)
from vrsd_core.callers import user_stacklevel
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
    check_query_text,
    check_relevance_spec,
    item_values,
    selection_inputs,
    selection_metadata_all,
    source_of,
    with_entry,
    words_relevance,
)
from vrsd_kit.steps import Steps, arun_steps, call, run_steps
from vrsd_kit.stores import Reembed, check_reembed, check_reembedding
from vrsd_kit.tokens import TokenCounter

from ._compat import settings_embed_model_is_set
from .stores import reembedding_reason, vectors_from_store

dispatcher = get_dispatcher(__name__)

# METADATA_KEY (re-exported): the entry every returned node gets, as in vrsd_langchain:
# ``{"rank", "relevance", "gain", "method"}`` (+ ``"prior"`` when one was used); see
# ``vrsd_kit.contract.selection_metadata``. The node's score is its relevance too.

def _with_key(keys: Sequence[str], key: str) -> list[str]:
    return list(keys) if key in keys else [*keys, key]


def annotated_copy(item: NodeWithScore, entry: dict[str, Any],
                   metadata_key: str = METADATA_KEY) -> NodeWithScore:
    """A new NodeWithScore around a copy of ``item.node`` carrying ``entry`` under
    ``metadata_key`` (or beside the node's own value there: ``with_entry``), excluded
    from the LLM's and the embedder's view, scored by the entry's relevance.

    The copy gets a deep copy of the metadata and new excluded-key lists; fields
    vrsd does not touch (text, relationships, embedding) are shared with the
    original, as a shallow copy does.
    """
    node: BaseNode = item.node
    metadata, key = with_entry(node.metadata, entry, metadata_key)
    annotated = node.model_copy(
        update={
            "metadata": metadata,
            "excluded_llm_metadata_keys": _with_key(node.excluded_llm_metadata_keys, key),
            "excluded_embed_metadata_keys": _with_key(node.excluded_embed_metadata_keys, key),
        }
    )
    return NodeWithScore(node=annotated, score=entry["relevance"])


def _require_query(query_bundle: QueryBundle | None) -> QueryBundle:
    if query_bundle is None:
        raise ValueError(
            "query_bundle: VRSDPostprocessor needs the query; pass query_bundle= or query_str="
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


def _node_metadata(item: NodeWithScore) -> Mapping[str, Any]:
    return item.node.metadata


def _node_name(item: NodeWithScore) -> str:
    return item.node.node_id


def node_values(spec: Any, nodes: Sequence[NodeWithScore], name: str) -> list[Any]:
    """One value per candidate node: its metadata field ``spec``, or ``spec(node)``."""
    if callable(spec):
        return [spec(item.node) for item in nodes]
    return item_values(spec, nodes, name, metadata_of=_node_metadata, describe=_node_name)


def _has_vector(vector: Sequence[float] | None) -> bool:
    return vector is not None and len(vector) > 0


_Setting = TypeVar("_Setting")
WithCallable = Annotated[_Setting, SkipValidation, WithJsonSchema({})]
"""A field that may hold a callable, checked by ``_check_method`` like every
``SkipValidation`` field below (pydantic neither coerces nor refuses it first, so the
errors are the adapters' own); in a JSON schema any value (a callable has no JSON form)."""


class VRSDPostprocessor(BaseNodePostprocessor):
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
    """

    top_n: int = Field(default=4, gt=0, description="How many nodes to keep.")
    # the fields checked by _check_method (below) are not coerced by pydantic: SkipValidation
    method: SkipValidation[MethodName] = Field(
        default=DEFAULT_METHOD,
        description="A method of vrsd_core.METHOD_INFO; default 'complement', the recommendation.",
    )
    method_kwargs: dict[str, Any] = Field(
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
    lexical: bool = Field(
        default=True,
        description="The default method reads the nodes' words as well as their vectors: "
        "its relevance is z(cosine) + z(BM25 of the nodes' text against the query), within "
        "the pool, and its similarity of two nodes the mean of their vectors' cosine and "
        "their word profiles' (vrsd_kit.lexical); False = the vectors only.",
    )
    metadata_key: str = Field(
        default=METADATA_KEY,
        description="The metadata key of vrsd's entry; a key the node's own metadata holds "
        "is kept and the entry goes under this key + '_' (warned once).",
    )
    reembed: Reembed = Field(
        default="warn",
        description="Nodes whose vectors neither they nor vector_store hold are embedded "
        "again: 'warn' (once per store class, naming the reason), 'allow' (silently) or "
        "'refuse' (a ValueError, for embedding APIs paid per token).",
    )

    # validate_assignment: ``pp.top_n = 0`` after construction is the same ValueError
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid",
                              validate_assignment=True)

    # set once this instance has warned that it had nothing to choose from
    _warned_few: bool = PrivateAttr(default=False)
    _warn_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @field_validator("top_n", mode="before")
    @classmethod
    def _strict_top_n(cls, value: Any) -> int:
        return check_count(value, "top_n")

    @field_validator("lexical", mode="before")
    @classmethod
    def _strict_lexical(cls, value: Any) -> bool:
        return check_flag(value, "lexical")  # pydantic would read "no" or 0 as False

    @model_validator(mode="before")
    @classmethod
    def _check_input(cls, data: Any) -> Any:
        check_model_keywords(cls, data)  # fetchk=4: a ValueError naming fetch_k
        return data

    @model_validator(mode="after")
    def _check_method(self) -> VRSDPostprocessor:
        # the checked values are written past validation (assigning them would run
        # this validator again)
        fields = self.__dict__
        if isinstance(self.method, str) and self.method in METHOD_ALIASES:
            # "vrsd_swap" -> "vrsd" + refine="swap" (warns), built or assigned alike
            fields["method"], fields["method_kwargs"] = resolve_method(
                self.method, self.method_kwargs)
        check_method_options(self.method, self.method_kwargs, "(BaseNode) -> float")
        check_relevance_spec(self.method, self.relevance, "(query, nodes) -> scores")
        fields["max_per_group"] = check_group_options(self.group_by, self.max_per_group)
        fields["max_tokens"], fields["token_counter"] = check_budget_options(
            self.max_tokens, self.token_counter)
        check_reembed(self.reembed)
        check_metadata_key(self.metadata_key)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic checks an assignment after storing it and keeps a value its model
        # validator refused: put the settings back, so a refused one changes nothing
        if name not in type(self).model_fields:
            super().__setattr__(name, value)
            return
        before = dict(self.__dict__)
        try:
            super().__setattr__(name, value)
        except ValueError:
            self.__dict__.update(before)
            raise

    @classmethod
    def class_name(cls) -> str:
        return "VRSDPostprocessor"

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
        return Settings.embed_model

    def query_vector_steps(self, query_bundle: QueryBundle) -> Steps[Sequence[float]]:
        """The bundle's embedding, else the embed model's on its embedding strings, as
        steps (``vrsd_kit.steps``)."""
        query_bundle = _require_query(query_bundle)
        if query_bundle.embedding is not None:
            return query_bundle.embedding
        model = self.resolved_embed_model()
        return (yield call(model.get_agg_embedding_from_queries,
                           model.aget_agg_embedding_from_queries, query_bundle.embedding_strs))

    def query_vector(self, query_bundle: QueryBundle) -> Sequence[float]:
        """The bundle's embedding, else the embed model's on its embedding strings."""
        return run_steps(self.query_vector_steps(query_bundle))

    async def aquery_vector(self, query_bundle: QueryBundle) -> Sequence[float]:
        """Async ``query_vector``."""
        return await arun_steps(self.query_vector_steps(query_bundle))

    def _known_vectors(self, nodes: Sequence[NodeWithScore]) -> list[Sequence[float] | None]:
        """Vectors the nodes carry, completed from ``vector_store``; None where neither has one."""
        vectors: list[Sequence[float] | None] = [n.node.embedding for n in nodes]
        missing = [
            n.node.node_id for n, v in zip(nodes, vectors, strict=True) if not _has_vector(v)
        ]
        if missing and self.vector_store is not None:
            found = vectors_from_store(self.vector_store, missing)
            vectors = [v if _has_vector(v) else found.get(n.node.node_id)
                       for n, v in zip(nodes, vectors, strict=True)]
        return [v if _has_vector(v) else None for v in vectors]

    def _texts_to_embed(self, nodes: Sequence[NodeWithScore],
                        vectors: list[Sequence[float] | None]) -> tuple[list[int], list[str]]:
        """Positions and texts of the nodes without a vector, once ``reembed`` allows it."""
        positions = [i for i, v in enumerate(vectors) if v is None]
        store = self.vector_store
        name = type(store).__name__ if store is not None else "no vector_store"
        check_reembedding(self.reembed, name, reembedding_reason(store), len(positions))
        texts = [nodes[i].node.get_content(metadata_mode=MetadataMode.EMBED) for i in positions]
        return positions, texts

    def _candidate_vector_steps(self, nodes: Sequence[NodeWithScore]
                                ) -> Steps[list[Sequence[float]]]:
        """One vector per node: its own, the store's, else embedded (one batch), as steps;
        async, the store lookup runs in a worker thread (store clients are synchronous)."""
        if self.vector_store is None:
            vectors = self._known_vectors(nodes)
        else:
            vectors = yield call(self._known_vectors,
                                 lambda nodes: asyncio.to_thread(self._known_vectors, nodes), nodes)
        positions, texts = self._texts_to_embed(nodes, vectors)
        if texts:
            model = self.resolved_embed_model()
            embedded = yield call(model.get_text_embedding_batch,
                                  model.aget_text_embedding_batch, texts)
            for i, v in zip(positions, embedded, strict=True):
                vectors[i] = v
        return vectors  # type: ignore[return-value]

    def candidate_vectors(self, nodes: Sequence[NodeWithScore]) -> list[Sequence[float]]:
        """One vector per node: its own, the store's, else embedded (one batch)."""
        return run_steps(self._candidate_vector_steps(nodes))

    async def acandidate_vectors(self, nodes: Sequence[NodeWithScore]) -> list[Sequence[float]]:
        """Async ``candidate_vectors`` (the store lookup runs in a worker thread)."""
        return await arun_steps(self._candidate_vector_steps(nodes))

    # -- selection ---------------------------------------------------------------------

    def select_nodes(self, nodes: Sequence[NodeWithScore], query_vector: Sequence[float],
                     vectors: Sequence[Sequence[float]], query_str: str = ""
                     ) -> list[NodeWithScore]:
        """Run the core on the vectors and return annotated copies in selection order
        (the quality prior, outside relevance, group labels and token counts read from
        the nodes)."""
        @functools.cache
        def texts() -> list[str]:  # what the LLM reads, built once for every reader
            return [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes]

        words = words_relevance(self.method, self.lexical, self.relevance, query_str, texts,
                                query_vector, vectors)
        # prior, outside relevance (a field, or fn(query, nodes)) or the words', group
        # labels and token counts
        options = selection_inputs(
            self.method_kwargs, len(nodes), lambda spec, name: node_values(spec, nodes, name),
            relevance=self.relevance, score=lambda fn: fn(query_str, [n.node for n in nodes]),
            words=words, group_by=self.group_by, max_per_group=self.max_per_group,
            max_tokens=self.max_tokens, token_counter=self.token_counter, texts=texts,
        )
        sel: Selection = select(query_vector, vectors, self.top_n, method=self.method,
                                **options)
        entries = selection_metadata_all(sel, [n.node.node_id for n in nodes], words,
                                         texts(),
                                         [source_of(n.node.metadata) for n in nodes])
        return [
            annotated_copy(nodes[int(i)], entry, self.metadata_key)
            for i, entry in zip(sel.indices, entries, strict=True)
        ]

    @contextmanager
    def _rerank_event(self, nodes: list[NodeWithScore],
                      query_bundle: QueryBundle) -> Iterator[list[NodeWithScore]]:
        """Rerank start/end events (instrumentation and legacy callbacks), as
        LlamaIndex's own rerankers emit them; the caller fills the yielded list."""
        model_name = f"vrsd:{self.method}"
        dispatcher.event(ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=self.top_n,
                                          model_name=model_name))
        result: list[NodeWithScore] = []
        payload: dict[str, Any] = {
            EventPayload.NODES: nodes,
            EventPayload.MODEL_NAME: model_name,
            EventPayload.QUERY_STR: query_bundle.query_str,
            EventPayload.TOP_K: self.top_n,
        }
        with self.callback_manager.event(CBEventType.RERANKING, payload=payload) as event:
            yield result
            event.on_end(payload={EventPayload.NODES: result})
        dispatcher.event(ReRankEndEvent(nodes=result))

    def _warn_if_nothing_to_choose(self, count: int) -> None:
        """Warn (once per instance) when the candidates are no more than ``top_n``: the
        selection then returns them all, which is plain top-k, and nothing else says so.
        The usual cause is LlamaIndex's ``similarity_top_k`` default of 2."""
        if count > self.top_n or self._warned_few:
            return
        with self._warn_lock:
            if self._warned_few:
                return
            self._warned_few = True
        warnings.warn(
            f"VRSDPostprocessor(top_n={self.top_n}) received {count} candidate node(s): "
            "nothing to choose from, so they come back as retrieved (plain top-k). Fetch "
            "more candidates than top_n: similarity_top_k on the index's retriever or query "
            f"engine (LlamaIndex's default is 2), e.g. similarity_top_k={4 * self.top_n}; "
            "for vrsd_llamaindex.VRSDRetriever, its fetch_k. (Warned once per postprocessor.)",
            UserWarning,
            stacklevel=user_stacklevel(),
        )

    def _checked_query(self, nodes: list[NodeWithScore],
                       query_bundle: QueryBundle | None) -> QueryBundle:
        """The checked bundle (``_require_query``), warning when ``nodes`` leave nothing
        to choose from."""
        query_bundle = _require_query(query_bundle)
        if nodes:
            self._warn_if_nothing_to_choose(len(nodes))
        return query_bundle

    def _vector_steps(self, nodes: list[NodeWithScore], query_bundle: QueryBundle
                      ) -> Steps[tuple[Sequence[float], list[Sequence[float]]]]:
        """(the query vector, one vector per node) as steps (``vrsd_kit.steps``), for
        ``select_nodes``."""
        query_vector = yield from self.query_vector_steps(query_bundle)
        vectors = yield from self._candidate_vector_steps(nodes)
        return query_vector, vectors

    @dispatcher.span
    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        query_bundle = self._checked_query(nodes, query_bundle)
        if not nodes:
            return []
        with self._rerank_event(nodes, query_bundle) as result:
            query_vector, vectors = run_steps(self._vector_steps(nodes, query_bundle))
            result.extend(self.select_nodes(nodes, query_vector, vectors, query_bundle.query_str))
        return result

    @dispatcher.span
    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: QueryBundle | None = None
                                  ) -> list[NodeWithScore]:
        query_bundle = self._checked_query(nodes, query_bundle)
        if not nodes:
            return []
        with self._rerank_event(nodes, query_bundle) as result:
            query_vector, vectors = await arun_steps(self._vector_steps(nodes, query_bundle))
            result.extend(self.select_nodes(nodes, query_vector, vectors, query_bundle.query_str))
        return result
