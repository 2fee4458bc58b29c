set -u
for args in "" "--kernel-name kns=jdg"; do
  for k in jdg other; do
    echo "## racecheck args=[$args] kernel=$k"; compute-sanitizer --tool racecheck $args tools/sanitizer_probe.bin race $k 2>&1 | head -30
    echo "## memcheck args=[$args] kernel=$k"; compute-sanitizer --tool memcheck $args tools/sanitizer_probe.bin oob $k 2>&1 | head -30
  done
done > "$OUT/probe.txt"
compute-sanitizer --version >> "$OUT/probe.txt"
cp .run4.sh "$OUT/run.sh"
