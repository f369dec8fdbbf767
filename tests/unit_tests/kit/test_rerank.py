"""The one rerank body (``vrsd_kit.rerank``) against a direct reference: the same picks as
the core called directly on the same inputs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.helpers.items import Passage, PassageView
from vrsd_core import DEFAULT_METHOD, METHOD_INFO, Links, pool_units, select
from vrsd_kit.lexical import pool_relevance
from vrsd_kit.rerank import rerank
from vrsd_kit.settings import build_settings

WORDS = "rome empire caesar senate light water plants cats dogs bread dough oven".split()




def pool(seed: int, n: int = 30, d: int = 12):
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, 12)) for _ in range(n)]
    items = [Passage(f"p{i}", t, {"source": f"s{i % 4}", "score": float(rng.random())})
             for i, t in enumerate(texts)]
    return items, rng.standard_normal(d), rng.standard_normal((n, d))


@pytest.mark.parametrize("seed", range(5))
def test_the_default_with_words_picks_what_the_core_picks(seed):
    items, q, x = pool(seed)
    query = "rome senate water"
    got = rerank(PassageView(), items, query=query, query_vector=q, vectors=x,
                 settings=build_settings({"k": 6}))
    words = pool_relevance(query, [p.text for p in items], q, x)
    want = select(q, x, 6, method=DEFAULT_METHOD,
                  relevance=pool_units([words.cosine, words.lexical]), profiles=words.profiles,
                  links=Links(words.links.cosine, words.links.beyond_chance, words.spread))
    assert [p.id for p in got] == [items[i].id for i in want.indices]
    for rank, p in enumerate(got):
        entry = p.meta["vrsd"]
        assert entry["rank"] == rank and entry["method"] == DEFAULT_METHOD
        assert entry["relevance"] == pytest.approx(float(want.relevance[rank]))
        assert entry["cosine"] == pytest.approx(float(words.cosine[want.indices[rank]]))
    assert all("vrsd" not in p.meta for p in items)  # the originals are not changed


OPTIONS = {"mmr": {"lambda_mult": 0.6}, "dpp": {"theta": 0.5}}


@pytest.mark.parametrize("method", [m for m, info in METHOD_INFO.items()
                                    if not info.exhaustive])
def test_every_method_picks_what_the_core_picks(method):
    items, q, x = pool(7)
    options = {**OPTIONS.get(method, {}), **({"seed": 3} if METHOD_INFO[method].seeded else {})}
    settings = build_settings({"k": 5, "method": method, "options": options, "lexical": False})
    got = rerank(PassageView(), items, query="rome", query_vector=q, vectors=x,
                 settings=settings)
    want = select(q, x, 5, method=method, **options)
    assert [p.id for p in got] == [items[i].id for i in want.indices]
    assert [p.meta["vrsd"]["relevance"] for p in got] == pytest.approx(want.relevance.tolist())


def test_per_candidate_inputs_reach_the_core():
    items, q, x = pool(3)
    settings = build_settings({"k": 5, "method": "mmr", "relevance": "score",
                               "group_by": "source", "max_per_group": 1,
                               "options": {"prior": lambda p: len(p.text), "prior_weight": 0.2}})
    got = rerank(PassageView(), items, query="rome", query_vector=q, vectors=x,
                 settings=settings)
    want = select(q, x, 5, method="mmr", relevance=[p.meta["score"] for p in items],
                  groups=[p.meta["source"] for p in items], max_per_group=1,
                  prior=[float(len(p.text)) for p in items], prior_weight=0.2)
    assert [p.id for p in got] == [items[i].id for i in want.indices]
    assert len({p.meta["source"] for p in got}) == len(got) == 4


def test_no_query_text_reads_no_words_and_no_items_returns_nothing():
    items, q, x = pool(4)
    settings = build_settings({"k": 4})
    got = rerank(PassageView(), items, query=None, query_vector=q, vectors=x, settings=settings)
    want = select(q, x, 4, method=DEFAULT_METHOD)
    assert [p.id for p in got] == [items[i].id for i in want.indices]
    entry = got[0].meta["vrsd"]
    assert "lexical" not in entry  # no words read: the relevance is the cosine, named so
    assert entry["cosine"] == pytest.approx(entry["relevance"])
    assert rerank(PassageView(), [], query="q", query_vector=q, vectors=np.zeros((0, 12)),
                  settings=settings) == []


def test_the_entry_goes_beside_a_key_the_metadata_holds():
    items, q, x = pool(5)
    items = [replace(p, meta={**p.meta, "mine": 1}) for p in items]
    with pytest.warns(UserWarning, match="mine"):
        got = rerank(PassageView(), items, query="rome", query_vector=q, vectors=x,
                     settings=build_settings({"metadata_key": "mine"}))
    assert got[0].meta["mine"] == 1 and got[0].meta["mine_"]["rank"] == 0
