"""Transfer learning between ranking populations (Mohan's thesis, ch. 5).

A small ranking set from one population (the target) helped by a large one from
another (the source), in the thesis' two ways:

- :func:`select_similar`: train a domain classifier to tell the target's documents
  from the source's, cross-fitted so that no source document is scored by a
  classifier that saw it, and rank the source documents by how target-like they look;
  the top P% are added to the target's training set (Table 5.1).
- :class:`ModelFeatures`: a model trained on the source set, its predictions appended
  to the target's features (Table 5.2), as a scikit-learn transformer that sits in a
  Pipeline before a ranker.
"""

from ._features import ModelFeatures
from ._selection import select_similar

__all__ = ["ModelFeatures", "select_similar"]
