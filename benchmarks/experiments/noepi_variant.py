"""Writes the timing-only "noepi" variant of the kernel into a copy of cuda/ (NOTES 31): the epilogue only sums the
tile's result (so that nothing computing it is dead code) and stores nothing. Results are wrong; for timing only.

    python benchmarks/experiments/noepi_variant.py /tmp/v_noepi   # a copy of cuda/
"""

import sys

path = sys.argv[1] + "/jax_deepgemm/fp8_gemm.cuh"
src = open(path).read()
anchor = "        if ((kLoneColumn || kMulticastB) && tile.rows == 0) return;  // a pair's tile past M (uniform over the CTA)\n"
assert anchor in src, "the epilogue's first line moved: update noepi_variant.py"
open(path, "w").write(src.replace(anchor, anchor + """        {
          float s[8] = {};
#pragma unroll
          for (int v = 0; v < kWaves; ++v)
#pragma unroll
            for (int i = 0; i < kAccRegs; ++i) s[i % 8] += out[v][i];
          const float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
          if (t == 1.2345e-30f) store_quad(args, 0, 0, t, t, t, t, false);
          return;
        }
"""))
