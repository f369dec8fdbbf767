"""The names the LlamaIndex and Haystack adapters import until they are on the one rerank
body (``vrsd_kit.rerank``); each is the kit's own function or a thin wrapper over one.

Remove this module when ``vrsd_llamaindex`` and ``vrsd_haystack`` call ``rerank`` and
build their settings with ``vrsd_kit.settings.build_settings``: new code imports from
``vrsd_kit.settings`` (settings), ``vrsd_kit.inputs`` (one query's inputs) and
``vrsd_kit.entries`` (the entry on each result).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, Selection, check_count

from .entries import METADATA_KEY, entries, source_of, with_entry
from .inputs import (
    PoolSignals,
    candidate_keywords,
    check_prior_values,
    check_query_text,
    check_query_vector,
    item_values,
    pool_signals,
    reads_words,
)
from .settings import (
    FrozenDict,
    GroupKey,
    ItemScore,
    RelevanceFn,
    Settings,
    check_counts,
    check_flag,
    check_item_spec,
    check_metadata_key,
    check_model_keywords,
    did_you_mean,
    keywords_checked,
)
from .settings import check_method_options as _check_method_options
from .tokens import TokenCounter, check_token_counter

__all__ = ["METADATA_KEY", "GroupKey", "ItemScore", "RelevanceFn", "check_budget_options",
           "check_counts", "check_flag", "check_group_options", "check_item_spec",
           "check_metadata_key", "check_method_options", "check_model_keywords",
           "check_prior_values", "check_query_text", "check_query_vector",
           "check_relevance_spec", "did_you_mean", "item_values", "keywords_checked",
           "selection_inputs", "selection_metadata_all", "source_of", "with_entry",
           "words_relevance"]


def check_method_options(method: Any, options: Mapping[str, Any], item_form: str) -> None:
    """``vrsd_kit.settings.check_method_options``."""
    _check_method_options(method, options)


def check_relevance_spec(method: str, relevance: Any, callable_form: str) -> None:
    """An outside relevance's form, and its method taking one (``build_settings``'s rule)."""
    from vrsd_core import METHOD_INFO

    check_item_spec(relevance, "relevance", callable_form)
    if relevance is not None and not METHOD_INFO[method].takes_relevance:
        raise ValueError(f"relevance: method {method!r} scores candidates by their vectors "
                         "against the query; it takes no outside relevance")


def check_group_options(group_by: Any, max_per_group: Any) -> int | None:
    """``max_per_group`` checked, with ``group_by`` (``build_settings``'s rule)."""
    check_item_spec(group_by, "group_by", "(item) -> label")
    cap = None if max_per_group is None else check_count(max_per_group, "max_per_group")
    if (group_by is None) != (cap is None):
        missing = "max_per_group" if cap is None else "group_by"
        raise ValueError(
            f"{missing}: group_by (a metadata field or a callable giving each candidate's "
            "source) and max_per_group (the most picks per source) go together")
    return cap


def check_budget_options(max_tokens: Any, token_counter: Any) -> tuple[int | None, TokenCounter]:
    """(``max_tokens`` checked, the counter to use)."""
    budget = None if max_tokens is None else check_count(max_tokens, "max_tokens")
    return budget, check_token_counter(token_counter)


def words_relevance(method: str, lexical: bool, relevance: Any, query: str | None,
                    texts: Callable[[], Sequence[str]], query_vector: Any, vectors: Any,
                    ) -> PoolSignals | None:
    """``inputs.pool_signals`` when ``inputs.reads_words``."""
    if not reads_words(method, lexical=lexical, relevance=relevance, query=query):
        return None
    try:
        q = check_query_vector(query_vector)
        x = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return pool_signals(query or "", q, x, texts())


def selection_inputs(options: Mapping[str, Any], count: int,
                     values: Callable[[Any, str], list[Any]], *, relevance: Any = None,
                     score: Callable[[Callable[..., Any]], Any] | None = None,
                     words: PoolSignals | None = None, group_by: Any = None,
                     max_per_group: int | None = None, max_tokens: int | None = None,
                     token_counter: TokenCounter | None = None,
                     texts: Callable[[], Sequence[str]] | None = None) -> dict[str, Any]:
    """``inputs.candidate_keywords`` (and the signals' keywords) for settings already
    checked by the adapter."""
    settings = Settings(1, None, DEFAULT_METHOD, FrozenDict(options), relevance,
                        group_by, max_per_group, max_tokens, check_token_counter(token_counter),
                        True, METADATA_KEY, "warn", FrozenDict())
    out = candidate_keywords(settings, values, count, score,
                             texts() if max_tokens is not None and texts else [])
    if words is not None:
        out.update(words.select_keywords())
    return out


def selection_metadata_all(selection: Selection, ids: Sequence[Any] | None = None,
                           words: PoolSignals | None = None,
                           texts: Sequence[str] | None = None,
                           sources: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    """``entries.entries``."""
    return entries(selection, ids, words, texts, sources)
