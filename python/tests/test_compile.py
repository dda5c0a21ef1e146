"""CPU tests of attnc.compile with fake attnc-compile executables."""

import os
import shutil
import stat
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from _support import INPUTS

import attnc


def fake_compiler(directory, body):
    """An executable Python script named attnc-compile in DIRECTORY."""
    path = Path(directory) / "attnc-compile"
    path.write_text(f"#!{sys.executable}\nimport shutil, sys\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


class CompileTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_failure_carries_stderr(self):
        exe = fake_compiler(self.tmp, "sys.stderr.write('in.mlir:3:5: error: "
                                      "bad matmul\\n'); sys.exit(3)")
        with mock.patch.dict(os.environ, {"ATTNC_COMPILE": exe}):
            with self.assertRaises(attnc.CompileError) as e:
                attnc.compile("in.mlir", Path(self.tmp) / "out")
        err = e.exception
        self.assertIsInstance(err, attnc.AttncError)
        self.assertEqual(err.returncode, 3)
        self.assertIn("in.mlir:3:5: error: bad matmul", err.stderr)
        self.assertIn("exit code 3", str(err))
        self.assertIn("bad matmul", str(err))
        self.assertEqual(err.cmd[1:], ["in.mlir", "-o",
                                       str(Path(self.tmp) / "out"),
                                       "--chip=sm_90a"])

    def test_success_loads_the_module(self):
        # The fake copies a fixture manifest into the -o directory and checks
        # the arguments it was given.
        body = (f"args = sys.argv[1:]\n"
                f"assert args[1] == '-o' and '--chip=sm_100a' in args, args\n"
                f"assert args[-1] == '--report', args\n"
                f"shutil.copytree({str(INPUTS / 'fusion')!r}, args[2])")
        exe = fake_compiler(self.tmp, body)
        out = Path(self.tmp) / "out"
        with mock.patch.dict(os.environ, {"ATTNC_COMPILE": exe}):
            m = attnc.compile("in.mlir", out, chip="sm_100a",
                              extra_args=["--report"])
        self.assertEqual(m.name, "bias_dropout")
        self.assertEqual(attnc.compile.__module__, "attnc.compiler")

    def test_found_on_path(self):
        exe = fake_compiler(self.tmp, "sys.exit(0)")
        env = {"PATH": self.tmp}
        with mock.patch.dict(os.environ, env):
            os.environ.pop("ATTNC_COMPILE", None)
            self.assertEqual(attnc.find_compiler(), exe)

    def test_found_beside_the_package(self):
        # Installed into a prefix (a venv, a CMake install): its bin/.
        prefix = Path(self.tmp)
        (prefix / "bin").mkdir()
        exe = fake_compiler(str(prefix / "bin"), "sys.exit(0)")
        with mock.patch.dict(os.environ, {"PATH": ""}), \
                mock.patch.object(sys, "prefix", str(prefix)):
            os.environ.pop("ATTNC_COMPILE", None)
            self.assertEqual(attnc.find_compiler(), exe)

    def test_not_found_says_how_to_get_it(self):
        with mock.patch.dict(os.environ, {"PATH": ""}), \
                mock.patch.object(sys, "prefix", self.tmp), \
                mock.patch("attnc.compiler.source_tree", lambda: None):
            os.environ.pop("ATTNC_COMPILE", None)
            with self.assertRaises(attnc.CompileError) as e:
                attnc.find_compiler()
        self.assertIn("cannot find attnc-compile (not on PATH; looked at "
                      f"{Path(self.tmp) / 'bin' / 'attnc-compile'}",
                      str(e.exception))
        self.assertIn("`make` in a checkout builds build/bin/attnc-compile",
                      str(e.exception))

    def test_missing_executable(self):
        missing = str(Path(self.tmp) / "nope")
        with mock.patch.dict(os.environ, {"ATTNC_COMPILE": missing}):
            with self.assertRaises(attnc.CompileError) as e:
                attnc.compile("in.mlir", self.tmp)
        self.assertIn(f"cannot run {missing}", str(e.exception))


if __name__ == "__main__":
    unittest.main()
