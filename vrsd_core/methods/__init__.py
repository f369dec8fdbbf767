"""One module per selection method, one function per module.

Every method has the same shape: ``fn(prep, k, **options) -> list[Picked]``,
one ``Picked`` per query of the prepared batch. ``vrsd_core.api`` turns them
into ``Selection`` objects.
"""
