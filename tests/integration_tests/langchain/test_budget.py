"""The token budget in the LangChain adapter: ``max_tokens`` + ``token_counter`` on
``DiverseRetriever``, ``as_retriever`` search_kwargs and ``DiverseCompressor``.

Each result equals ``select`` on the same candidates with the counts the counter
gives for their ``page_content``; bad settings name the argument.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from vrsd_core import DEFAULT_METHOD, select
from vrsd_kit.tokens import approx_token_count
from vrsd_langchain import DiverseCompressor, DiverseRetriever, DiverseVectorStore

from . import test_per_candidate as per_candidate
from .conftest import row_of
from .test_per_candidate import FETCH_K, QUERY, candidates

scored_store = per_candidate.scored_store  # the same fixture: documents with a "source"

BUDGET = 120


@pytest.fixture(scope="module")
def wordpiece(model_path):
    """The bundled model's own tokenizer (offline): a real token counter."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(model_path, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()  # its tokenizer.json pads every text to 128
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def expected(store, embeddings, counter, method="complement", k=8, budget=BUDGET):
    qvec, docs, vecs = candidates(store, embeddings)
    counts = [counter(d.page_content) for d in docs]
    sel = select(qvec, vecs, k, method=method, max_tokens=budget, token_counts=counts)
    return [row_of(docs[i]) for i in sel.indices], counts, docs


@pytest.mark.parametrize("method", ["complement", "similarity", "mmr", "vrsd"])
def test_retriever_fills_the_budget_with_the_default_counter(scored_store, embeddings, method):
    got = DiverseRetriever(vectorstore=scored_store, k=8, fetch_k=FETCH_K, method=method,
                        max_tokens=BUDGET).invoke(QUERY)
    want, _, _ = expected(scored_store, embeddings, approx_token_count, method)
    assert [row_of(d) for d in got] == want
    assert sum(approx_token_count(d.page_content) for d in got) <= BUDGET
    # the budget binds here: without it, k documents come back
    plain = DiverseRetriever(vectorstore=scored_store, k=8, fetch_k=FETCH_K,
                          method=method).invoke(QUERY)
    assert len(got) < len(plain) == 8


def test_a_real_tokenizer_as_the_counter(scored_store, embeddings, wordpiece):
    got = DiverseRetriever(vectorstore=scored_store, k=8, fetch_k=FETCH_K, max_tokens=BUDGET,
                        token_counter=wordpiece).invoke(QUERY)
    want, _, _ = expected(scored_store, embeddings, wordpiece)
    assert [row_of(d) for d in got] == want
    assert 0 < sum(wordpiece(d.page_content) for d in got) <= BUDGET


def test_as_retriever_search_kwargs_and_per_call_override(scored_store, embeddings):
    retriever = DiverseVectorStore(scored_store).as_retriever(
        search_type="mmr", search_kwargs={"k": 8, "fetch_k": FETCH_K, "max_tokens": BUDGET})
    want, _, _ = expected(scored_store, embeddings, approx_token_count, "mmr")
    assert [row_of(d) for d in retriever.invoke(QUERY)] == want
    plain = DiverseRetriever(vectorstore=scored_store, k=8, fetch_k=FETCH_K)
    again = plain.invoke(QUERY, max_tokens=BUDGET)
    want, _, _ = expected(scored_store, embeddings, approx_token_count)
    assert [row_of(d) for d in again] == want
    assert plain.max_tokens is None  # the override left the field alone


def test_compressor_budget(scored_store, embeddings, wordpiece):
    _, docs, _ = candidates(scored_store, embeddings)
    compressor = DiverseCompressor(embeddings=embeddings, k=8, max_tokens=BUDGET,
                                token_counter=wordpiece)
    got = compressor.compress_documents(docs, QUERY)
    qvec = np.asarray(embeddings.embed_query(QUERY))
    vecs = np.asarray(embeddings.embed_documents([d.page_content for d in docs]))
    sel = select(qvec, vecs, 8, method=DEFAULT_METHOD, max_tokens=BUDGET,
                 token_counts=[wordpiece(d.page_content) for d in docs])
    assert [row_of(d) for d in got] == [row_of(docs[i]) for i in sel.indices]


@pytest.mark.parametrize(("settings", "message"), [
    ({"max_tokens": -1}, "max_tokens: expected an integer >= 1"),
    ({"max_tokens": 0}, "max_tokens: expected an integer >= 1"),
    ({"max_tokens": 10.5}, "max_tokens: expected an integer"),
    ({"max_tokens": 100, "token_counter": "cl100k"}, "token_counter: expected a callable"),
])
def test_bad_budget_settings_fail_at_construction(scored_store, embeddings, settings, message):
    with pytest.raises(ValueError, match=message):
        DiverseRetriever(vectorstore=scored_store, **settings)
    with pytest.raises(ValueError, match=message):
        DiverseCompressor(embeddings=embeddings, **settings)


@pytest.mark.parametrize("counter", [lambda t: -1, lambda t: 2.5, lambda t: None])
def test_a_bad_count_names_the_counter_at_query_time(scored_store, counter):
    retriever = DiverseRetriever(vectorstore=scored_store, k=4, fetch_k=FETCH_K, max_tokens=50,
                              token_counter=counter)
    with pytest.raises(ValueError, match="^token_counter: returned .* for candidate 0"):
        retriever.invoke(QUERY)
