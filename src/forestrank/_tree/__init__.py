"""The shared numba tree engine: criteria, splitter, builder, predictor (ARCHITECTURE.md §3)."""
