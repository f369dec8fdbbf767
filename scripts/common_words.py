"""Write vrsd_kit/data/common_words.tsv.gz: the background of texts read in no language
(``vrsd_kit.lexical.Background.of_language(None)``), from PyPI ``wordfreq``'s small lists.

The 1,000 most frequent words of each of ten languages (English, German, French, Spanish,
Portuguese, Italian, Dutch, Russian, Polish, Swedish), case-folded, each with its largest
frequency in any of them, one ``word<TAB>frequency`` line each, most frequent first.
The data is wordfreq's (CC BY-SA 4.0): vrsd_kit/data/README.md carries its attribution.

    .venv/bin/python scripts/common_words.py   # needs the extra background (wordfreq)
"""

from __future__ import annotations

import gzip
from pathlib import Path

import wordfreq

LANGUAGES = ("en", "de", "fr", "es", "pt", "it", "nl", "ru", "pl", "sv")
PER_LANGUAGE = 1000
OUT = Path(__file__).resolve().parents[1] / "vrsd_kit" / "data" / "common_words.tsv.gz"


def common_words() -> dict[str, float]:
    """word -> its largest frequency among the languages' most frequent words."""
    found: dict[str, float] = {}
    for code in LANGUAGES:
        ranked = sorted(wordfreq.get_frequency_dict(code, wordlist="small").items(),
                        key=lambda item: -item[1])
        for word, frequency in ranked[:PER_LANGUAGE]:
            folded = word.casefold()
            found[folded] = max(found.get(folded, 0.0), frequency)
    return found


def main() -> None:
    found = sorted(common_words().items(), key=lambda item: (-item[1], item[0]))
    lines = "".join(f"{word}\t{frequency:.4g}\n" for word, frequency in found)
    OUT.parent.mkdir(exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:  # the same bytes on every run
        out.write(lines.encode("utf-8"))
    print(f"{OUT}: {len(found)} words")


if __name__ == "__main__":
    main()
