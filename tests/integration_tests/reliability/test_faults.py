"""Faults: the Chroma server stops (or hangs) in the middle of a run of queries.

While it is down every call raises, within a bound (each call runs in a worker
and must finish well inside HANG_LIMIT), an error that says the store could not
be reached (never an empty result, never a hang). After a restart on the same
port and data the *same* retriever object serves again, with the results it
gave before the fault.
"""

from __future__ import annotations

import concurrent.futures as cf

import httpx
import pytest

from tests.helpers.approx import approx_scores

pytestmark = pytest.mark.slow

# A call that has not returned or raised by then counts as a hang. The client's
# own timeouts (chroma_server.DEFAULT_CLIENT_TIMEOUT) are well below it.
HANG_LIMIT = 60.0


def _chain(err: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while err is not None and err not in out:
        out.append(err)
        err = err.__cause__ or err.__context__
    return out


def _call_bounded(pool: cf.ThreadPoolExecutor, fn, *args, **kwargs):
    """fn(*args) in a worker; a call still running after HANG_LIMIT fails the test."""
    future = pool.submit(fn, *args, **kwargs)
    try:
        return future.result(timeout=HANG_LIMIT)
    except cf.TimeoutError:
        pytest.fail(f"{getattr(fn, '__qualname__', fn)} hung for more than {HANG_LIMIT} s")


def _expect_store_error(pool, fn, *args, **kwargs) -> BaseException:
    """The call must raise, and the error chain must carry the transport failure."""
    future = pool.submit(fn, *args, **kwargs)
    try:
        result = future.result(timeout=HANG_LIMIT)
    except cf.TimeoutError:
        pytest.fail(f"call hung for more than {HANG_LIMIT} s with the server down")
    except Exception as err:  # noqa: BLE001 - inspected below
        chain = _chain(err)
        assert any(isinstance(e, httpx.TransportError) for e in chain), (
            f"the error does not say the store was unreachable: "
            f"{[f'{type(e).__name__}: {e}' for e in chain]}"
        )
        return err
    pytest.fail(f"the call returned {result!r} while the server was down")


def _lc_key(docs):  # compared with approx_scores: the relevance is computed
    return [(d.id, d.metadata["vrsd"]["rank"], d.metadata["vrsd"]["relevance"]) for d in docs]


def _li_key(nodes):
    return [(n.node.node_id, n.score) for n in nodes]


@pytest.fixture
def pool():
    with cf.ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


@pytest.mark.parametrize("method", ["vrsd", "dpp"])
def test_langchain_retriever_survives_server_stop_and_restart(live_chroma, lc_chroma, queries,
                                                              pool, method):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=lc_chroma, k=4, fetch_k=20, method=method)
    run = queries[:8]
    before = [_lc_key(_call_bounded(pool, retriever.invoke, q)) for q in run]

    # Stop mid-run: the first half was served, the second half cannot be.
    for q in run[:4]:
        _call_bounded(pool, retriever.invoke, q)
    live_chroma.stop()
    errors = [_expect_store_error(pool, retriever.invoke, q) for q in run[4:]]
    assert len(errors) == 4
    # Passed through unchanged: the client's own transport error, not a wrapper.
    assert all(isinstance(e, httpx.TransportError) for e in errors), errors

    live_chroma.start()  # same port, same data directory
    after = [_lc_key(_call_bounded(pool, retriever.invoke, q)) for q in run]
    assert after == approx_scores(before)


async def test_langchain_async_retriever_survives_server_stop(live_chroma, lc_chroma, queries):
    import asyncio

    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=lc_chroma, k=3, fetch_k=15)
    before = _lc_key(await retriever.ainvoke(queries[0]))
    live_chroma.stop()
    with pytest.raises(Exception) as info:  # noqa: B017 - the chain is checked below
        await asyncio.wait_for(retriever.ainvoke(queries[0]), HANG_LIMIT)
    assert any(isinstance(e, httpx.TransportError) for e in _chain(info.value)), info.value
    live_chroma.start()
    assert _lc_key(await retriever.ainvoke(queries[0])) == approx_scores(before)


def test_langchain_retriever_hung_server_times_out(live_chroma, lc_chroma, queries, pool):
    """A frozen server (SIGSTOP: connections accepted, nothing answered) must not block
    a query forever: the client's timeout turns it into an error."""
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=lc_chroma, k=4, fetch_k=20)
    before = _lc_key(_call_bounded(pool, retriever.invoke, queries[0]))
    live_chroma.freeze()
    try:
        err = _expect_store_error(pool, retriever.invoke, queries[0])
        assert isinstance(err, httpx.TimeoutException), repr(err)  # unchanged, not wrapped
    finally:
        live_chroma.thaw()
    assert _lc_key(_call_bounded(pool, retriever.invoke, queries[0])) == approx_scores(before)


def test_llamaindex_postprocessor_survives_server_stop_and_restart(
        live_chroma, li_chroma_index, li_embed_model, query_bundles, pool):
    """The postprocessor reads candidate vectors back from Chroma: with the server down
    that read fails clearly; after the restart the same object serves the same nodes."""
    from llama_index.core.schema import NodeWithScore, TextNode

    from vrsd_llamaindex import DiversePostprocessor

    retriever = li_chroma_index.as_retriever(similarity_top_k=20)
    post = DiversePostprocessor(top_n=4, embed_model=li_embed_model,
                             vector_store=li_chroma_index.vector_store)
    bundles = query_bundles[:6]
    candidates = [_call_bounded(pool, retriever.retrieve, b) for b in bundles]
    # Nodes as the store hands them over: without vectors, so the postprocessor must
    # read them from the server.
    bare = [[NodeWithScore(node=TextNode(id_=n.node.node_id, text=n.node.get_content(),
                                         metadata=dict(n.node.metadata)), score=n.score)
             for n in nodes] for nodes in candidates]
    before = [_li_key(_call_bounded(pool, post.postprocess_nodes, nodes, query_bundle=b))
              for nodes, b in zip(bare, bundles, strict=True)]

    live_chroma.stop()
    for nodes, b in zip(bare[3:], bundles[3:], strict=True):
        _expect_store_error(pool, post.postprocess_nodes, nodes, query_bundle=b)
    _expect_store_error(pool, retriever.retrieve, bundles[0])

    live_chroma.start()
    after = [_li_key(_call_bounded(pool, post.postprocess_nodes, nodes, query_bundle=b))
             for nodes, b in zip(bare, bundles, strict=True)]
    assert after == approx_scores(before)
    again = [_call_bounded(pool, retriever.retrieve, b) for b in bundles]
    assert [[n.node.node_id for n in nodes] for nodes in again] == [
        [n.node.node_id for n in nodes] for nodes in candidates]
