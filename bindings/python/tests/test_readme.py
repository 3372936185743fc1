"""The README's Python examples, run as they are written (each asserts its results)."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT


def examples():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)


def test_the_readme_has_python_examples():
    assert len(examples()) >= 3


@pytest.mark.parametrize("index", range(len(examples())))
def test_readme_example(index, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # examples name files relative to the repository
    code = examples()[index]
    exec(compile(code, f"README.md python example {index + 1}", "exec"), {"__name__": "__readme__"})
    assert "assert" in code, "an example that checks nothing proves nothing"
