"""The words of a link written the first way, a reference for ``PoolLinks.words``: both
texts tokenised again and their words counted (``Counter``), each shared word looked up
in the pool's vocabulary by its string."""

from __future__ import annotations

from collections import Counter
from itertools import accumulate

import numpy as np

from vrsd_kit.lexical import _WORD, PoolLinks, tokenize, word_id


def link_words_by_counting(links: PoolLinks, text: str, linked: str, asked: frozenset[str]
                           ) -> list[str]:
    """``links.words(text, linked)``, from the two texts' words counted again (``asked``:
    the question's words)."""
    mine, theirs = Counter(tokenize(text)), Counter(tokenize(linked))
    surprise: dict[str, float] = {}
    share: dict[str, float] = {}
    for word in (mine.keys() & theirs.keys()) - asked:
        at = int(np.searchsorted(links.vocabulary, word_id(word)))
        if at < len(links.vocabulary) and links.vocabulary[at] == word_id(word) \
                and links.surprise[at] > 0:
            surprise[word] = float(links.surprise[at])
            share[word] = mine[word] * theirs[word] * float(links.idf[at]) ** 2
    ranked = sorted(surprise, key=lambda w: (-share[w], w))  # the heaviest first
    passing = [i for i, total in enumerate(accumulate(surprise[w] for w in ranked))
               if total > links.chance]
    if not passing:
        return []
    chosen = set(ranked[:passing[0] + 1])  # the fewest that pass the chance test
    phrases: dict[str, tuple[str, float]] = {}
    run: list[str] = []
    end = 0
    for found in [*_WORD.finditer(text), None]:
        word = found.group(0).casefold() if found else ""
        gap = "" if found is None else text[end:found.start()]
        apart = found is not None and (gap.strip() != "" or "\n" in gap)
        if run and (not found or word not in chosen or apart):
            joined = " ".join(run)
            phrases.setdefault(joined.casefold(),
                               (joined, sum(share[w.casefold()] for w in run)))
            run = []
        if found and word in chosen:
            run.append(found.group(0))
            end = found.end()
    shown = {w for folded in phrases for w in folded.split()}
    for word in sorted(chosen - shown, key=lambda w: (-share[w], w)):
        phrases[word] = (word, share[word])
    named: list[str] = []
    seen: set[str] = set()
    for written, _ in sorted(phrases.values(), key=lambda p: -p[1]):
        folded = set(written.casefold().split())
        if folded - seen:
            named.append(written)
            seen |= folded
    return named
