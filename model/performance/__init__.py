"""Cluster performance model: pure functions (no Mesa, no I/O) for training and serving on a given cluster.

`training.train_estimate` and `serving.serve_estimate` are the entry points; the market calls them, never the
other way round.
"""
