"""The Python runtime API launching through the test build's libcuda
stand-in (test/Runtime/FakeCuda.cpp), each case in a child process: a
loaded driver stays loaded for its process."""

import os
import subprocess
import sys
import unittest
from pathlib import Path

from _support import REPO, child_pythonpath


def fake_driver() -> Path | None:
    """The test build's libcuda stand-in (test/Runtime/FakeCuda.cpp)."""
    if os.environ.get("ATTNC_FAKE_CUDA"):
        return Path(os.environ["ATTNC_FAKE_CUDA"])
    runtime = Path(os.environ.get("ATTNC_RUNTIME_LIB",
                                  REPO / "build" / "lib" /
                                  "libattnc_runtime.so"))
    fake = runtime.parent / "libattnc-fake-cuda.so"
    return fake if fake.is_file() else None


# Runs in a child process: a loaded driver stays loaded for the process.
_FAKE_DRIVER_CHILD = """
import atexit, shutil, struct, sys, tempfile
from pathlib import Path
from _support import INPUTS, FakeDType, FakeTensor
import attnc
BF16, I8 = FakeDType("bfloat16"), FakeDType("int8")
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp)
(Path(tmp) / "decode_fwd.cubin").write_text("not a real cubin")
text = (INPUTS / "persistent" / "manifest.json").read_text()
d = attnc.Module.from_json(text, tmp)["decode_fwd"]
args = dict(q=FakeTensor(0x100000, (2, 8, 1, 128), BF16),
            k=FakeTensor(0x100000000000, (2, 2, 1000, 128), BF16),
            v=FakeTensor(0x200000000000, (2, 2, 1000, 128), BF16),
            o=FakeTensor(0x300000, (2, 8, 1, 128), BF16),
            partial=(0x400000, 1 << 20),
            counters=FakeTensor(0x600000, (32,), I8), scale=0.125)
plan = d.plan(**args)  # num_sms from the (fake) device: 132
print("grid", plan.grid)
print("partial", plan.workspace_bytes("partial"))
for i in (4, 5):
    words = struct.unpack("<16Q", plan.param_bytes(i))
    print("map", i, hex(words[0]), words[1], hex(words[15]))
plan.launch(stream=0x5151)
print("launched")
"""


_FALLBACK_CHILD = """
import atexit, shutil, sys, tempfile
from pathlib import Path
from _support import INPUTS, FakeDType, FakeTensor
import attnc
BF16, F32 = FakeDType("bfloat16"), FakeDType("float32")
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp)
for name in ("attn", "attn_fallback"):
    (Path(tmp) / (name + ".cubin")).write_text("not a real cubin")
text = (INPUTS / "fallback" / "manifest.json").read_text()
attn = attnc.Module.from_json(text, tmp)["attn"]
args = dict(k=FakeTensor(0x1000000, (2, 2, 500, 64), BF16),
            v=FakeTensor(0x2000000, (2, 2, 500, 64), BF16),
            o=FakeTensor(0x3000000, (2, 8, 300, 64), BF16),
            lse=FakeTensor(0x4000000, (2, 8, 300), F32), scale=0.125)
for q in (FakeTensor(0x100000, (2, 8, 300, 64), BF16),
          FakeTensor(0x100000, (2, 8, 300, 64), BF16,
                     (8 * 300 * 68, 300 * 68, 68, 1))):
    plan = attn.plan(q, **args)
    print(plan.kernel.name, plan.grid, len(plan.kernel.tensormaps))
    plan.launch(stream=0x5151)
print("launched")
"""

@unittest.skipUnless(fake_driver(), "needs the test build's "
                                    "libattnc-fake-cuda.so")
class FakeDriverTest(unittest.TestCase):
    def run_child(self, code):
        """The lines CODE prints in a child process whose libcuda is the
        fake driver."""
        env = dict(os.environ, ATTNC_LIBCUDA=str(fake_driver()),
                   PYTHONPATH=child_pythonpath())
        child = subprocess.run([sys.executable, "-c", code], env=env,
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(child.returncode, 0, child.stderr)
        return child.stdout.splitlines()

    def test_tensormaps_encoded_and_launched(self):
        self.assertEqual(self.run_child(_FAKE_DRIVER_CHILD), [
            "grid (132, 1, 1)",
            f"partial {132 * 8 * 128 * 4}",
            "map 4 0x100000000000 4 0xa77c",
            "map 5 0x200000000000 4 0xa77c",
            "launched",
        ])

    def test_fallback_planned_and_launched(self):
        self.assertEqual(self.run_child(_FALLBACK_CHILD), [
            "attn (3, 8, 2) 3",
            "attn_fallback (5, 8, 2) 0",
            "launched",
        ])


if __name__ == "__main__":
    unittest.main()
