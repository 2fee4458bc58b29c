#!/usr/bin/env bash
# One entry point for newcomers and CI: sets up a virtual environment with the project installed, then
#   ./dev.sh demo           runs the FP8 MoE layer demo (GPU kernels on an sm_90 device, else the CPU reference)
#   ./dev.sh test [ARGS]    runs the test suite with pytest (ARGS go to pytest)
# VENV picks the environment's folder (default .venv); PYTHON picks the interpreter (default: the first >= 3.12).
set -euo pipefail
cd "$(dirname "$0")"

is_312_plus() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }

find_python() {
  local candidates=("${PYTHON:-}" python3.13 python3.12 python3 python)
  if command -v pyenv >/dev/null 2>&1; then
    candidates+=("$(pyenv root)"/versions/3.1[2-9]*/bin/python3)
  fi
  candidates+=(/usr/bin/python3.1[2-9] /usr/local/bin/python3.1[2-9])
  for c in "${candidates[@]}"; do
    if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && is_312_plus "$c"; then
      command -v "$c"
      return 0
    fi
  done
  echo "dev.sh: no Python >= 3.12 found (JAX >= 0.11 needs it); set PYTHON=/path/to/python3.12" >&2
  return 1
}

command="${1:-}"
case "$command" in
  demo|test) shift ;;
  *) echo "usage: ./dev.sh demo | ./dev.sh test [pytest args]" >&2; exit 2 ;;
esac

VENV="${VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  "$(find_python)" -m venv "$VENV"
fi
extras=""
[ "$command" = test ] && extras="test"
# A machine with an NVIDIA driver gets JAX's CUDA 13 build (the kernels need it); others the CPU build.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  extras="${extras:+$extras,}cuda"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet ".${extras:+[$extras]}"

if [ "$command" = demo ]; then
  exec "$VENV/bin/python" -m jax_deepgemm demo
fi
# pytest runs from tests/'s rootdir without putting the source tree on sys.path, so the installed package is tested.
exec "$VENV/bin/python" -I -m pytest tests -q "$@"
