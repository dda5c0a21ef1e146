"""GPU smoke test of the runtime: load, launch, CUDA graph replay.

Needs torch with a CUDA device and a module compiled by attnc-compile in
ATTNC_TEST_MODULE_DIR; skipped otherwise. Numerics are tested elsewhere: here
each kernel runs on random inputs with its outputs poisoned with NaN first,
and must overwrite them; a graph replay must then reproduce the direct
launch bit for bit.

    ATTNC_TEST_MODULE_DIR=out ATTNC_RUNTIME_LIB=build/lib/libattnc_runtime.so \
        python3 -m unittest discover -s python/tests/gpu -t python/tests
"""

import os
import unittest
from pathlib import Path

import _support  # noqa: F401  (puts python/ on sys.path)

import attnc

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    torch, HAVE_GPU = None, False

MODULE_DIR = os.environ.get("ATTNC_TEST_MODULE_DIR")

# Sizes that are not multiples of any tile; H a multiple of Hkv for GQA.
SYMBOLS = {"B": 2, "H": 4, "Hkv": 2, "Sq": 100, "Skv": 130, "S": 100,
           "T": 37}


def torch_dtype(p):
    return getattr(torch, attnc._tensors.TORCH_DTYPES[p.dtype])


def shape_of(p, symbols):
    return [d if isinstance(d, int) else symbols.setdefault(d, 64)
            for d in p.shape]


def make_inputs(kernel, symbols):
    args = {}
    for p in kernel.inputs:
        shape = shape_of(p, symbols)
        dtype = torch_dtype(p)
        if dtype.is_floating_point:
            t = torch.randn(shape, device="cuda").to(dtype)
        elif dtype == torch.bool:
            t = torch.rand(shape, device="cuda") > 0.5
        else:
            t = torch.randint(0, 2, shape, device="cuda", dtype=dtype)
        args[p.name] = t
    for p in kernel.scalars:
        args[p.name] = 0.1 if p.dtype.startswith("f") else 1
    return args


def make_outputs(kernel, symbols):
    outs = {p.name: torch.empty(shape_of(p, symbols), dtype=torch_dtype(p),
                                device="cuda") for p in kernel.outputs}
    for o in outs.values():
        poison(o)
    return outs


def poison(t):
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    else:
        t.fill_(-1)


@unittest.skipUnless(HAVE_GPU, "needs torch and a CUDA GPU")
@unittest.skipUnless(MODULE_DIR, "set ATTNC_TEST_MODULE_DIR to a compiled "
                                 "module directory")
class RuntimeGPUTest(unittest.TestCase):
    def setUp(self):
        self.module = attnc.load(Path(MODULE_DIR))
        self.module.load_gpu()

    def test_launch_and_graph_replay(self):
        for kernel in self.module:
            with self.subTest(kernel=kernel.name):
                torch.manual_seed(0)
                symbols = dict(SYMBOLS)
                args = make_inputs(kernel, symbols)
                named = make_outputs(kernel, symbols)
                outs = kernel(**args, **named)
                outs = outs if isinstance(outs, tuple) else (outs,)
                torch.cuda.synchronize()
                for p, o in zip(kernel.outputs, outs):
                    if o.dtype.is_floating_point:
                        self.assertFalse(torch.isnan(o).any().item(),
                                         f"{p.name} has NaN")
                expected = [o.clone() for o in outs]
                for o in outs:
                    poison(o)
                stream = torch.cuda.Stream()
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    with attnc.Graph() as graph:
                        kernel(**args, **named)  # recorded, not run
                    graph.replay()
                stream.synchronize()
                for p, e, o in zip(kernel.outputs, expected, outs):
                    self.assertTrue(torch.equal(e, o),
                                    f"{p.name}: replay differs from launch")

    def test_outputs_allocated_with_torch(self):
        kernel = next(iter(self.module))
        symbols = dict(SYMBOLS)
        outs = kernel(**make_inputs(kernel, symbols))
        outs = outs if isinstance(outs, tuple) else (outs,)
        for p, o in zip(kernel.outputs, outs):
            self.assertEqual(list(o.shape), shape_of(p, symbols))
            self.assertEqual(o.dtype, torch_dtype(p))
        torch.cuda.synchronize()

    def test_repeated_calls_reuse_their_plan(self):
        """A call with the same tensors (pointers, shapes, strides, dtypes)
        and scalars launches the plan of the first; other tensors get their
        own plans (at most PLAN_CACHE_SIZE kept, none holding a tensor);
        calls recorded into a Graph plan afresh; and a reused plan computes
        from what the tensors hold now."""
        kernel = next(iter(self.module))
        symbols = dict(SYMBOLS)
        torch.manual_seed(1)
        args = make_inputs(kernel, symbols)
        named = make_outputs(kernel, symbols)
        # A workspace the call leaves out (a persistent kernel's tile
        # counter) is made anew by each call, at whatever address the
        # allocator gives: other tensors, so a plan of its own. The calls
        # that must share a plan pass the kernel's workspaces, made once.
        given = {**args, **named}
        kernel._allocate(given, None, outputs=False)
        named.update({p.name: given[p.name] for p in kernel.workspaces})
        kernel._plans.clear()
        first = kernel(**args, **named)
        first = first if isinstance(first, tuple) else (first,)
        expected = [o.clone() for o in first]
        self.assertEqual(len(kernel._plans), 1)
        plan = next(iter(kernel._plans.values()))
        self.assertIsNone(plan.arguments)
        for o in first:
            poison(o)
        kernel(**args, **named)
        torch.cuda.synchronize()
        self.assertEqual(list(kernel._plans.values()), [plan])
        for p, e, o in zip(kernel.outputs, expected, first):
            self.assertTrue(torch.equal(e, o), f"{p.name}: reused plan")
        # New outputs (new pointers: all kept alive, or the allocator hands
        # the same blocks out again): a plan of their own, same results.
        kept = []
        for n in range(kernel.PLAN_CACHE_SIZE + 2):
            other = make_outputs(kernel, symbols)
            kept.append(other)
            outs = kernel(**args, **other)
            outs = outs if isinstance(outs, tuple) else (outs,)
            torch.cuda.synchronize()
            for p, e, o in zip(kernel.outputs, expected, outs):
                self.assertTrue(torch.equal(e, o), f"{p.name}: call {n}")
        self.assertEqual(len(kernel._plans), kernel.PLAN_CACHE_SIZE)
        # Inputs changed in place: the reused plan reads the new values,
        # as a fresh plan does.
        kernel(**args, **named)
        for p in kernel.inputs:
            t = args[p.name]
            if t.dtype.is_floating_point:
                t.mul_(0.5)
        kernel(**args, **named)
        reused = [o.clone() for o in first]
        fresh = make_outputs(kernel, symbols)
        kernel.plan(**args, **fresh).launch()
        torch.cuda.synchronize()
        for p, r in zip(kernel.outputs, reused):
            self.assertTrue(torch.equal(r, fresh[p.name]), f"{p.name}: input "
                            "changed in place")
        # Recorded calls keep their own plans (and tensors) in the graph.
        cached = dict(kernel._plans)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            with attnc.Graph() as graph:
                kernel(**args, **named)
        stream.synchronize()
        self.assertEqual(kernel._plans, cached)
        self.assertIsNotNone(graph._keep[-1].arguments)

    def test_validation_error_on_gpu_tensors(self):
        kernel = next(iter(self.module))
        args = make_inputs(kernel, dict(SYMBOLS))
        first = kernel.inputs[0]
        wrong = torch.float64 if args[first.name].dtype != torch.float64 \
            else torch.float32
        args[first.name] = args[first.name].to(wrong)
        with self.assertRaises(attnc.AttncError) as e:
            kernel(**args)
        self.assertEqual(e.exception.status, "ATTNC_ERROR_VALIDATION")
        self.assertIn(f"{first.name} has dtype", str(e.exception))


if __name__ == "__main__":
    unittest.main()
