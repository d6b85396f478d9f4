"""Noise and its accounting: mechanisms, calibration, K-norm, quantile scans, costs,
the accountant (:class:`~dppca.privacy.accounting.Budget`) and its SQLite store.
"""
