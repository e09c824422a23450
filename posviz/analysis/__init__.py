"""Analyses of position tables: statistics, similarity, PCA, probes and the seed experiments."""
