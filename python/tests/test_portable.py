"""The bundled libraries run on any x86-64 CPU (baseline, PERF.md P7): the wheel must not
carry code for the build machine's CPU, which would die with SIGILL on an older one. objdump's
disassembly is the oracle, not the build's own record of what it asked for."""

import json
import platform
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

import evtx_twin

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 levels only")

LIB = Path(evtx_twin.__file__).resolve().parent / "_lib"
NAMES = ("libevtx_rs.so", "libevtx_ref.so", "libevtx_zig.so")

# Registers and mnemonics beyond baseline x86-64 (SSE2): AVX and later (VEX/EVEX forms all start
# with `v`; ymm, zmm and k registers), SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B and
# LAHF/SAHF (x86-64-v2), BMI1/BMI2, LZCNT and MOVBE (v3), PCLMULQDQ and AES. `tzcnt` is left out:
# LLVM emits its encoding (`rep bsf`) at every level, and CPUs without BMI1 run it as `bsf`.
# SSE2's own pextrw, pinsrw, pmaxsw, pmaxub, pminsw and pminub are not matched.
BEYOND_BASELINE_REGISTER = re.compile(r"%(?:[yz]mm\d+|k[0-7]\b)")
BEYOND_BASELINE_MNEMONIC = re.compile(
    r"^(?:v[a-z0-9]+"
    r"|addsubp[sd]|h(?:add|sub)p[sd]|lddqu|movddup|movs[hl]dup|fisttp[lqs]?|monitor|mwait"
    r"|pabs[bwd]|palignr|ph(?:add|sub)(?:w|d|sw)|pmaddubsw|pmulhrsw|pshufb|psign[bwd]"
    r"|blendv?p[sd]|dpp[sd]|extractps|insertps|movntdqa|mpsadbw|packusdw|pblendvb|pblendw"
    r"|pcmpeqq|pextr[bdq]|phminposuw|pinsr[bdq]|pmaxs[bd]|pmaxu[dw]|pmins[bd]|pminu[dw]"
    r"|pmov[sz]x\w+|pmuldq|pmulld|ptest|round[ps][sd]"
    r"|crc32[bwlq]?|pcmp[ei]str[im]|pcmpgtq|popcnt|cmpxchg16b|lahf|sahf"
    r"|andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|movbe"
    r"|pclmul\w*|aes\w*)$"
)
# Functions the Rust crates compile for newer CPUs behind a runtime CPU check (memchr's AVX2,
# simdutf8's SSE4.2 and AVX2, crc32fast's PCLMULQDQ, AVX2 and AVX-512, evtx-core's
# simd::ssse3::json_run, PERF.md H155): they run only where the CPU has the feature.
DISPATCHED = re.compile(r"avx|pclmul|sse42|ssse3")


def objdump():
    found = shutil.which("objdump")
    if found is None:
        pytest.skip("objdump (binutils) is not installed")
    return found


def beyond_baseline(library):
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
        if BEYOND_BASELINE_MNEMONIC.match(mnemonic) or BEYOND_BASELINE_REGISTER.search(operands):
            found[function] = line.strip()
    return found


def test_the_build_records_the_portable_cpu_levels():
    info = json.loads((LIB / "build.json").read_text())
    assert info["zig_cpu"] == "baseline"
    assert info["rust_cpu"] == "x86-64"


def test_the_zig_library_has_no_instruction_beyond_baseline_x86_64():
    # Zig has no runtime dispatch: one AVX instruction means the whole library was built for a
    # newer CPU (a native build here has thousands, AVX-512 among them).
    assert beyond_baseline(LIB / "libevtx_zig.so") == {}


@pytest.mark.parametrize("name", ["libevtx_rs.so", "libevtx_ref.so"])
def test_the_rust_libraries_use_newer_instructions_only_behind_runtime_checks(name):
    found = beyond_baseline(LIB / name)
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
