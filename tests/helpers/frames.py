"""The adapters' own frames on the stack when the core's ``select`` starts: what a call
walks through before the selection (the frames below ``select`` are the core's)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

ADAPTER_PACKAGES = ("vrsd_kit", "vrsd_langchain", "vrsd_llamaindex", "vrsd_haystack")


def _is_core_select(frame: FrameType) -> bool:
    return (frame.f_code.co_name == "select"
            and frame.f_globals.get("__name__", "").split(".")[0] == "vrsd_core")


def frames_to_select(call: Callable[[], Any]) -> list[str]:
    """Run ``call`` (in this thread); the names of the adapter functions (``vrsd_kit`` and
    the adapters') on the stack when ``vrsd_core``'s ``select`` was last entered (a
    retriever built during the call checks its options with a trial ``select`` first),
    outermost first. Framework frames (LangChain's ``invoke``, a LlamaIndex span
    wrapper) are left out."""
    stacks: list[list[str]] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not _is_core_select(frame):
            return
        found = []
        outer = frame.f_back
        while outer is not None:
            if outer.f_globals.get("__name__", "").split(".")[0] in ADAPTER_PACKAGES:
                found.append(outer.f_code.co_name)
            outer = outer.f_back
        stacks.append(found[::-1])

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(previous)
    assert stacks, "the call never reached vrsd_core.select"
    return stacks[-1]
