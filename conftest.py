"""Test-session settings that must come before any import: one BLAS / OpenMP thread per process.

The suite runs on 2 cores, where BLAS threads on its small matrices only oversubscribe the machine: the default
run took 754 s with the libraries' default threads and 645 s with one (2026-12-01, same machine, same commit).
Subprocesses and notebook kernels inherit the setting; an explicit value in the environment is kept.  Tests are
never timed, so no result depends on the thread count.
"""

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
