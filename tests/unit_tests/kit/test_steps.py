"""``vrsd_kit.steps``: one body, run synchronously and awaited, gives the same result;
I/O errors reach the body at its ``yield``, and what it does not handle reaches the
caller unchanged."""

from __future__ import annotations

import pytest

from vrsd_kit.steps import arun_steps, call, run_steps


def _sync_double(x: int) -> int:
    return 2 * x


async def _async_double(x: int) -> int:
    return 2 * x


def _sync_fail(x: int) -> int:
    raise NotImplementedError(f"sync {x}")


async def _async_fail(x: int) -> int:
    raise NotImplementedError(f"async {x}")


def body(fail_first: bool, handle: bool):
    first = (_sync_fail, _async_fail) if fail_first else (_sync_double, _async_double)
    try:
        a = yield call(*first, 3)
    except NotImplementedError as exc:
        if not handle:
            raise
        a = -len(str(exc))
    b = yield call(_sync_double, _async_double, x=a)
    return (a, b)


@pytest.mark.parametrize("fail_first", [False, True])
async def test_sync_and_async_runs_agree(fail_first):
    sync = run_steps(body(fail_first, handle=True))
    assert sync == ((-6, -12) if fail_first else (6, 12))
    assert await arun_steps(body(fail_first, handle=True)) == (
        (-7, -14) if fail_first else sync)  # "async 3" is one letter longer


async def test_an_unhandled_error_reaches_the_caller():
    with pytest.raises(NotImplementedError, match="sync 3"):
        run_steps(body(fail_first=True, handle=False))
    with pytest.raises(NotImplementedError, match="async 3"):
        await arun_steps(body(fail_first=True, handle=False))


async def test_a_body_without_io_returns_at_once():
    def nothing():
        return "done"
        yield  # a generator that never asks for anything

    assert run_steps(nothing()) == await arun_steps(nothing()) == "done"
