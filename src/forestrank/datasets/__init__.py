"""Learning-to-rank data: LETOR/svmlight files with query ids (:func:`load_letor`), a
synthetic generator of graded relevance (:func:`make_ranking`) and simulated clicks
(:func:`simulate_clicks`)."""

from ._clicks import ClickLog, simulate_clicks
from ._letor import LetorFold, load_letor, load_letor_fold
from ._synthetic import make_ranking

__all__ = ["ClickLog", "LetorFold", "load_letor", "load_letor_fold", "make_ranking", "simulate_clicks"]
