"""The README runs as written: its Python example, and its commands (no placeholders; the judging and
pooling walk-throughs run in a fresh checkout)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(block.replace("../shared", str(ROOT.parent / "shared")), "README.md", "exec"), {})
    assert (tmp_path / "mergedts-state.json").exists()
    assert 0 <= int(capsys.readouterr().out.strip()) < 136


def _bash_lines(text: str) -> list[str]:
    """The commands of the README's bash blocks, comments and line continuations resolved."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            lines.append(re.sub(r"\s+#.*$", "", line).strip())
    return [x for x in lines if x]


def test_readme_commands_have_no_placeholders():
    lines = _bash_lines((ROOT / "README.md").read_text())
    assert len(lines) > 20
    for line in lines:
        assert "[--" not in line and "<" not in line.replace("< answers", ""), line
        assert not re.search(r"\b[A-Z]*(DIR|FILE|NAME|PATH)\b", line), line  # RUNDIR, FILE, ...


def test_readme_judging_and_pooling_walkthroughs_run_as_written(tmp_path):
    """The `judge` and `pool` campaign blocks, pasted line by line into a shell in a fresh checkout
    beside ../shared."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (tmp_path / "shared").symlink_to(ROOT.parent / "shared")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    text = (ROOT / "README.md").read_text()
    blocks = [b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "judge init" in b or "pool init" in b]
    assert len(blocks) == 2
    for block in blocks:
        for line in _bash_lines(f"```bash\n{block}```"):
            r = subprocess.run(["bash", "-c", line], cwd=checkout, env=env, capture_output=True, text=True)
            assert r.returncode == 0, (line, r.stderr)
    assert (checkout / "prefs.qrels").stat().st_size > 0 and (checkout / "campaign.json").exists()
