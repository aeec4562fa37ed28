sh tools/gpu-build.sh python3 > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
PYTHONPATH=python timeout 120 python3 -m pytest -q -m gpu tests/python/test_gpu_vec.py tests/python/test_fuse.py -p no:cacheprovider 2>&1 | tee $OUT/quick.log | grep -E "passed|failed|FAILED|Error" | tail -15
(cd bench/gpu && PYTHONPATH=../../python timeout 150 python3 fuse.py) 2>&1 | tee $OUT/fuse.md | tail -40
(cd bench/gpu && PYTHONPATH=../../python timeout 90 python3 bias_study.py) 2>&1 | tee $OUT/bias.md | tail -14
