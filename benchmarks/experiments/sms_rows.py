"""Runs another experiment script (dense_rows.py, grouped_rows.py) with the SM count capped (set_num_sms), so that
the heuristics launch on at most that many SMs: same-run comparisons of the grid alone where the configuration stays
the same (check with DG_PRINT_CONFIGS=1).

    python benchmarks/experiments/sms_rows.py 128 dense_rows.py 4096,7168,16384 ...
"""

import os
import runpy
import sys

import jax_deepgemm

jax_deepgemm.set_num_sms(int(sys.argv[1]))
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), sys.argv[2])
sys.argv = [script] + sys.argv[3:]
runpy.run_path(script, run_name="__main__")
