from .scree import plot_scree as plot_scree
