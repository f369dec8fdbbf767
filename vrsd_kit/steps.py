"""One body for a sync entry point and its async twin.

An adapter writes the I/O of a call once, as a generator that yields a ``Call``
wherever it needs I/O (embed the query, search the store, embed texts) and
receives the result back; ``run_steps`` fulfils each ``Call`` with its sync
function and ``arun_steps`` awaits its async one. The generator returns what the
selection needs (the query vector, the candidates' vectors) and the entry point
runs the selection itself, with no steps frame left on the stack. An exception raised by the I/O
is thrown into the generator at the ``yield``, so the body handles it there
(``try: docs = yield Call(...) except NotImplementedError: ...``) as it would a
direct call.

Nothing here knows a framework: the core only drives the adapters' steps.

>>> import asyncio
>>> async def adouble(x):
...     return 2 * x
>>> def body(x):
...     doubled = yield call(lambda v: 2 * v, adouble, x)  # the sync and async forms
...     return doubled + 1
>>> run_steps(body(20)), asyncio.run(arun_steps(body(20)))
(41, 41)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class Call:
    """One I/O request: ``sync(*args, **kwargs)``, or ``await asynchronous(*args, **kwargs)``."""

    sync: Callable[..., Any]
    asynchronous: Callable[..., Awaitable[Any]]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def call(sync: Callable[P, Any], asynchronous: Callable[P, Awaitable[Any]],
         *args: P.args, **kwargs: P.kwargs) -> Call:
    """``Call(sync, asynchronous, args, kwargs)`` written as the call it stands for (type
    checkers hold ``args`` and ``kwargs`` to both functions' signatures)."""
    return Call(sync, asynchronous, args, kwargs)


Steps = Generator[Call, Any, T]
"""A body: yields ``Call``s, is sent their results, returns the entry point's result."""


@dataclass(frozen=True)
class _Done:
    value: Any


def _advance(steps: Steps[Any], result: Any = None, error: Exception | None = None
             ) -> Call | _Done:
    """Resume ``steps`` with a ``Call``'s result or its exception; its next ``Call``, or
    ``_Done`` with what it returned."""
    try:
        return steps.send(result) if error is None else steps.throw(error)
    except StopIteration as stop:
        return _Done(stop.value)


def _made(request: Call) -> tuple[Any, Exception | None]:
    try:
        return request.sync(*request.args, **request.kwargs), None
    except Exception as exc:  # handed to the body, which re-raises what it does not handle
        return None, exc


async def _awaited(request: Call) -> tuple[Any, Exception | None]:
    try:
        return await request.asynchronous(*request.args, **request.kwargs), None
    except Exception as exc:  # as in _made
        return None, exc


def run_steps(steps: Steps[T]) -> T:
    """Run ``steps`` with every ``Call`` made synchronously."""
    request = _advance(steps)
    while isinstance(request, Call):
        request = _advance(steps, *_made(request))
    return request.value  # type: ignore[no-any-return]


async def arun_steps(steps: Steps[T]) -> T:
    """Run ``steps`` with every ``Call`` awaited through its async function."""
    request = _advance(steps)
    while isinstance(request, Call):
        request = _advance(steps, *await _awaited(request))
    return request.value  # type: ignore[no-any-return]
