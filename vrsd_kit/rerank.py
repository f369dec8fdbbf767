"""The one rerank body: every entry point of every adapter chooses its k items here.

An adapter fetches the candidates and their vectors its own way, then calls
``rerank(view, items, query=..., query_vector=..., vectors=..., settings=...)``:

1. each candidate's text as the words should read it (``view.text``);
2. what the pool's words say, for a method that reads them (``inputs.pool_signals``): the
   relevance of each candidate, its profile, and the links between candidates;
3. what is read from each candidate: a prior, an outside relevance, group labels, token
   counts (``inputs.candidate_keywords``, through ``view.values`` and ``view.scorer``);
4. the selection (``vrsd_core.select``, the only call of it outside the core); for a
   method that holds back what repeats a pick (the default), no copy of a kept pick is
   kept: while a pick is a copy of one before it (``copies.first_copy``, asking the one
   judge of copies, ``copies.Judge``, that the entries' explanation asks too), that
   candidate is closed and the selection made again (``copies.without_copies``);
5. one entry per pick (``entries.entries``; a pick a link brought in says which pick it
   links to and by which words), put on a copy of each picked item
   (``view.annotated``), in selection order.

An ``ItemView`` is how the body reads one framework's candidates: id, text, metadata,
vector, and a copy carrying the entry. numpy only, no framework imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from vrsd_core import METHOD_INFO, select
from vrsd_core.metrics import sum_vector_similarity

from .copies import Judge, first_copy, without_copies
from .entries import entries, source_of, with_entry
from .inputs import candidate_keywords, item_values, pool_signals, reads_words
from .lexical import cosines
from .settings import Settings

Item = TypeVar("Item")


class ItemView(Generic[Item]):
    """How the rerank body reads one framework's candidates (e.g. LangChain's
    ``Document``); an adapter subclasses it and writes ``text``, ``metadata`` and
    ``annotated`` (the others have defaults)."""

    def id(self, item: Item) -> Any:
        """The item's id (named by the held-back entries), or None."""
        return None

    def text(self, item: Item) -> str:
        """The item's own text (not the metadata a framework prints before it): the words,
        the profiles, the judge of copies and the excerpts read it."""
        raise NotImplementedError

    def prompt_text(self, item: Item) -> str:
        """The text the LLM will read (a token budget counts its tokens): ``text`` unless
        the framework puts more into the prompt (LlamaIndex's metadata lines)."""
        return self.text(item)

    def metadata(self, item: Item) -> Mapping[str, Any]:
        """The item's metadata (per-candidate fields are read from it)."""
        raise NotImplementedError

    def vector(self, item: Item) -> Sequence[float] | None:
        """The vector the item carries, or None (the adapter gets one another way)."""
        return None

    def subject(self, item: Item) -> Any:
        """What the user's callables are given for this item (the item itself by default)."""
        return item

    def annotated(self, item: Item, metadata: dict[str, Any], entry: dict[str, Any]) -> Item:
        """A copy of ``item`` whose metadata is ``metadata`` (a copy of its own, with
        ``entry`` under the settings' key); the original is not changed."""
        raise NotImplementedError

    def scorer(self, items: Sequence[Item], query: str | None
               ) -> Callable[[Callable[..., Any]], Any] | None:
        """How an outside relevance callable ``fn`` is asked for ``items``' scores:
        ``fn(query, subjects)``; None without a query text (the callable is then refused,
        naming the setting). A framework whose callable scores one item overrides it."""
        if not query:
            return None
        subjects = [self.subject(item) for item in items]
        return lambda fn: fn(query, subjects)

    def values(self, items: Sequence[Item], spec: Any, name: str) -> list[Any]:
        """One value per item: its metadata field ``spec``, or ``spec(subject(item))``."""
        return item_values(spec, items, name, metadata_of=self.metadata,
                           describe=self._describe, subject=self.subject)

    def _describe(self, item: Item) -> str:
        found = self.id(item)
        return str(found) if found is not None else self.text(item)[:40]


def rerank(view: ItemView[Item], items: Sequence[Item], *, query: str | None,
           query_vector: ArrayLike, vectors: ArrayLike, settings: Settings) -> list[Item]:
    """The ``settings.k`` picks of ``items`` (the candidates, in the store's order, row i
    of ``vectors`` belonging to item i), as annotated copies in selection order.

    ``query``: the query text (None for a search by vector: no words are read, and a
    relevance callable is refused); ``query_vector``: checked by the adapter
    (``inputs.check_query_vector``).

    Raises:
        ValueError: naming the setting or the candidate at fault (a per-candidate value),
            or, from the core, the vectors.
    """
    if not items:
        return []
    query_array = np.asarray(query_vector, dtype=np.float64)
    matrix = _as_matrix(vectors)
    texts = [view.text(item) for item in items]
    signals = pool_signals(query or "", query_array, matrix, texts) if reads_words(
        settings.method, lexical=settings.lexical, relevance=settings.relevance,
        query=query) else None
    prompts = texts if settings.max_tokens is None else [view.prompt_text(i) for i in items]
    keywords = candidate_keywords(settings, lambda spec, name: view.values(items, spec, name),
                                  len(items), view.scorer(items, query), prompts)
    if signals is not None:
        keywords.update(signals.select_keywords(METHOD_INFO[settings.method].own_options))
    selection = select(query_array, matrix, settings.k, method=settings.method, **keywords)
    cosine = cosines(query_array, matrix) if signals is None else signals.cosine
    judge = None
    if "held_back" in selection.info:  # a method that holds back what repeats a pick
        judge, closed, run = Judge(texts), [], selection
        while (position := first_copy(run.indices.tolist(), judge)) is not None:
            closed.append(int(run.indices[position]))  # never picked again: select anew
            run = select(query_array, matrix, settings.k, method=settings.method,
                         **with_closed(keywords, closed, len(items)))
        selection = without_copies(
            selection, run, closed, judge, settings.k, fill=settings.fill_with_copies,
            relevance=keywords.get("relevance", cosine),
            objective=lambda picked: sum_vector_similarity(query_array, matrix[picked]))
    found = entries(selection, [view.id(item) for item in items], signals, texts,
                    [source_of(view.metadata(item)) for item in items], judge=judge,
                    cosine=cosine)
    key = settings.metadata_key
    out = []
    for index, entry in zip(selection.indices.tolist(), found, strict=True):
        item = items[index]
        metadata, _ = with_entry(view.metadata(item), entry, key)
        out.append(view.annotated(item, metadata, entry))
    return out


def with_closed(keywords: Mapping[str, Any], closed: Sequence[int], count: int
                ) -> dict[str, Any]:
    """``select``'s keywords with the ``closed`` candidates never picked: each is given a
    token count above the budget (none given: a budget of 0 that every other candidate, at
    0 tokens, fits), which the core closes from the start; the pool, its relevance and
    every other candidate are as before."""
    out = dict(keywords)
    budget = out.get("max_tokens")
    tokens = (np.zeros(count, dtype=np.int64) if budget is None
              else np.array(out["token_counts"], dtype=np.int64))
    out["max_tokens"] = budget = 0 if budget is None else budget
    tokens[list(closed)] = budget + 1
    out["token_counts"] = tokens
    return out


def _as_matrix(vectors: ArrayLike) -> Any:
    """The candidates' vectors as an array, in the store's own float type (a float32 index
    is selected in float32, as the core would be called on it directly); other numbers as
    float64; anything else as given: the core's checks name it."""
    try:
        matrix = np.asarray(vectors)
        if matrix.dtype.kind == "f":
            return matrix
        return np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        return vectors
