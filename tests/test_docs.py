"""Every Python code block of docs/*.md runs as written (the README's, ``test_readme.py``).

A page's blocks run in order in one namespace, in a scratch folder beside a link to the
real datasets (``../shared/datasets`` as the pages name them). Short snippets use a
few names that the page leaves to the reader — the training data ``X, y, qid``, a
validation set, a fitted ``model``, its feature ``names`` and the like — which
:func:`reader_names` gives small values. A block that cannot run here (a remote cluster,
cloud storage) is preceded by an HTML comment ``<!-- not run: the reason -->``, which the
rendered page does not show; this test checks that the reason is given.
"""

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<reason>[^>]*?)\s*-->\s*$")


def python_blocks(page: Path) -> list[tuple[int, str, str | None]]:
    """``(line, code, reason not run or None)`` of every ```python block of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        if match["info"].strip() != "python":
            continue
        indent = len(match["indent"])
        code = "".join(line[indent:] for line in match["body"].splitlines(keepends=True))
        before = text[: match.start()].rstrip().splitlines()[-1:] or [""]
        skipped = NOT_RUN.search(before[0])
        blocks.append((text[: match.start()].count("\n") + 1, code, skipped["reason"] if skipped else None))
    return blocks


def reader_names() -> dict:
    """Small values of the names that the pages' snippets leave to the reader."""
    from forestrank import LambdaMART, RFPointRanker, make_ranking

    X, y, qid = make_ranking(n_queries=60, docs_per_query=(5, 20), n_features=6, random_state=0)
    X_val, y_val, qid_val = make_ranking(n_queries=30, docs_per_query=(5, 20), n_features=6, random_state=1)
    X_source, y_source, qid_source = make_ranking(n_queries=60, docs_per_query=10, n_features=6, random_state=2)
    model = LambdaMART(n_estimators=10, random_state=0).fit(X, y, qid=qid)
    return {
        "X": X, "y": y, "qid": qid, "X_val": X_val, "y_val": y_val, "qid_val": qid_val, "X_new": X_val,
        "X_source": X_source, "y_source": y_source, "qid_source": qid_source,
        "X_target": X_val, "y_target": y_val, "qid_target": qid_val,
        "model": model, "names": [f"feature_{index}" for index in range(X.shape[1])],
        "ranker": RFPointRanker(n_estimators=5, random_state=0), "grid": {"max_features": [0.5, 1.0]},
    }  # fmt: skip


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A scratch folder whose ``../shared`` is the datasets' folder, as the README's paths expect."""
    work = tmp_path / "work"
    work.mkdir()
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (tmp_path / "shared").symlink_to(shared)
    monkeypatch.chdir(work)
    return work


def test_every_page_has_its_blocks_found():
    """The parser sees the blocks: a fence it missed would be a snippet never run."""
    counted = {page.name: len(python_blocks(page)) for page in PAGES}
    assert counted["getting_started.md"] >= 5 and counted["serving.md"] >= 4 and counted["metrics.md"] >= 2
    for page in PAGES:
        for line, _, reason in python_blocks(page):
            assert reason is None or reason, f"{page.name}:{line}: a block not run must say why"


@pytest.mark.slow
@pytest.mark.parametrize("page", [page for page in PAGES if python_blocks(page)], ids=lambda page: page.name)
def test_every_python_block_of_the_page_runs(page, scratch):
    import sklearn

    namespace = {"__name__": "__docs__", **reader_names()}
    uses_data = any("shared/datasets" in code for _, code, reason in python_blocks(page) if reason is None)
    if uses_data and not (scratch.parent / "shared" / "datasets").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("the page reads ../shared/datasets, which is absent (CI=true)")
        pytest.skip("the page reads ../shared/datasets, which is absent")
    try:
        for line, code, reason in python_blocks(page):
            if reason is not None:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a snippet's warnings are the reader's to see, not this test's
                try:
                    exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
                except Exception as error:
                    raise AssertionError(f"{page.relative_to(ROOT)}, the block at line {line}: {error!r}") from error
    finally:
        sklearn.set_config(enable_metadata_routing=False)
    assert np.isfinite(namespace["X"]).any()
