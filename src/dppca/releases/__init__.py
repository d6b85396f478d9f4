"""Releases as plans of parts, priced without data and run by one executor.

:mod:`~dppca.releases.engine` holds the executor; each release kind (directions,
loading, scree, score, report) builds its plan and its frozen result here.
"""
