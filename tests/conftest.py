"""Shared fixtures: locating the real datasets, hypothesis settings."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

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
