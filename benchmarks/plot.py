"""Plots a benchmark result file (benchmarks/results/<gpu>.json) as PNGs beside it: TFLOPS per shape for
fp8_gemm_nt (<name>.png) and for the grouped GEMMs (<name>_grouped.png, or <name>.png when the file has only
those), the same-run JAX baselines, and DeepGEMM's published numbers on the same GPU kind (GPU.md).

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


# DeepGEMM 2.6.1 grouped TFLOPS (GPU.md), keyed by (op, [groups, rows per group, N, K]).
_CONTIGUOUS = [(4, 8192, 4096, 7168), (4, 8192, 7168, 2048), (8, 4096, 4096, 7168), (8, 4096, 7168, 2048)]
_MASKED = [(g, e, n, k) for g, e in ((1, 1024), (2, 512), (4, 256)) for n, k in ((4096, 7168), (7168, 2048))]
DEEPGEMM_GROUPED = {
    kind: {**{("m_grouped_fp8_gemm_nt_contiguous", s): t for s, t in zip(_CONTIGUOUS, contiguous)},
           **{("m_grouped_fp8_gemm_nt_masked", s): t for s, t in zip(_MASKED, masked)}}
    for kind, contiguous, masked in (("H100", [1445, 1362, 1424, 1357], [1046, 1134, 968, 1003, 755, 800]),
                                     ("H200", [1429, 1360, 1407, 1361], [1088, 1143, 1036, 1081, 864, 907]))}
_SHORT = {"m_grouped_fp8_gemm_nt_contiguous": "contiguous", "fp8_grouped_gemm_nt": "ragged",
          "m_grouped_fp8_gemm_nt_masked": "masked", "k_grouped_fp8_gemm_nt_contiguous": "k-grouped"}


def main(path: str) -> None:
    result = json.load(open(path))
    kind = "H200" if "H200" in result["gpu"] else "H100" if "H100" in result["gpu"] else None
    stem = path.rsplit(".", 1)[0]
    dense = [r for r in result["rows"] if r["op"] == "fp8_gemm_nt"]
    grouped = [r for r in result["rows"] if r["op"] in _SHORT]
    if dense:
        plot_dense(result, dense, kind, stem + ".png")
    if grouped:
        plot_grouped(result, grouped, kind, stem + ("_grouped.png" if dense else ".png"))


def plot_dense(result, rows, kind, out):
    labels = ["x".join(map(str, r["shape"])) for r in rows]
    flops = [2.0 * r["shape"][0] * r["shape"][1] * r["shape"][2] for r in rows]
    series = {"jax_deepgemm": [r["tflops"] for r in rows]}
    for key, name in (("xla_fp8_per_tensor_us", "XLA FP8 per-tensor"), ("xla_bf16_us", "XLA bf16"),
                      ("dequant_bf16_us", "dequantize + bf16")):
        series[name] = [f / r["baselines"][key] / 1e6 for f, r in zip(flops, rows)]
    if kind:
        series[f"DeepGEMM ({kind}, GPU.md)"] = [DEEPGEMM[kind].get(tuple(r["shape"]), 0) for r in rows]
    _bars(series, labels, f"fp8_gemm_nt on {result['gpu']} ({result['date']}, commit {result['commit']})", out)


def plot_grouped(result, rows, kind, out):
    labels = [f"{_SHORT[r['op']]} " + "x".join(map(str, r["shape"])) for r in rows]
    flops = [r["tflops"] * r["kernel_us"] * 1e6 for r in rows]  # the valid rows' FLOPs the TFLOPS count
    series = {"jax_deepgemm": [r["tflops"] for r in rows]}
    for key, name in (("ragged_dot_bf16_us", "jax.lax.ragged_dot bf16"),
                      ("batched_einsum_bf16_us", "batched einsum bf16")):
        series[name] = [f / r["baselines"][key] / 1e6 for f, r in zip(flops, rows)]
    if kind:
        series[f"DeepGEMM ({kind}, GPU.md)"] = [DEEPGEMM_GROUPED[kind].get((r["op"], tuple(r["shape"])), 0)
                                                for r in rows]
    _bars(series, labels, f"grouped GEMMs on {result['gpu']} ({result['date']}, commit {result['commit']}); "
                          "shape = groups x rows per group x N x K (k-grouped: K per group)", out)


def _bars(series, labels, title, out):
    fig, ax = plt.subplots(figsize=(max(10, len(labels) * 0.9), 5))
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(labels))], values, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(labels))], labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("TFLOPS")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])
