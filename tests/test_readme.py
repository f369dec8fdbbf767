"""The README's ```python blocks run as written (offline, quick) and assert what they show."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def test_readme_has_the_three_quickstarts():
    assert len(BLOCKS) == 3
    joined = "\n".join(BLOCKS)
    for name in ("vrsd_core", "vrsd_langchain", "vrsd_llamaindex"):
        assert f"from {name} import" in joined


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    exec(compile(block, str(README), "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()  # every block prints what it shows
