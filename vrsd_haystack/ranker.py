"""``VRSDRanker``: a Haystack ranker that keeps the documents that are relevant *and*
diverse, from the embeddings the retriever already returned.

Usage::

    from haystack import Pipeline
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from vrsd_haystack import VRSDRanker

    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=20,
                                                               return_embedding=True))
    pipe.add_component("ranker", VRSDRanker(top_k=5))
    pipe.connect("retriever.documents", "ranker.documents")
    out = pipe.run({"retriever": {"query_embedding": q},
                    "ranker": {"query_embedding": q, "query": text}})

The ranker needs each candidate's vector and the query's. Candidate vectors are
``Document.embedding``, as a retriever returns them with ``return_embedding=True``
(Qdrant, InMemory) or always (Chroma). Documents without one are embedded by the
``document_embedder`` given at init (a Haystack document embedder component, or a
callable ``list[str] -> list[list[float]]``) under the ``reembed`` policy; without
an embedder they are refused with a ValueError naming ``documents``.

Each output document is a copy, in selection order, with ``score`` = its
relevance and ``meta["vrsd"] = {"rank", "relevance", "gain", "method"}`` (the
payload every adapter shares, ``vrsd_kit.contract``). Input documents are never
modified.
"""

from __future__ import annotations

import asyncio
import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict
from haystack.core.serialization import component_to_dict
from haystack.utils import deserialize_callable, serialize_callable
from haystack.utils.deserialization import deserialize_component_inplace

from vrsd_core import DEFAULT_METHOD, MethodName, check_count, resolve_method, select
from vrsd_core.callers import user_stacklevel
from vrsd_kit.contract import (
    METADATA_KEY,
    GroupKey,
    ItemScore,
    check_budget_options,
    check_flag,
    check_group_options,
    check_metadata_key,
    check_method_options,
    check_query_text,
    check_relevance_spec,
    item_values,
    keywords_checked,
    selection_inputs,
    selection_metadata_all,
    source_of,
    with_entry,
    words_relevance,
)
from vrsd_kit.inputs import PoolSignals
from vrsd_kit.steps import Steps, arun_steps, call, run_steps
from vrsd_kit.stores import Reembed, check_reembed, check_reembedding
from vrsd_kit.tokens import TokenCounter

SCORE = "score"
"""``relevance="score"`` reads each document's ``score`` (what the retriever or an
upstream ranker set), not a meta field."""

_CALLABLE_INITS = ("relevance", "group_by", "token_counter")
_CALLABLE = "callable"  # to_dict's key for a callable's import path


def _meta(doc: Document) -> Mapping[str, Any]:
    return doc.meta


def _describe(doc: Document) -> str:
    return doc.id


def document_values(spec: Any, documents: Sequence[Document], name: str) -> list[Any]:
    """One value per document: ``doc.score`` for ``"score"``, a meta field, or ``spec(doc)``."""
    if spec == SCORE:
        missing = [d.id for d in documents if d.score is None]
        if missing:
            raise ValueError(f"{name}: document {missing[0]!r} has no score")
        return [d.score for d in documents]
    return item_values(spec, documents, name, metadata_of=_meta, describe=_describe)


def _query_vector(query_embedding: Any) -> np.ndarray:
    try:
        vec = np.asarray(query_embedding, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("query_embedding: expected a list of numbers") from None
    if vec.ndim != 1 or vec.size == 0:
        raise ValueError(f"query_embedding: expected one vector, got shape {vec.shape}")
    if not np.all(np.isfinite(vec)) or not vec.any():
        raise ValueError("query_embedding: has NaN, inf or only zeros (cosine is undefined)")
    return vec


def _check_documents(documents: Any) -> list[Document]:
    if not isinstance(documents, list | tuple) or not all(
            isinstance(d, Document) for d in documents):
        raise ValueError("documents: expected a list of haystack Documents")
    return list(documents)


def annotated_copy(doc: Document, entry: dict[str, Any],
                   metadata_key: str = METADATA_KEY) -> Document:
    """A copy of ``doc`` carrying ``entry`` under ``metadata_key`` (or beside the
    document's own value there: ``with_entry``), scored by its relevance."""
    meta, _ = with_entry(doc.meta, entry, metadata_key)
    embedding = list(doc.embedding) if doc.embedding is not None else None
    return dataclasses.replace(doc, meta=meta, score=entry["relevance"], embedding=embedding)


# The constructor's arguments, kept as attributes of the same names.
_SETTINGS = frozenset({"top_k", "method", "method_kwargs", "relevance", "group_by",
                       "max_per_group", "max_tokens", "token_counter", "document_embedder",
                       "reembed", "lexical", "metadata_key"})


@component
class VRSDRanker:
    """Keep ``top_k`` of the retrieved documents, relevant to the query *and* diverse.

    Args:
        top_k: how many documents to return (each run may override it).
        method: a ``vrsd_core.METHOD_INFO`` name; default ``"complement"``
            (``vrsd_core.DEFAULT_METHOD``), the project's recommendation: relevance
            from the documents' vectors and words (``lexical``), then the most
            relevant set that spans the most, restatements waiting. ``"vrsd"`` is
            the paper's greedy; ``"mmr"``, ``"dpp"``, ... work too.
        method_kwargs: the method's options, e.g. ``{"lambda_mult": 0.5}``.
        relevance: outside relevance for the methods that take one (not
            ``vrsd``/``complement``): ``"score"`` (each document's ``score``, e.g.
            from a cross-encoder ranker upstream), a numeric meta field, or a
            callable ``(Document) -> float``. None: cosine to the query.
        group_by, max_per_group: at most ``max_per_group`` documents per source,
            the source being a meta field (e.g. ``"file_path"``) or ``(Document) -> label``.
        max_tokens, token_counter: fill an LLM's context up to ``max_tokens`` tokens
            of the documents' ``content``, counted by ``token_counter`` (text -> int;
            default ``vrsd_kit.tokens.approx_token_count``).
        document_embedder: embeds documents that arrive without an embedding: a
            Haystack document embedder component (its ``run(documents=...)``) or a
            callable ``list[str] -> list[list[float]]``; it must be the model the
            store's vectors were made with. None: such documents are refused.
        reembed: with a ``document_embedder``, what embedding documents again does:
            ``"warn"`` (once per process), ``"allow"``, ``"refuse"`` (a ValueError).
        lexical: the default method reads the documents' words as well as their
            vectors: its relevance is z(cosine) + z(BM25 of the documents' ``content``
            against the ``query`` input), within the pool, and its similarity of two
            documents the mean of their vectors' cosine and their word profiles'
            (``vrsd_kit.lexical``; ``meta["vrsd"]`` shows ``cosine`` and ``lexical``).
            It needs the query text: connect it to the ``query`` input (without it
            the run uses the vectors only and warns once). False: the vectors only.
        metadata_key: the meta key of vrsd's entry (default ``"vrsd"``); a key the
            document's own meta holds is kept, and the entry goes under this key +
            ``"_"`` (warned once).
    """

    @keywords_checked  # VRSDRanker(topk=2): a ValueError naming top_k
    def __init__(
        self,
        top_k: int = 4,
        method: MethodName = DEFAULT_METHOD,
        method_kwargs: dict[str, Any] | None = None,
        relevance: str | ItemScore[Document] | None = None,
        group_by: str | GroupKey[Document] | None = None,
        max_per_group: int | None = None,
        max_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
        document_embedder: Any = None,
        reembed: Reembed = "warn",
        lexical: bool = True,
        metadata_key: str = METADATA_KEY,
    ) -> None:
        self.top_k = check_count(top_k, "top_k")
        # "vrsd_swap" -> "vrsd" + refine="swap": one spelling per method, as in the others
        self.method, self.method_kwargs = resolve_method(method, method_kwargs)
        check_method_options(self.method, self.method_kwargs, "(Document) -> float")
        check_relevance_spec(self.method, relevance, "(Document) -> float")
        self.relevance = relevance
        self.group_by = group_by
        self.max_per_group = check_group_options(group_by, max_per_group)
        self._token_counter_given = token_counter
        self.max_tokens, self.token_counter = check_budget_options(max_tokens, token_counter)
        if document_embedder is not None and not (
                callable(document_embedder) or hasattr(document_embedder, "run")):
            raise ValueError("document_embedder: expected a Haystack document embedder "
                             "component or a callable list[str] -> list[list[float]]")
        self.document_embedder = document_embedder
        self.reembed = check_reembed(reembed)
        self.lexical = check_flag(lexical, "lexical")
        self.metadata_key = check_metadata_key(metadata_key)
        self._warned_no_query = False

    def __setattr__(self, name: str, value: Any) -> None:
        # A setting assigned after construction (``ranker.top_k = 0``) is checked as the
        # constructor checks it, with the others as they are: a ValueError naming it
        # changes nothing; a good one is stored as checked (an alias as its method, a
        # budget with its counter filled in).
        if name not in _SETTINGS or not self.__dict__.keys() >= _SETTINGS:  # building
            object.__setattr__(self, name, value)
            return
        given = {key: self.__dict__[key] for key in _SETTINGS}
        given["token_counter"] = self._token_counter_given  # as the caller gave it
        given[name] = value
        checked = object.__new__(type(self))
        type(self).__init__(checked, **given)
        self.__dict__.update({key: checked.__dict__[key]
                              for key in (*_SETTINGS, "_token_counter_given")})

    def warm_up(self) -> None:
        """Warm up the document embedder, if it has anything to load."""
        warm = getattr(self.document_embedder, "warm_up", None)
        if callable(warm):
            warm()

    # -- serialisation -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The ranker as a dict (for ``Pipeline.dumps``); callables by their import path."""
        def ser(value: Any) -> Any:
            if value is None or isinstance(value, str):
                return value  # a meta field name, or "score"
            if hasattr(value, "run"):
                return component_to_dict(value, "document_embedder")
            return {_CALLABLE: serialize_callable(value)}

        options = dict(self.method_kwargs)
        if callable(options.get("prior")):  # a (Document) -> float prior, by import path
            options["prior"] = ser(options["prior"])
        return default_to_dict(
            self, top_k=self.top_k, method=self.method, method_kwargs=options,
            relevance=ser(self.relevance), group_by=ser(self.group_by),
            max_per_group=self.max_per_group, max_tokens=self.max_tokens,
            token_counter=ser(self._token_counter_given),
            document_embedder=ser(self.document_embedder), reembed=self.reembed,
            lexical=self.lexical, metadata_key=self.metadata_key,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VRSDRanker:
        """The ranker ``to_dict`` described."""
        params = data.get("init_parameters", {})
        for name in (*_CALLABLE_INITS, "document_embedder"):
            value = params.get(name)
            if isinstance(value, dict) and _CALLABLE in value:
                params[name] = deserialize_callable(value[_CALLABLE])
            elif isinstance(value, dict):
                deserialize_component_inplace(params, key=name)
        prior = (params.get("method_kwargs") or {}).get("prior")
        if isinstance(prior, dict) and _CALLABLE in prior:
            params["method_kwargs"] = {**params["method_kwargs"],
                                       "prior": deserialize_callable(prior[_CALLABLE])}
        return default_from_dict(cls, data)

    # -- running -------------------------------------------------------------------------

    def _missing(self, documents: list[Document]) -> list[int]:
        """Positions without an embedding; ValueError when they cannot be embedded."""
        missing = [i for i, d in enumerate(documents) if d.embedding is None]
        if missing and self.document_embedder is None:
            raise ValueError(
                f"documents: {len(missing)} of {len(documents)} have no embedding (e.g. "
                f"{documents[missing[0]].id!r}); ask the retriever for them "
                "(return_embedding=True) or give VRSDRanker a document_embedder"
            )
        if missing:
            check_reembedding(self.reembed, "VRSDRanker", "documents came without embeddings",
                              len(missing))
        return missing

    def _embedded(self, documents: list[Document], missing: list[int],
                  fresh: Sequence[Sequence[float]]) -> list[Sequence[float]]:
        if len(fresh) != len(missing):
            raise ValueError(f"document_embedder: returned {len(fresh)} embeddings for "
                             f"{len(missing)} documents")
        vectors: list[Any] = [d.embedding for d in documents]  # missing ones filled below
        for i, vec in zip(missing, fresh, strict=True):
            vectors[i] = vec
        return vectors

    def _embed_steps(self, docs: list[Document]) -> Steps[list[Sequence[float]]]:
        """The embedder's vectors for ``docs``, as steps (``vrsd_kit.steps``): async, its
        ``run_async`` when it has one, else its synchronous call in a worker thread."""
        embedder = self.document_embedder
        if hasattr(embedder, "run"):
            run_async = getattr(embedder, "run_async", None)
            if not callable(run_async):
                def run_async(documents: list[Document]) -> Any:
                    return asyncio.to_thread(embedder.run, documents=documents)
            out = yield call(embedder.run, run_async,
                             documents=[dataclasses.replace(d) for d in docs])
            return [d.embedding for d in out["documents"]]
        if embedder is None:  # _missing refuses documents to embed without one
            raise RuntimeError("VRSDRanker: documents to embed and no document_embedder")
        return list((yield call(embedder, lambda texts: asyncio.to_thread(embedder, texts),
                                [d.content or "" for d in docs])))

    def _words(self, query_text: str | None, documents: list[Document], texts: Any,
               query: np.ndarray, matrix: np.ndarray) -> PoolSignals | None:
        """The words' part of the relevance (``words_relevance``), warning once when the
        default would use it but the run got no query text."""
        if query_text is None and self.lexical and self.relevance is None \
                and self.method == DEFAULT_METHOD and not self._warned_no_query:
            self._warned_no_query = True
            warnings.warn(
                "VRSDRanker: no query text, so the relevance comes from the vectors only; "
                "connect the query to the ranker's `query` input to use the documents' "
                "words (or set lexical=False to silence this)", UserWarning,
                stacklevel=user_stacklevel())
        query_text = None if query_text is None else check_query_text(query_text)
        return words_relevance(self.method, self.lexical, self.relevance, query_text, texts,
                               query, matrix)

    def _select(self, documents: list[Document], vectors: Sequence[Sequence[float]],
                query: np.ndarray, top_k: int, query_text: str | None = None
                ) -> dict[str, list[Document]]:
        if not documents:
            return {"documents": []}
        try:
            matrix = np.asarray(vectors, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("documents: embeddings of different lengths") from None
        if matrix.ndim != 2:
            raise ValueError("documents: embeddings of different lengths")
        if matrix.shape[1] != query.shape[0]:
            raise ValueError(
                f"query_embedding: a {query.shape[0]}-d vector but the documents' embeddings "
                f"are {matrix.shape[1]}-d; embed the query with the documents' model"
            )
        def texts() -> list[str]:
            return [d.content or "" for d in documents]

        words = self._words(query_text, documents, texts, query, matrix)
        options = selection_inputs(
            self.method_kwargs, len(documents),
            lambda spec, name: document_values(spec, documents, name),
            relevance=self.relevance, words=words, group_by=self.group_by,
            max_per_group=self.max_per_group, max_tokens=self.max_tokens,
            token_counter=self.token_counter, texts=texts,
        )
        sel = select(query, matrix, top_k, method=self.method, **options)
        entries = selection_metadata_all(sel, [d.id for d in documents], words,
                                         texts(),
                                         [source_of(d.meta) for d in documents])
        return {"documents": [
            annotated_copy(documents[int(i)], entry, self.metadata_key)
            for i, entry in zip(sel.indices, entries, strict=True)
        ]}

    def _inputs_steps(self, documents: Any, query_embedding: Any, top_k: Any
                      ) -> Steps[tuple[list[Document], list[Sequence[float]], np.ndarray, int]]:
        """The run's inputs checked and the missing embeddings made, as steps
        (``vrsd_kit.steps``): (documents, their vectors, the query vector, top_k), for
        ``_select``."""
        docs = _check_documents(documents)
        vector = _query_vector(query_embedding)
        k = self.top_k if top_k is None else check_count(top_k, "top_k")
        missing = self._missing(docs)
        fresh = (yield from self._embed_steps([docs[i] for i in missing])) if missing else []
        return docs, self._embedded(docs, missing, fresh), vector, k

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], query_embedding: list[float],
            top_k: int | None = None, query: str | None = None) -> dict[str, list[Document]]:
        """Rerank ``documents`` for the query: the ``top_k`` picks, in selection order.
        ``query``: the query text, whose words the default reads (see ``lexical``).

        Raises:
            ValueError: naming ``documents``, ``query_embedding``, ``top_k`` or ``query``.
        """
        docs, vectors, vector, k = run_steps(
            self._inputs_steps(documents, query_embedding, top_k))
        return self._select(docs, vectors, vector, k, query)

    @component.output_types(documents=list[Document])
    async def run_async(self, documents: list[Document], query_embedding: list[float],
                        top_k: int | None = None, query: str | None = None
                        ) -> dict[str, list[Document]]:
        """Async ``run`` (the embedder's ``run_async`` when it has one)."""
        docs, vectors, vector, k = await arun_steps(
            self._inputs_steps(documents, query_embedding, top_k))
        return self._select(docs, vectors, vector, k, query)
