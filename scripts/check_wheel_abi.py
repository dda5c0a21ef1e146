#!/usr/bin/env python3
"""Checks that a shared library may ship in a wheel with a manylinux tag.

    python3 scripts/check_wheel_abi.py LIB.so [--tag manylinux_2_34_x86_64]

A manylinux_X_Y wheel promises to load on any x86-64 Linux with glibc X.Y or
newer (PEP 600). The library therefore may only need:

  * shared libraries every such system has: glibc's (libc, libm, libdl,
    libpthread, librt), the dynamic loader, and libgcc_s (auditwheel's
    manylinux policy lists them);
  * glibc symbol versions up to X.Y, libgcc_s versions up to GCC_7.0.0.

attnc adds two rules of its own: libstdc++ is linked statically (no
GLIBCXX/CXXABI requirement, so the wheel does not depend on the C++
runtime of the machine or of torch loaded in the same process), and only
the C API (attnc_*) is exported, so the static libstdc++ and LLVM inside
never interpose on another library's. libgcc stays shared: GCC 12's static
unwinder calls glibc 2.35's _dl_find_object, which would raise the floor
past RHEL 9's glibc 2.34.

Reads the ELF with binutils' readelf. Exit status 0 when the library fits
the tag, 1 with one line per violation otherwise.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

ALLOWED_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
    "libgcc_s.so.1", "ld-linux-x86-64.so.2",
}
# Highest symbol version per prefix a manylinux_2_34 system provides beyond
# glibc itself (libgcc_s of GCC 7 or newer).
GCC_CEILING = (7, 0, 0)
EXPORT_PREFIX = "attnc_"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _readelf(args: list[str], lib: str) -> str:
    try:
        return subprocess.run(["readelf", "-W", *args, lib], check=True,
                              capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("check_wheel_abi: readelf not found (Debian: binutils)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"check_wheel_abi: readelf failed on {lib}: {e.stderr}")


def inspect(lib: str) -> dict:
    """NEEDED libraries, RPATH/RUNPATH, version needs per library and the
    defined dynamic symbols of LIB."""
    dyn = _readelf(["-d"], lib)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn)
    rpaths = re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: "
                        r"\[(.*?)\]", dyn)
    needs: dict[str, list[str]] = {}
    current = None
    for line in _readelf(["-V"], lib).splitlines():
        m = re.search(r"Version: \d+\s+File: (\S+)", line)
        if m:
            current = needs.setdefault(m.group(1), [])
            continue
        m = re.search(r"Name: (\S+)\s+Flags", line)
        if m and current is not None:
            current.append(m.group(1))
    exported = []
    for line in _readelf(["--dyn-syms"], lib).splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) >= 8 and f[0].endswith(":") and f[6] != "UND" and \
                f[4] in ("GLOBAL", "WEAK") and f[3] != "SECTION":
            exported.append(f[7].split("@")[0])
    return {"needed": needed, "rpaths": rpaths, "needs": needs,
            "exported": exported}


def violations(info: dict, glibc: tuple[int, int]) -> list[str]:
    out = []
    for name in info["needed"]:
        if name not in ALLOWED_LIBRARIES:
            why = (" (link libstdc++ statically: -static-libstdc++)"
                   if name.startswith("libstdc++") else "")
            out.append(f"needs {name}, which a manylinux system need not "
                       f"have{why}")
    for path in info["rpaths"]:
        out.append(f"has an RPATH/RUNPATH ({path}): a wheel's library must "
                   f"not look outside itself")
    for lib, versions in info["needs"].items():
        for v in versions:
            prefix, _, number = v.partition("_")
            if prefix == "GLIBC":
                if _version(number) > glibc:
                    out.append(f"needs {v} of {lib}, newer than glibc "
                               f"{glibc[0]}.{glibc[1]}")
            elif prefix == "GCC":
                if _version(number) > GCC_CEILING:
                    out.append(f"needs {v} of {lib}, newer than GCC_7.0.0")
            elif prefix in ("GLIBCXX", "CXXABI"):
                out.append(f"needs {v} of {lib}: attnc links libstdc++ "
                           f"statically and needs no {prefix} version")
            elif lib in ALLOWED_LIBRARIES:
                out.append(f"needs {v} of {lib}, a version manylinux does "
                           f"not promise")
    foreign = sorted(s for s in info["exported"]
                     if not s.startswith(EXPORT_PREFIX))
    if foreign:
        shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
        out.append(f"exports {len(foreign)} symbols besides the C API "
                   f"({shown}): they could interpose on another library's")
    return out


def parse_tag(tag: str) -> tuple[int, int]:
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_x86_64", tag)
    if not m:
        sys.exit(f"check_wheel_abi: {tag!r} is not a manylinux_X_Y_x86_64 "
                 f"tag")
    return int(m.group(1)), int(m.group(2))


def glibc_floor(info: dict) -> tuple[int, int]:
    """The oldest glibc the library loads on."""
    best = (2, 17)
    for versions in info["needs"].values():
        for v in versions:
            if v.startswith("GLIBC_"):
                best = max(best, _version(v[6:])[:2])
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="check_wheel_abi.py")
    ap.add_argument("library")
    ap.add_argument("--tag", default="manylinux_2_34_x86_64")
    a = ap.parse_args(argv)
    glibc = parse_tag(a.tag)
    info = inspect(a.library)
    bad = violations(info, glibc)
    name = a.library.rsplit("/", 1)[-1]
    if bad:
        for b in bad:
            print(f"{name}: {b}")
        print(f"{name}: does not fit {a.tag}")
        return 1
    floor = glibc_floor(info)
    versions = sorted({v for vs in info["needs"].values() for v in vs},
                      key=lambda v: (v.split("_")[0], _version(v.split("_", 1)[1])))
    print(f"{name}: fits {a.tag} (loads from glibc {floor[0]}.{floor[1]}); "
          f"needs {', '.join(info['needed'])}; versions {', '.join(versions)}; "
          f"exports {len(info['exported'])} attnc_* symbols")
    return 0


if __name__ == "__main__":
    sys.exit(main())
