"""``vrsd_kit.bundled_model.import_from_extra``: what a missing optional dependency says."""

from __future__ import annotations

import pytest

from vrsd_kit.bundled_model import import_from_extra


def test_a_missing_module_names_who_needs_it_and_the_extra():
    with pytest.raises(ImportError, match=r"^default_embeddings needs no_such_module_here: "
                                          r"pip install 'vrsd\[langchain-embeddings\]'"):
        import_from_extra("no_such_module_here", "default_embeddings", "langchain-embeddings")


def test_an_installed_module_is_returned():
    import json

    assert import_from_extra("json", "anyone", "any") is json
