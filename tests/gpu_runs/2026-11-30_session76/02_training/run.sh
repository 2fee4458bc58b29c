#!/usr/bin/env bash
# session 76, call 2: the training phase on HEAD's kernels, without the demo
cp .run2.sh "$OUT/run.sh"
JDG_TRAINING_DEMO=0 bash tools/gpu_session.sh training 2>&1 | tail -40
