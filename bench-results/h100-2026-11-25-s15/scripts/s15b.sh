#!/usr/bin/env bash
# Session 15, run B: the GPU tests of the parallel TILE build and the own HOLA over the
# provisional row starts; gpu_check under memcheck; the suite (AUTO) f64 and f32 with its
# end-to-end columns.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/b; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/b.txt
cd $B/tests
for t in unit gpu gpu_check gpu_hola gpu_background gpu_threads gpu_borrow gpu_import; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/b.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/b.txt
done
echo "gpu_check memcheck: $(timeout 200 compute-sanitizer --tool memcheck ./gpu_check --test-threads=1 2>&1 | tee $W/mc.log | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')" | tee -a $W/b.txt
cd - >/dev/null
for p in f64 f32; do
  timeout 220 $B/bin/tessera bench --suite --methods auto --precision $p --out $W/suite-$p > $W/suite-$p.txt 2>&1; echo "suite $p rc=$?"
done | tee -a $W/b.txt
for p in f64 f32; do grep -E 'geomean' $W/suite-$p.txt | cut -c1-400; grep -E '^(gen:dense|watt|as-caida|Groebner|cit|adder|arrow)' $W/suite-$p.txt | grep auto: | grep -v cusparse | awk '{printf "%s %-22s %s 1st=%s borrow=%s %s %s %s %s %s\n","'$p'",$1,$3,$4,$16,$17,$18,$19,$20,$21}'; done | tee -a $W/b.txt
tar -czf $OUT/b.tgz -C $W .
