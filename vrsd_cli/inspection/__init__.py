"""``vrsd inspect``: will the default help on my index? Label-free.

The inspection itself is a product feature below the command line: the figures and
the reports in ``vrsd_kit.inspection``, each framework's store read by its adapter
(``vrsd_langchain.inspect_store``, ``vrsd_llamaindex.inspect_index``,
``vrsd_haystack.inspect_store``). Here: ``inspect_store`` for any of those stores and
for a folder built by ``vrsd index``, and ``known``, corpora whose answer is labelled
(the tests' and ``benchmarks/inspect_corpora.py``'s). The figures and the reports are
imported from ``vrsd_kit.inspection``.
"""

from .api import inspect_store

__all__ = ["inspect_store"]
