#!/usr/bin/env bash
# Session 20, run T (682738f: the provisional HOLA of large matrices takes rows as regular and
# local): every test executable, gpu_check memcheck, then large matrices end to end (read in
# place), A = 7fed2c2 (gpu-carry/mini2) against B = 682738f (the bundle), alternating.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/t; mkdir -p $W
T0=$(date +%s)
xz -dc gpu-carry/mini2/tessera-a.xz > $W/tessera-a; chmod +x $W/tessera-a; cp $B/bin/tessera $W/tessera-b
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/t.txt
for t in $(ls $B/tests); do (cd $B/tests && TESSERA_BIN=$B/bin/tessera timeout 150 ./$t > $W/t-$t.txt 2>&1; echo "$t rc=$? at $(( $(date +%s)-T0 ))s $(grep -E "test result" $W/t-$t.txt | tr "\n" " ")") | tee -a $W/t.txt; done
(cd $B/tests && echo "gpu_check memcheck: $(timeout 120 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc-gpu_check.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')") | tee -a $W/t.txt
for v in a b; do
  timeout 150 $W/tessera-$v bench gen:stencil27:100 gen:elasticity:48 gen:lap3d7:160 --methods auto --precision f32 --out $W/$v-f32 > /dev/null 2>&1; echo "$v f32 rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/t.txt
done
for v in a b; do
  timeout 100 $W/tessera-$v bench gen:uniform:1000000,16,1 gen:powerlaw:20,16,1 --methods auto --precision f64 --out $W/$v-f64 > /dev/null 2>&1; echo "$v f64 rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/t.txt
done
tar -czf $OUT/t.tgz -C $W t.txt a-f32 b-f32 a-f64 b-f64 $(cd $W && ls t-*.txt mc-*.log)
