"""``vrsd index`` / ``search`` load the model only for a text the cache lacks, and
encode a text several chunks share once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli_fixtures import write
from tests.helpers.spies import SpyEmbeddings
from vrsd_eval import lazy_embeddings
from vrsd_eval.disk_embeddings import base_embeddings

ROOT = Path(__file__).resolve().parents[3]
LICENCE = "Permission is hereby granted, free of charge, to any person obtaining a copy."


def test_a_text_many_files_share_is_encoded_once(vrsd, tmp_path, monkeypatch):
    from vrsd_kit.numpy_encoder import bundled_numpy_encoder

    encoder = bundled_numpy_encoder()
    encoded: list[str] = []

    class Spy:
        def embed(self, texts, **kwargs):
            encoded.extend(texts)
            return encoder.embed(texts, **kwargs)

    monkeypatch.setattr(lazy_embeddings, "_numpy_encoder", lambda: Spy())
    monkeypatch.setenv("VRSD_CACHE_DIR", str(tmp_path / "cache"))
    files = {f"pkg{i}/copyright": LICENCE for i in range(5)}
    docs = write(tmp_path / "docs", {**files, "README": "Kettles boil water."})
    run = vrsd("index", docs, "--index-dir", tmp_path / "index")
    assert run.code == 0, run.err
    assert "6 files, 6 chunks (6 added" in run.out
    assert sorted(encoded) == sorted([LICENCE, "Kettles boil water."])


def test_another_model_encodes_with_sentence_transformers(vrsd, tmp_path, monkeypatch):
    """--model names a model the numpy encoder does not run: the model encodes, once
    per distinct text."""
    from vrsd_kit.bundled_model import bundled_model_path

    spy = SpyEmbeddings(base_embeddings())
    monkeypatch.setattr(lazy_embeddings, "base_embeddings", lambda model=None: spy)
    monkeypatch.setenv("VRSD_CACHE_DIR", str(tmp_path / "cache"))
    docs = write(tmp_path / "docs", {"a": LICENCE, "b": LICENCE, "c": "Kettles boil water."})
    run = vrsd("index", docs, "--index-dir", tmp_path / "index", "--model",
               str(bundled_model_path()))
    assert run.code == 0, run.err
    assert spy.counts == (0, 2)


def fresh_process(tmp_path: Path, *argv: str) -> str:
    """``vrsd argv`` in a new Python; prints whether torch was imported."""
    code = ("import sys; from vrsd_cli.cli import main; code = main(sys.argv[1:]); "
            "print('exit', code, 'torch', 'torch' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VRSD_CACHE_DIR": str(tmp_path / "cache"),
           "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    return proc.stdout.strip().splitlines()[-1] + proc.stderr


def test_unchanged_files_and_every_question_never_import_torch(tmp_path):
    """New chunks and a new question are encoded by the numpy encoder
    (vrsd_kit.numpy_encoder), unchanged files and a repeated question read from the
    cache: torch is never imported."""
    docs = write(tmp_path / "docs", {"README": "Kettles boil water.", "notes.md": "# Tea"})
    index = ["--index-dir", str(tmp_path / "index")]
    assert fresh_process(tmp_path, "index", str(docs), *index) == "exit 0 torch False"
    assert fresh_process(tmp_path, "index", str(docs), *index) == "exit 0 torch False"
    search = ["search", "how fast does a kettle boil?", *index]
    assert fresh_process(tmp_path, *search) == "exit 0 torch False"  # new: no warning either
    assert fresh_process(tmp_path, *search) == "exit 0 torch False"
