"""The models' documentation runs: docstring examples of every module and docs/models.md."""

from __future__ import annotations

import doctest
import importlib

import pytest

from conftest import ROOT

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize(
    "name", ["hstcp", "network", "linear", "discrete", "fluid", "design", "closed_loop", "lti", "logistics"]
)
def test_module_docstrings(name):
    module = importlib.import_module(f"fatpipe.models.{name}")
    result = doctest.testmod(module, optionflags=FLAGS)
    assert result.failed == 0


def test_models_md_examples():
    result = doctest.testfile(str(ROOT / "docs" / "models.md"), module_relative=False, optionflags=FLAGS)
    assert result.attempted > 10 and result.failed == 0
