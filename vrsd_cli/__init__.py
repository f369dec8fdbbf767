"""vrsd_cli: the ``vrsd`` command, built on the adapters.

* ``vrsd demo``: the built-in corpus, the bundled model, an in-memory store.
* ``vrsd eval``: the evaluation protocols of ``vrsd_eval`` on its vendored data.
* ``vrsd index`` / ``vrsd search``: your own folder of notes in Chroma.

The layers: ``vrsd_core`` (selection, numpy) <- ``vrsd_kit`` (what the adapters
share) <- ``vrsd_langchain`` / ``vrsd_llamaindex`` / ``vrsd_haystack`` (adapters)
<- ``vrsd_eval`` (the evaluation protocols, and the embedding cache and method tokens
the commands share) <- ``vrsd_cli`` (this application). Nothing imports upward.
"""
