"""Checks of what users pass: ``X`` (``features``), ``qid`` and the grouping of rows by
query (``queries``), ``y``, scores and weights (``labels``). Each error names the argument."""
