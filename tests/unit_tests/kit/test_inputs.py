"""One query's inputs (``vrsd_kit.rerank``): the query, the pool's signals, and what is
read from each candidate."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_core import METHOD_INFO, pool_units, select
from vrsd_kit import rerank
from vrsd_kit.lexical import pool_relevance
from vrsd_kit.settings import build_settings
from vrsd_kit.tokens import approx_token_count


def test_check_query_text():
    assert rerank.check_query_text("what is vrsd?") == "what is vrsd?"
    for blank in ("", "   ", "\n\t"):  # nothing to be relevant to: refused, as by the CLI
        with pytest.raises(ValueError, match="^query: the query is empty or only whitespace"):
            rerank.check_query_text(blank)
    for bad, kind in ((None, "NoneType"), (b"q", "bytes"), (3, "int")):
        with pytest.raises(ValueError, match=f"^query: expected a string, got {kind}"):
            rerank.check_query_text(bad)
    with pytest.raises(ValueError, match=r"^query_bundle: not valid Unicode.*position 2"):
        rerank.check_query_text("ab\udcff", "query_bundle")


@pytest.mark.parametrize(("bad", "said"), [
    ("x", "not a vector of numbers"), ([[1.0]], "shape"), ([], "shape"),
    ([np.nan, 1.0], "NaN"), ([0.0, 0.0], "zero vector")])
def test_check_query_vector(bad, said):
    with pytest.raises(ValueError, match=f"^embeddings: embed_query returned .*{said}"):
        rerank.check_query_vector(bad)
    with pytest.raises(ValueError, match="^query_embedding: is "):
        rerank.check_query_vector(bad, "query_embedding", "is")
    assert rerank.check_query_vector([1, 2]).dtype == np.float64


def test_check_prior_values():
    out = rerank.check_prior_values([1, 0.5, np.float32(2.0), np.int64(-1)], 4)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 0.5, 2.0, -1.0]
    with pytest.raises(ValueError, match="prior: expected 3 values"):
        rerank.check_prior_values([1.0, 2.0], 3)
    for bad in ("0.5", None, True, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="^prior: candidate 1 has"):
            rerank.check_prior_values([0.0, bad], 2)


def test_item_values():
    items = [{"id": "a", "meta": {"src": 1}}, {"id": "b", "meta": {"src": 2}}]
    read = {"metadata_of": lambda it: it["meta"], "describe": lambda it: it["id"]}
    assert rerank.item_values("src", items, "group_by", **read) == [1, 2]
    assert rerank.item_values(lambda it: it["id"], items, "group_by", **read) == ["a", "b"]
    assert rerank.item_values(len, items, "group_by", subject=lambda it: it["id"],
                              **read) == [1, 1]
    with pytest.raises(ValueError, match="^prior: candidate 'b' has no metadata field 'q'"):
        rerank.item_values("q", [{"id": "b", "meta": {}}], "prior", **read)


ITEMS = [{"q": 0.5, "s": 1, "src": "a"}, {"q": 0.25, "s": 2, "src": "b"}]


def values(spec, name):
    return [spec(i) for i in ITEMS] if callable(spec) else [i[spec] for i in ITEMS]


def test_candidate_keywords_read_prior_relevance_groups_and_tokens():
    settings = build_settings({
        "method": "mmr", "options": {"lambda_mult": 0.7, "prior": "q", "prior_weight": 0.3},
        "relevance": lambda query, its: [len(query) * i["s"] for i in its],
        "group_by": "src", "max_per_group": 1, "max_tokens": 50})
    out = rerank.candidate_keywords(settings, values, 2, lambda fn: fn("ab", ITEMS),
                                    ["one two", "three"])
    assert out["lambda_mult"] == 0.7 and out["prior_weight"] == 0.3
    np.testing.assert_array_equal(out["prior"], [0.5, 0.25])
    np.testing.assert_array_equal(out["relevance"], [2.0, 4.0])
    assert out["groups"] == ["a", "b"] and out["max_per_group"] == 1
    assert out["max_tokens"] == 50
    assert out["token_counts"].tolist() == [approx_token_count("one two"),
                                            approx_token_count("three")]
    by_field = build_settings({"method": "mmr", "relevance": "s"})
    np.testing.assert_allclose(
        rerank.candidate_keywords(by_field, values, 2, None, [])["relevance"], [1.0, 2.0])
    assert rerank.candidate_keywords(build_settings({"method": "mmr"}), values, 2, None,
                                     []) == {}


def test_candidate_keywords_name_what_is_wrong():
    def wrong(spec, name):
        return ["x", 1.0]

    with pytest.raises(ValueError, match="prior: candidate 0 has 'x'"):
        rerank.candidate_keywords(build_settings({"options": {"prior": "q"}}), wrong, 2, None, [])
    bad_count = build_settings({"relevance": lambda q, d: [1.0]})
    with pytest.raises(ValueError, match="relevance: expected 2 values"):
        rerank.candidate_keywords(bad_count, wrong, 2, lambda fn: fn("q", []), [])
    with pytest.raises(ValueError, match="relevance: a callable .* needs the query text"):
        rerank.candidate_keywords(bad_count, wrong, 2, None, [])


@pytest.mark.parametrize("method", list(METHOD_INFO))
def test_the_words_are_read_where_the_method_declares_it(method):
    """The method's declared capability decides, nothing else (not its name)."""
    reads = METHOD_INFO[method].reads_words
    assert rerank.reads_words(method, lexical=True, relevance=None, query="q") is reads
    assert not rerank.reads_words(method, lexical=False, relevance=None, query="q")
    assert not rerank.reads_words(method, lexical=True, relevance="score", query="q")
    assert not rerank.reads_words(method, lexical=True, relevance=None, query=None)


def test_pool_signals_are_what_the_default_is_given():
    texts = ["Caffeine has a half-life of five hours.", "Alcohol fragments sleep.",
             "Caffeine and sleep."]
    q, x = np.ones(3), np.eye(3)
    signals = rerank.pool_signals("caffeine sleep", q, x, texts)
    assert signals is not None
    words = pool_relevance("caffeine sleep", texts, q, x)
    keywords = signals.select_keywords()
    np.testing.assert_allclose(keywords["relevance"], pool_units([words.cosine, words.lexical]))
    np.testing.assert_array_equal(keywords["profiles"], words.profiles)
    select(q, x, 2, **keywords)  # what the default takes
    assert signals.parts(0) == {"cosine": pytest.approx(words.cosine[0]),
                                "lexical": pytest.approx(words.lexical[0])}
    # vectors the core will refuse: no signals, so that the core's error names them
    assert rerank.pool_signals("caffeine", q, np.array([[1.0, np.nan, 0.0]] * 3), texts) is None
    assert rerank.pool_signals("caffeine", q, np.eye(2), texts) is None
