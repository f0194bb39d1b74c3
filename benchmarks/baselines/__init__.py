"""Anchors re-implemented from their papers, for the real-data benchmark matrix."""
