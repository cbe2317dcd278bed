/* ProcessPrng, the one export of bcryptprimitives.dll that Rust's standard library imports
 * (its random seed) on Windows 10 and later. Wine before 9.0 has no such DLL, so the Rust
 * CLI would not start under it; compare/windows_parity.sh builds this stand-in into its own
 * Wine prefix when Wine lacks the DLL. Never shipped: Windows has the real one. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
