#!/usr/bin/env bash
# Session 14, run C: gpu_check again (the in-slot bound), then AUTO's training set and the suite
# with every method, per product, f32 and f64 (HOLA's one-wave ownership changes the small
# matrices' fastest method): the data for refitting AUTO's rule.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/c; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/c.txt
(cd $B/tests && timeout 60 ./gpu_check > $W/gpu_check.log 2>&1; echo "gpu_check rc=$? $(grep -E '^test result' $W/gpu_check.log)") | tee -a $W/c.txt
s=$(date +%s); TESSERA=$B/bin/tessera timeout 250 scripts/auto-training run $W/train; echo "train rc=$? $(( $(date +%s) - s )) s" | tee -a $W/c.txt
s=$(date +%s); timeout 250 $B/bin/tessera bench --suite --methods all --precision both --steady --out $W/suite-all > $W/suite-all.txt 2>&1; echo "suite all rc=$? $(( $(date +%s) - s )) s" | tee -a $W/c.txt
grep geomean $W/suite-all.txt | cut -c1-200 | tee -a $W/c.txt
tar -czf $OUT/c.tgz -C $W .
