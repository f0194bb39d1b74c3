"""Flipped Huber distribution and mechanism (work in progress: see issue 2)."""


class FlippedHuber:
    def __init__(self, alpha, gamma):
        raise NotImplementedError("FlippedHuber is being implemented (issue 2).")


class FlippedHuberMechanism:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("FlippedHuberMechanism is being implemented (issue 2).")
