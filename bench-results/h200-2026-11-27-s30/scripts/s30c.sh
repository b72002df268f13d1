#!/usr/bin/env bash
# Session 30, run C: the trial's wait on the predicted form. A = 1813aad's CLI
# (gpu-carry/a1813.tar.xz: the old form runs while the samples are in flight), B = this
# session's (gpu-carry/gb.tar.xz: the form AUTO's rule predicts runs), alternating, two rounds;
# AUTO end to end, read in place. Then HOLA / TILE per product on dense matrices out of the L2.
cd "$(dirname "$0")/../../.."
W=/tmp/c; mkdir -p $W /tmp/A /tmp/B
tar -xJf gpu-carry/a1813.tar.xz -C /tmp/A; tar -xJf gpu-carry/gb.tar.xz -C /tmp/B
nvidia-smi --query-gpu=name --format=csv,noheader; cat /tmp/A/gpu-bundle/COMMIT /tmp/B/gpu-bundle/COMMIT
S=("gen:lap3d7:160 f64" "gen:stencil27:100 f64" "gen:elasticity:40 f64" "gen:grid2d:725 f64" "gen:grid2d:725 f32" "gen:dense:2000,2000 f64" "gen:dense:2000,2000 f32" "gen:random:3000,3000,1600,7 f64" "gen:elasticity:32 f32")
for r in 1 2; do for side in A B; do
  D=/tmp/$side/gpu-bundle
  for s in "${S[@]}"; do set -- $s; n=$side-$r-$(echo $1|tr ':,' '__')-$2
    LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/lib64 timeout 100 $D/bin/tessera bench $1 --methods auto --precision $2 --out $W/$n > $W/$n.txt 2>&1
    echo "$side r$r $1 $2 rc=$? $(grep -E " auto:" $W/$n.txt | awk 'NF>20{print $3, "borrow", $17,$18,$19,$20,$21} NF<20 && NF>10{print "steady",$9}' | tr '\n' ' ')"
  done; done; done
D=/tmp/B/gpu-bundle
LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/lib64 timeout 150 $D/bin/tessera bench gen:dense:3000,3000 gen:dense:4000,4000 gen:random:3000,3000,2900,7 --methods hola,tile --precision both --steady --out $W/dense > $W/dense.txt 2>&1
grep -E "hola|tile|cusparse" $W/dense.txt | grep -v "^\[\|command" | awk '{print $1,$4,$5,$7,$8}'
tar -czf $OUT/c.tgz -C $W .
