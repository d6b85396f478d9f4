"""Deterministic computation on the data: the spherical Kendall matrix, pair moments, eigensolves.

No random numbers are drawn here: a balanced design's pairing order is passed in.
"""
