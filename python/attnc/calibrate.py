"""Measures the cost model's ceilings on this machine's GPU.

    python3 -m attnc.calibrate [-o DEVICE.json] [--module DIR] [--device N]

Times the microbenchmark kernels of the calibration module (``attnc-compile
--calibration``; the wheel ships it in attnc/kernels/calibration, so no LLVM is
needed) and writes a device file the intensity report (``device-file=``,
``attnc-compile --report-device-file``) and ``Plan.estimate`` read. Each rate
is the median of five timed batches, each batch a few milliseconds long.
docs/cost-model.md says what each kernel measures. Needs PyTorch with CUDA
(for memory and events).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

from . import __version__
from .runtime import load

REPEATS = 5
# Each timed batch should take about this long (ms): long enough that a
# launch is noise, short enough to calibrate in seconds.
TARGET_MS = 4.0


def _module_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    from .variants import CALIBRATION, prebuilt_dir
    prebuilt = prebuilt_dir()
    if prebuilt is not None and (prebuilt / CALIBRATION).is_dir():
        return prebuilt / CALIBRATION
    sys.exit("attnc.calibrate: no calibration module (the wheel ships one in "
             "attnc/kernels/calibration; from a checkout run attnc-compile "
             "--calibration -o DIR and pass --module DIR)")


def _time_ms(torch, launch, count: int = 1) -> float:
    """Median over REPEATS of the time of COUNT launches, in ms."""
    launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _compute_rate(torch, kernel, work_per_iter_per_thread: float,
                  iters: int = 64) -> tuple[float, dict]:
    """Units per second of a kernel doing WORK_PER_ITER_PER_THREAD units per
    iteration on each of its threads; iterations grown until a launch takes
    about TARGET_MS."""
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()) \
        .multi_processor_count
    ctas = int(kernel.attr("ctas_per_sm") or 1) * sms
    threads = ctas * kernel.block[0]
    out = torch.empty(threads, dtype=torch.float32, device="cuda")
    while True:
        plan = kernel.plan(out=out, iters=iters)
        ms = _time_ms(torch, plan.launch)
        if ms >= TARGET_MS / 4 or iters >= 1 << 24:
            break
        iters *= max(2, int(TARGET_MS / max(ms, 1e-3)))
    units = threads * iters * work_per_iter_per_thread
    return units / (ms * 1e-3), {"iters": iters, "ms": ms, "threads": threads}


def calibrate(module_dir: Path) -> dict:
    import torch
    if not torch.cuda.is_available():
        sys.exit("attnc.calibrate: no CUDA device")
    module = load(module_dir)
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    raw = {}

    def rate(name, per_thread):
        value, info = _compute_rate(torch, module.kernel(name), per_thread)
        raw[name] = info
        return value

    # mma.sync: 8 chains of m16n8k16 (2*16*8*16 FLOP) per warp per
    # iteration, i.e. per thread 8 * 4096 / 32.
    mma_sync = rate("calibrate_mma_sync", 8 * 4096 / 32) / 1e12
    wgmma = 0.0
    if "calibrate_wgmma" in module.kernels:
        # 8 m64n256k16 (2*64*256*16 FLOP) per warpgroup per iteration.
        wgmma = rate("calibrate_wgmma", 8 * 2 * 64 * 256 * 16 / 128) / 1e12
    softmax = rate("calibrate_exp", 8) / 1e9
    # 8 ldmatrix.x4 per warp per iteration, 512 bytes each.
    shared = rate("calibrate_ldmatrix", 8 * 512 / 32) / 1e12

    # HBM: a copy of 512 MiB (read + written bytes), far past L2.
    n = 64 << 20
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    plan = module.kernel("calibrate_copy").plan(x=x, y=y)
    ms = _time_ms(torch, plan.launch)
    dram = 2 * n * 4 / (ms * 1e-3) / 1e12
    raw["calibrate_copy"] = {"bytes": 2 * n * 4, "ms": ms}
    del x, y

    # L2 reductions, red.global.add.v2.f32 into 16 MiB (L2-resident, as the
    # backward's dQ rows of the query tiles in flight).
    red = module.kernel("calibrate_reduce")
    out = torch.zeros(4 << 20, dtype=torch.float32, device="cuda")
    threads = int(red.attr("ctas_per_sm")) * props.multi_processor_count * \
        red.block[0]
    iters = 256
    while True:
        plan = red.plan(out=out, iters=iters)
        ms = _time_ms(torch, plan.launch)
        if ms >= TARGET_MS / 4 or iters >= 1 << 20:
            break
        iters *= max(2, int(TARGET_MS / max(ms, 1e-3)))
    reduce = threads * iters * 8 / (ms * 1e-3) / 1e12
    raw["calibrate_reduce"] = {"iters": iters, "ms": ms, "threads": threads}

    # HBM latency: one thread following a random cycle through 128 MiB.
    m = 32 << 20
    perm = torch.randperm(m, device="cuda", dtype=torch.int64)
    table = torch.empty(m, dtype=torch.int32, device="cuda")
    table[perm] = torch.roll(perm, -1).to(torch.int32)
    iters = 20000
    one = torch.empty(1, dtype=torch.float32, device="cuda")
    plan = module.kernel("calibrate_latency").plan(table=table, out=one,
                                                   iters=iters)
    ms = _time_ms(torch, plan.launch)
    latency_us = ms * 1e3 / iters
    raw["calibrate_latency"] = {"iters": iters, "ms": ms}

    # Launch: empty one-CTA kernels back to back on the GPU's timeline.
    # A long pointer chase first puts the host ahead, so the GPU never
    # waits for it (a Python launch costs more than the GPU's gap).
    busy = module.kernel("calibrate_latency").plan(table=table, out=one,
                                                   iters=60000)
    empty = module.kernel("calibrate_empty")
    single = empty.plan(out=one)
    count = 200
    samples = []
    for _ in range(REPEATS):
        busy.launch()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            single.launch()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    launch_us = statistics.median(samples) * 1e3 / count
    raw["calibrate_empty"] = {"launches": count, "ms": samples}
    del perm, table

    # The rate CTAs start at: 2^20 empty CTAs in one launch.
    ctas = 1 << 20
    many = torch.empty(ctas, dtype=torch.float32, device="cuda")
    plan = empty.plan(out=many)
    ms = _time_ms(torch, plan.launch)
    cta_rate = ctas / max(ms * 1e-3 - launch_us * 1e-6, 1e-9) / 1e9
    raw["calibrate_empty_ctas"] = {"ctas": ctas, "ms": ms}

    today = datetime.datetime.now(datetime.timezone.utc)
    return {
        "attnc_device_version": 1,
        "name": props.name,
        "source": f"calibrated by attnc.calibrate {__version__} on "
                  f"{props.name}, {today:%Y-%m-%d %H:%M} UTC",
        "sm_count": props.multi_processor_count,
        "l2_bytes": float(getattr(props, "L2_cache_size", 50 << 20)),
        "max_threads_per_sm": getattr(props, "max_threads_per_multi_processor",
                                      2048),
        "registers_per_sm": getattr(props, "regs_per_multiprocessor", 65536),
        "shared_memory_per_sm": getattr(
            props, "shared_memory_per_multiprocessor", 233472),
        "max_ctas_per_sm": 32,
        "mma_sync_tflops": mma_sync,
        "wgmma_tflops": wgmma,
        "softmax_gelems": softmax,
        "shared_tbps": shared,
        "dram_tbps": dram,
        "reduce_tbps": reduce,
        "dram_latency_us": latency_us,
        "launch_us": launch_us,
        "cta_launch_gps": cta_rate,
        "measurements": raw,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m attnc.calibrate",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", help="write the device file here "
                    "(default: print it)")
    ap.add_argument("--module", help="the calibration module directory "
                    "(default: the wheel's attnc/kernels/calibration)")
    a = ap.parse_args(argv)
    device = calibrate(_module_dir(a.module))
    text = json.dumps(device, indent=2) + "\n"
    if a.out:
        Path(a.out).write_text(text)
        print(f"attnc.calibrate: wrote {a.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    for key in ("mma_sync_tflops", "wgmma_tflops", "softmax_gelems",
                "shared_tbps", "dram_tbps", "reduce_tbps", "dram_latency_us",
                "launch_us", "cta_launch_gps"):
        print(f"  {key:18s} {device[key]:10.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
