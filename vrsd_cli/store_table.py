"""The store table of ``docs/stores.md``, generated from the adapters' store registries.

``python -m vrsd_cli.store_table`` prints it; a test checks the page holds exactly
this table, so a new store record shows up in the docs or the test fails.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from vrsd_kit.adapters import ADAPTERS, Adapter
from vrsd_kit.stores import StoreRecord


def store_records(adapter: Adapter) -> Sequence[StoreRecord]:
    """``adapter``'s store records (its module is imported: the framework must be)."""
    module, name = adapter.records.split(":")
    records: Sequence[StoreRecord] = getattr(importlib.import_module(module), name)
    return records


def adapter_registries() -> dict[str, Sequence[StoreRecord]]:
    """Each adapter's store registry, by the column it fills."""
    return {adapter.framework: store_records(adapter) for adapter in ADAPTERS}


def _cell(record: StoreRecord) -> str:
    return f"`{record.class_name}`: {record.vectors} ({record.client} {record.tested})"


def store_table(registries: dict[str, Sequence[StoreRecord]] | None = None) -> str:
    """The markdown table: one row per store family, one column per adapter."""
    registries = adapter_registries() if registries is None else registries
    families: list[str] = []
    for records in registries.values():
        for record in records:
            if record.family not in families:
                families.append(record.family)
    columns = list(registries)
    lines = [
        f"| store | {' | '.join(columns)} | re-embeds when | tested against |",
        "|---" * (len(columns) + 3) + "|",
    ]
    for family in families:
        by_column = {name: [r for r in records if r.family == family]
                     for name, records in registries.items()}
        every = [r for column in columns for r in by_column[column]]
        cells = ["; ".join(_cell(r) for r in by_column[c]) or "–" for c in columns]
        limits = "; ".join(f"`{r.class_name}` ({c}): {r.limits}" for c in columns
                           for r in by_column[c] if r.limits) or "–"
        tested = "; ".join(dict.fromkeys(r.tested_on for r in every))
        lines.append(f"| {family} | {' | '.join(cells)} | {limits} | {tested} |")
    fallbacks = {adapter.framework: adapter.fallback for adapter in ADAPTERS}
    fallback = " | ".join(fallbacks.get(c, "–") for c in columns)
    lines.append(f"| anything else | {fallback} | always: `reembed=\"warn\"` says so once per "
                 "store class, `\"refuse\"` forbids it | the fallback tests, BM25 |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(store_table())
