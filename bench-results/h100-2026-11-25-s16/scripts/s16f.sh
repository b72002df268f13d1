#!/usr/bin/env bash
# Session 16, run F: CSR_VECTOR's two entries per trip against the kernel before it (the
# previous binary, carried as tessera-old), per product over the suite, interleaved; the GPU
# tests that run CSR_VECTOR; the suite end to end (AUTO) with the new kernel.
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
xz -dkf gpu-carry/tessera-old.xz; chmod +x gpu-carry/tessera-old
B=$PWD/gpu-bundle
OLD=$PWD/gpu-carry/tessera-old
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/f; mkdir -p $W
echo "# commit $(cat $B/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/f.txt
cd $B/tests
for t in unit gpu gpu_check gpu_borrow gpu_threads; do
  timeout 150 ./$t > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^test result' $W/$t.log | tr '\n' ' ')" | tee -a $W/f.txt
  grep -E "FAILED|panicked" $W/$t.log | head -5 | tee -a $W/f.txt
done
cd - >/dev/null
for r in 1 2; do
  for v in old new; do
    bin=$B/bin/tessera; [ $v = old ] && bin=$OLD
    timeout 150 $bin bench --suite --methods csr_vector --precision both --steady --out $W/cv-$v-$r > $W/cv-$v-$r.txt 2>&1
    echo "csr_vector $v round $r rc=$? $(grep geomean $W/cv-$v-$r.txt | head -1 | cut -c1-150)" | tee -a $W/f.txt
  done
done
timeout 200 $B/bin/tessera bench --suite --methods auto --precision f64 --out $W/suite-f64 > $W/suite-f64.txt 2>&1; echo "suite f64 rc=$?" | tee -a $W/f.txt
grep -E 'geomean' $W/suite-f64.txt | cut -c1-420 | tee -a $W/f.txt
tar -czf $OUT/f.tgz -C $W .
