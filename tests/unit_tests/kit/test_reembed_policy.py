"""``vrsd_kit.stores.check_reembedding``: the policy both adapters apply before
embedding candidates again."""

from __future__ import annotations

import warnings

import pytest

from vrsd_kit.stores import (
    ReembeddingWarning,
    StoreRecord,
    check_reembed,
    check_reembedding,
)

pytestmark = pytest.mark.usefixtures("fresh_reembed_warnings")


def test_warn_once_per_store_and_reason():
    with pytest.warns(ReembeddingWarning, match="StoreA: no vectors, so its 3 candidate"):
        check_reembedding("warn", "StoreA", "no vectors", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_reembedding("warn", "StoreA", "no vectors", 5)
    with pytest.warns(ReembeddingWarning, match="StoreB"):
        check_reembedding("warn", "StoreB", "no vectors", 3)
    with pytest.warns(ReembeddingWarning, match="another reason"):
        check_reembedding("warn", "StoreA", "another reason", 3)


def test_the_warning_says_what_is_done_and_the_refusal_what_was_not():
    """The warning comes with the embedding (the texts are embedded); only the refusal,
    which embeds nothing, speaks of what would have been."""
    with pytest.warns(ReembeddingWarning) as caught:
        check_reembedding("warn", "StoreC", "no vectors", 4)
    text = str(caught[0].message)
    assert "its 4 candidate text(s) are embedded again" in text and "would" not in text
    with pytest.raises(ValueError, match="4 candidate text.s. would have to be embedded again"):
        check_reembedding("refuse", "StoreC", "no vectors", 4)


def test_refuse_names_store_reason_and_option():
    with pytest.raises(ValueError, match=r"^reembed: StoreA: no vectors; .*reembed=.refuse."):
        check_reembedding("refuse", "StoreA", "no vectors", 1)
    with pytest.raises(ValueError, match=r"^reembed_policy: "):
        check_reembedding("refuse", "StoreA", "no vectors", 1, option="reembed_policy")


def test_nothing_to_embed_or_allow_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_reembedding("refuse", "StoreA", "no vectors", 0)
        check_reembedding("warn", "StoreA", "no vectors", 0)
        check_reembedding("allow", "StoreA", "no vectors", 9)


@pytest.mark.parametrize("value", ["Warn", "", None, 1, ["warn"]])
def test_check_reembed_refuses_other_values(value):
    with pytest.raises(ValueError, match="^reembed: expected one of"):
        check_reembed(value)


def test_store_record_finds_its_class_only_once_imported():
    record = StoreRecord(name="x", family="X", module="vrsd_kit.stores",
                         class_name="StoreRecord", client="numpy", tested=">=1", vectors="")
    assert record.store_class() is StoreRecord and record.is_for(record)
    assert not record.is_for(object())
    missing = StoreRecord(name="y", family="Y", module="no_such_module_imported",
                          class_name="Y", client="numpy", tested=">=1", vectors="")
    assert missing.store_class() is None and not missing.is_for(object())
