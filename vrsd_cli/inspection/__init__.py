"""``vrsd inspect`` as a Python call: will the default help on my store? Label-free.

    from vrsd_cli.inspection import format_table, inspect_store, write_html

    found = inspect_store(store)            # a LangChain store, a LlamaIndex index, ...
    print(format_table(found))              # the figures, the verdict, the crowded questions
    write_html(found, "inspect.html")       # the same with a plot, self-contained

For each question (a file, a list, or a sample of the store's own passages), plain
top-k and the default (``vrsd_core.DEFAULT_METHOD``) choose from the same ``fetch_k``
candidates, fetched through the adapters' own machinery; the default's
``Selection.info["held_back"]`` says which top-k passages it holds back and which kept
passage each restates. The figures and the verdict's rule: ``figures`` and
docs/inspect.md.

It lives in ``vrsd_cli``: it reads every adapter (so it sits above them, on the
applications' floor), and a ``vrsd index`` folder, the embedding cache and matplotlib
are this package's already.
"""

from .api import DEFAULT_SAMPLE, inspect_store
from .figures import (
    CROWDED_RATE,
    HeldBack,
    Inspection,
    Passage,
    QuestionFigures,
    Ranked,
)
from .questions import read_questions
from .report import format_table, render_html, write_html

__all__ = [
    "CROWDED_RATE",
    "DEFAULT_SAMPLE",
    "HeldBack",
    "Inspection",
    "Passage",
    "QuestionFigures",
    "Ranked",
    "format_table",
    "inspect_store",
    "read_questions",
    "render_html",
    "write_html",
]
