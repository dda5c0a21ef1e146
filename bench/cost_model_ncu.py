"""Regimes: the cost model's against ncu's, row by row.

    scripts/cost-model-ncu.sh D OUT [CHAIN]   (runs ncu over --ncu-rows)
    python3 bench/cost_model_ncu.py cost-model.json ncu.csv [--out MD]

ncu's tensor-pipe metric counts HMMA and HGMMA (mma.sync and wgmma). A row's
regime is its longest kernel's: compute when the tensor pipe is busy
>= 60% of the kernel's elapsed cycles (mean over SMs), bandwidth when DRAM
throughput is >= 60% of peak over the elapsed cycles, else latency (the
issue's rule); the model's is the same rule on its predicted times: the
mean SM's tensor time and the HBM time over the kernel's time on the GPU
(CostModel.cpp). Both figures are over elapsed cycles, as ncu's
speed-of-light section reads them; the tensor pipe's share of the SMs'
*active* cycles (ncu's `pct_of_peak_sustained_active`, which leaves out an
SM's idle tail) and the SM clock are printed alongside. The kernels of the ncu run come in the order
bench/cost_model.py launches them: a backward row first runs the forward
for O and the logsumexp, which is skipped.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

TENSOR = ("sm__pipe_tensor_op_hmma_cycles_active.avg."
          "pct_of_peak_sustained_elapsed")
ACTIVE = ("sm__pipe_tensor_op_hmma_cycles_active.avg."
          "pct_of_peak_sustained_active")
CLOCK = "sm__cycles_elapsed.avg.per_second"
DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
TIME = "gpu__time_duration.sum"


def number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def kernels(path: Path) -> list[dict]:
    lines = [l for l in path.read_text().splitlines() if l.startswith('"')]
    table = list(csv.reader(lines))
    head, body = table[0], table[1:]
    out: dict[str, dict] = {}
    for row in body:
        d = dict(zip(head, row))
        k = out.setdefault(d["ID"], {"name": d["Kernel Name"]})
        k[d["Metric Name"]] = number(d["Metric Value"])
    return list(out.values())


def regime(tensor: float, dram: float) -> str:
    if tensor >= 60:
        return "compute"
    if dram >= 60:
        return "bandwidth"
    return "latency"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", help="bench/cost_model.py --json output")
    ap.add_argument("ncu", help="the ncu --csv output of --ncu-rows")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    rows = json.loads(Path(a.results).read_text())["rows"]
    stream = kernels(Path(a.ncu))
    pos = 0
    lines = ["| row | model regime | ncu regime | tensor % | DRAM % | agree "
             "| tensor % of active | SM MHz |",
             "|---|---|---|---:|---:|---|---:|---:|"]
    agree = 0
    for r in rows:
        names = [k["name"] for k in r["kernels"]]
        if r["kind"] == "backward":
            pos += 1  # the forward that makes O and the logsumexp
        got = stream[pos:pos + len(names)]
        pos += len(names)
        if [k["name"] for k in got] != names:
            raise SystemExit(f"ncu kernels {[k['name'] for k in got]} do not "
                             f"match row {r['kind']} {names}")
        longest = max(got, key=lambda k: k[TIME])
        theirs = regime(longest[TENSOR], longest[DRAM])
        model = max(r["kernels"], key=lambda k: k["time_us"])["regime"]
        ok = model == theirs
        agree += ok
        label = {k: r.get(k) for k in ("kind", "d", "causal", "B", "H", "S",
                                       "Skv")}
        lines.append(f"| {' '.join(f'{k}={v}' for k, v in label.items() if v is not None)} "
                     f"| {model} | {theirs} | {longest[TENSOR]:.1f} | "
                     f"{longest[DRAM]:.1f} | {'yes' if ok else 'NO'} | "
                     f"{longest.get(ACTIVE, 0):.1f} | "
                     f"{longest.get(CLOCK, 0) / 1e6:.0f} |")
    summary = f"regimes agree on {agree}/{len(rows)} rows"
    text = summary + "\n\n" + "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
