#!/usr/bin/env bash
# Session 19, run A: where HOLA and BRC lose time on the empty-rows generator against the uniform
# one: per-kernel time, L2 requests/sectors, DRAM bytes (ncu, clocks and caches left alone).
cd "$(dirname "$0")/.."
W=/tmp/a; mkdir -p $W
xz -dc gpu-carry/mini/tessera.xz > $W/tessera; chmod +x $W/tessera; T=$W/tessera
export PATH=$PATH:/usr/local/cuda/bin
echo "# commit $(cat gpu-carry/mini/COMMIT) $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader)" | tee $W/a.txt
which ncu nsys | tee -a $W/a.txt
M="gpu__time_duration.sum,lts__t_requests.sum,lts__t_sectors.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_op_red.sum,lts__t_requests_op_atom.sum,lts__t_requests_op_write.sum"
T0=$(date +%s)
for p in f64 f32; do
for s in gen:emptyrows:1000000,16,1 gen:uniform:1000000,16,1 gen:powerlaw:20,16,1; do
  for m in hola brc; do
    n=$(echo $s | cut -d: -f2)-$m-$p
    timeout 120 ncu --clock-control none --cache-control none --kernel-name regex:"^(hola|brc)_" --launch-skip 40 --launch-count 6 --metrics $M --csv $T bench $s --methods $m --precision $p --steady --repeat 7 > $W/ncu-$n.csv 2> $W/ncu-$n.err
    echo "$n rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
  done
  n=$(echo $s | cut -d: -f2)-cusparse-$p
  timeout 120 ncu --clock-control none --cache-control none --kernel-name regex:"csrmv|spmv|partition" --launch-skip 40 --launch-count 6 --metrics $M --csv $T bench $s --methods csr_vector --precision $p --steady --repeat 7 > $W/ncu-$n.csv 2> $W/ncu-$n.err
  echo "$n rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $W/a.txt
done
done
tar -czf $OUT/a.tgz -C $W --exclude tessera .
