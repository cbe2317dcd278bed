"""The bundled libraries run on any x86-64-v2 CPU (PERF.md P7): the wheel must not carry code
for the build machine's CPU, which would die with SIGILL on an older one. objdump's disassembly
is the oracle, not the build's own record of what it asked for."""

import json
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

import evtx_twin

LIB = Path(evtx_twin.__file__).resolve().parent / "_lib"
NAMES = ("libevtx_rs.so", "libevtx_ref.so", "libevtx_zig.so")

# Registers and mnemonics beyond x86-64-v2: AVX and later (VEX/EVEX forms all start with `v`,
# ymm/zmm/k registers), BMI1/BMI2, LZCNT and MOVBE (v3). `tzcnt` is left out: LLVM emits its
# encoding (`rep bsf`) at every level, and CPUs without BMI1 run it as `bsf`.
BEYOND_V2_REGISTER = re.compile(r"%(?:[yz]mm\d+|k[0-7]\b)")
BEYOND_V2_MNEMONIC = re.compile(
    r"^(?:v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx"
    r"|lzcnt|movbe)$"
)
# Functions the Rust crates compile for AVX2/AVX-512 behind a runtime CPU check
# (memchr, simdutf8, crc32fast): they run only where the CPU has the feature.
DISPATCHED = re.compile(r"avx|pclmul")


def objdump():
    found = shutil.which("objdump")
    if found is None:
        pytest.skip("objdump (binutils) is not installed")
    return found


def beyond_v2(library):
    """{function: first offending instruction} over the library's disassembly."""
    text = subprocess.run([objdump(), "-d", "--no-show-raw-insn", str(library)], check=True,
                          capture_output=True, text=True).stdout
    found = {}
    function = None
    for line in text.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            function = header.group(1)
            continue
        parts = line.split("\t")
        if len(parts) < 2 or function in found:
            continue
        mnemonic = parts[1].split()[0] if parts[1].split() else ""
        operands = parts[2] if len(parts) > 2 else ""
        if BEYOND_V2_MNEMONIC.match(mnemonic) or BEYOND_V2_REGISTER.search(operands):
            found[function] = line.strip()
    return found


def test_the_build_records_the_portable_cpu_levels():
    info = json.loads((LIB / "build.json").read_text())
    assert info["zig_cpu"] == "x86_64_v2"
    assert info["rust_cpu"] == "x86-64"


def test_the_zig_library_has_no_instruction_beyond_x86_64_v2():
    # Zig has no runtime dispatch: one AVX instruction means the whole library was built for a
    # newer CPU (a native build here has thousands, AVX-512 among them).
    assert beyond_v2(LIB / "libevtx_zig.so") == {}


@pytest.mark.parametrize("name", ["libevtx_rs.so", "libevtx_ref.so"])
def test_the_rust_libraries_use_newer_instructions_only_behind_runtime_checks(name):
    found = beyond_v2(LIB / name)
    assert {f: i for f, i in found.items() if not DISPATCHED.search(f)} == {}


def glibc_versions(library):
    dynamic = subprocess.run([objdump(), "-T", str(library)], check=True, capture_output=True,
                             text=True).stdout
    return {(int(a), int(b)) for a, b in re.findall(r"\bGLIBC_(\d+)\.(\d+)", dynamic)}


def wheel_tags():
    """The Tag lines of the installed wheel's WHEEL file."""
    dist = next(Path(sysconfig.get_paths()["purelib"]).glob("evtx_twin-*.dist-info"))
    return [line.split(": ", 1)[1] for line in (dist / "WHEEL").read_text().splitlines()
            if line.startswith("Tag: ")]


def test_the_manylinux_tag_covers_every_glibc_symbol_version():
    newest = max(v for name in NAMES for v in glibc_versions(LIB / name))
    tags = wheel_tags()
    assert tags == [f"py3-none-manylinux_{newest[0]}_{newest[1]}_x86_64"]
    assert json.loads((LIB / "build.json").read_text())["glibc"] == f"{newest[0]}.{newest[1]}"
