#!/usr/bin/env bash
# Session 14, run A: HOLA's two-block rows owned by their first block (one launch without long
# rows): the HOLA, thread, fault, check and base GPU tests; gpu_hola under memcheck; the suite per
# product (AUTO, HOLA, CSR_VECTOR) in f64 and f32.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/a; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/a.txt
cd $B/tests
for t in gpu_hola gpu_threads gpu_faults gpu gpu_check gpu_background unit; do
  timeout 120 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/a.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/a.txt
done
echo "gpu_hola memcheck: $(timeout 150 compute-sanitizer --tool memcheck ./gpu_hola --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/a.txt
cd - >/dev/null
for p in f64 f32; do
  timeout 150 $B/bin/tessera bench --suite --methods auto,hola,csr_vector --precision $p --steady --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
done | tee -a $W/a.txt
for p in f64 f32; do grep -E ' (auto|hola|csr_vector)' $W/suite-$p.txt | awk '{printf "%s %-26s %-16s %s %s %s\n","'$p'",$1,$5,$7,$8,$9}'; grep geomean $W/suite-$p.txt | cut -c1-200; done | tee -a $W/a.txt
tar -czf $OUT/a.tgz -C $W .
