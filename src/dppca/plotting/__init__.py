from .score import group_color_map, plot_score, plot_score_groups, plot_score_panels  # noqa: F401
