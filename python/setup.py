"""Builds the three C ABI libraries and bundles them into the wheel (evtx_twin/_lib/).

The package lives inside the evtx-twin repository and is built from it: cargo builds
libevtx_rs (rust/capi) and libevtx_ref (compare/reference, the reference shim) into the
workspace's target/release, and the `ziglang` build dependency (Zig 0.15.2 from PyPI) runs
`zig build zig`, which builds libevtx_zig into a prefix under target/python. Both tools keep
their own caches, so a rebuild with nothing changed only copies files.
"""

import os
import shutil
import subprocess
import sys
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


def run(command, **kwargs):
    print("evtx_twin build:", " ".join(str(c) for c in command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, **kwargs)


def build_libraries(destination: Path) -> None:
    if not (ROOT / "Cargo.toml").is_file() or not (ROOT / "build.zig").is_file():
        raise SystemExit("evtx_twin builds only from inside the evtx-twin repository")
    cargo = os.environ.get("CARGO", "cargo")
    # The same package set as build.zig's cargo step: another set unifies features differently
    # and makes cargo rebuild the libraries on every switch between `make build` and this.
    run([cargo, "build", "--locked", "--release", "-p", "evtx-rs", "-p", "evtx-capi", "-p", "evtx-ref"])
    prefix = ROOT / "target" / "python" / "zig-prefix"
    run([sys.executable, "-m", "ziglang", "build", "zig", "-Doptimize=ReleaseFast",
         "--prefix", str(prefix)])
    destination.mkdir(parents=True, exist_ok=True)
    sources = {
        "libevtx_rs.so": ROOT / "target" / "release" / "libevtx_rs.so",
        "libevtx_ref.so": ROOT / "target" / "release" / "libevtx_ref.so",
        "libevtx_zig.so": prefix / "lib" / "libevtx_zig.so",
    }
    for name in LIBS:
        shutil.copyfile(sources[name], destination / name)


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
            _, _, platform = super().get_tag()
            # ctypes only: any Python 3, no CPython ABI.
            return "py3", "none", platform

    cmdclass["bdist_wheel"] = PlatformWheel

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
