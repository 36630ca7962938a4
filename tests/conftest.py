"""Shared fixtures: locating the real datasets, hypothesis settings."""

import os
from pathlib import Path

import numba
import pytest
from hypothesis import settings

# Under pytest-xdist each core runs a test process: OpenMP's threads (numba's omp layer)
# must sleep between parallel regions instead of spinning on a core another test needs.
# Set before any kernel runs, since OpenMP reads it when it loads; a user's setting wins.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")

# Launch numba's threads before any test runs a kernel. Numba launches them when a parallel
# kernel it compiles, or loads from its cache, runs first, but a cached kernel that only
# links one (``_splitter.best_split`` through ``pooled_scans``), compiled where that one
# came from the cache, does not launch them when loaded: run first in a process, it crashed
# it (docs/design.md, "Numba rules"). The package runs its threaded kernels under
# ``parallel.numba_threads``, which launches them; tests calling those kernels directly
# would crash on a warm cache without this.
numba.get_num_threads()

# The first example of a property test may pay a cold numba compilation.
settings.register_profile("forestrank", deadline=None, max_examples=150)
settings.load_profile("forestrank")

DATASETS = Path(
    os.environ.get("FORESTRANK_DATASETS", Path(__file__).resolve().parents[1].parent / "shared" / "datasets")
)


def require_dataset(name: str) -> Path:
    """Path of ``DATASETS/name``; skip when absent, but fail when CI=true."""
    path = DATASETS / name
    if not path.exists():
        message = (
            f"dataset folder {path} not found (tests expect ../shared/datasets beside the repository, "
            "or FORESTRANK_DATASETS=<folder>)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; CI=true forbids skipping dataset tests")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def mq2008() -> Path:
    return require_dataset("MQ2008")


@pytest.fixture(scope="session")
def lambdarank_example() -> Path:
    return require_dataset("LightGBM-lambdarank-example")


@pytest.fixture(scope="module")
def cluster_data():
    """The data of the cluster tests: 200 queries of 30 documents, 20 features."""
    from forestrank import make_ranking

    return make_ranking(n_queries=200, docs_per_query=30, n_features=20, random_state=0)


@pytest.fixture(scope="module")
def dask_client():
    """A client of a ``LocalCluster`` of two single-threaded worker processes, the set-up of
    the cluster issue's acceptance (one per test module)."""
    distributed = pytest.importorskip("distributed", reason="the dask backend needs forestrank[dask]")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture
def held_out_queries(monkeypatch):
    """A list that gains, at each in-memory boosting fit's ``validation_fraction`` hold-out, the ids
    of the queries it holds out (``BaseBoostingRanker._held_out_rows``)."""
    import numpy as np

    from forestrank.ensemble._boosting import BaseBoostingRanker

    held = []
    drawn = BaseBoostingRanker._held_out_rows

    def spy(self, data):
        rows = drawn(self, data)
        held.append(data.groups.query_ids[np.unique(data.groups.grouped_query_index()[rows])])
        return rows

    monkeypatch.setattr(BaseBoostingRanker, "_held_out_rows", spy)
    return held
