"""A plain candidate type and its item view, for tests of the kit's one rerank body."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vrsd_kit.rerank import ItemView


@dataclass(frozen=True)
class Passage:
    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


class PassageView(ItemView[Passage]):
    def id(self, item):
        return item.id

    def text(self, item):
        return item.text

    def metadata(self, item):
        return item.meta

    def annotated(self, item, metadata, entry):
        return replace(item, meta=metadata)
