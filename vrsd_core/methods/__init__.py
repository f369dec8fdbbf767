"""One module per selection method, one function per method, named after it (the default,
``complement``, runs ``dpp``'s greedy loop with its own weights and hooks).

The contract a method author writes against (``tests/unit_tests/core/
test_method_contract.py`` checks every registered method against it):

- **Shape.** ``fn(prep, k, **options) -> list[Picked]``: one ``Picked`` per query
  of the prepared batch ``prep`` (``vrsd_core._prepare.Prepared``), indices in
  selection order, one gain per pick. Options are keyword-only with defaults,
  declared as data beside the method (its module's ``OPTIONS``, a tuple of
  ``vrsd_core.options.OptionSpec`` with the same defaults as the signature) and
  checked in the function with the spec's ``check`` (a ValueError naming the option).
  ``vrsd_core.api`` turns the ``Picked`` into ``Selection`` objects.
- **Register** the function with one keyword-built ``MethodInfo`` row in
  ``vrsd_core/registry.py`` (its ``own_options`` and its flags: outside relevance,
  prior, profiles, the words, seed, determinism, enumeration); the adapters, the CLI
  and the tests read the table.
- **Similarity** between candidates is read from ``prep.similarity`` (a
  ``Geometry``: the candidates' own, or with their profiles); ``prep.candidates``
  is always the vectors (for objectives of the vectors themselves, e.g. ``vrsd``).
- **Only real candidates.** Never pick where ``prep.valid`` is False (padding of
  a batch), never pick a candidate twice.
- **Count.** At most ``pick_counts(prep, k)`` picks (min(k, real candidates),
  also bounded by the per-group cap); a deterministic greedy method returns
  exactly that many unless a token budget runs out first.
- **Ties** go to the lower candidate index (the store's rank): scores within
  ``prep.tie_rtol`` of the best tie (``_common.first_best`` on one row,
  ``_prepare.argmax_first`` on a batch); a sort is checked for such ties first.
- **Cap and budget.** One query's loop asks ``_common.Room`` (``open``; ``take(pick)``
  returns what the pick closed); a batched loop starts its tracker with
  ``_common.start_constraints``, masks out what it says is closed at the start
  (``cons.open``) and after each pick (``cons.add(picks, step_active(...))``), and
  counts picks with ``taken_counts``. A method
  that stops early under a budget skips what does not fit and takes the next
  best candidate that does.
- **One query equals the batch.** ``select_batch`` must give what B ``select``
  calls give: a plain loop on one query, run per query (``_common.per_query``), or
  a loop over the (B, n) batch, which ``select`` runs as a batch of one.
- **Read only.** ``prep`` holds the caller's arrays: compute into new arrays.
"""
