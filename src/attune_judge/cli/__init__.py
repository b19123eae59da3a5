"""The ``attune-judge`` command line: a thin shell over library calls.

numpy's BLAS runs on one thread unless the user chose otherwise (``OPENBLAS_NUM_THREADS``,
set before numpy loads): the statistics make many small matrix products (bootstrap weights
times cluster sums), where a thread pool's hand-offs cost more than they save; the demo's
recorded-judges part took 48.7 s of CPU with two threads and 14.5 s with one on the 2-core
machine (``benchmarks/README.md``).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from attune_judge.cli._main import app, main

__all__ = ["app", "main"]
