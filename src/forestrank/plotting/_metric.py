"""The evaluation curve of a boosted model (LightGBM's ``plot_metric``)."""

from collections.abc import Sequence

from sklearn.utils.validation import check_is_fitted

from ._axes import axes_or_new


def plot_metric(
    model: object, metric: str | None = None, *, eval_names: Sequence[str] | None = None, ax: object = None,
    title: str | None = "Metric during training", xlabel: str = "iterations", ylabel: str | None = None,
    figsize: tuple[float, float] | None = None,
) -> object:  # fmt: skip
    """Draw a boosted model's metric after each iteration, one line per evaluation set.

    Parameters
    ----------
    model : fitted LambdaMART or PLRank (or a Pipeline ending in one), or its ``evals_result_`` dict
        ``{set name: {metric name: [value per iteration]}}``: fit with ``eval_set``,
        ``n_iter_no_change`` (which holds out ``validation_fraction`` without one) or
        ``verbose`` to record one.
    metric : str or None, default=None
        The metric to draw (``"ndcg@10"``); None: the only one recorded.
    eval_names : str, sequence of str or None, default=None
        The set or sets to draw (``"valid_0"``, ``"validation"``, ``"train"``); None: all.
    ax : matplotlib Axes or None, default=None
        Where to draw; None: a new figure.
    title, xlabel, ylabel : str or None
        The labels; ``ylabel=None`` names the metric.
    figsize : (float, float) or None, default=None
        The new figure's size in inches (when ``ax`` is None).

    Returns
    -------
    matplotlib Axes
        With one line per set (its label the set's name) and, when the model stopped
        early, a dotted vertical line at ``best_iteration_``.
    """
    if isinstance(model, dict):
        results, best = model, None
    else:
        check_is_fitted(model)
        model = getattr(model, "_final_estimator", model)  # a Pipeline: its ranker's
        if not hasattr(model, "evals_result_"):
            raise ValueError(
                f"{type(model).__name__} records no metric per iteration: plot_metric draws a boosted model's "
                "(LambdaMART's or PLRank's) evals_result_, or such a dict."
            )
        results, best = model.evals_result_, getattr(model, "best_iteration_", None)
    if not results:
        raise ValueError(
            "the model recorded no metric: fit it with eval_set, n_iter_no_change (which holds out validation_fraction "
            "without one) or verbose to fill evals_result_."
        )
    names = list(results) if eval_names is None else [eval_names] if isinstance(eval_names, str) else list(eval_names)
    unknown = [name for name in names if name not in results]
    if unknown:
        raise ValueError(f"eval_names {unknown} are not in evals_result_, which holds {list(results)}.")
    recorded = sorted({key for name in names for key in results[name]})
    if metric is None:
        if len(recorded) != 1:
            raise ValueError(f"the model recorded several metrics, {recorded}: choose one with metric=.")
        metric = recorded[0]
    ax = axes_or_new(ax, figsize)
    for name in names:
        if metric not in results[name]:
            raise ValueError(f"metric {metric!r} was not recorded for {name!r}, which has {list(results[name])}.")
        values = results[name][metric]
        ax.plot(range(1, len(values) + 1), values, label=name)
    if best is not None:
        ax.axvline(best, linestyle=":", color="grey", label=f"best iteration ({best})")
    ax.legend(loc="best")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(metric if ylabel is None else ylabel)
    if title is not None:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return ax
