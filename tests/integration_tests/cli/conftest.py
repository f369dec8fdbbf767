"""The CLI tests' fixtures: a private embedding cache and in-process ``vrsd`` calls
(``tests/helpers/cli_fixtures.py``)."""

from tests.helpers.cli_fixtures import cache_dir, embeddings, vrsd  # noqa: F401
