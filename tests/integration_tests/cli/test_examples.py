"""Smoke tests: every script in examples/ runs offline and prints what it promises."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from vrsd_core import METHOD_INFO

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def run_example(name: str, *args: str) -> str:
    # as a user runs it: no offline or progress-bar settings from the test environment
    env = {k: v for k, v in os.environ.items()
           if k not in ("VRSD_CHAT_MODEL", "VRSD_LLAMAINDEX_LLM", "HF_HUB_OFFLINE",
                        "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS")}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
        env=env, cwd=EXAMPLES.parent, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Loading weights" not in proc.stderr and "it/s]" not in proc.stderr
    return proc.stdout


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == [
        "compare_methods.py", "haystack_pipeline.py", "langchain_rag.py",
        "llamaindex_query_engine.py",
        "ray_batch_rerank.py",  # run by tests/integration_tests/batch/test_ray_batch.py
    ]


def named_methods(path: Path) -> list[str]:
    """Method names an example passes as ``method=``, ``search_type=`` or a ``--method``
    default: a constant that overrides the recommended default."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [kw.value.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            for kw in node.keywords
            if kw.arg in ("method", "search_type", "default")
            and isinstance(kw.value, ast.Constant) and kw.value.value in METHOD_INFO]


def test_the_examples_run_the_recommended_default(tmp_path):
    """Only compare_methods.py, which is about comparing methods, may name one."""
    before = tmp_path / "before.py"  # what langchain_rag.py did: the check sees it
    before.write_text('DiverseRetriever(vectorstore=store, k=4, fetch_k=20, method="vrsd")\n'
                      'parser.add_argument("--method", default="vrsd")\n')
    assert named_methods(before) == ["vrsd", "vrsd"]
    for path in sorted(EXAMPLES.glob("*.py")):
        if path.name != "compare_methods.py":
            assert named_methods(path) == [], path.name


def test_haystack_pipeline_ranks_prompts_and_round_trips_yaml():
    out = run_example("haystack_pipeline.py")
    ranks = re.findall(r"^  rank (\d)  relevance ([+-]\d+\.\d{3}) \(cosine 0\.\d{3}, words "
                       r"\d+\.\d\)  \[([a-z]+-\d+[a-z]?)\]", out, flags=re.M)
    assert [r for r, _, _ in ranks] == ["0", "1", "2", "3"]
    assert len({i for _, _, i in ranks}) == 4
    # the picks reached the prompt, in selection order
    prompt = out.split("Prompt:\n", 1)[1]
    assert re.findall(r"^\[([a-z]+-\d+[a-z]?)\] ", prompt, flags=re.M) == [i for _, _, i in ranks]
    assert "Saved as YAML and loaded back: same picks" in out


def test_langchain_rag_prints_the_grounded_prompt_without_a_model():
    out = run_example("langchain_rag.py", "Does caffeine affect sleep?")
    assert out.startswith("No VRSD_CHAT_MODEL set")
    context = re.findall(r"^\[([a-z]+-\d+[a-z]?)\] ", out, flags=re.M)
    assert len(context) == 4 and len(set(context)) == 4
    assert "Question: Does caffeine affect sleep?" in out


def test_llamaindex_query_engine_with_mock_llm():
    out = run_example("llamaindex_query_engine.py")
    ranks = re.findall(r"^  rank (\d)  relevance ([+-]\d+\.\d{3}) \(cosine 0\.\d{3}, words "
                       r"\d+\.\d\)  \[", out, flags=re.M)
    assert [r for r, _ in ranks] == ["0", "1", "2", "3"]
    # MockLLM echoes its prompt: the picked passages reached the LLM
    assert "Response:" in out and "Query: Will an afternoon coffee keep me awake" in out


def test_compare_methods_prints_a_row_per_search():
    out = run_example("compare_methods.py")
    rows = re.findall(r"^(\S+(?: \S+=\S+)?)\s+(\d\.\d{3})\s+(-?\d\.\d{3})  (.+)$", out, flags=re.M)
    assert [r[0] for r in rows] == [
        "similarity", "complement", "vrsd", "vrsd refine=swap",
        "mmr lambda_mult=0.3", "mmr lambda_mult=0.5", "mmr lambda_mult=0.7", "dpp theta=0.5"]
    sims = {r[0]: float(r[1]) for r in rows}
    assert all(len(r[3].split(", ")) == 5 for r in rows)
    # swap never lowers the paper's objective
    assert sims["vrsd refine=swap"] >= sims["vrsd"]
