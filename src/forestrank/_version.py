"""Single source of the package version (read statically by setuptools)."""

__version__ = "0.2.0.dev0"  # the work since 0.1.0 (CHANGELOG.md, "Unreleased")
