"""The store table of ``docs/stores.md``, generated from the adapters' store registries.

``python -m vrsd_cli.store_table`` prints it; a test checks the page holds exactly
this table, so a new store record shows up in the docs or the test fails.
"""

from __future__ import annotations

from collections.abc import Sequence

from vrsd_core.stores import StoreRecord

FALLBACKS = {
    "LangChain": "`similarity_search_by_vector`, then the candidates' text re-embedded "
                 "(cached by content)",
    "LlamaIndex": "`embed_model.get_text_embedding_batch` on the nodes without vectors",
    "Haystack": "any retriever that returns embeddings; documents without one need "
                "`VRSDRanker(document_embedder=...)`",
}
"""What each adapter does for a store it has no record for (the table's last row)."""


def adapter_registries() -> dict[str, Sequence[StoreRecord]]:
    """Each adapter's store registry, by the column it fills."""
    from vrsd_haystack.stores import RETRIEVERS
    from vrsd_langchain.stores import FAST_PATHS
    from vrsd_llamaindex import STORE_PATHS

    return {"LangChain": FAST_PATHS, "LlamaIndex": STORE_PATHS, "Haystack": RETRIEVERS}


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
    fallback = " | ".join(FALLBACKS.get(c, "–") for c in columns)
    lines.append(f"| anything else | {fallback} | always: `reembed=\"warn\"` says so once per "
                 "store class, `\"refuse\"` forbids it | the fallback tests, BM25 |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(store_table())
