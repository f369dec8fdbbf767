"""The VRSD paper's evaluation data (ARC-DA, OpenBookQA) and its protocol.

The data is read from a folder laid out as ``../shared/data`` (see its README);
nothing is downloaded and nothing is copied into the project.

Protocol (paper, Tables 1 and 3): concatenate train, test, dev; turn each
record into ``QUESTION->ANSWER``; the first 20% are the queries (the text
before ``->``), the remaining 80% the indexed corpus.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

DATASETS = ("arc_da", "openbookqa")
SPLIT_ORDER = ("train", "test", "dev")
QUERY_SHARE = 0.2


@dataclass(frozen=True)
class PaperDataset:
    """One dataset cut the paper's way."""

    name: str
    queries: list[str]
    corpus: list[str]
    corpus_ids: list[str]


def default_data_dir() -> Path | None:
    """``$VRSD_DATA_DIR``, else ``../shared/data`` beside the working directory or the
    checkout this package lives in; None if none of them exists."""
    env = os.environ.get("VRSD_DATA_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent
    for base in (Path.cwd(), here):
        cand = base.parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return None


def record_text(name: str, record: dict) -> tuple[str, str]:
    """(id, ``QUESTION->ANSWER``) for one record, exactly as the protocol writes it."""
    if name == "arc_da":
        return record["question_id"], record["question"] + "->" + ". ".join(record["answers"])
    if name == "openbookqa":
        q = record["question"]
        choices = [c["text"] for c in q["choices"]]
        answer = next(c["text"] for c in q["choices"] if c["label"] == record["answerKey"])
        text = q["stem"] + "? The option can be: " + ". ".join(choices) + "->" + answer
        return record["id"], text
    raise ValueError(f"name: unknown dataset {name!r}; choose from {DATASETS}")


def load_dataset(name: str, data_dir: str | os.PathLike[str] | None = None) -> PaperDataset:
    """Load ``name`` from ``data_dir`` (default: ``default_data_dir()``) and cut it."""
    if name not in DATASETS:
        raise ValueError(f"name: unknown dataset {name!r}; choose from {DATASETS}")
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    if base is None or not (base / name).is_dir():
        raise ValueError(
            f"data_dir: no {name}/ folder under {base}; pass data_dir or set VRSD_DATA_DIR"
        )
    ids: list[str] = []
    texts: list[str] = []
    for split in SPLIT_ORDER:
        with open(base / name / f"{split}.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    rid, text = record_text(name, json.loads(line))
                    ids.append(rid)
                    texts.append(text)
    n_queries = int(len(texts) * QUERY_SHARE)
    queries = [t.split("->", 1)[0] for t in texts[:n_queries]]
    return PaperDataset(name, queries, texts[n_queries:], ids[n_queries:])
