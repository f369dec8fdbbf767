"""Every docstring example (``>>>``) in ``vrsd_core`` and ``vrsd_kit`` runs, one test per
module that has examples: what the docstrings show is what the code does.

Options: ``ELLIPSIS`` (``...`` stands for any text, e.g. a long list in a message) and
``NORMALIZE_WHITESPACE``.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import vrsd_core
import vrsd_kit

PACKAGES = (vrsd_core, vrsd_kit)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def modules() -> list[ModuleType]:
    """Every module of the packages (sub-packages included), imported."""
    found = []
    for package in PACKAGES:
        found.append(package)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            found.append(importlib.import_module(info.name))
    return found


def examples(module: ModuleType) -> list[doctest.DocTest]:
    """The docstrings defined in ``module`` (not re-exported ones) that have examples."""
    return [test for test in doctest.DocTestFinder().find(module, module.__name__)
            if test.examples]


WITH_EXAMPLES = [module for module in modules() if examples(module)]


def test_the_docstrings_have_examples():
    """The tests below are not vacuous: the packages show examples, each module's counted."""
    count = sum(len(test.examples) for module in WITH_EXAMPLES for test in examples(module))
    assert {"vrsd_core", "vrsd_kit"} <= {m.__name__.split(".")[0] for m in WITH_EXAMPLES}
    assert count >= 20


@pytest.mark.parametrize("module", WITH_EXAMPLES, ids=lambda module: module.__name__)
def test_docstring_examples_run(module: ModuleType):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    for test in examples(module):
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)
