"""Builds the three C ABI libraries and bundles them into the wheel (evtx_twin/_lib/).

The package lives inside the evtx-twin repository and is built from it: cargo builds
libevtx_rs (rust/capi) and libevtx_ref (compare/reference, the reference shim) into the
workspace's target/release, and the `ziglang` build dependency (Zig 0.15.2 from PyPI) runs
`zig build zig`, which builds libevtx_zig into a prefix under target/python. Both tools keep
their own caches, so a rebuild with nothing changed only copies files.

Portability (PERF.md P7): Zig builds for the host CPU unless told, so libevtx_zig is built for
ZIG_CPU (baseline x86-64: SSE2, no SSE4/AVX), not for the build machine; the Rust libraries are
baseline x86-64 (cargo's default, with runtime-dispatched SSE4.2/AVX kernels in memchr, simdutf8
and crc32fast) unless RUSTFLAGS asks for more, which the build refuses. The wheel's platform tag
is manylinux_2_N for the newest glibc symbol version the libraries need (objdump -T), and
_lib/build.json records both, for the tests and for anyone asking what a wheel was built for.
"""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - wheel is a build requirement
    bdist_wheel = None

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIBS = ("libevtx_rs.so", "libevtx_ref.so", "libevtx_zig.so")
#: The C helper of `records()` (evtx_twin/_records.c; `_ffi.RECORDS_LIBRARY`).
RECORDS = "libevtx_twin_records.so"
# The Zig CPU model of libevtx_zig: the architecture's baseline (x86-64: SSE2), what manylinux
# promises and what the Rust libraries already are; x86-64-v2 would save 0.2 % of the engine's
# instructions and lose CPUs without SSE4.2/POPCNT (QEMU's default model among them), PERF.md P7.
X86_64 = platform.machine() in ("x86_64", "AMD64")
ZIG_CPU = "baseline"
# What build_libraries found: the manylinux tag's glibc version, once the libraries exist.
BUILT = {}


def run(command, **kwargs):
    print("evtx_twin build:", " ".join(str(c) for c in command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, **kwargs)


def build_libraries(destination: Path) -> None:
    if not (ROOT / "Cargo.toml").is_file() or not (ROOT / "build.zig").is_file():
        raise SystemExit("evtx_twin builds only from inside the evtx-twin repository")
    cargo = os.environ.get("CARGO", "cargo")
    refuse_native_rustflags()
    # The same package set as build.zig's cargo step: another set unifies features differently
    # and makes cargo rebuild the libraries on every switch between `make build` and this.
    run([cargo, "build", "--locked", "--release",
         "-p", "evtx-rs", "-p", "evtx-capi", "-p", "evtx-ref"])
    prefix = ROOT / "target" / "python" / "zig-prefix"
    run([sys.executable, "-m", "ziglang", "build", "zig", "-Doptimize=ReleaseFast",
         f"-Dcpu={ZIG_CPU}", "--prefix", str(prefix)])
    destination.mkdir(parents=True, exist_ok=True)
    sources = {
        "libevtx_rs.so": ROOT / "target" / "release" / "libevtx_rs.so",
        "libevtx_ref.so": ROOT / "target" / "release" / "libevtx_ref.so",
        "libevtx_zig.so": prefix / "lib" / "libevtx_zig.so",
    }
    for name in LIBS:
        shutil.copyfile(sources[name], destination / name)
    build_records(destination / RECORDS)
    glibc = newest_glibc([destination / name for name in LIBS + (RECORDS,)])
    BUILT["glibc"] = glibc
    info = {"zig_cpu": ZIG_CPU, "rust_cpu": "x86-64" if X86_64 else "baseline",
            "glibc": ".".join(map(str, glibc or ()))}
    (destination / "build.json").write_text(json.dumps(info, indent=1) + "\n")


def build_records(output: Path) -> None:
    """evtx_twin/_records.c as a plain shared library (loaded by `ctypes.PyDLL`, not imported),
    by the ziglang build dependency's C compiler: CPython's stable ABI (Py_LIMITED_API 3.9, the
    headers of the Python running the build), ZIG_CPU, and no library but the interpreter's
    symbols, resolved when it is loaded. So the wheel stays `py3-none` (PERF.md P17)."""
    include = sysconfig.get_paths()["include"]
    target = ["-target", "x86_64-linux-gnu"] if X86_64 else []
    run([sys.executable, "-m", "ziglang", "cc", *target, f"-mcpu={ZIG_CPU}", "-O2", "-shared",
         "-fPIC", "-Wall", "-Wextra", "-Werror", f"-I{include}", "-o", str(output.resolve()),
         str(HERE / "evtx_twin" / "_records.c")])


def refuse_native_rustflags() -> None:
    """A target-cpu in RUSTFLAGS would make the Rust libraries as unportable as a native Zig
    build; the wheel promises baseline x86-64, so the build stops instead of lying."""
    for name in ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS"):
        flags = os.environ.get(name, "")
        if "target-cpu" in flags or "target-feature" in flags:
            raise SystemExit(f"evtx_twin builds portable libraries: unset {name} ({flags!r})")


def newest_glibc(libraries):
    """The newest GLIBC_x.y symbol version the libraries need (objdump -T), or None when objdump
    is missing (the wheel then keeps the plain linux tag)."""
    objdump = shutil.which("objdump")
    if objdump is None:
        return None
    versions = set()
    for library in libraries:
        dynamic = subprocess.run([objdump, "-T", str(library)], check=True, capture_output=True,
                                 text=True).stdout
        versions.update(re.findall(r"\bGLIBC_(\d+)\.(\d+)", dynamic))
    return max((int(a), int(b)) for a, b in versions) if versions else None


class BuildWithLibraries(build_py):
    def run(self):
        super().run()
        build_libraries(Path(self.build_lib) / "evtx_twin" / "_lib")


class BinaryDistribution(Distribution):
    """The wheel holds native libraries: platform-specific, Python-version-independent."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildWithLibraries}
if bdist_wheel is not None:

    class PlatformWheel(bdist_wheel):
        def get_tag(self):
            _, _, plat = super().get_tag()
            glibc = BUILT.get("glibc")
            if plat == "linux_x86_64" and X86_64 and glibc:
                # Portable libraries (ZIG_CPU, baseline Rust) linked only against libc, libgcc_s
                # and ld-linux, whose symbol versions bound the glibc the wheel needs.
                plat = "manylinux_{}_{}_x86_64".format(*glibc)
            # ctypes only: any Python 3, no CPython ABI.
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = PlatformWheel

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
