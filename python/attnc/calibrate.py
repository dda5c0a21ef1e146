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


def _time_ms(torch, launch, before=None, count: int = 1) -> float:
    """Median over REPEATS of the GPU time of COUNT launches, in ms. BEFORE
    (a longer kernel) runs first each time, so that the host is ahead when
    the timed launches reach the GPU (a Python launch costs more than many
    of these kernels take) and, when it streams memory, L2 holds none of
    theirs."""
    launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        if before is not None:
            before()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _grow(torch, make_plan, before, iters: int = 64):
    """The plan of the first iteration count (doubling or more from ITERS)
    whose launch takes at least TARGET_MS / 4, and its time."""
    while True:
        plan = make_plan(iters)
        ms = _time_ms(torch, plan.launch, before)
        if ms >= TARGET_MS / 4 or iters >= 1 << 24:
            return iters, ms
        iters *= max(2, int(TARGET_MS / max(ms, 1e-3)))


def calibrate(module_dir: Path) -> dict:
    import torch
    if not torch.cuda.is_available():
        sys.exit("attnc.calibrate: no CUDA device")
    module = load(module_dir)
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    sms = props.multi_processor_count
    raw = {}
    one = torch.empty(1, dtype=torch.float32, device="cuda")

    # One thread following a random cycle through 128 MiB: a dependent-load
    # latency, and (60000 steps, milliseconds) the kernel that puts the
    # host ahead before each timed launch.
    m = 32 << 20
    perm = torch.randperm(m, device="cuda", dtype=torch.int64)
    table = torch.empty(m, dtype=torch.int32, device="cuda")
    table[perm] = torch.roll(perm, -1).to(torch.int32)
    del perm
    chase = module.kernel("calibrate_latency")
    busy = chase.plan(table=table, out=one, iters=60000).launch
    iters = 20000
    ms = _time_ms(torch, chase.plan(table=table, out=one, iters=iters).launch)
    raw["calibrate_latency"] = {"iters": iters, "ms": ms,
                                "dependent_load_us": ms * 1e3 / iters}

    def rate(name, per_thread):
        kernel = module.kernel(name)
        threads = int(kernel.attr("ctas_per_sm") or 1) * sms * kernel.block[0]
        out = torch.empty(threads, dtype=torch.float32, device="cuda")
        iters, ms = _grow(torch, lambda n: kernel.plan(out=out, iters=n),
                          busy)
        raw[name] = {"iters": iters, "ms": ms, "threads": threads}
        return threads * iters * per_thread / (ms * 1e-3)

    # mma.sync: 8 chains of m16n8k16 (2*16*8*16 FLOP) per warp per
    # iteration, i.e. per thread 8 * 4096 / 32.
    mma_sync = rate("calibrate_mma_sync", 8 * 4096 / 32) / 1e12
    wgmma = {256: 0.0, 128: 0.0, 64: 0.0}
    for n in wgmma:
        name = "calibrate_wgmma" + ("" if n == 256 else f"_n{n}")
        if name in module.kernels:
            # 8 m64nNk16 (2*64*N*16 FLOP) per warpgroup per iteration.
            wgmma[n] = rate(name, 8 * 2 * 64 * n * 16 / 128) / 1e12
    softmax = rate("calibrate_exp", 8) / 1e9
    # 8 ldmatrix.x4 per warp per iteration, 512 bytes each.
    shared = rate("calibrate_ldmatrix", 8 * 512 / 32) / 1e12

    # HBM: a copy of 512 MiB (read + written bytes), far past L2.
    copy = module.kernel("calibrate_copy")
    n = 64 << 20
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    big = copy.plan(x=x, y=y)
    ms = _time_ms(torch, big.launch, busy)
    dram = 2 * n * 4 / (ms * 1e-3) / 1e12
    raw["calibrate_copy"] = {"bytes": 2 * n * 4, "ms": ms}

    # L2 reductions, red.global.add.v2.f32 into 16 MiB (L2-resident, as the
    # backward's dQ rows of the query tiles in flight).
    red = module.kernel("calibrate_reduce")
    out = torch.zeros(4 << 20, dtype=torch.float32, device="cuda")
    threads = int(red.attr("ctas_per_sm")) * sms * red.block[0]
    iters, ms = _grow(torch, lambda k: red.plan(out=out, iters=k), busy, 256)
    reduce = threads * iters * 8 / (ms * 1e-3) / 1e12
    raw["calibrate_reduce"] = {"iters": iters, "ms": ms, "threads": threads}

    # Launch: empty one-CTA kernels back to back on the GPU's timeline.
    empty = module.kernel("calibrate_empty")
    count = 200
    ms = _time_ms(torch, empty.plan(out=one).launch, busy, count)
    launch_us = ms * 1e3 / count
    raw["calibrate_empty"] = {"launches": count, "ms": ms}

    # The rate CTAs start at: 2^20 empty CTAs in one launch.
    ctas = 1 << 20
    many = torch.empty(ctas, dtype=torch.float32, device="cuda")
    ms = _time_ms(torch, empty.plan(out=many).launch, busy)
    cta_rate = ctas / max(ms * 1e-3 - launch_us * 1e-6, 1e-9) / 1e9
    raw["calibrate_empty_ctas"] = {"ctas": ctas, "ms": ms}

    # A kernel's cold start and drain: one wave of the copy kernel (a
    # 16-byte vector per thread) from cold memory, the big copy having just
    # evicted L2. What its launch, one dependent load and its bytes at the
    # copy bandwidth do not explain is the wait for the first loads and the
    # drain of the last stores.
    threads = int(copy.attr("ctas_per_sm")) * sms * copy.block[0]
    xs = torch.ones(threads * 4, dtype=torch.float32, device="cuda")
    ys = torch.empty_like(xs)
    ms = _time_ms(torch, copy.plan(x=xs, y=ys).launch, big.launch)
    wave_bytes = 2 * xs.numel() * 4
    latency_us = raw["calibrate_latency"]["dependent_load_us"]
    kernel_latency_us = max(ms * 1e3 - launch_us - latency_us -
                            wave_bytes / (dram * 1e6), 0.0)
    raw["calibrate_copy_wave"] = {"bytes": wave_bytes, "ms": ms}
    del x, y, table

    today = datetime.datetime.now(datetime.timezone.utc)
    return {
        "attnc_device_version": 1,
        "name": props.name,
        "source": f"calibrated by attnc.calibrate {__version__} on "
                  f"{props.name}, {today:%Y-%m-%d %H:%M} UTC",
        "sm_count": sms,
        "l2_bytes": float(getattr(props, "L2_cache_size", 50 << 20)),
        "max_threads_per_sm": getattr(props, "max_threads_per_multi_processor",
                                      2048),
        "registers_per_sm": getattr(props, "regs_per_multiprocessor", 65536),
        "shared_memory_per_sm": getattr(
            props, "shared_memory_per_multiprocessor", 233472),
        "max_ctas_per_sm": 32,
        "mma_sync_tflops": mma_sync,
        "wgmma_tflops": wgmma[256],
        "wgmma_n128_tflops": wgmma[128],
        "wgmma_n64_tflops": wgmma[64],
        "softmax_gelems": softmax,
        "shared_tbps": shared,
        "dram_tbps": dram,
        "reduce_tbps": reduce,
        "dram_latency_us": latency_us,
        "kernel_latency_us": kernel_latency_us,
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
    for key in ("mma_sync_tflops", "wgmma_tflops", "wgmma_n128_tflops",
                "wgmma_n64_tflops", "softmax_gelems",
                "shared_tbps", "dram_tbps", "reduce_tbps", "dram_latency_us",
                "kernel_latency_us", "launch_us", "cta_launch_gps"):
        print(f"  {key:18s} {device[key]:10.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
