"""The questions ``inspect_store`` asks: a file (one a line, or JSON lines with a
``"question"`` field), a list of strings, or none (a sample of the store's passages)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..rerank import check_query_text


def read_questions(questions: str | os.PathLike[str] | Sequence[str]) -> list[str]:
    """The questions of a file or a list, checked.

    A file holds one question a line, or JSON lines ``{"question": ...}`` (other
    fields ignored) when its first line starts with ``{``. A blank line, a line that
    is not the file's kind, or a JSON line without a non-empty ``"question"`` string
    is an error naming the line: a file of questions is not guessed at.

    Raises:
        ValueError: naming ``questions``.
    """
    if isinstance(questions, str | os.PathLike):
        return _read_file(Path(questions))
    if not isinstance(questions, Sequence):
        raise ValueError("questions: expected a file path or a list of strings, got "
                         f"{type(questions).__name__}")
    out = [_checked(q, f"item {i}") for i, q in enumerate(questions)]
    if not out:
        raise ValueError("questions: the list is empty")
    return out


def _checked(question: Any, where: str) -> str:
    try:
        return check_query_text(question, "questions")
    except ValueError as exc:
        raise ValueError(f"questions: {where}: {str(exc).removeprefix('questions: ')}") from None


def _read_file(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"questions: {path} is not UTF-8 text") from None
    except OSError as exc:
        raise ValueError(f"questions: cannot read {path}: {exc.strerror or exc}") from None
    while lines and not lines[-1].strip():  # trailing blank lines end the file
        lines.pop()
    if not lines:
        raise ValueError(f"questions: no questions in {path}")
    jsonl = lines[0].lstrip().startswith("{")
    out = []
    for number, line in enumerate(lines, 1):
        where = f"{path} line {number}"
        if not line.strip():
            raise ValueError(f"questions: {where} is blank; one question a line")
        out.append(_json_question(line, where) if jsonl else _checked(line.strip(), where))
    return out


def _json_question(line: str, where: str) -> str:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"questions: {where}: not JSON ({exc.msg}); the file's first "
                         "line made it JSON lines") from None
    if not isinstance(record, dict) or "question" not in record:
        raise ValueError(f'questions: {where}: expected an object with a "question" field')
    return _checked(record["question"], where)
