#!/usr/bin/env bash
# Redraw the guides' figures with the installed irbandits (run from the checkout root, ../shared beside it;
# about 2 minutes on one core). The best-item and MergeDTS figures come from the reproductions instead.
set -euo pipefail
D=../shared/data
W=$(mktemp -d)
F=docs/figures
irbandits simulate --out "$W/results"
cp "$W/results/regret.png" $F/getting-started-regret.png
cp "$W/results/accuracy.png" $F/getting-started-accuracy.png
irbandits simulate --matrix $D/preference-matrices/mslr-navigational.txt \
    -a MergeDTS:tuned -a mergeRUCB:tuned -a RUCB:alpha=0.51 --horizon 1e6 --runs 5 --out "$W/mslr"
cp "$W/mslr/regret.png" $F/online-mslr-regret.png
irbandits pool simulate --runs $D/trec-dl-2021-passage/runs --qrels $D/trec-dl-2021-passage/qrels.txt \
    --depth 10 --relevant-grade 1 --method all --out "$W/pool"
cp "$W/pool/curves.png" $F/pooling-curves.png
irbandits compare-measures --runs $D/trec-dl-2021-passage/runs --qrels $D/trec-dl-2021-passage/qrels.txt \
    --judgments $D/human-preferences-dl21/judgments.txt -m ndcg_cut_10 -m pgc --plot $F/judging-tau.png
rm -rf "$W"
