"""The README's Python example runs as written (paths resolved against the checkout)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(block.replace("../shared", str(ROOT.parent / "shared")), "README.md", "exec"), {})
    assert (tmp_path / "mergedts-state.json").exists()
    assert 0 <= int(capsys.readouterr().out.strip()) < 136
