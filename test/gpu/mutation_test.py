#!/usr/bin/env python3
"""Mutation test of the attention kernels' synchronisation: can the GPU suite
see a missing wait, barrier or proxy fence?

    python3 test/gpu/mutation_test.py build [--work .gpuwork] [--out .gpuwork-mut]
        # build machine (needs ptxas): one copy of each module per mutation,
        # its PTX with every instruction of one kind removed, re-assembled
    python3 test/gpu/mutation_test.py run [--out .gpuwork-mut] [--json FILE]
        # GPU machine: test/gpu/run_tests.py --quick on every mutant

The default kernels load by TMA (wgmma_ws); the cp.async mutations need
modules built with another strategy, in a second pass:

    python3 test/gpu/build_modules.py --out .gpuwork/wgmma --strategy=wgmma \
        --only attn_d
    python3 test/gpu/mutation_test.py build --work .gpuwork/wgmma \
        --out .gpuwork/mut-wgmma \
        --mutations cp.async.wait_group,bar.sync,wgmma.wait_group,fence.proxy.async

A mutation is detected when ptxas rejects the mutant or when at least one
case of the suite fails (or crashes, or times out) on it. A mutant whose
SASS (cuobjdump) equals the original's is reported as equivalent: ptxas
tracks wgmma's register dependences and may put a removed wait back. `run` prints one
line per (mutation, module) and exits non-zero when a mutation that must be
detected survives. Mutations (all instructions of the kind removed):
  cp.async.wait_group   the wait for a tile's copies before the barrier;
  bar.sync              the CTA barrier that publishes a tile (and orders the
                        previous step's reads of a stage before its reuse).
                        Required of kernels that load by cp.async; a TMA
                        kernel's one bar.sync publishes its mbarriers'
                        initialisation, a race no run has shown: reported;
  wgmma.wait_group      the wait for the warpgroup MMAs before their results
                        are read and their stage is reused. Reported, not
                        required: ptxas puts back a wait before every read
                        of an MMA's registers (measured: 4 of the 6
                        WARPGROUP.DEPBAR of the d=128 kernel come back); the
                        one left out guards the stage's reuse by a cp.async
                        issued a step later, a race no run has shown;
  fence.proxy.async     the generic-to-async proxy fence between cp.async's
                        writes and wgmma's reads (wgmma), and between the
                        epilogue's stores of O and the TMA store that reads
                        them (wgmma_ws). Reported, not required: the H200
                        may order the two proxies anyway, and the PTX memory
                        model calls the fence-less program racy, not wrong
                        on every run;
  cp.async.bulk.wait_group  (wgmma_ws) the wait, before the CTA exits, for
                        the TMA store to have read O from shared memory.
                        Reported;
  mbarrier.try_wait     (wgmma_ws only) every wait on the ring's barriers
                        passes at once: consumers read slots before their
                        copies land, the producer overwrites slots still
                        being read. (Removing an arrive instead deadlocks,
                        which the suite would only see as a timeout.)
Only the kernels a program calls are mutated, not their fallbacks. A
mutation applies to the modules whose PTX has the instruction; a mutation no
module has is an error (the pattern went stale).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
MODULES = ["attn_d128_bf16_causal", "attn_d64_bf16_full"]
# name: (pattern, required, replacement of each matching line)
MUTATIONS = {
    "cp.async.wait_group": (r"^\s*cp\.async\.wait_group\b", True, ""),
    "bar.sync": (r"^\s*bar\.sync\b", True, ""),
    "wgmma.wait_group": (r"^\s*wgmma\.wait_group\.sync\.aligned\b", False, ""),
    "fence.proxy.async": (r"^\s*fence\.proxy\.async\b", False, ""),
    # The wait loop's predicate set as if the phase had completed.
    "mbarrier.try_wait": (r"^\s*mbarrier\.try_wait\.parity\b", True,
                          "\tmov.pred P1, 1;\n"),
    # The TMA store's wait before the CTA exits and frees the shared memory
    # the store still reads.
    "cp.async.bulk.wait_group": (r"^\s*cp\.async\.bulk\.wait_group\b", False, ""),
}


def entry_kernels(module):
    """The names of the module's kernels that are no other's fallback: the
    kernels under test (a fallback has its own synchronisation)."""
    kernels = json.loads((module / "manifest.json").read_text())["kernels"]
    backing = {k.get("fallback") for k in kernels}
    return [k["name"] for k in kernels if k["name"] not in backing]


def uses_tma(module):
    """True when the module's kernel moves its tiles by TMA (the manifest
    names tensor maps: the PTX need not travel to the GPU machine)."""
    kernels = json.loads((module / "manifest.json").read_text())["kernels"]
    return any(p["kind"] == "tensormap" for k in kernels
               if k["name"] in entry_kernels(module) for p in k["params"])


def build(args):
    work, out = Path(args.work), Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    (out / "lib").mkdir(parents=True)
    shutil.copy2(work / "lib" / "libattnc_runtime.so", out / "lib")
    report = {}
    for name in MODULES:
        shutil.copytree(work / "modules" / name, out / "original" / "modules" / name)
    chosen = args.mutations.split(",") if args.mutations else list(MUTATIONS)
    for mutation in chosen:
        if mutation not in MUTATIONS:
            sys.exit(f"unknown mutation {mutation}; known: {', '.join(MUTATIONS)}")
        pattern, _, replacement = MUTATIONS[mutation]
        applied = 0
        for name in MODULES:
            src = work / "modules" / name
            kernels = [src / f"{k}.ptx" for k in entry_kernels(src)]
            removed = sum(1 for ptx in kernels
                          for l in ptx.read_text().splitlines()
                          if re.match(pattern, l))
            if removed == 0:
                print(f"{mutation:22} {name:24} (no such instruction)")
                continue
            applied += 1
            dst = out / mutation / "modules" / name
            shutil.copytree(src, dst)
            for ptx in (dst / p.name for p in kernels):
                lines = ptx.read_text().splitlines(keepends=True)
                ptx.write_text("".join(replacement if re.match(pattern, l) else l
                                       for l in lines))
                r = subprocess.run([args.ptxas, "-arch=sm_90a", str(ptx), "-o",
                                    str(ptx.with_suffix(".cubin"))],
                                   capture_output=True, text=True)
                status = "built" if r.returncode == 0 else "rejected by ptxas"
                report[f"{mutation} {name}"] = {"removed": removed, "status": status,
                                                "ptxas": r.stderr.strip()[-300:]}
                print(f"{mutation:22} {name:24} removed {removed:3}  {status}")
                if r.returncode:
                    shutil.rmtree(dst)
        if applied == 0:
            sys.exit(f"{mutation}: no module has such an instruction")
    (out / "build.json").write_text(json.dumps(report, indent=1))


def same_sass(a, b):
    """True when cuobjdump shows the same instructions in both modules'
    cubins (False when cuobjdump is missing)."""
    def sass(d):
        cubin = Path(d) / f"{entry_kernels(Path(d))[0]}.cubin"
        tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
        r = subprocess.run([tool, "-sass", str(cubin)],
                           capture_output=True, text=True)
        # Instruction lines only, without the addresses and encodings.
        return [re.sub(r"/\*[0-9a-f]{4,}\*/|/\* 0x[0-9a-f]+ \*/", "", l).strip()
                for l in r.stdout.splitlines() if "/*" in l and ";" in l]
    try:
        return sass(a) == sass(b)
    except (FileNotFoundError, StopIteration):
        return False


def run(args):
    out = Path(args.out)
    built = json.loads((out / "build.json").read_text())
    env = dict(os.environ,
               ATTNC_RUNTIME_LIB=str((out / "lib" / "libattnc_runtime.so").resolve()),
               PYTHONPATH=str(ROOT / "python"))
    results, survived = {}, []
    for key, info in built.items():
        mutation, name = key.split()
        required = MUTATIONS[mutation][1] and not (
            mutation == "bar.sync" and uses_tma(out / "original" / "modules" / name))
        if info["status"] != "built":
            verdict = "detected (ptxas)"
        elif same_sass(out / "original" / "modules" / name,
                       out / mutation / "modules" / name):
            # ptxas tracks the MMAs' register dependences itself and put the
            # removed wait back: the mutant is the original kernel.
            verdict = "equivalent (same SASS as the original)"
        else:
            mods = out / mutation / "modules"
            js = out / f"{mutation}-{name}.json"
            try:
                r = subprocess.run(
                    [sys.executable, str(ROOT / "test/gpu/run_tests.py"),
                     "--modules", str(mods), "--only", name, "--sections",
                     "attention", "--json", str(js)] + ([] if args.full else ["--quick"]),
                    capture_output=True, text=True, env=env, timeout=args.timeout)
                failed = re.search(r"(\d+) passed, (\d+) failed", r.stdout)
                nfail = int(failed.group(2)) if failed else -1
                verdict = (f"detected ({nfail} cases failed)" if nfail > 0 else
                           "detected (suite crashed)" if nfail < 0 else
                           "SURVIVED")
            except subprocess.TimeoutExpired:
                verdict = "detected (timeout)"
        if verdict == "SURVIVED" and required:
            survived.append(key)
        results[key] = verdict
        print(f"{mutation:22} {name:24} {verdict}{'' if required else '  (reported)'}",
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if survived:
        sys.exit(f"mutations the suite did not see: {', '.join(survived)}")
    print("mutation test: every required mutation detected")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["build", "run"])
    ap.add_argument("--work", default=str(ROOT / ".gpuwork"))
    ap.add_argument("--out", default=str(ROOT / ".gpuwork-mut"))
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--mutations", default="",
                    help="build: comma list of mutations (default: all)")
    ap.add_argument("--json", default="")
    ap.add_argument("--full", action="store_true",
                    help="the whole attention case list, not --quick")
    args = ap.parse_args()
    build(args) if args.mode == "build" else run(args)


if __name__ == "__main__":
    main()
