#!/usr/bin/env python3
"""Builds attnc's Python wheel (``make wheel``): the pure-Python package,
libattnc_runtime.so and the prebuilt kernel library for sm_90a.

    python3 scripts/build_wheel.py [--build-dir build] [--out dist]
                                   [--kernels DIR] [--tag manylinux_2_34_x86_64]

The kernel library is compiled with the build's attnc-compile into
BUILD/wheel/kernels (``attnc.variants``: the matrix of docs/pytorch.md)
unless --kernels names one already compiled. The runtime library must fit
the platform tag (scripts/check_wheel_abi.py) or no wheel is written.

The wheel is py3-none-<tag>: the runtime is loaded through ctypes, so one
wheel serves every CPython 3 and every torch; it has no install
dependencies (``pip install --no-index`` works offline). It is written here
with the standard library (PEP 427: a zip with a .dist-info directory whose
RECORD hashes every file); entries are sorted and dated 1980-01-01, so the
same inputs give the same bytes.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import check_wheel_abi  # noqa: E402

NAME = "attnc"
SUMMARY = ("Ahead-of-time attention kernel compiler built on MLIR: runtime "
           "and prebuilt sm_90a kernels")
REQUIRES_PYTHON = ">=3.10"
DATE = (1980, 1, 1, 0, 0, 0)


def project_version() -> str:
    """CMakeLists.txt's project version, which attnc.__version__ must
    equal."""
    cmake = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(attnc\s+VERSION\s+([0-9.]+)", cmake)
    init = (ROOT / "python" / "attnc" / "__init__.py").read_text()
    p = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    if not m or not p:
        sys.exit("build_wheel: no version in CMakeLists.txt or "
                 "python/attnc/__init__.py")
    if m.group(1) != p.group(1):
        sys.exit(f"build_wheel: CMakeLists.txt says {m.group(1)}, "
                 f"attnc.__version__ says {p.group(1)}")
    return m.group(1)


def compile_kernels(build: Path) -> Path:
    out = build / "wheel" / "kernels"
    if out.exists():
        shutil.rmtree(out)
    compiler = build / "bin" / "attnc-compile"
    if not compiler.is_file():
        sys.exit(f"build_wheel: {compiler} missing (make build first)")
    os.environ["ATTNC_COMPILE"] = str(compiler)
    sys.path.insert(0, str(ROOT / "python"))
    import attnc.variants
    print(f"build_wheel: compiling the kernel library into {out}",
          flush=True)
    attnc.variants.build(out)
    return out


def package_files(runtime: Path, kernels: Path) -> list[tuple[str, Path]]:
    """(name in the wheel, file here), sorted."""
    files = []
    for src in sorted((ROOT / "python" / "attnc").glob("*.py")):
        files.append((f"attnc/{src.name}", src))
    files.append(("attnc/libattnc_runtime.so", runtime))
    for src in sorted(kernels.rglob("*")):
        if src.is_file():
            files.append((f"attnc/kernels/{src.relative_to(kernels)}", src))
    return files


def metadata(version: str) -> str:
    readme = (ROOT / "docs" / "pytorch.md").read_text()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
            f"Summary: {SUMMARY}\nRequires-Python: {REQUIRES_PYTHON}\n"
            f"Classifier: Programming Language :: Python :: 3\n"
            f"Classifier: Operating System :: POSIX :: Linux\n"
            f"Classifier: Environment :: GPU :: NVIDIA CUDA\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


def wheel_file(tag: str) -> str:
    return ("Wheel-Version: 1.0\nGenerator: attnc scripts/build_wheel.py\n"
            f"Root-Is-Purelib: false\nTag: py3-none-{tag}\n")


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return f"{name},sha256={digest.rstrip(b'=').decode()},{len(data)}"


def write_wheel(path: Path, files: list[tuple[str, Path]], version: str,
                tag: str) -> None:
    info = f"{NAME}-{version}.dist-info"
    entries = [(name, src.read_bytes(),
                0o755 if os.access(src, os.X_OK) and name.endswith(".so")
                else 0o644) for name, src in files]
    entries.append((f"{info}/METADATA", metadata(version).encode(), 0o644))
    entries.append((f"{info}/WHEEL", wheel_file(tag).encode(), 0o644))
    record = [record_line(n, d) for n, d, _ in entries]
    record.append(f"{info}/RECORD,,")
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(),
                    0o644))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in entries:
            zi = zipfile.ZipInfo(name, DATE)
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    path.write_bytes(buf.getvalue())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="build_wheel.py")
    ap.add_argument("--build-dir", default=str(ROOT / "build"))
    ap.add_argument("--out", default=str(ROOT / "dist"))
    ap.add_argument("--kernels", help="a compiled kernel library to ship "
                    "(default: compile attnc.variants' matrix)")
    ap.add_argument("--tag", default="manylinux_2_34_x86_64")
    a = ap.parse_args(argv)
    build = Path(a.build_dir).resolve()
    version = project_version()
    runtime = build / "lib" / "libattnc_runtime.so"
    if not runtime.is_file():
        sys.exit(f"build_wheel: {runtime} missing (make build first)")
    if check_wheel_abi.main([str(runtime), "--tag", a.tag]) != 0:
        sys.exit(f"build_wheel: {runtime} does not fit {a.tag}")
    kernels = Path(a.kernels) if a.kernels else compile_kernels(build)
    if not (kernels / "index.json").is_file():
        sys.exit(f"build_wheel: {kernels}/index.json missing: not a kernel "
                 f"library (python3 -m attnc.variants --out DIR makes one)")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"{NAME}-*.whl"):
        old.unlink()
    path = out / f"{NAME}-{version}-py3-none-{a.tag}.whl"
    files = package_files(runtime, kernels)
    write_wheel(path, files, version, a.tag)
    size = path.stat().st_size
    print(f"build_wheel: {path} ({len(files)} files, {size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
