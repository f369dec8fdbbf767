"""What ``vrsd`` prints of names that are not UTF-8 (``vrsd_cli.printing``): escaped as
the bytes they are, in the terminal and in valid UTF-8 JSON, the exact bytes kept."""

from __future__ import annotations

import base64
import json
import os

from hypothesis import given
from hypothesis import strategies as st

from vrsd_cli.printing import has_undecodable, safe, safe_json

NAME = os.fsdecode(b"docs/\xff\xfe notes.txt")


def test_a_name_that_is_not_utf8_is_shown_as_its_bytes():
    assert safe(NAME) == "docs/\\xff\\xfe notes.txt"
    assert safe(safe(NAME)) == safe(NAME)  # an escape is printable
    assert has_undecodable(NAME) and not has_undecodable(safe(NAME))


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_safe_and_safe_json_are_always_utf8(text):
    safe(text).encode("utf-8")
    dumped = safe_json({"text": text})
    loaded = json.loads(dumped.encode("utf-8"))  # strict: valid UTF-8 and valid JSON
    if has_undecodable(text):
        assert not has_undecodable(loaded["text"])
    else:
        assert loaded["text"] == text


def test_a_result_whose_source_is_not_utf8_carries_its_bytes():
    from langchain_core.documents import Document

    from vrsd_cli.printing import hits_json

    docs = [Document(page_content="kettle", metadata={"source": NAME, "chunk": 0}),
            Document(page_content="tea", metadata={"source": "plain.txt", "chunk": 0})]
    found = json.loads(hits_json("q", docs, method="similarity", options={}, label="s", k=2,
                                 fetch_k=2, fetched=2, in_index=2).encode("utf-8"))
    first, second = (hit["metadata"] for hit in found["results"])
    assert first["source"] == "docs/\\xff\\xfe notes.txt"
    assert base64.b64decode(first["source_b64"]) == b"docs/\xff\xfe notes.txt"
    assert "source_b64" not in second
    assert docs[0].metadata == {"source": NAME, "chunk": 0}  # the caller's, untouched
