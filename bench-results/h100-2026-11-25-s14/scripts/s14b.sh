#!/usr/bin/env bash
# Session 14, run B: HOLA ownership in one-wave grids only; the same tests and suite as run A, plus
# tessera overhead: the HOLA, thread, fault, check and base GPU tests; gpu_hola under memcheck; the suite per
# product (AUTO, HOLA, CSR_VECTOR) in f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/b; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/b.txt
cd $B/tests
for t in gpu_hola gpu_threads gpu_faults gpu gpu_check gpu_background unit; do
  timeout 120 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/b.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/b.txt
done
echo "gpu_hola memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_hola --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/b.txt
cd - >/dev/null
for i in 1 2; do timeout 60 $B/bin/tessera overhead 2>&1 | tail -8; done | tee -a $W/b.txt
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench --suite --methods auto,hola,csr_vector --precision $p --steady --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
done | tee -a $W/b.txt
for p in f64 f32; do grep -E ' (auto|hola|csr_vector)' $W/suite-$p.txt | awk '{printf "%s %-26s %-16s %s %s %s\n","'$p'",$1,$5,$7,$8,$9}'; grep geomean $W/suite-$p.txt | cut -c1-200; done | tee -a $W/b.txt
tar -czf $OUT/b.tgz -C $W .
