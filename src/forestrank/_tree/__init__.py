"""The shared numba tree engine: criteria, scans, splitter, builder, predictor (``docs/design.md``)."""
