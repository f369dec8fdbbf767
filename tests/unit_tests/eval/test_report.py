"""``vrsd_eval.report``'s summary and ``vrsd_eval.figures``' results files: what all the
fetched candidates hold (``reach``) goes from a run to its file and into the summary, and a
file written before it was kept shows a dash."""

from __future__ import annotations

import numpy as np

from vrsd_eval.evidence import EVIDENCE_REPORT, EvidenceResult
from vrsd_eval.figures import StoredRun, run_summary


def result(variant: str, reach: tuple[float, float] | None) -> EvidenceResult:
    labels = ["default", "similarity"]
    recall = {2: {"default": np.array([1.0, 0.5]), "similarity": np.array([0.5, 0.5])}}
    complete = {2: {"default": np.array([True, False]), "similarity": np.array([False, False])}}
    return EvidenceResult(variant, 2, 10, 5, "model", [2], labels, ["similarity"], recall,
                          complete, reach=reach)


def summary_rows(runs: list) -> list[str]:
    return EVIDENCE_REPORT.summary({"model": runs}).splitlines()


def test_the_summary_shows_the_mean_reach_of_its_corpora():
    runs = [result("plain", (0.75, 0.5)), result("chunked", (1.0, 1.0))]
    header, _, plain, chunked, both = summary_rows(runs)
    assert header.endswith("| all 5 fetched |")
    assert plain.endswith("| 0.500 |") and chunked.endswith("| 1.000 |")
    assert both.startswith("| model | **all 2** |") and both.endswith("| 0.750 |")


def test_the_reach_goes_through_the_results_file_and_an_old_file_shows_a_dash():
    stored = run_summary([result("plain", (0.75, 0.5))], "similarity")["plain"]
    assert stored["reach"] == [0.75, 0.5]
    assert StoredRun.read("plain", stored).reach == (0.75, 0.5)
    del stored["reach"]
    old = StoredRun.read("plain", stored)
    assert old.reach is None
    assert summary_rows([old])[-1].endswith("| — |")
