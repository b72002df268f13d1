#!/usr/bin/env bash
# Session 29, run D (ad68957): why AUTO's pieces products, after its trials kept them, take
# 3-4 us longer than CSR_VECTOR named (run C; not with TESSERA_TRIAL=0). The kernel under ncu
# (each launch alone): AUTO's late launches against named ones; then the bench's steady product
# of AUTO with the trials on, twice, and of CSR_VECTOR named, on rows of 250 (f64).
cd "$(dirname "$0")/../../.."
W=/tmp/d; mkdir -p $W; tar -xJf gpu-carry/gb.tar.xz -C /tmp; B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64 TESSERA_MATRICES=$B/matrices TESSERA_BIN=$B/bin/tessera
M=gen:random:10000,10000,0.025,3
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader) $(cat $B/COMMIT)" | tee $W/d.txt
for meth in auto csr_vector; do
  timeout 200 ncu --clock-control none -k regex:csr_vector_pieces --launch-skip 400 --launch-count 6 --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum $B/bin/tessera bench $M --methods $meth --precision f64 --steady > $W/ncu-$meth.txt 2>&1
  echo "ncu $meth: $(grep -E 'gpu__time_duration|dram__bytes_read|lts__t_sectors' $W/ncu-$meth.txt | awk '{print $1, $(NF)}' | tr '\n' ' ')" | tee -a $W/d.txt
done
for meth in auto auto csr_vector; do
  TESSERA_TRACE=1 timeout 100 $B/bin/tessera bench $M --methods $meth --precision f64 --steady --out $W/s-$meth > $W/s-$meth.txt 2>&1
  echo "steady $meth: $(python3 -c "import csv; r=[x for x in csv.DictReader(open('$W/s-$meth/bench.csv')) if x['method']=='$meth'][0]; print(float(r['spmv_ms'])*1e3, r['params'][:200])")" | tee -a $W/d.txt
done
grep -h "tessera:" $W/s-auto.txt | head -30
rm -f $W/*/*.svg; tar -czf $OUT/d.tgz -C $W .
