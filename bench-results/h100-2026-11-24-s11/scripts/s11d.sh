#!/usr/bin/env bash
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
cp gpu-carry/c/tessera $B/bin/tessera
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices PATH=$PATH:/usr/local/cuda/bin
T=$B/bin/tessera
for m in auto brc; do
  echo "== $m"
  TESSERA_BACKGROUND_BUILD=0 timeout 150 ncu -k regex:"brc|csr_vector" --launch-skip 3 --launch-count 6 --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum --csv $T bench gen:stencil27:48 --methods $m --steady --repeat 7 > $OUT/ncu_$m.csv 2>&1
  python3 gpu-carry/ncu_show.py $OUT/ncu_$m.csv | head -40
done
