"""One module per selection method (the determinantal pair, ``complement`` and ``dpp``,
shares one: ``determinantal``), one function per method, named after it.

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
- **Ties** go to the lower candidate index (the store's rank): score with
  ``_prepare.argmax_first`` at ``prep.tie_rtol``, never a plain sort.
- **Cap and budget.** Start the run's tracker with ``_common.start_constraints``
  (None without a cap or budget); mask out what it says is closed at the start
  (``cons.open``) and after each pick (``cons.add(picks, step_active(...))`` or
  ``cons.add_one(b, pick)``), and count picks with ``taken_counts``. A method
  that stops early under a budget skips what does not fit and takes the next
  best candidate that does.
- **One query equals the batch.** ``select_batch`` must give what B ``select``
  calls give: one loop per method over the (B, n) batch, which ``select`` runs
  as a batch of one.
- **Read only.** ``prep`` holds the caller's arrays: compute into new arrays.
"""
