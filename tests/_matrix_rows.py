"""Shared test helper: one row of the real-data matrix's CSV (``benchmarks.realdata``)."""


def matrix_cell(method, score, se, pass_rate=1.0):
    """A regression row of a toy cell (data set "toy", eps = 1) for ``realdata.goals``."""
    return dict(
        task="regression",
        dataset="toy",
        epsilon=1.0,
        method=method,
        metric="R2",
        score=score,
        score_se=se,
        pass_rate=pass_rate,
    )
