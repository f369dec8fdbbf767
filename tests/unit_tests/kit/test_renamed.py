"""The adapters' former class names answer with the new class and a DeprecationWarning
(``vrsd_kit.renamed``); a Haystack pipeline saved under the former name still loads."""

from __future__ import annotations

import importlib

import pytest

RENAMED = [
    ("vrsd_langchain", "VRSDRetriever", "DiverseRetriever"),
    ("vrsd_langchain", "VRSDCompressor", "DiverseCompressor"),
    ("vrsd_llamaindex", "VRSDPostprocessor", "DiversePostprocessor"),
    ("vrsd_llamaindex", "VRSDRetriever", "DiverseRerankRetriever"),
    ("vrsd_haystack", "VRSDRanker", "DiverseRanker"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_a_former_name_is_the_new_class_with_a_warning(module, old, new):
    package = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{old} is now {module}\.{new}"):
        found = getattr(package, old)
    assert found is getattr(package, new)
    assert old not in package.__all__


@pytest.mark.parametrize("module", sorted({m for m, _, _ in RENAMED}))
def test_an_unknown_name_is_still_an_attribute_error(module):
    with pytest.raises(AttributeError, match="VRSDNothing"):
        getattr(importlib.import_module(module), "VRSDNothing")  # noqa: B009


def test_a_pipeline_saved_under_the_former_name_loads():
    from haystack import Pipeline

    from vrsd_haystack import DiverseRanker

    pipeline = Pipeline()
    pipeline.add_component("ranker", DiverseRanker(top_k=2, method="mmr"))
    saved = pipeline.dumps().replace("ranker.DiverseRanker", "ranker.VRSDRanker")
    assert "vrsd_haystack.ranker.VRSDRanker" in saved
    with pytest.warns(DeprecationWarning, match="VRSDRanker is now"):
        loaded = Pipeline.loads(saved, allowed_modules=["vrsd_haystack.ranker"])
    ranker = loaded.get_component("ranker")
    assert isinstance(ranker, DiverseRanker)
    assert ranker.to_dict() == pipeline.get_component("ranker").to_dict()
    assert "ranker.DiverseRanker" in loaded.dumps()
