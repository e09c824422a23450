"""Positional encodings as pure functions: numpy in, numpy out, formula and citation in each."""
