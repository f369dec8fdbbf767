"""Hostile input to the ``vrsd`` command line (``vrsd index`` / ``vrsd search``), run
in-process through ``vrsd_cli.cli.main`` on a small folder indexed into a
temporary Chroma directory.

Contract (the CLI's own): exit 0 with results, or exit 2 with ``error: <argument>...``
on stderr and no traceback; never an exception escaping ``main``.
"""

from __future__ import annotations

import re

import pytest

from vrsd_kit.settings import DEFAULT_FETCH_K

pytestmark = pytest.mark.slow

FILES = {
    "plants.txt": "Plants need light, water and carbon dioxide to grow. " * 5,
    "sun.md": "# The Sun\n\nThe sun is a star at the centre of the solar system.\n",
    "water.txt": "Water boils at 100 degrees Celsius at sea level.\n",
    "unicode.txt": "光合作用は植物が光を使う過程です。Фотосинтез 🌱\n",
    "duplicate.txt": "Plants need light, water and carbon dioxide to grow. " * 5,
    "empty.txt": "",
}


@pytest.fixture(scope="module")
def cli_index(tmp_path_factory):
    """(main, index_dir): the folder above indexed once; caches under a temp dir."""
    from vrsd_cli.cli import main

    root = tmp_path_factory.mktemp("cli")
    docs = root / "docs"
    docs.mkdir()
    for name, text in FILES.items():
        (docs / name).write_text(text, encoding="utf-8")
    (docs / "binary.txt").write_bytes(b"\xff\xfe\x00\x81 not utf-8 \xc3\x28")
    index_dir = root / "index"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VRSD_CACHE_DIR", str(root / "cache"))
        mp.delenv("VRSD_INDEX_DIR", raising=False)
        assert main(["index", str(docs), "--index-dir", str(index_dir)]) == 0
        yield main, index_dir, root


def run(cli_index, capsys, *argv: str) -> tuple[int, str, str]:
    main, index_dir, root = cli_index
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VRSD_CACHE_DIR", str(root / "cache"))
        try:
            code = main(["search", *argv, "--index-dir", str(index_dir)])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize("query", [
    "What do plants need?",
    "Почему растениям нужен свет? 植物为什么需要光？ 🌞",
    "plants " * 15_000,  # ~100k characters
    "plants\x07need\x1b[0m light",
    "plants \udcff\udcfe light",  # undecodable argv bytes arrive as surrogate escapes
], ids=["plain", "non_ascii", "huge", "controls", "surrogate_escapes"])
def test_search_queries(cli_index, capsys, query):
    code, out, err = run(cli_index, capsys, query, "--k", "3")
    if code == 2:
        assert "query" in err, err  # refusing is fine if it says why
        return
    assert code == 0, err
    assert re.match(r"\d+ results for", out)


@pytest.mark.parametrize("query", ["", "   "], ids=["empty", "blank"])
def test_search_empty_query(cli_index, capsys, query):
    code, _, err = run(cli_index, capsys, query)
    assert code == 2 and "query" in err


@pytest.mark.parametrize(("args", "names"), [
    (["--k", "0"], "--k"),
    (["--k", "-1"], "--k"),
    (["--k", "2.5"], "--k"),
    (["--k", "lots"], "--k"),
    (["--fetch-k", "0"], "--fetch-k"),
    (["--k", str(10**30)], None),
    (["--k", "5", "--fetch-k", "2"], "--fetch-k: 2 is smaller than --k (5)"),
    (["--k", str(DEFAULT_FETCH_K + 10)], None),  # no --fetch-k: the default is raised to k
    (["--k", "5", "--fetch-k", "5"], None),
    (["--method", "bogus"], "method"),
    (["--method", "mmr:lambda_mult=2"], "lambda_mult"),
    (["--method", "mmr:lambda_mult=abc"], "lambda_mult"),
    (["--method", "mmr:lambda_mult"], "--method: "),  # the flag, not "methods"
    (["--method", "dpp:theta=1"], "theta"),
    (["--method", "vrsd:nonsense=1"], "nonsense"),
    (["--method", ""], "method"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_search_hostile_options(cli_index, capsys, args, names):
    """Usage problems exit 2 naming the option; a huge k is served, and so is a k above
    the default fetch_k when --fetch-k is not given; an explicit fetch_k < k is refused."""
    code, out, err = run(cli_index, capsys, "What do plants need?", *args)
    if names is None:
        assert code == 0, err
        assert re.match(r"\d+ results for", out)
    else:
        assert code == 2, (out, err)
        assert names in err, err


def test_search_missing_index(cli_index, capsys, tmp_path):
    main, _, root = cli_index
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VRSD_CACHE_DIR", str(root / "cache"))
        code = main(["search", "plants", "--index-dir", str(tmp_path / "nowhere")])
    _, err = capsys.readouterr()
    assert code == 2 and "index_dir" in err and "Traceback" not in err


@pytest.mark.parametrize("case", ["missing", "file", "empty_folder"])
def test_index_hostile_paths(cli_index, capsys, tmp_path, case):
    main, _, root = cli_index
    target = {"missing": tmp_path / "missing", "file": tmp_path / "a.txt",
              "empty_folder": tmp_path / "empty"}[case]
    if case == "file":
        target.write_text("text", encoding="utf-8")
    if case == "empty_folder":
        target.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VRSD_CACHE_DIR", str(root / "cache"))
        code = main(["index", str(target), "--index-dir", str(tmp_path / "idx")])
    _, err = capsys.readouterr()
    assert code == 2 and "path" in err and "Traceback" not in err
