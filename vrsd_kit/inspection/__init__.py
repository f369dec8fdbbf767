"""Will the default help on my store? Label-free, from the store's own candidates.

Each adapter reads its framework's stores as its retriever does and hands the
candidates here::

    from vrsd_langchain import inspect_store          # a VectorStore or DiverseRetriever
    from vrsd_llamaindex import inspect_index         # a LlamaIndex index
    from vrsd_haystack import inspect_store           # a document store or retriever
    from vrsd_kit.inspection import format_table, write_html

    found = inspect_store(store)            # the store's own passages as questions
    print(format_table(found))              # the figures, the verdict, the crowded questions
    write_html(found, "inspect.html")       # the same with a plot, self-contained

For each question, plain top-k and the default (``vrsd_core.DEFAULT_METHOD``) choose
from the same ``fetch_k`` candidates. The figures and the verdict's rule: ``figures``
and docs/inspect.md. numpy, the core and the kit only (matplotlib for the HTML
report's plot, tqdm for a progress bar, each when asked for).
"""

from .figures import (
    CROWDED_RATE,
    Crowded,
    HeldBack,
    Inspection,
    Passage,
    QuestionFigures,
    Ranked,
    compare,
    crowded_slots,
)
from .questions import read_questions
from .report import format_table, render_html, write_html
from .run import DEFAULT_SAMPLE, Pool, Source, SourceSpec, inspect_source

__all__ = [
    "CROWDED_RATE",
    "DEFAULT_SAMPLE",
    "Crowded",
    "HeldBack",
    "Inspection",
    "Passage",
    "Pool",
    "QuestionFigures",
    "Ranked",
    "Source",
    "SourceSpec",
    "compare",
    "crowded_slots",
    "format_table",
    "inspect_source",
    "read_questions",
    "render_html",
    "write_html",
]
