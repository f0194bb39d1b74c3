"""Anchors re-implemented from their papers, for the benchmarks."""
