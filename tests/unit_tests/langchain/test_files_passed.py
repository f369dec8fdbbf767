"""What a warm ``DiverseRetriever.invoke`` walks through in the project: its own classes, the
store's fast path, the kit's one body and the core's selection; no settings are built or
checked on a plain call (they were, when the retriever was built). 13 files: the core's 5
(``_prepare``, ``api``, ``methods/_common``, ``methods/complement`` and the loop it runs,
``methods/dpp``), the kit's 4
(``lexical``, ``rerank``, ``settings``, ``steps``) and LangChain's 4 (``candidates``,
``retriever``, ``stores/_base``, the store's record).
``benchmarks/retriever_overhead.py --files`` lists the same on FAISS."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from vrsd_langchain import DiverseRetriever

ROOT = Path(__file__).resolve().parents[3]
OURS = ("vrsd_core", "vrsd_kit", "vrsd_langchain")


def files_entered(call: Any) -> dict[str, int]:
    seen: dict[str, int] = {}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(str(ROOT)) and Path(name).relative_to(ROOT).parts[0] in OURS:
                key = str(Path(name).relative_to(ROOT))
                seen[key] = seen.get(key, 0) + 1

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def test_a_warm_invoke_checks_nothing_and_enters_few_files(in_memory_store):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=4, fetch_k=20)
    retriever.invoke("water vapor heat")
    kept = retriever.settings()
    seen = files_entered(lambda: retriever.invoke("water vapor heat"))
    assert "vrsd_langchain/settings.py" not in seen  # nothing built or checked ...
    assert retriever.settings() is kept  # ... the kept settings read
    assert len(seen) <= 13, sorted(seen)
