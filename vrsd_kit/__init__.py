"""vrsd_kit: what the adapters share beyond selection, written once (numpy only, no
framework imports).

* ``adapters``: the one table of the framework adapters.
* ``rerank``: the one rerank body every entry point calls, the ``ItemView`` through
  which it reads a framework's candidates, one query's inputs (the query, what the pool's
  words say, per-candidate values) and the entry every returned item carries under
  ``metadata["vrsd"]``, with what the default held back and why.
* ``lexical``: the pool's words: BM25, word profiles, links between candidates, and the
  one judge of copies (word pairs).
* ``settings``: the settings, declared as data and checked once into a frozen object, at
  construction and at every assignment.
* ``stores``: the shape of a store record, the private members an adapter reads,
  and the re-embedding policy.
* ``steps``: one body behind a sync entry point and its async twin.
* ``tokens``: the offline token counter for a ``max_tokens`` budget.
* ``bundled_model``: where the bundled embedding model lives.

The floors: ``vrsd_core`` (selection) <- ``vrsd_kit`` <- the adapters
(``vrsd_langchain``, ``vrsd_llamaindex``, ``vrsd_haystack``) <- ``vrsd_cli``.
Nothing imports upward: the adapters' table names their modules as text only.
"""

from vrsd_core import register_internal_package

register_internal_package(__name__)  # a warning raised through the kit blames the caller
