"""dpreg benchmarks: accuracy and speed against baselines measured in the same run."""
