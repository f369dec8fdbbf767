"""``DiverseRanker``: a Haystack ranker that keeps the documents that are relevant *and*
diverse, from the embeddings the retriever already returned.

Usage::

    from haystack import Pipeline
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from vrsd_haystack import DiverseRanker

    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=50,
                                                               return_embedding=True))
    pipe.add_component("ranker", DiverseRanker(top_k=5))
    pipe.connect("retriever.documents", "ranker.documents")
    out = pipe.run({"retriever": {"query_embedding": q},
                    "ranker": {"query_embedding": q, "query": text}})

The ranker needs each candidate's vector and the query's. Candidate vectors are
``Document.embedding``, as a retriever returns them with ``return_embedding=True``
(Qdrant, InMemory) or always (Chroma). Documents without one are embedded by the
``document_embedder`` given at init (a Haystack document embedder component, or a
callable ``list[str] -> list[list[float]]``) under the ``reembed`` policy; without
an embedder they are refused with a ValueError naming ``documents``.

The ranker is a thin view over the kit's one rerank body (``vrsd_kit.rerank``):
its ``__init__`` arguments are mapped onto the kit's settings (checked at construction
and at every assignment, ``vrsd_kit.settings.SettingsFields``), ``DocumentView`` says
how a ``Document`` is read, and the ranker itself only gets the vectors.

Each output document is a copy, in selection order, with ``score`` = its
relevance and ``meta["vrsd"] = {"rank", "relevance", "gain", "method"}`` (the
entry every adapter shares, ``vrsd_kit.rerank``). Input documents are never
modified.
"""

from __future__ import annotations

import asyncio
import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict
from haystack.core.serialization import component_to_dict
from haystack.utils import deserialize_callable, serialize_callable
from haystack.utils.deserialization import deserialize_component_inplace
from numpy.typing import NDArray

from vrsd_core import DEFAULT_METHOD, MethodName
from vrsd_core.callers import user_stacklevel
from vrsd_kit.rerank import (
    METADATA_KEY,
    ItemView,
    check_query_text,
    check_query_vector,
    reads_words,
    rerank,
)
from vrsd_kit.settings import (
    GroupKey,
    ItemScore,
    Settings,
    SettingsFields,
    build_settings,
    check_item_spec,
    keywords_checked,
)
from vrsd_kit.steps import Steps, arun_steps, call, run_steps
from vrsd_kit.stores import Reembed, check_reembedding
from vrsd_kit.tokens import TokenCounter

SCORE = "score"
"""``relevance="score"`` reads each document's ``score`` (what the retriever or an
upstream ranker set), not a meta field."""

_CALLABLE_INITS = ("relevance", "group_by", "token_counter")
_CALLABLE = "callable"  # to_dict's key for a callable's import path

FIELD_NAMES = {"k": "top_k", "options": "method_kwargs"}
"""The kit's settings (``vrsd_kit.settings.SETTINGS``) the ranker's arguments name otherwise."""



class DocumentView(ItemView[Document]):
    """How the rerank body reads a Haystack ``Document``: the words and the token budget
    read ``content``; ``"score"`` names the document's ``score``; an outside relevance
    callable scores one document, ``(Document) -> float``; the copy is scored by its
    relevance."""

    def id(self, item: Document) -> Any:
        return item.id

    def text(self, item: Document) -> str:
        return item.content or ""

    def metadata(self, item: Document) -> Mapping[str, Any]:
        return item.meta

    def vector(self, item: Document) -> Sequence[float] | None:
        return item.embedding

    def annotated(self, item: Document, metadata: dict[str, Any],
                  entry: dict[str, Any]) -> Document:
        embedding = list(item.embedding) if item.embedding is not None else None
        return dataclasses.replace(item, meta=metadata, score=entry["relevance"],
                                   embedding=embedding)

    def values(self, items: Sequence[Document], spec: Any, name: str) -> list[Any]:
        if spec == SCORE:
            missing = [d.id for d in items if d.score is None]
            if missing:
                raise ValueError(f"{name}: document {missing[0]!r} has no score")
            return [d.score for d in items]
        return super().values(items, spec, name)

    def scorer(self, items: Sequence[Document], query: str | None
               ) -> Callable[[Callable[..., Any]], Any]:
        return lambda fn: [fn(d) for d in items]  # (Document) -> float: no query text needed


DOCUMENTS = DocumentView()


def _check_documents(documents: Any) -> list[Document]:
    if not isinstance(documents, list | tuple) or not all(
            isinstance(d, Document) for d in documents):
        raise ValueError("documents: expected a list of haystack Documents")
    return list(documents)


def _matrix(vectors: Sequence[Sequence[float]], query_vector: NDArray[np.float64]
            ) -> NDArray[np.float64]:
    """The documents' vectors as one (n, d) matrix, d the query vector's."""
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("documents: embeddings of different lengths") from None
    if matrix.ndim != 2:
        raise ValueError("documents: embeddings of different lengths")
    if matrix.shape[1] != query_vector.shape[0]:
        raise ValueError(
            f"query_embedding: a {query_vector.shape[0]}-d vector but the documents' "
            f"embeddings are {matrix.shape[1]}-d; embed the query with the documents' model")
    return matrix


@component
class DiverseRanker(SettingsFields):
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
            ``vrsd``/``vrsd_exact``): ``"score"`` (each document's ``score``, e.g.
            from a cross-encoder ranker upstream), a numeric meta field, or a
            callable ``(Document) -> float`` (one document's score; no query text
            needed). None: cosine to the query (and the words, for the default).
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
            vectors: its relevance is z(z(cosine) + z(BM25 of the documents' ``content``
            against the ``query`` input)), each z within the pool, and its similarity of two
            documents the mean of their vectors' cosine and their word profiles'
            (``vrsd_kit.lexical``; ``meta["vrsd"]`` shows ``cosine`` and ``lexical``).
            It needs the query text: connect it to the ``query`` input (without it
            the run uses the vectors only and warns once). False: the vectors only.
        language: the documents' language: the words (the query's too) are read as their
            Snowball stems (an ISO 639-1 code or its name, ``"en"``, ``"german"``:
            ``vrsd_kit.lexical.LANGUAGES``). None: the words as written.
        background: what is common outside the pool (``vrsd_kit.lexical.Background``, e.g.
            ``Background.of_texts(documents, language)``, or a list of them; () for
            none): a word common there weighs little and makes no link. None: the
            language's common words (``Background.of_language``: with ``language``, the
            extra ``background``; without, those of ten languages, shipped).
            Not saved by ``to_dict`` (build it again after loading).
        fill_with_copies: the default keeps no copy of a kept document
            (``vrsd_kit.lexical.Judge``): when only copies are left, fewer than ``top_k`` come
            back (``meta["vrsd"]["stopped"] == "restatements"``). True: the copies make up
            ``top_k`` (their entry's ``copy_of`` names the document each repeats).
        metadata_key: the meta key of vrsd's entry (default ``"vrsd"``); a key the
            document's own meta holds is kept, and the entry goes under this key +
            ``"_"`` (warned once).

    Every argument is checked when the ranker is built, and again when one is assigned
    later (``ranker.top_k = 3``, ``vrsd_kit.settings.SettingsFields``): a bad value is a
    ValueError naming it (a misspelt option with the closest name), and the ranker keeps
    its previous settings. A value is stored as given and the checked settings
    (``settings()``) hold what it means.
    """

    SETTING_FIELDS: ClassVar[frozenset[str]] = frozenset({
        "top_k", "method", "method_kwargs", "relevance", "group_by", "max_per_group",
        "max_tokens", "token_counter", "document_embedder", "reembed", "lexical",
        "language", "background", "fill_with_copies", "metadata_key"})

    @keywords_checked  # DiverseRanker(topk=2): a ValueError naming top_k
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
        language: str | None = None,
        background: Any = None,
        fill_with_copies: bool = False,
        metadata_key: str = METADATA_KEY,
    ) -> None:
        self.top_k = top_k
        self.method = method
        self.method_kwargs = {} if method_kwargs is None else method_kwargs
        self.relevance = relevance
        self.group_by = group_by
        self.max_per_group = max_per_group
        self.max_tokens = max_tokens
        self.token_counter = token_counter
        self.document_embedder = document_embedder
        self.reembed = reembed
        self.lexical = lexical
        self.language = language
        self.background = background
        self.fill_with_copies = fill_with_copies
        self.metadata_key = metadata_key
        self._warned_no_query = False
        self._keep_settings()

    def _checked_settings(self, fields: Mapping[str, Any]) -> Settings:
        """The arguments mapped onto the kit's settings, checked; and the embedder's form
        (the ranker's own)."""
        embedder = fields["document_embedder"]
        if embedder is not None and not (callable(embedder) or hasattr(embedder, "run")):
            raise ValueError("document_embedder: expected a Haystack document embedder "
                             "component or a callable list[str] -> list[list[float]]")
        check_item_spec(fields["relevance"], "relevance", "(Document) -> float")
        return build_settings(
            {"k": fields["top_k"], "fetch_k": None, "method": fields["method"],
             "options": fields["method_kwargs"], "relevance": fields["relevance"],
             "group_by": fields["group_by"], "max_per_group": fields["max_per_group"],
             "max_tokens": fields["max_tokens"], "token_counter": fields["token_counter"],
             "reembed": fields["reembed"], "lexical": fields["lexical"],
             "language": fields["language"], "background": fields["background"],
             "fill_with_copies": fields["fill_with_copies"],
             "metadata_key": fields["metadata_key"]},
            names=FIELD_NAMES)

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

        settings = self.settings()
        options = dict(settings.options)
        if callable(options.get("prior")):  # a (Document) -> float prior, by import path
            options["prior"] = ser(options["prior"])
        return default_to_dict(
            self, top_k=self.top_k, method=settings.method, method_kwargs=options,
            relevance=ser(self.relevance), group_by=ser(self.group_by),
            max_per_group=self.max_per_group, max_tokens=self.max_tokens,
            token_counter=ser(self.token_counter), document_embedder=ser(self.document_embedder),
            reembed=self.reembed, lexical=self.lexical, language=self.language,
            fill_with_copies=self.fill_with_copies,
            metadata_key=self.metadata_key,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DiverseRanker:
        """The ranker ``to_dict`` described; ``data`` is left as it was (its parameters are
        read into a copy)."""
        params = dict(data.get("init_parameters", {}))
        data = {**data, "init_parameters": params}
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

    def _missing(self, documents: list[Document], reembed: Reembed) -> list[int]:
        """Positions without an embedding; ValueError when they cannot be embedded."""
        missing = [i for i, d in enumerate(documents) if d.embedding is None]
        if missing and self.document_embedder is None:
            raise ValueError(
                f"documents: {len(missing)} of {len(documents)} have no embedding (e.g. "
                f"{documents[missing[0]].id!r}); ask the retriever for them "
                "(return_embedding=True) or give DiverseRanker a document_embedder"
            )
        if missing:
            check_reembedding(reembed, "DiverseRanker", "documents came without embeddings",
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
            raise RuntimeError("DiverseRanker: documents to embed and no document_embedder")
        return list((yield call(embedder, lambda texts: asyncio.to_thread(embedder, texts),
                                [d.content or "" for d in docs])))

    def _warn_without_query(self, settings: Settings) -> None:
        """Warn once when the method would read the documents' words but the run got no
        query text (its capability decides, ``vrsd_kit.rerank.reads_words``)."""
        if self._warned_no_query or not reads_words(
                settings.method, lexical=settings.lexical, relevance=settings.relevance,
                query="a query text"):
            return
        self._warned_no_query = True
        warnings.warn(
            "DiverseRanker: no query text, so the relevance comes from the vectors only; "
            "connect the query to the ranker's `query` input to use the documents' "
            "words (or set lexical=False to silence this)", UserWarning,
            stacklevel=user_stacklevel())

    def _rerank(self, documents: list[Document], vectors: Sequence[Sequence[float]],
                query_vector: NDArray[np.float64], settings: Settings,
                query: str | None = None) -> dict[str, list[Document]]:
        """The kit's one rerank body (``vrsd_kit.rerank``) on the run's documents."""
        if not documents:
            return {"documents": []}
        matrix = _matrix(vectors, query_vector)
        if query is None:
            self._warn_without_query(settings)
        else:
            check_query_text(query)
        return {"documents": rerank(DOCUMENTS, documents, query=query,
                                    query_vector=query_vector, vectors=matrix,
                                    settings=settings)}

    def _inputs_steps(self, documents: Any, query_embedding: Any, top_k: Any
                      ) -> Steps[tuple[list[Document], list[Sequence[float]],
                                       NDArray[np.float64], Settings]]:
        """The run's inputs checked and the missing embeddings made, as steps
        (``vrsd_kit.steps``): (documents, their vectors, the query vector, the run's
        settings: ``top_k`` checked as at construction), for ``_rerank``."""
        docs = _check_documents(documents)
        vector = check_query_vector(query_embedding, "query_embedding", "is")
        settings = self.settings().with_counts(k=top_k)
        missing = self._missing(docs, settings.reembed)
        fresh = (yield from self._embed_steps([docs[i] for i in missing])) if missing else []
        return docs, self._embedded(docs, missing, fresh), vector, settings

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], query_embedding: list[float],
            top_k: int | None = None, query: str | None = None) -> dict[str, list[Document]]:
        """Rerank ``documents`` for the query: the ``top_k`` picks, in selection order.
        ``query``: the query text, whose words the default reads (see ``lexical``).

        Raises:
            ValueError: naming ``documents``, ``query_embedding``, ``top_k`` or ``query``.
        """
        docs, vectors, vector, settings = run_steps(
            self._inputs_steps(documents, query_embedding, top_k))
        return self._rerank(docs, vectors, vector, settings, query)

    @component.output_types(documents=list[Document])
    async def run_async(self, documents: list[Document], query_embedding: list[float],
                        top_k: int | None = None, query: str | None = None
                        ) -> dict[str, list[Document]]:
        """Async ``run`` (the embedder's ``run_async`` when it has one)."""
        docs, vectors, vector, settings = await arun_steps(
            self._inputs_steps(documents, query_embedding, top_k))
        return self._rerank(docs, vectors, vector, settings, query)

