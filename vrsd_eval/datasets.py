"""The VRSD paper's evaluation data (ARC-DA, OpenBookQA) and its protocol.

The data is vendored with this package (``data/datasets``, gzip-compressed,
with its licences and origin in ``data/datasets/README.md``); ``VRSD_DATA_DIR``
points at another folder of the same layout. Nothing is downloaded.

Protocol (paper, Tables 1 and 3): concatenate train, test, dev; turn each
record into ``QUESTION->ANSWER``; the first 20% are the queries (the text
before ``->``), the remaining 80% the indexed corpus.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
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


DATA_ENV = "VRSD_DATA_DIR"
VENDORED_DIR = Path(__file__).resolve().parent / "data" / "datasets"


def default_data_dir() -> Path:
    """``$VRSD_DATA_DIR`` if set, else the data vendored with this package."""
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else VENDORED_DIR


def read_jsonl(path: Path) -> Iterator[dict]:
    """The records of ``path`` (``.jsonl``), or of ``path`` + ``.gz`` if only that exists."""
    if not path.exists() and path.with_name(path.name + ".gz").exists():
        path = path.with_name(path.name + ".gz")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


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
    if not (base / name).is_dir():
        raise ValueError(
            f"data_dir: no {name}/ folder under {base}; pass data_dir or set VRSD_DATA_DIR"
        )
    ids: list[str] = []
    texts: list[str] = []
    for split in SPLIT_ORDER:
        for record in read_jsonl(base / name / f"{split}.jsonl"):
            rid, text = record_text(name, record)
            ids.append(rid)
            texts.append(text)
    n_queries = int(len(texts) * QUERY_SHARE)
    queries = [t.split("->", 1)[0] for t in texts[:n_queries]]
    return PaperDataset(name, queries, texts[n_queries:], ids[n_queries:])
