"""Every test file runs in some phase of tools/gpu_session.sh, the script that runs the suites on the GPU machine.

The files written for the CPU reference (CI) run the kernels wherever an sm_90 GPU is the default device, so a file
that no phase names never runs its ops on a GPU (six did not until benchmarks/NOTES.md 167)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_file_is_in_a_gpu_phase():
    named = set()
    for script in ("tools/gpu_session.sh", "tools/sanitize_runs.sh"):
        for line in (ROOT / script).read_text().splitlines():
            code = line.split("#", 1)[0]  # a file named in a comment runs nowhere
            named.update(re.findall(r"tests/[\w/]+\.py", code))
    files = {str(p.relative_to(ROOT)) for p in [*ROOT.glob("tests/test_*.py"), *ROOT.glob("tests/cuda/test_*.py")]}
    assert files, "no test files found"
    missing = sorted(files - named)
    assert not missing, f"test files no phase of tools/gpu_session.sh runs: {missing}"
