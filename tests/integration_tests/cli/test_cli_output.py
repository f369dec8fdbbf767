"""What ``vrsd`` prints can be trusted: control characters from a user's files never reach
the terminal, options are taken as typed (no prefix matching, "did you mean" under the
sub-command's usage), counts are reported as done, excerpts are never blank, and every
exit code docs/cli.md lists is the one the command returns."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli_fixtures import as_a_terminal_starts_it, write
from vrsd_cli import cli
from vrsd_cli.printing import fit, format_hits, safe, safe_json

ROOT = Path(__file__).resolve().parents[3]
CHUNK = ["--chunk-size", "60", "--chunk-overlap", "0"]
CLEAR = "\x1b[2J"  # erase the screen
TITLE = "\x1b]0;owned\x07"  # OSC: set the window's title
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what must never be printed raw
HOSTILE_TEXT = f"Caffeine lasts five hours.{CLEAR} Coffee{TITLE} keeps you awake at night."
HOSTILE_NAME = f"evil{CLEAR}red{TITLE}.txt"


def assert_no_raw_controls(text: str) -> None:
    found = RAW.findall(text)
    assert not found, f"raw control characters printed: {found!r}"


# ----------------------------------------------------------------- safe output


def test_safe_escapes_every_control_character_and_keeps_the_rest():
    assert safe(f"a{CLEAR}b") == "a\\x1b[2Jb"
    assert safe(TITLE) == "\\x1b]0;owned\\x07"
    assert safe("\x9b31m \x7f \r \u202egnp.exe") == "\\x9b31m \\x7f \\r \\u202egnp.exe"
    assert safe("line one\n\tline two, café") == "line one\n\tline two, café"
    assert safe("a\nb", one_line=True) == "a\\nb"
    assert safe(safe(CLEAR + TITLE)) == safe(CLEAR + TITLE)  # escaping twice is harmless
    value = {"text": f"x{CLEAR}\x9by\u202e"}
    printed = safe_json(value)
    assert_no_raw_controls(printed)
    assert "\u202e" not in printed
    assert json.loads(printed) == value  # still the same JSON


@pytest.fixture
def hostile_index(vrsd, tmp_path):
    """An index of a folder whose file text and file name hold escape sequences."""
    docs = write(tmp_path / "docs", {HOSTILE_NAME: HOSTILE_TEXT,
                                     "tea.txt": "Tea has less caffeine than coffee.",
                                     "rome.txt": "Augustus became the first Roman emperor."})
    index_dir = tmp_path / "index"
    run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert run.code == 0, run.err
    assert_no_raw_controls(run.out + run.err)
    return index_dir


def test_search_prints_a_files_escape_sequences_escaped(vrsd, hostile_index):
    run = vrsd("search", f"caffeine{CLEAR}?", "--index-dir", hostile_index, "--k", "3")
    assert run.code == 0, run.err
    assert_no_raw_controls(run.out + run.err)
    assert "evil\\x1b[2Jred\\x1b]0;owned\\x07.txt" in run.out  # the name, escaped
    assert "\\x1b[2J" in run.out and "\\x1b]0;owned\\x07" in run.out  # the text, escaped
    as_json = run_json = vrsd("search", "caffeine", "--index-dir", hostile_index, "--json")
    assert_no_raw_controls(run_json.out)
    texts = {r["text"] for r in json.loads(as_json.out)["results"]}
    assert any(CLEAR in t and TITLE in t for t in texts)  # JSON keeps the text, escaped
    assert HOSTILE_NAME in {r["metadata"]["source"] for r in json.loads(as_json.out)["results"]}


def test_inspect_and_error_lines_print_escape_sequences_escaped(vrsd, hostile_index, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text(f"caffeine{CLEAR}\nwho was the first emperor?\n", encoding="utf-8")
    run = vrsd("inspect", "--index-dir", hostile_index, "--questions", questions, "--k", "2",
               "--no-html")
    assert run.code == 0, run.err
    assert_no_raw_controls(run.out + run.err)
    missing = vrsd("search", "q", "--index-dir", tmp_path / f"no{TITLE}where")
    assert missing.code == 2
    assert_no_raw_controls(missing.err)
    assert "\\x1b]0;owned\\x07" in missing.err
    typed = vrsd("search", "q", f"--k{CLEAR}", "2")  # argparse's own messages too
    assert typed.code == 2
    assert_no_raw_controls(typed.err)


# ----------------------------------------------------------------- options as typed


def parsers(parser=None, seen=None):
    """Every parser of ``vrsd``: the top level and each sub-command's, nested ones too."""
    import argparse

    parser = parser or cli.build_parser()
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from parsers(sub)


def test_no_parser_matches_option_prefixes():
    found = list(parsers())
    assert len(found) >= 10  # vrsd, demo, eval and its protocols, index, search, inspect
    assert all(not p.allow_abbrev for p in found)


@pytest.mark.parametrize(("argv", "usage", "hint"), [
    (["search", "q", "--fetchk", "5"], "vrsd search", "--fetchk: unknown option; did you "
     "mean --fetch-k?"),
    (["search", "q", "--fetch", "5"], "vrsd search", "--fetch: unknown option; did you mean "
     "--fetch-k?"),  # a prefix is not taken as the option it begins
    (["search", "q", "--fetchk=5"], "vrsd search", "did you mean --fetch-k?"),
    (["index", "docs", "--chunksize", "80"], "vrsd index", "did you mean --chunk-size?"),
    (["inspect", "--sampel", "3"], "vrsd inspect", "did you mean --sample?"),
    (["eval", "evidence", "--limt", "3"], "vrsd eval evidence", "did you mean --limit?"),
    (["demo", "--lamda-mult", "0.3"], "vrsd demo", "did you mean --lambda-mult?"),
    (["search", "q", "--zzzzzz"], "vrsd search", "--zzzzzz: unknown option; its options: "),
    (["search", "q", "extra words"], "vrsd search", "unrecognized arguments: extra words"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_misspelt_option_is_refused_under_its_sub_commands_usage(vrsd, argv, usage, hint):
    run = vrsd(*argv)
    assert run.code == 2
    lines = run.err.splitlines()
    assert lines[0].startswith(f"usage: {usage} ")
    assert lines[-1] == f"{usage}: error: {hint}" or (
        lines[-1].startswith(f"{usage}: error: ") and hint in lines[-1])
    assert run.out == ""


def test_negative_numbers_are_values_not_options(vrsd):
    run = vrsd("search", "q", "--k", "-1")
    assert run.code == 2 and "expected a number >= 1, got -1" in run.err


def test_cache_dir_holds_index_and_search_embeddings(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {"a.txt": "Coffee keeps you awake, caffeine lasts hours."})
    cache = tmp_path / "my cache"
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, "--cache-dir", cache).code == 0
    from vrsd_eval.disk_embeddings import cache_folder

    stored = cache_folder(None, "documents", cache)
    assert stored.is_dir() and any(p.is_file() for p in stored.rglob("*"))
    run = vrsd("search", "caffeine?", "--index-dir", index_dir, "--cache-dir", cache)
    assert run.code == 0, run.err
    queries = cache_folder(None, "queries", cache)
    assert any(p.is_file() for p in queries.rglob("*"))


# ----------------------------------------------------------------- counts as done


def test_k_above_the_index_size_says_what_was_fetched_and_kept(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {f"f{i}.txt": f"Note {i} on coffee number {i}."
                                     for i in range(7)})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir).code == 0
    run = vrsd("search", "coffee", "--index-dir", index_dir, "--k", "50")
    assert run.code == 0, run.err
    assert run.out.splitlines()[1] == (
        "method: complement (the default): 7 kept of 7 fetched by similarity "
        "(--k 50, --fetch-k 50: the index holds only 7 chunks)")
    assert "of 50 fetched" not in run.out
    as_json = json.loads(vrsd("search", "coffee", "--index-dir", index_dir, "--k", "50",
                              "--method", "vrsd:refine=swap", "--json").out)
    assert {key: as_json[key] for key in ("method", "options", "method_label", "k", "fetch_k",
                                          "kept", "fetched", "index_chunks")} == {
        "method": "vrsd", "options": {"refine": "swap"}, "method_label": "vrsd:refine=swap",
        "k": 50, "fetch_k": 50, "kept": 7, "fetched": 7, "index_chunks": 7}


# ----------------------------------------------------------------- excerpts


def test_fit_cuts_a_long_first_word_instead_of_dropping_it():
    url = "https://example.org/" + "a" * 200
    for width in (5, 20, 57):
        out = fit(url + " and more", width)
        assert 0 < len(out) <= width and out.endswith("…") and out.startswith("https"[:width - 1])
    assert fit("short text", 40) == "short text"
    cut = fit("many small words " * 10, 30)
    assert len(cut) <= 30 and cut.endswith("…")
    assert cut[:-1].split()[-1] in {"many", "small", "words"}  # cut at a word
    assert fit("  spaced\n\nout  ", 40) == "spaced out"


def held_back_output(source: str, excerpt: str, width: int = 100) -> list[str]:
    from langchain_core.documents import Document

    held = [{"id": "x", "rank": 2, "source": source, "excerpt": excerpt,
             "relation": "restates"}]
    doc = Document(page_content="kept text", metadata={
        "source": "kept.txt", "chunk": 0,
        "vrsd": {"rank": 0, "relevance": 1.0, "held_back": held}})
    out = format_hits("q", [doc], method="complement", k=1, fetch_k=20, fetched=20,
                      width=width)
    return [line for line in out.splitlines() if "held back" in line or line.startswith('     "')]


@pytest.mark.parametrize("source", ["a.txt", "docs/" + "deep/" * 12 + "README.md"])
@pytest.mark.parametrize("excerpt", [
    "https://example.org/" + "x" * 150,  # one long word: printed blank before
    "ordinary words of a held-back passage " * 5,
    "/usr/share/doc/" + "p" * 60 + " then words",
])
def test_a_held_back_excerpt_is_never_blank_and_its_quotes_balance(source, excerpt):
    lines = held_back_output(source, excerpt)
    shown = "\n".join(lines[1:])  # (the first line counts them)
    assert shown.count('"') == 2, shown
    inside = shown.split('"')[1]
    assert len(inside.strip("…")) >= 10, shown
    assert excerpt.split()[0][:10] in inside
    assert all(len(line) <= 100 for line in lines if '"' in line)  # (a name is never cut)


# ----------------------------------------------------------------- exit codes


def test_docs_list_every_exit_code():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1]
    for code in cli.EXIT_CODES:
        assert re.search(rf"^\| `{code}` \|", section, re.M), code


def test_exit_codes_0_and_2(vrsd, tmp_path):
    assert vrsd("--help").code == 0
    assert vrsd("search", "--help").code == 0
    assert vrsd("--version").code == 0
    assert vrsd().code == 2  # no command
    assert vrsd("search", "q", "--nope").code == 2  # usage
    assert vrsd("search", "q", "--index-dir", tmp_path / "none").code == 2  # input: no index
    empty = tmp_path / "empty"
    empty.mkdir()
    assert vrsd("index", empty, "--index-dir", tmp_path / "i").code == 2  # input: no files


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe")
def test_ctrl_c_exits_130_with_one_line(tmp_path):
    """A real SIGINT while ``vrsd demo`` waits reading its corpus from a named pipe: the
    pipe is opened for writing only once the command has opened it for reading, so the
    signal lands while it blocks inside the command."""
    fifo = tmp_path / "corpus"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "vrsd_cli.cli", "demo", "--corpus",
                             str(fifo)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_a_terminal_starts_it)
    writer = None
    try:
        while writer is None and proc.poll() is None:
            try:  # succeeds once the command holds the pipe open for reading
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.01)  # not open for reading yet: poll again
        assert writer is not None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["vrsd: interrupted"]


# ----------------------------------------------------------------- whole sentences


def test_the_warning_while_an_index_runs_says_a_whole_thing(vrsd, tmp_path):
    """A search while ``vrsd index`` writes reads the index as it was: the warning says
    so to its end (it read "...; this is the index as it was before it")."""
    from vrsd_cli import flat_index
    from vrsd_cli.indexing import HASHING_TEST_MODEL

    docs = write(tmp_path / "docs", {"a.md": "A note on kettles and tea."})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, "--model", HASHING_TEST_MODEL).code == 0
    with flat_index.writing(index_dir, docs):  # as a running 'vrsd index' holds it
        run = vrsd("search", "kettle", "--index-dir", index_dir, "--method", "similarity")
    assert run.code == 0, run.err
    warning = next(line for line in run.err.splitlines() if "warning:" in line)
    assert warning.startswith(f"vrsd search: warning: 'vrsd index {docs}' is running (pid ")
    assert warning.endswith("; this reads the index as it was before that run started")


def test_search_and_inspect_help_name_the_default_method(vrsd):
    """--help names the default (it said "vrsd_core.DEFAULT_METHOD"), and search's says
    which ranking a held-back rank is in."""
    from vrsd_core import DEFAULT_METHOD

    for command in ("search", "inspect"):
        run = vrsd(command, "--help")
        flat = " ".join(run.out.split())
        assert run.code == 0 and "DEFAULT_METHOD" not in flat, flat
        assert f"{DEFAULT_METHOD}" in flat
    flat = " ".join(vrsd("search", "--help").out.split())
    assert f"(default: {DEFAULT_METHOD}, the recommendation)" in flat
    assert "held back from plain top-k by the same relevance" in flat
