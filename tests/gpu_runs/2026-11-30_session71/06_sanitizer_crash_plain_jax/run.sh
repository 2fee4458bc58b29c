# The sanitizer's crashes without our package: a plain JAX program (a jitted bf16 matmul, its gradient through
# jax.lax.ragged_dot, a sort) under memcheck, four runs; then NOTES 114's case with our kernels excluded, four runs.
set -u
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
date -u > "$OUT/machine.txt"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
cat > /tmp/plain_jax.py <<'PY'
import jax, jax.numpy as jnp
k = jax.random.split(jax.random.key(0), 3)
x = jax.random.normal(k[0], (512, 256), jnp.bfloat16)
w = jax.random.normal(k[1], (4, 256, 128), jnp.bfloat16)
sizes = jnp.array([100, 200, 12, 200], jnp.int32)
def loss(x, w):
    return jnp.sum(jax.lax.ragged_dot(x, w, sizes).astype(jnp.float32) ** 2)
g = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
print("plain jax ok", jax.devices()[0], float(jnp.sum(g[1].astype(jnp.float32))), jnp.sort(x[:, 0])[0])
PY
for run in 1 2 3 4; do
  timeout -k 5 40 "$CS" --tool memcheck --error-exitcode 1 python -I /tmp/plain_jax.py > "$OUT/plain_$run.log" 2>&1
  echo "plain jax run $run: exit $? ($(grep -E "plain jax ok|ERROR SUMMARY" "$OUT/plain_$run.log" | tr '\n' ' '))"
done
python -m pip install --no-build-isolation -e . > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
case_id="tests/test_grouped.py::test_grad_through_ragged_wrt_lhs_scale"
for run in 1 2 3 4; do
  timeout -k 5 40 "$CS" --tool memcheck --kernel-name-exclude kns=jdg --error-exitcode 1 python -I -m pytest \
    "$case_id" -q -p no:cacheprovider > "$OUT/exclude_jdg_$run.log" 2>&1
  echo "exclude_jdg run $run: exit $? ($(grep -E "passed|failed|ERROR SUMMARY" "$OUT/exclude_jdg_$run.log" | tr '\n' ' '))"
done
