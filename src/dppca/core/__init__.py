"""The bottom layer: input checks (one place), shared types, exceptions and warnings.

Nothing here knows about privacy or releases; every layer above imports it.
"""
