"""One private PCA of a table: :func:`dp_pca`, its plan and its result."""

__all__: list[str] = []
