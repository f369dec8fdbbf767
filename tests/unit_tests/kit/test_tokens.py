"""The offline token counter: its documented error against a real tokenizer, and the
checks on any counter's output."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vrsd_eval.datasets import default_data_dir, read_jsonl
from vrsd_kit.settings import build_settings
from vrsd_kit.tokens import approx_token_count, check_token_counter, count_tokens


@pytest.fixture(scope="module")
def wordpiece_counts(model_path):
    """(approx, real) token counts of every vendored HotpotQA paragraph; real = the
    bundled all-MiniLM-L6-v2 WordPiece tokenizer, no truncation, padding or special
    tokens (what the module docstring of vrsd_kit.tokens reports)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(model_path, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    path = default_data_dir() / "hotpotqa_dev500" / "dev_subsampled.jsonl"
    texts = sorted({c["paragraph_text"] for rec in read_jsonl(path) for c in rec["contexts"]})
    real = np.array([len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)])
    approx = np.array([approx_token_count(t) for t in texts])
    return approx, real


def test_error_against_the_bundled_tokenizer_is_as_documented(wordpiece_counts):
    approx, real = wordpiece_counts
    assert len(real) == 4857
    rel = (approx - real) / real
    assert abs(rel.mean()) < 0.01  # docs/adapters.md: within 1 %
    assert np.abs(rel).mean() < 0.06  # under 6 %
    assert np.quantile(np.abs(rel), 0.95) < 0.15  # 95 % within 15 %


def test_hand_counted_examples():
    assert approx_token_count("") == 0
    assert approx_token_count("Hello world") == 3  # ceil(2 * 1.05)
    assert approx_token_count("Paris, France.") == 5  # ceil(2 * 1.05 + 2 * 1.25)


def test_counter_checks():
    assert check_token_counter(None) is approx_token_count
    with pytest.raises(ValueError, match="^token_counter: expected a callable"):
        check_token_counter(12)
    assert count_tokens(len, ["ab", "", "abc"]).tolist() == [2, 0, 3]
    for bad in (-1, 1.5, True, "3", None, np.float64(2.0)):
        with pytest.raises(ValueError, match="^token_counter: returned .* for candidate 1"):
            count_tokens(lambda t, b=bad: b if t == "x" else 1, ["a", "x"])
    assert count_tokens(lambda t: np.int32(4), ["a"]).tolist() == [4]


def test_budget_settings():
    def budget(max_tokens, token_counter):
        settings = build_settings({"max_tokens": max_tokens, "token_counter": token_counter})
        return settings.max_tokens, settings.token_counter

    assert budget(None, None) == (None, approx_token_count)
    assert budget(1, len) == (1, len)
    for bad in (0, -1, 2.0, "10", True):  # below one token: refused like k=0
        with pytest.raises(ValueError, match="^max_tokens: "):
            budget(bad, None)
