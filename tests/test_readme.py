"""The README as a front door: its quick start runs as written (and is the documentation
site's), and its figures are rows of ``benchmarks/RESULTS.md``'s summary table."""

import re
from pathlib import Path

import pytest

from test_docs import python_blocks

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def quick_start() -> str:
    return python_blocks(README)[0][1]


def table_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of each row of the first table after ``heading``."""
    section = text[text.index(heading) :]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # past the header and its rule


def test_the_quick_start_runs_and_writes_a_model_lightgbm_reads(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(quick_start(), "README.md quick start", "exec"), {"__name__": "__readme__"})
    ndcg = float(capsys.readouterr().out.strip().splitlines()[-1])
    assert 0.5 < ndcg <= 1.0
    lightgbm = pytest.importorskip("lightgbm")
    booster = lightgbm.Booster(model_file=str(tmp_path / "model.txt"))
    assert booster.num_trees() == 200


def test_the_quick_start_is_ten_lines_and_the_sites_own():
    code = quick_start()
    assert len(code.strip().splitlines()) <= 10
    index = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
    lines = index[index.index(".. code-block:: python") :].splitlines()[2:]
    block = []
    for line in lines:
        if line and not line.startswith("   "):
            break
        block.append(line[3:])
    assert "\n".join(block).strip() == code.strip()


def test_the_figures_are_rows_of_the_results_summary():
    readme_rows = table_rows(README.read_text(encoding="utf-8"), "## Where forestrank stands")
    summary_rows = table_rows((ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8"), "## Summary")
    assert len(readme_rows) >= 5 and len(summary_rows) >= len(readme_rows)
    summary = {row[0]: row[:6] for row in summary_rows}
    for row in readme_rows:
        assert row[0] in summary, f"README's row {row[0]!r} is not in RESULTS.md's summary"
        assert row == summary[row[0]], f"README's row {row[0]!r} differs from RESULTS.md's summary"


def test_the_readme_opens_with_the_two_set_up_commands():
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, re.S)[1].strip().splitlines()
    assert first == ['pip install . && python -m forestrank', 'pip install ".[test]" && python -m pytest -n auto -m "not slow"']
    assert text.index("```bash") < text.index("## Quick start")
