set -u
mkdir -p /tmp/p
for args in "" "--racecheck-report all" "--kernel-name kns=jdg"; do
  for k in jdg other; do
    echo "## args=[$args] kernel=$k"; compute-sanitizer --tool racecheck $args tools/sanitizer_probe.bin race $k 2>&1 | head -40
  done
done > "$OUT/probe_racecheck.txt"
compute-sanitizer --version >> "$OUT/probe_racecheck.txt"
cp .run4.sh "$OUT/run.sh"
