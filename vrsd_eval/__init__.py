"""vrsd_eval: the evaluation protocols, their vendored data and their reports.

* ``paper``: the VRSD paper's protocol (Sim. and Div. on ARC-DA and OpenBookQA).
* ``evidence``: evidence coverage on HotpotQA multi-hop questions, at fixed k;
  ``budget``: the same at equal token budgets; ``haystack_protocol``: Haystack's
  rankers on the same candidates; ``runner``: both protocols on every geometry, and
  the numbers of docs/evaluation.md (``--docs``).
* ``geometries``: the embedding models a rule is measured on (``lsa``: TF-IDF + SVD);
  ``pools``: every question's candidates, fetched once, and the rows run on them in
  batches.
* ``datasets``: the vendored data (``data/datasets``, with its licences);
  ``store``: the LangChain store every protocol retrieves from; ``report``: the
  markdown tables, JSON and plots they write.
* ``disk_embeddings``, ``e5``: embedding models behind an on-disk cache (the
  ``vrsd`` command's demo and index share them); ``methods``: the method tokens
  of the command line.

``vrsd eval`` is the command (``vrsd_cli``); ``pip install 'vrsd[eval]'`` installs
what the protocols need. The layers: ``vrsd_core`` <- the adapters <- ``vrsd_eval``
<- ``vrsd_cli``. Importing this package imports nothing heavy: each module imports
its libraries when used.
"""
