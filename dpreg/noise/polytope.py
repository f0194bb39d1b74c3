"""Polytope balls and membership-oracle convex bodies (work in progress: see issue 2)."""

from .balls import Ball


class PolytopeBall(Ball):
    def __init__(self, vertices=None, A=None, b=None):
        raise NotImplementedError("PolytopeBall is being implemented (issue 2).")


class ConvexBody(Ball):
    def __init__(self, contains, half_widths):
        raise NotImplementedError("ConvexBody is being implemented (issue 2).")
