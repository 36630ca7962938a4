"""Where work runs: joblib threads and processes on this machine (``_local``) and the
dask.distributed client of a cluster (``_cluster``)."""
