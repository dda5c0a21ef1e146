#!/bin/bash
# Opcode histogram of each cubin's SASS (all its kernels): which instructions
# a change adds (run on the GPU machine: it needs cuobjdump).
#   scripts/sass-hist.sh WORK/modules/NAME/attn.cubin ...
set -euo pipefail
for f in "$@"; do
  echo "== $f"
  sass=$(cuobjdump -sass "$f")
  grep -E '^\s+/\*[0-9a-f]{4}\*/' <<<"$sass" |
    sed -E 's/^\s+\/\*[0-9a-f]+\*\/\s+(@!?U?P[0-9T] )?([A-Z0-9_]+)(\.[A-Z0-9_.]+)?.*/\2/' |
    sort | uniq -c | sort -rn | head -25
  echo "total $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' <<<"$sass")"
done
