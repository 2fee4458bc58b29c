"""Plots a benchmark result file (benchmarks/results/<gpu>.json) as a PNG beside it: TFLOPS per shape for
fp8_gemm_nt, the same-run JAX baselines, and DeepGEMM's published numbers on the same GPU kind (GPU.md).

Usage: python benchmarks/plot.py benchmarks/results/h200.json   (needs matplotlib; a development tool only)
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# DeepGEMM 2.6.1 dense fp8_gemm_nt TFLOPS, BF16 out (GPU.md), keyed by (M, N, K).
_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
DEEPGEMM = {
    "H100": dict(zip([(m, n, k) for m in (64, 128, 4096) for n, k in _NK],
                     [179, 228, 188, 284, 220, 193, 337, 427, 342, 547, 431, 348,
                      1306, 1313, 1029, 1514, 1463, 1314])),
    "H200": dict(zip([(m, n, k) for m in (64, 128, 4096) for n, k in _NK],
                     [193, 296, 239, 373, 276, 243, 356, 566, 411, 694, 533, 415,
                      1328, 1350, 1090, 1497, 1463, 1334])),
}


def main(path: str) -> None:
    result = json.load(open(path))
    rows = [r for r in result["rows"] if r["op"] == "fp8_gemm_nt"]
    kind = "H200" if "H200" in result["gpu"] else "H100" if "H100" in result["gpu"] else None
    labels = ["x".join(map(str, r["shape"])) for r in rows]
    flops = [2.0 * r["shape"][0] * r["shape"][1] * r["shape"][2] for r in rows]
    series = {"jax_deepgemm": [r["tflops"] for r in rows]}
    for key, name in (("xla_fp8_per_tensor_us", "XLA FP8 per-tensor"), ("xla_bf16_us", "XLA bf16"),
                      ("dequant_bf16_us", "dequantize + bf16")):
        series[name] = [f / r["baselines"][key] / 1e6 for f, r in zip(flops, rows)]
    if kind:
        series[f"DeepGEMM ({kind}, GPU.md)"] = [DEEPGEMM[kind].get(tuple(r["shape"]), 0) for r in rows]
    fig, ax = plt.subplots(figsize=(max(10, len(rows) * 0.9), 5))
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(rows))], values, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))], labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("TFLOPS")
    ax.set_title(f"fp8_gemm_nt on {result['gpu']} ({result['date']}, commit {result['commit']})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = path.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])
