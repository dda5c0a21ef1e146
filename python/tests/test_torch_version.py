"""attnc.torch refuses, at import, a torch older than the custom-op API it
needs (the wheel pins no torch). Runs a child interpreter whose `torch` is a
stand-in reporting an old version (no real torch needed)."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from _support import child_pythonpath


def import_with_torch(version: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as tmp:
        fake = Path(tmp) / "torch"
        fake.mkdir()
        (fake / "__init__.py").write_text(f"__version__ = {version!r}\n")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [tmp, child_pythonpath()]))
        return subprocess.run([sys.executable, "-c", "import attnc.torch"],
                              env=env, capture_output=True, text=True)


class TorchVersionTest(unittest.TestCase):
    def test_old_torch_refused_with_the_reason(self):
        out = import_with_torch("2.3.1+cu121")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("ImportError: attnc.torch needs PyTorch >= 2.4 "
                      "(torch.library.custom_op); this is torch 2.3.1+cu121",
                      out.stderr)

    def test_version_parsing(self):
        # Development and local builds parse too: 2.11.0a0+git, 2.4.0+cu124.
        for version, ok in (("2.11.0a0+gitabc", True), ("2.4.0+cu124", True),
                            ("1.13.1", False), ("2.3.0", False)):
            out = import_with_torch(version)
            refused = "attnc.torch needs PyTorch >= 2.4" in out.stderr
            self.assertEqual(refused, not ok, (version, out.stderr[-300:]))


if __name__ == "__main__":
    unittest.main()
