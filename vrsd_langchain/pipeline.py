"""The one retrieval pipeline every LangChain entry point shares.

query -> query vector (embedded once) -> n = fetch_k candidates with their
vectors (``candidates``) -> ``vrsd_core.select`` -> annotated Document copies
(``documents``). ``VRSDRetriever``, ``DiverseVectorStoreRetriever`` and
``VRSDCompressor`` differ only in where their settings come from.

A model's settings are checked once into a ``SearchPlan`` (``make_plan``) and kept
(``PlanCache``); a call checks only what it overrides. The I/O is one body of steps
for the sync and the async entry point (``fetch_steps``, ``vrsd_kit.steps``), which
returns the query vector and the candidates; the entry point then calls ``choose``
itself, so the selection runs with no steps machinery on the stack.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from numpy.typing import NDArray

from vrsd_core import MethodName, method_defaults, select
from vrsd_kit.contract import (
    METADATA_KEY,
    GroupKey,
    RelevanceFn,
    check_budget_options,
    check_counts,
    check_flag,
    check_group_options,
    check_metadata_key,
    check_method_options,
    check_query_text,
    check_query_vector,
    check_relevance_spec,
    item_values,
    selection_inputs,
    words_relevance,
)
from vrsd_kit.steps import Steps, call
from vrsd_kit.tokens import TokenCounter

from .cache import EmbeddingCache
from .candidates import (
    Candidates,
    candidate_steps,
    check_reembed_policy,
    check_search_kwargs,
)
from .documents import annotate

if TYPE_CHECKING:
    from vrsd_kit.stores import Reembed

__all__ = ["PRIOR_FORM", "RELEVANCE_FORM", "PlanCache", "SearchPlan", "check_counts",
           "check_query_text", "check_query_vector", "choose", "fetch_by_vector_steps",
           "fetch_steps", "make_plan", "query_vector_steps"]

# Per-candidate inputs besides the method's options: where each comes from (see README),
# whether the default reads the candidates' words, and the metadata key of the entry.
PER_CANDIDATE = ("relevance", "group_by", "max_per_group", "max_tokens", "token_counter",
                 "lexical", "metadata_key")
# Every call's own keywords besides the method's options (the rest are store search arguments).
OWN_KEYWORDS = ("k", "fetch_k", "method", *PER_CANDIDATE)


def _options_text(method: str) -> str:
    return ", ".join(sorted(method_defaults(method))) or "none"


# What a per-candidate callable takes, as the errors name it.
PRIOR_FORM = "(Document) -> float"
RELEVANCE_FORM = "(query, documents) -> scores"


def _describe(doc: Document) -> str:
    return doc.id or doc.page_content[:40]


def _metadata(doc: Document) -> Mapping[str, Any]:
    return doc.metadata


def document_values(spec: str | Callable[[Document], Any], documents: list[Document],
                    name: str) -> list[Any]:
    """One value per candidate Document: its metadata field ``spec``, or ``spec(doc)``."""
    return item_values(spec, documents, name, metadata_of=_metadata, describe=_describe)


def split_options(method: str, kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split mixed keyword arguments into (method options, store search arguments);
    the per-candidate inputs (``PER_CANDIDATE``) must have been taken out first."""
    params = method_defaults(method)
    options = {key: v for key, v in kwargs.items() if key in params}
    search = {key: v for key, v in kwargs.items() if key not in params}
    return options, search


def resolve_embeddings(
    store: VectorStore, embeddings: Embeddings | None, owner: str
) -> Embeddings:
    """``embeddings``, else the store's; ValueError saying how to pass them if neither."""
    if embeddings is not None:
        if not isinstance(embeddings, Embeddings):
            raise ValueError(
                f"embeddings: expected a langchain_core Embeddings, got {type(embeddings).__name__}"
            )
        return embeddings
    found = store.embeddings
    if found is None:
        raise ValueError(
            f"embeddings: {type(store).__name__} exposes no embeddings (its .embeddings is None); "
            f"pass the model its vectors were made with, e.g. "
            f"{owner}(vectorstore=store, embeddings=HuggingFaceEmbeddings(model_name=...)) "
            "or vrsd_langchain.default_embeddings() for the bundled all-MiniLM-L6-v2"
        )
    return found


@dataclass(frozen=True)
class SearchPlan:
    """One call's settings, checked."""

    k: int
    fetch_k: int
    method: MethodName
    options: dict[str, Any] = field(default_factory=dict)
    search_kwargs: dict[str, Any] = field(default_factory=dict)
    relevance: str | RelevanceFn[Document] | None = None
    """None (cosine to the query), a numeric metadata field, or (query, documents) -> scores."""
    group_by: str | GroupKey[Document] | None = None
    """None, a metadata field or (Document) -> label: the source each candidate comes from."""
    max_per_group: int | None = None
    """At most this many picks per ``group_by`` label."""
    max_tokens: int | None = None
    """The picks' ``page_content`` token counts sum to at most this (None: no budget)."""
    token_counter: TokenCounter | None = None
    """text -> int counting tokens for ``max_tokens``; None: ``approx_token_count``."""
    reembed: Reembed = "warn"
    """What to do when the candidates' vectors cannot be read from the store:
    ``"warn"`` (once per store class), ``"allow"`` or ``"refuse"``."""
    lexical: bool = True
    """The default's relevance reads the candidates' words too (``vrsd_kit.lexical``);
    False: the vectors only."""
    metadata_key: str = METADATA_KEY
    """The metadata key of vrsd's entry (``vrsd_kit.contract.with_entry``: a key the
    document's own metadata holds is kept, and the entry goes beside it)."""


def make_plan(
    store: VectorStore,
    *,
    k: Any,
    fetch_k: Any,
    method: Any,
    options: Mapping[str, Any],
    search_kwargs: Mapping[str, Any],
    relevance: Any = None,
    group_by: Any = None,
    max_per_group: Any = None,
    max_tokens: Any = None,
    token_counter: Any = None,
    reembed: Any = "warn",
    lexical: Any = True,
    metadata_key: Any = METADATA_KEY,
) -> SearchPlan:
    """Check every setting of a call (counts, method and options, per-candidate inputs,
    token budget, store search arguments, the re-embedding policy: ``"refuse"`` on a
    store without a fast path is a ValueError here, before any query)."""
    k, fetch_k = check_counts(k, fetch_k)
    check_method_options(method, options, PRIOR_FORM)
    check_relevance_spec(method, relevance, RELEVANCE_FORM)
    cap = check_group_options(group_by, max_per_group)
    budget, counter = check_budget_options(max_tokens, token_counter)
    check_search_kwargs(
        store,
        search_kwargs,
        own=OWN_KEYWORDS + tuple(method_defaults(method)),
        hint=f", nor an option of {method!r} (its options: {_options_text(method)})",
    )
    reembed = check_reembed_policy(store, reembed, fetch_k)
    return SearchPlan(k, fetch_k, method, dict(options), dict(search_kwargs),
                      relevance, group_by, cap, max_tokens=budget, token_counter=counter,
                      reembed=reembed, lexical=check_flag(lexical, "lexical"),
                      metadata_key=check_metadata_key(metadata_key))


PlanBuilder = Callable[[Mapping[str, Any]], SearchPlan]
"""A model's settings, with a call's overrides, checked into a ``SearchPlan`` (``make_plan``)."""


class PlanCache:
    """A model's checked ``SearchPlan``, built once and reused on every call that changes
    nothing.

    The pydantic models are mutable (``retriever.k = 6``) and do not validate an
    assignment, so the plan is kept beside the objects it was built from (the model's
    ``fields`` and, for a dict among them, its keys and values): a call whose objects
    are all the same ones (``is``) reuses it, any other rebuilds it, which checks the new
    values (``retriever.k = 0`` is a ValueError naming ``k`` at the next call). Holding
    the objects keeps their ids from being reused. A value changed in place inside a
    dict's value (a nested filter) is not seen.
    """

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self._read = operator.attrgetter(*fields)
        # (the objects, their plan), replaced as one so that threads never mix two
        self._built: tuple[list[Any], SearchPlan] | None = None

    def _settings(self, owner: object) -> list[Any]:
        values = self._read(owner)
        objects = list(values)
        for value in values:
            if isinstance(value, dict):  # the dict itself, then its contents
                objects.append(value)
                objects.extend(chain.from_iterable(value.items()))
        return objects

    def plan(self, owner: object, build: PlanBuilder,
             overrides: Mapping[str, Any]) -> SearchPlan:
        """``owner``'s plan for a call with ``overrides``: the kept one for none; for
        ``k``/``fetch_k`` only, the kept one with the counts checked and replaced; for
        anything else, ``build(overrides)`` (every setting checked again)."""
        if overrides and not overrides.keys() <= {"k", "fetch_k"}:
            return build(overrides)
        objects = self._settings(owner)
        built = self._built
        if built is None or len(objects) != len(built[0]) \
                or not all(map(operator.is_, objects, built[0])):
            built = self._built = (objects, build({}))
        plan = built[1]
        if not overrides:
            return plan
        k, fetch_k = check_counts(overrides.get("k", plan.k),
                                  overrides.get("fetch_k", plan.fetch_k))
        return dataclasses.replace(plan, k=k, fetch_k=fetch_k)


def choose(query_vector: NDArray[np.float64], candidates: Candidates, plan: SearchPlan,
           query: str = "") -> list[Document]:
    """Run the plan's method on the candidates; annotated copies in selection order."""
    if len(candidates) == 0:
        return []
    if candidates.vectors is None:  # fetch_candidates fills them
        raise RuntimeError("candidates: documents without their vectors")
    docs = candidates.documents

    def texts() -> list[str]:
        return [doc.page_content for doc in docs]

    words = words_relevance(plan.method, plan.lexical, plan.relevance, query, texts,
                            query_vector, candidates.vectors)
    # prior, outside relevance (a field, or fn(query, documents)) or the words', group
    # labels and token counts (of the text the LLM reads)
    options = selection_inputs(
        plan.options, len(docs), lambda spec, name: document_values(spec, docs, name),
        relevance=plan.relevance, score=lambda fn: fn(query, docs), words=words,
        group_by=plan.group_by, max_per_group=plan.max_per_group,
        max_tokens=plan.max_tokens, token_counter=plan.token_counter, texts=texts,
    )
    sel = select(query_vector, candidates.vectors, plan.k, method=plan.method, **options)
    return annotate(docs, sel, words, plan.metadata_key)


def query_vector_steps(embeddings: Embeddings, query: str) -> Steps[NDArray[np.float64]]:
    """The checked vector of the checked ``query`` text, as steps (``embed_query`` /
    ``aembed_query``)."""
    vector = yield call(embeddings.embed_query, embeddings.aembed_query, check_query_text(query))
    return check_query_vector(vector)


def fetch_steps(
    store: VectorStore,
    embeddings: Embeddings,
    cache: EmbeddingCache,
    query: str,
    plan: SearchPlan,
) -> Steps[tuple[NDArray[np.float64], Candidates]]:
    """(the query vector, the plan's candidates with their vectors) as steps: the query is
    embedded exactly once; ``run_steps`` makes the calls, ``arun_steps`` awaits
    ``aembed_query``, the store's async search and ``aembed_documents``. The caller
    passes both to ``choose``."""
    query_vector = yield from query_vector_steps(embeddings, query)
    candidates = yield from candidate_steps(store, query, query_vector, plan.fetch_k,
                                            plan.search_kwargs, embeddings, cache, plan.reembed)
    return query_vector, candidates


def fetch_by_vector_steps(
    store: VectorStore,
    embeddings: Embeddings,
    cache: EmbeddingCache,
    vector: Any,
    plan: SearchPlan,
) -> Steps[tuple[NDArray[np.float64], Candidates]]:
    """``fetch_steps`` for a query given as a vector (nothing is embedded but, for stores
    without a fast path, the candidates).

    Raises:
        ValueError: naming ``relevance`` for a callable ``(query, documents) -> scores``:
            there is no query text to give it (a metadata field works).
    """
    if callable(plan.relevance):
        raise ValueError(
            "relevance: a callable (query, documents) -> scores needs the query text, and "
            "a search by vector has none; name a metadata field instead"
        )
    query_vector = check_query_vector(vector)
    candidates = yield from candidate_steps(store, "", query_vector, plan.fetch_k,
                                            plan.search_kwargs, embeddings, cache, plan.reembed)
    return query_vector, candidates
