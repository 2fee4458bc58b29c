set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/gpu.txt" 2>&1
JDG_PAR_LIMIT=510 bash tools/gpu_session.sh par 3 2>&1 | tee "$OUT/par3.txt"
