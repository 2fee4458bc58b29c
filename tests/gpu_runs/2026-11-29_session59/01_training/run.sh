export JDG_TRAINING_DEMO=0; bash tools/gpu_session.sh training 2>&1 | tail -60; cd $OUT && tar czf training_logs.tgz *.log *.txt 2>/dev/null; ls
