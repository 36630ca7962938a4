"""matplotlib, imported when a plot is drawn, and the axes a plot draws on."""

_PLOT_HELP = 'forestrank.plotting needs matplotlib: pip install "forestrank[plot]"'


def pyplot() -> object:
    """``matplotlib.pyplot``, or an ImportError naming the extra that installs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(_PLOT_HELP) from error
    return plt


def axes_or_new(ax: object, figsize: tuple[float, float] | None = None) -> object:
    """``ax``, or the axes of a new figure (of ``figsize`` inches)."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax
