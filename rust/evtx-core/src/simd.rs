//! The one module of evtx-core with `unsafe` code (PERF.md H18, H155): vector kernels for the
//! hot text paths, each with a scalar twin that a property test holds it equal to.
//!
//! [`plain_run`] copies the leading run of "plain" UTF-16 units of a string (ASCII that the
//! escape mode writes as itself) narrowed to bytes, eight units per SSE2 step. Everything else
//! (escapes, non-ASCII, NUL, surrogates) is left to the scalar escaper in `escape`, which calls
//! back here after each such unit. [`json_run`] goes on past JSON's two-byte escapes, for the
//! rest of a string that the first run stopped in.
//!
//! SSE2 is part of the x86-64 baseline, so no runtime detection is needed; other targets use
//! the scalar twin. The one kernel beyond it, `ssse3::json_run` (PERF.md H155), runs only where
//! the CPU reports SSSE3 and POPCNT, the SSE2 one elsewhere.

use crate::escape::{Escape, JSON_PAIR};

/// Which ASCII units a mode must not copy as they are, besides controls (below 0x20) and
/// non-ASCII units, which no mode copies here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Specials {
    /// JSON: `"` and `\`.
    Json,
    /// XML text: `&`, `<`, `>`.
    XmlText,
    /// XML attribute values: `&`, `<`, `>`, `"`, `'`.
    XmlAttr,
    /// CDATA / PI data: nothing more.
    Raw,
}

impl Specials {
    /// Whether the kernels stop at ASCII unit `u` (the scalar definition).
    #[inline]
    pub fn stops_at(self, u: u16) -> bool {
        if !(0x20..0x80).contains(&u) {
            return true;
        }
        let b = u as u8;
        match self {
            Specials::Json => b == b'"' || b == b'\\',
            Specials::XmlText => b == b'&' || b == b'<' || b == b'>',
            Specials::XmlAttr => matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''),
            Specials::Raw => false,
        }
    }
}

/// Appends to `out` the units of `src[start..end]` (UTF-16LE, `end - start` even) up to the first
/// one that [`Specials::stops_at`], each as its low byte, and returns how many units it copied.
/// It may stop earlier (near the end of `src`, where a vector load would not fit): the caller
/// handles the next unit itself and calls again. `src` may extend past `end`; the kernel reads
/// those bytes but never copies them.
#[inline(always)]
pub fn plain_run(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize, sp: Specials) -> usize {
    debug_assert!(start <= end && end <= src.len() && (end - start).is_multiple_of(2));
    #[cfg(target_arch = "x86_64")]
    {
        match sp {
            Specials::Json => sse2::plain_run::<0>(out, src, start, end),
            Specials::XmlText => sse2::plain_run::<1>(out, src, start, end),
            Specials::XmlAttr => sse2::plain_run::<2>(out, src, start, end),
            Specials::Raw => sse2::plain_run::<3>(out, src, start, end),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        plain_run_scalar(out, src, start, end, sp)
    }
}

/// The scalar twin of [`plain_run`]: the whole run, one unit at a time.
pub fn plain_run_scalar(
    out: &mut Vec<u8>,
    src: &[u8],
    start: usize,
    end: usize,
    sp: Specials,
) -> usize {
    scalar_run(out, src, start, end, |u| sp.stops_at(u))
}

/// The scalar twins' one loop: the units of `src[start..end]` before the first that `stops`,
/// each appended as its low byte (the kernels take only units below 0x80); the unit count.
fn scalar_run(
    out: &mut Vec<u8>,
    src: &[u8],
    start: usize,
    end: usize,
    stops: impl Fn(u16) -> bool,
) -> usize {
    let run = src[start..end]
        .chunks_exact(2)
        .take_while(|c| !stops(u16::from_le_bytes([c[0], c[1]])))
        .count();
    out.extend(src[start..start + 2 * run].chunks_exact(2).map(|c| c[0]));
    run
}

/// [`plain_run`] for the XML modes (`sp` `XmlText` or `XmlAttr`) that copies tab, LF and CR
/// too, which XML writes as they are: the kernel of a string's rest (`escape::write_utf16_rest`),
/// where privilege lists and messages stopped [`plain_run`] at every line break (PERF.md H89).
/// The first run keeps [`plain_run`], whose stop set costs fewer vector steps.
#[inline]
pub fn xml_run(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize, sp: Specials) -> usize {
    debug_assert!(matches!(sp, Specials::XmlText | Specials::XmlAttr));
    #[cfg(target_arch = "x86_64")]
    {
        if sp == Specials::XmlAttr {
            sse2::plain_run::<5>(out, src, start, end)
        } else {
            sse2::plain_run::<4>(out, src, start, end)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        xml_run_scalar(out, src, start, end, sp)
    }
}

/// The scalar twin of [`xml_run`]: the whole run, one unit at a time.
pub fn xml_run_scalar(
    out: &mut Vec<u8>,
    src: &[u8],
    start: usize,
    end: usize,
    sp: Specials,
) -> usize {
    scalar_run(out, src, start, end, |u| {
        !matches!(u, 0x09 | 0x0a | 0x0d) && sp.stops_at(u)
    })
}

/// The number of bytes of `src[start..]` (UTF-8 text, or ASCII bytes of an ANSI string) before
/// the first one that [`Specials::stops_at`] (so non-ASCII bytes stop it too), sixteen per SSE2
/// step and the last few one at a time: the plain run that `escape::write_str` appends with one
/// `extend_from_slice` (PERF.md H76). The loads stay inside `src`.
#[inline]
pub fn plain_bytes(src: &[u8], start: usize, sp: Specials) -> usize {
    debug_assert!(start <= src.len());
    #[cfg(target_arch = "x86_64")]
    {
        match sp {
            Specials::Json => sse2::plain_bytes::<0>(src, start),
            Specials::XmlText => sse2::plain_bytes::<1>(src, start),
            Specials::XmlAttr => sse2::plain_bytes::<2>(src, start),
            Specials::Raw => sse2::plain_bytes::<3>(src, start),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        plain_bytes_scalar(src, start, sp)
    }
}

/// The scalar twin of [`plain_bytes`].
pub fn plain_bytes_scalar(src: &[u8], start: usize, sp: Specials) -> usize {
    src[start..]
        .iter()
        .take_while(|&&b| !sp.stops_at(u16::from(b)))
        .count()
}

/// Appends the ASCII bytes of `src[start..]` escaped by `esc` (each byte's [`Escape`], in the
/// mode whose stop set `sp` is) up to the first non-ASCII byte, sixteen per SSE2 step, and
/// returns how many bytes it took. An escape does not end the run: the step writes it and the
/// lanes after it further on, as `json_run` does for JSON's two-byte escapes (PERF.md H88).
/// It may stop earlier, before the last bytes where a 16-byte load would not fit; the caller
/// goes on from there.
#[inline]
pub fn escaped_ascii(
    out: &mut Vec<u8>,
    src: &[u8],
    start: usize,
    sp: Specials,
    esc: &[Escape; 128],
) -> usize {
    debug_assert!(start <= src.len());
    #[cfg(target_arch = "x86_64")]
    {
        match sp {
            Specials::Json => sse2::escaped_ascii::<0>(out, src, start, esc),
            Specials::XmlText => sse2::escaped_ascii::<1>(out, src, start, esc),
            Specials::XmlAttr => sse2::escaped_ascii::<2>(out, src, start, esc),
            Specials::Raw => sse2::escaped_ascii::<3>(out, src, start, esc),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = sp;
        escaped_ascii_scalar(out, src, start, esc)
    }
}

/// The scalar twin of [`escaped_ascii`]: the whole run, one byte at a time.
pub fn escaped_ascii_scalar(
    out: &mut Vec<u8>,
    src: &[u8],
    start: usize,
    esc: &[Escape; 128],
) -> usize {
    let mut taken = 0;
    for &b in &src[start..] {
        if b >= 0x80 {
            break;
        }
        let e = &esc[usize::from(b)];
        out.extend_from_slice(&e[..usize::from(e[7])]);
        taken += 1;
    }
    taken
}

/// The longest literal run [`copy_literal`] moves with its fixed vector copy.
pub const LITERAL_STEP: usize = 64;

/// Appends `src[start..start + len]` to `out`: a program's literal run (`program::replay`).
/// A run of at most [`LITERAL_STEP`] bytes whose source has that many bytes from `start`
/// and whose output has that much spare capacity is copied by four 16-byte moves whatever its
/// length (the bytes past the run land in spare capacity, never counted), so the copy takes no
/// branch on the length: `memcpy`'s size classes mispredicted on the runs' varying lengths
/// (PERF.md H98). Others go to `extend_from_slice`.
#[inline(always)]
pub fn copy_literal(out: &mut Vec<u8>, src: &[u8], start: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if len <= LITERAL_STEP
            && start + LITERAL_STEP <= src.len()
            && out.capacity() - out.len() >= LITERAL_STEP
        {
            sse2::copy_literal(out, src, start, len);
            return;
        }
    }
    out.extend_from_slice(&src[start..start + len]);
}

/// JSON's writer after a string's first plain run (PERF.md H75): appends the units of
/// `src[start..end]` escaped for JSON up to the first non-ASCII unit or control character
/// without a two-byte escape, and returns how many units it took. `"`, `\\` and `\b \t \n \f \r`
/// are written as their two-byte escapes (`escape::JSON_PAIR`) without stopping there:
/// Windows paths stop [`plain_run`] at every `\\`, privilege lists and messages at every
/// `\r\n\t`; this goes on in the same vector step. It may stop earlier near the end of `src`,
/// as [`plain_run`] does.
///
/// On a CPU with SSSE3 and POPCNT (runtime detection: they are not in the x86-64 baseline) the
/// step is [`ssse3::json_run`]'s, which expands the escaped lanes by one `pshufb` without a loop
/// over them (PERF.md H155); the SSE2 kernel otherwise.
#[inline(always)]
pub fn json_run(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize) -> usize {
    debug_assert!(start <= end && end <= src.len() && (end - start).is_multiple_of(2));
    #[cfg(target_arch = "x86_64")]
    {
        if ssse3::available() {
            // SAFETY: the CPU has SSSE3 and POPCNT (`available`), the features the kernel is
            // compiled for; its loads and stores are proved in its body.
            return unsafe { ssse3::json_run(out, src, start, end) };
        }
        sse2::json_run_outlined(out, src, start, end)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        json_run_scalar(out, src, start, end)
    }
}

/// The scalar twin of [`json_run`]: the whole run, one unit at a time.
pub fn json_run_scalar(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize) -> usize {
    let mut run = 0;
    for c in src[start..end].chunks_exact(2) {
        let u = u16::from_le_bytes([c[0], c[1]]);
        if u >= 0x80 {
            break;
        }
        let pair = JSON_PAIR[usize::from(u)];
        if u < 0x20 && pair == 0 {
            break;
        }
        if pair == 0 {
            out.push(u as u8);
        } else {
            out.extend_from_slice(&[b'\\', pair]);
        }
        run += 1;
    }
    run
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use crate::escape::{Escape, JSON_PAIR};
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi16, _mm_cmpeq_epi8, _mm_cmplt_epi16,
        _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16,
        _mm_set1_epi16, _mm_set1_epi8, _mm_setzero_si128, _mm_storel_epi64, _mm_storeu_si128,
    };

    /// Lanes (16-bit) that are `c`.
    ///
    /// # Safety
    /// The CPU must have SSE2: every x86-64 CPU has (the module is compiled for x86-64 only).
    #[inline(always)]
    unsafe fn eq(v: __m128i, c: u8) -> __m128i {
        _mm_cmpeq_epi16(v, _mm_set1_epi16(i16::from(c)))
    }

    /// Lanes that `Specials` number `MODE` stops at (ASCII lanes only; the caller adds the rest).
    ///
    /// # Safety
    /// As [`eq`]: SSE2, which x86-64 guarantees.
    #[inline(always)]
    unsafe fn special<const MODE: u8>(v: __m128i) -> __m128i {
        // Below 0x20 (signed: lanes of 0x8000 and up land here too, and are non-ASCII anyway).
        let low = _mm_cmplt_epi16(v, _mm_set1_epi16(0x20));
        // `xml_run`'s modes (4, 5: XML text, attribute) copy tab, LF and CR as they are.
        let low = if MODE >= 4 {
            let lines = _mm_or_si128(eq(v, b'\t'), _mm_or_si128(eq(v, b'\n'), eq(v, b'\r')));
            _mm_andnot_si128(lines, low)
        } else {
            low
        };
        match MODE {
            0 => _mm_or_si128(low, _mm_or_si128(eq(v, b'"'), eq(v, b'\\'))),
            1 | 4 => _mm_or_si128(
                low,
                _mm_or_si128(eq(v, b'&'), _mm_or_si128(eq(v, b'<'), eq(v, b'>'))),
            ),
            2 | 5 => _mm_or_si128(
                _mm_or_si128(low, _mm_or_si128(eq(v, b'"'), eq(v, b'\''))),
                _mm_or_si128(eq(v, b'&'), _mm_or_si128(eq(v, b'<'), eq(v, b'>'))),
            ),
            _ => low,
        }
    }

    /// See [`super::plain_run`]; `MODE` numbers the `Specials` variant.
    #[inline(always)]
    pub fn plain_run<const MODE: u8>(
        out: &mut Vec<u8>,
        src: &[u8],
        start: usize,
        end: usize,
    ) -> usize {
        let n = (end - start) / 2;
        // Each step stores 8 bytes at `base + copied` with `copied < n`: room for n + 8.
        out.reserve(n + 8);
        let base = out.len();
        // Steps start below `steps`: before the string's end, and where the 16-byte load
        // fits in `src` (`start + 2 * copied + 16 <= src.len()`), so the loop tests one bound
        // and a step takes 8 units whole; the count is cut to the string's end once, after the
        // loop (PERF.md H86).
        let steps = n.min(src.len().saturating_sub(start + 14) / 2);
        let mut copied = 0;
        while copied < steps {
            let at = start + 2 * copied;
            // SAFETY: SSE2 is part of the x86-64 baseline, so every intrinsic here is
            // available. The load: `copied < steps <= (src.len() - start - 14) / 2`, so
            // `at + 16 <= src.len()` and the 16 bytes read are inside `src`;
            // `_mm_loadu_si128` has no alignment requirement. The store: the capacity is at
            // least `base + n + 8` (reserved above, nothing pushed since) and
            // `copied < steps <= n`, so the 8 bytes written at `base + copied` are inside the
            // allocation (spare capacity, written through a raw pointer, never read as a
            // `&[u8]`); `_mm_storel_epi64` has no alignment requirement either.
            let stop = unsafe {
                let v = _mm_loadu_si128(src.as_ptr().add(at).cast::<__m128i>());
                let non_ascii = _mm_set1_epi16(0xff80u16 as i16);
                let ascii = _mm_cmpeq_epi16(_mm_and_si128(v, non_ascii), _mm_setzero_si128());
                let ok = _mm_andnot_si128(special::<MODE>(v), ascii);
                // Plain lanes are 0x20..=0x7f, so the saturating pack is their low byte.
                let packed = _mm_packus_epi16(v, v);
                _mm_storel_epi64(
                    out.as_mut_ptr().add(base + copied).cast::<__m128i>(),
                    packed,
                );
                !(_mm_movemask_epi8(ok) as u32) & 0xffff
            };
            if stop == 0 {
                copied += 8;
                continue;
            }
            // Two mask bits per lane: the first stopping lane.
            copied += (stop.trailing_zeros() / 2) as usize;
            break;
        }
        // A step's lanes past the string's end are not its units.
        let copied = copied.min(n);
        // SAFETY: `base + copied <= base + n <= capacity`, and bytes `base..base + copied` were
        // written: each step wrote 8 bytes from `base + c` (its `copied` on entry) and moved
        // `copied` to at most `c + 8` (8, or a lane index below 8), so every byte up to the
        // last step's `copied` was written by some step, and the cut only lowers it.
        unsafe { out.set_len(base + copied) };
        copied
    }

    /// See [`super::copy_literal`]; the caller has checked `len <= LITERAL_STEP`,
    /// `start + LITERAL_STEP <= src.len()` and `LITERAL_STEP` bytes of spare capacity.
    #[inline(always)]
    pub fn copy_literal(out: &mut Vec<u8>, src: &[u8], start: usize, len: usize) {
        use super::LITERAL_STEP;
        assert!(
            len <= LITERAL_STEP
                && start + LITERAL_STEP <= src.len()
                && out.capacity() - out.len() >= LITERAL_STEP
        );
        let base = out.len();
        // SAFETY: SSE2 is part of the x86-64 baseline. The loads read `src[start + 16 k..
        // start + 16 k + 16]` for k < 4, inside `src` because `start + LITERAL_STEP <=
        // src.len()` (asserted; the caller's identical test lets the compiler drop it). The
        // stores write `base + 16 k..base + 16 k + 16`, below `base + LITERAL_STEP <=
        // capacity` (asserted), so inside the allocation (spare capacity, written through a
        // raw pointer, never read as a `&[u8]`); neither intrinsic needs alignment, and `src`
        // and the spare capacity do not overlap (`out` is borrowed mutably, `src` shared).
        // `set_len(base + len)`: `len <= LITERAL_STEP`, so it stays within the capacity, and
        // bytes `base..base + len` were written (by the stores, as `src[start..start + len]`).
        unsafe {
            let from = src.as_ptr().add(start).cast::<__m128i>();
            let to = out.as_mut_ptr().add(base).cast::<__m128i>();
            let a = _mm_loadu_si128(from);
            let b = _mm_loadu_si128(from.add(1));
            let c = _mm_loadu_si128(from.add(2));
            let d = _mm_loadu_si128(from.add(3));
            _mm_storeu_si128(to, a);
            _mm_storeu_si128(to.add(1), b);
            _mm_storeu_si128(to.add(2), c);
            _mm_storeu_si128(to.add(3), d);
            out.set_len(base + len);
        }
    }

    /// Bytes (8-bit lanes) that are `c`.
    ///
    /// # Safety
    /// As [`eq`]: SSE2, which x86-64 guarantees.
    #[inline(always)]
    unsafe fn eq8(v: __m128i, c: u8) -> __m128i {
        _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8))
    }

    /// Bytes that `Specials` number `MODE` stops at: below 0x20 or from 0x80 on (one signed
    /// compare), and the mode's specials.
    ///
    /// # Safety
    /// As [`eq`]: SSE2, which x86-64 guarantees.
    #[inline(always)]
    unsafe fn stops8<const MODE: u8>(v: __m128i) -> __m128i {
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        match MODE {
            0 => _mm_or_si128(low, _mm_or_si128(eq8(v, b'"'), eq8(v, b'\\'))),
            1 => _mm_or_si128(
                low,
                _mm_or_si128(eq8(v, b'&'), _mm_or_si128(eq8(v, b'<'), eq8(v, b'>'))),
            ),
            2 => _mm_or_si128(
                _mm_or_si128(low, _mm_or_si128(eq8(v, b'"'), eq8(v, b'\''))),
                _mm_or_si128(eq8(v, b'&'), _mm_or_si128(eq8(v, b'<'), eq8(v, b'>'))),
            ),
            _ => low,
        }
    }

    /// See [`super::plain_bytes`]; `MODE` numbers the `Specials` variant.
    #[inline(always)]
    pub fn plain_bytes<const MODE: u8>(src: &[u8], start: usize) -> usize {
        let mut i = start;
        while i + 16 <= src.len() {
            // SAFETY: SSE2 is part of the x86-64 baseline; `i + 16 <= src.len()` (the loop's
            // condition), so the 16 bytes loaded are inside `src`; no alignment required.
            let stop = unsafe {
                let v = _mm_loadu_si128(src.as_ptr().add(i).cast::<__m128i>());
                _mm_movemask_epi8(stops8::<MODE>(v)) as u32
            };
            if stop != 0 {
                return i - start + stop.trailing_zeros() as usize;
            }
            i += 16;
        }
        let sp = match MODE {
            0 => super::Specials::Json,
            1 => super::Specials::XmlText,
            2 => super::Specials::XmlAttr,
            _ => super::Specials::Raw,
        };
        i - start + super::plain_bytes_scalar(src, i, sp)
    }

    /// See [`super::escaped_ascii`]; `MODE` numbers the `Specials` variant.
    #[inline(always)]
    pub fn escaped_ascii<const MODE: u8>(
        out: &mut Vec<u8>,
        src: &[u8],
        start: usize,
        esc: &[Escape; 128],
    ) -> usize {
        let n = src.len() - start;
        // Each byte taken writes at most 6 (`&quot;`, `\u00xx`), and a step writes less than
        // 112 bytes past the output of the bytes before it (see the stores' SAFETY): room for
        // 6n + 32.
        out.reserve(6 * n + 32);
        let base = out.len();
        let mut i = start;
        let mut written = 0;
        while i + 16 <= src.len() {
            // SAFETY: SSE2 is part of the x86-64 baseline. The load: `i + 16 <= src.len()` (the
            // loop's condition), no alignment required. The store: 16 bytes at
            // `base + written`; `written <= 6 * (i - start) <= 6n - 96`, so it ends below
            // `base + 6n + 32`, inside the capacity reserved above (nothing pushed since);
            // spare capacity written through a raw pointer.
            let (v, marks) = unsafe {
                let v = _mm_loadu_si128(src.as_ptr().add(i).cast::<__m128i>());
                _mm_storeu_si128(out.as_mut_ptr().add(base + written).cast::<__m128i>(), v);
                (v, _mm_movemask_epi8(stops8::<MODE>(v)) as u32)
            };
            if marks == 0 {
                i += 16;
                written += 16;
                continue;
            }
            // The marked lanes in order: each lane's escape written where the lane's byte
            // goes, and the lanes after it again right after the escape (from a copy of the
            // step); `at` is where lane `from` goes. A non-ASCII lane ends the run there.
            let mut bytes = [0u8; 32];
            // SAFETY: SSE2 (baseline); a 16-byte unaligned store into a 32-byte array.
            unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast::<__m128i>(), v) };
            let mut at = base + written;
            let mut from = 0;
            let mut lanes = 16;
            let mut m = marks;
            while m != 0 {
                let p = m.trailing_zeros() as usize;
                m &= m - 1;
                let b = bytes[p];
                if b >= 0x80 {
                    lanes = p;
                    break;
                }
                let e = esc[usize::from(b)];
                let dst = at + (p - from);
                let mut rest = [0u8; 16];
                rest.copy_from_slice(&bytes[p + 1..p + 17]);
                // SAFETY: every lane before `p` took at most 6 bytes, so
                // `dst <= base + written + 6p <= base + written + 90`; the escape's 8 bytes and
                // the 16 after its `e[7] <= 6` end below `base + written + 112`, and with
                // `written <= 6n - 96` (above) below `base + 6n + 16`, inside the capacity
                // reserved above; spare capacity written through a raw pointer.
                unsafe {
                    let d = out.as_mut_ptr().add(dst);
                    d.cast::<Escape>().write_unaligned(e);
                    d.add(usize::from(e[7]))
                        .cast::<[u8; 16]>()
                        .write_unaligned(rest);
                }
                at = dst + usize::from(e[7]);
                from = p + 1;
            }
            written = at + (lanes - from) - base;
            i += lanes;
            if lanes < 16 {
                break;
            }
        }
        // SAFETY: `base + written <= capacity` (each step's end, above), and bytes
        // `base..base + written` were written: a step's lanes up to its first marked one by its
        // store, each escape in place, and the lanes after it by the store that followed it;
        // `written` counts exactly those.
        unsafe { out.set_len(base + written) };
        i - start
    }

    /// [`json_run`] behind a call, for [`super::json_run`]'s dispatch: inline, its constants
    /// would be set up and kept in the caller's loop for the CPUs that run the SSSE3 kernel
    /// (PERF.md H157).
    #[inline(never)]
    pub fn json_run_outlined(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize) -> usize {
        json_run(out, src, start, end)
    }

    /// See [`super::json_run`].
    #[inline]
    pub fn json_run(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize) -> usize {
        let n = (end - start) / 2;
        // Bytes written so far are at most two per unit taken (`written <= 2 * copied`), and a
        // step with `copied < n` writes below `base + written + 24` (see the stores' SAFETY):
        // room for 2n + 24.
        out.reserve(2 * n + 24);
        let base = out.len();
        let mut copied = 0;
        let mut written = 0;
        while copied < n {
            let at = start + 2 * copied;
            if at + 16 > src.len() {
                break;
            }
            // SAFETY: SSE2 is part of the x86-64 baseline. The load: `at + 16 <= src.len()`
            // (checked above), no alignment required. The store: 8 bytes at `base + written`,
            // below `base + 2 * copied + 8 <= base + 2n + 6`, inside the capacity reserved
            // above (nothing pushed since); spare capacity written through a raw pointer.
            let (non_ascii, marked, packed) = unsafe {
                let v = _mm_loadu_si128(src.as_ptr().add(at).cast::<__m128i>());
                let high = _mm_set1_epi16(0xff80u16 as i16);
                let ascii = _mm_cmpeq_epi16(_mm_and_si128(v, high), _mm_setzero_si128());
                // Controls (signed: lanes of 0x8000 and up too, which `non_ascii` stops at
                // first), `"` and `\\`.
                let marked = _mm_or_si128(
                    _mm_cmplt_epi16(v, _mm_set1_epi16(0x20)),
                    _mm_or_si128(eq(v, b'"'), eq(v, b'\\')),
                );
                let packed = _mm_packus_epi16(v, v);
                _mm_storel_epi64(
                    out.as_mut_ptr().add(base + written).cast::<__m128i>(),
                    packed,
                );
                (
                    !(_mm_movemask_epi8(ascii) as u32) & 0xffff,
                    _mm_movemask_epi8(marked) as u32,
                    packed,
                )
            };
            let left = n - copied;
            // Two mask bits per lane: the lanes before the first non-ASCII one, or the end.
            let mut lanes = if non_ascii == 0 {
                left.min(8)
            } else {
                ((non_ascii.trailing_zeros() / 2) as usize).min(left)
            };
            // Marked lanes among those, in order: a two-byte escape, and the lanes after it
            // stored again one byte further on (from a copy of the packed step); a control
            // without one ends the run there.
            let mut marks = marked & ((1u32 << (2 * lanes)) - 1);
            let mut k = 0;
            if marks != 0 {
                let mut bytes = [0u8; 16];
                // SAFETY: SSE2 (baseline); a 16-byte unaligned store into a 16-byte array.
                unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast::<__m128i>(), packed) };
                while marks != 0 {
                    let p = (marks.trailing_zeros() / 2) as usize;
                    marks &= !(3 << (2 * p));
                    let pair = JSON_PAIR[usize::from(bytes[p] & 0x7f)];
                    if pair == 0 {
                        lanes = p;
                        break;
                    }
                    let mut moved = [0u8; 8];
                    moved.copy_from_slice(&bytes[p + 1..p + 9]);
                    let at = base + written + p + k;
                    // SAFETY: `p <= 7` (a lane) and `k <= 7` (escapes before it in this step),
                    // so the 10 bytes written at `at` end below `base + written + 24 <=
                    // base + 2n + 22` (`written <= 2 * copied <= 2n - 2`), inside the capacity
                    // reserved above; spare capacity written through a raw pointer.
                    unsafe {
                        let dst = out.as_mut_ptr().add(at);
                        dst.cast::<[u8; 2]>().write_unaligned([b'\\', pair]);
                        dst.add(2).cast::<[u8; 8]>().write_unaligned(moved);
                    }
                    k += 1;
                }
            }
            written += lanes + k;
            copied += lanes;
            if lanes < 8 {
                break;
            }
        }
        // SAFETY: `base + written <= base + 2n <= capacity`, and bytes `base..base + written`
        // were written: each step stored its lanes from `base + written`, and each escape with
        // the lanes after it again one byte further on, so the `lanes` bytes and `k` escapes
        // it accounts for are all in place.
        unsafe { out.set_len(base + written) };
        copied
    }
}

/// [`json_run`]'s kernel for CPUs with SSSE3 and POPCNT (PERF.md H155). The SSE2 kernel
/// writes each escaped lane in a loop (a `tzcnt`, the lane's byte reloaded, `JSON_PAIR`, a
/// branch on it, the rest of the step stored again), whose trip count a path's backslashes make
/// unpredictable; here one `pshufb` with a per-mask index vector (`EXPAND`) places `\` before
/// every escaped lane of the step, so a step costs the same whatever it escapes.
#[cfg(target_arch = "x86_64")]
mod ssse3 {
    use crate::escape::JSON_PAIR;
    use std::arch::x86_64::{
        __m128i, _mm_adds_epu8, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cmplt_epi8,
        _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16,
        _mm_set1_epi8, _mm_setzero_si128, _mm_shuffle_epi8, _mm_storeu_si128, _mm_unpackhi_epi64,
        _mm_unpacklo_epi64,
    };

    /// Whether the CPU runs this module's kernel (std caches the CPUID answer).
    #[inline(always)]
    pub fn available() -> bool {
        std::is_x86_feature_detected!("ssse3") && std::is_x86_feature_detected!("popcnt")
    }

    /// The step's output for each mask of escaped lanes (bit k: lane k), as `pshufb` indices
    /// into the vector of the step's 8 escape bytes followed by 8 `\`: an escaped lane k gives
    /// `8, k` (its `\`, then its escape byte), a plain one `k`. 8 lanes and at most 8 escapes
    /// fill at most 16 bytes; the rest of an entry is `0x80` (a zero byte, never counted).
    static EXPAND: [[u8; 16]; 256] = {
        let mut t = [[0x80u8; 16]; 256];
        let mut m = 0;
        while m < 256 {
            let mut o = 0;
            let mut lane = 0;
            while lane < 8 {
                if (m >> lane) & 1 == 1 {
                    t[m][o] = 8;
                    o += 1;
                }
                t[m][o] = lane as u8;
                o += 1;
                lane += 1;
            }
            m += 1;
        }
        t
    };

    /// `JSON_PAIR` of the controls 0x00-0x0f by low nibble (`b t n f r`, 0 for those written
    /// `\u00xx`): the `pshufb` table of the step's short escapes. 0x10-0x1f have none.
    static SHORT: [u8; 16] = {
        let mut t = [0u8; 16];
        let mut c = 0;
        while c < 16 {
            t[c] = JSON_PAIR[c];
            c += 1;
        }
        t
    };

    /// The lanes of `packed` (bytes, a step's UTF-16 units packed by signed saturation, so
    /// ASCII lanes keep their byte, 0x80-0x7fff become 0x80-0xff and 0x8000 and up 0x00):
    /// each lane's byte after a `\\` (a control's short escape, any other lane's own byte), the
    /// escaped lanes (`"`, `\\`, controls with a short escape) and the bad ones (controls
    /// without one, non-ASCII), where the run ends.
    ///
    /// # Safety
    /// The CPU must have SSSE3 ([`available`]).
    #[target_feature(enable = "ssse3")]
    #[inline]
    unsafe fn classify(packed: __m128i) -> (__m128i, __m128i, __m128i) {
        // Below 0x20 or from 0x80 on (signed compare).
        let ctrl = _mm_cmplt_epi8(packed, _mm_set1_epi8(0x20));
        // 0x00-0x0f + 0x70 index `SHORT` by their low nibble; every other byte gets the high
        // bit (saturating add), which `pshufb` reads as 0.
        // SAFETY: `SHORT` is 16 bytes; no alignment required.
        let table = unsafe { _mm_loadu_si128(SHORT.as_ptr().cast::<__m128i>()) };
        let short = _mm_shuffle_epi8(table, _mm_adds_epu8(packed, _mm_set1_epi8(0x70)));
        let none = _mm_cmpeq_epi8(short, _mm_setzero_si128());
        let bad = _mm_and_si128(ctrl, none);
        // `short` is not 0 only for the controls with a short escape.
        let escaped = _mm_or_si128(
            _mm_andnot_si128(none, _mm_set1_epi8(-1)),
            _mm_or_si128(
                _mm_cmpeq_epi8(packed, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(packed, _mm_set1_epi8(b'\\' as i8)),
            ),
        );
        // A control's short escape is a letter, above the control; every other lane's byte is
        // above `short`'s 0 there.
        (_mm_max_epu8(packed, short), escaped, bad)
    }

    /// The run's last step, `width` lanes: the lanes before its first bad one (bits of `bad`),
    /// cut to the `left` units of the string, and the bytes they write with their escapes
    /// (bits of `esc`).
    #[inline(always)]
    fn last_step(bad: u32, esc: u32, width: u32, left: usize) -> (usize, usize) {
        let lanes = ((bad | 1 << width).trailing_zeros() as usize).min(left);
        let taken = esc & ((1u32 << lanes) - 1);
        (lanes, lanes + taken.count_ones() as usize)
    }

    /// See [`super::json_run`].
    ///
    /// # Safety
    /// The CPU must have SSSE3 and POPCNT ([`available`]).
    #[target_feature(enable = "ssse3,popcnt")]
    pub unsafe fn json_run(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize) -> usize {
        let n = (end - start) / 2;
        // Each step stores 32 bytes from `base + written` (two 16-byte stores, the second at
        // most 16 further on), `written <= 2 * copied` and `copied < n`: room for 2n + 32.
        out.reserve(2 * n + 32);
        let base = out.len();
        let backslashes = _mm_set1_epi8(b'\\' as i8);
        let mut copied = 0;
        let mut written = 0;
        // 16 units a step while a 32-byte load fits in `src` (PERF.md H156), then 8 a step
        // while a 16-byte one does, as in `plain_run` (PERF.md H86).
        let steps = n.min(src.len().saturating_sub(start + 30) / 2);
        'run: {
            while copied < steps {
                let at = start + 2 * copied;
                // SAFETY: the features are the caller's promise (SSSE3 and POPCNT include SSE2).
                // The loads: `copied < steps <= (src.len() - start - 30) / 2`, so `at + 32 <=
                // src.len()`; no alignment required. `EXPAND[low]`, `EXPAND[high]`: both below
                // 256. The stores: 16 bytes at `base + written` and at `base + written + 8 +
                // (escapes of the low 8 lanes) <= base + written + 16`, `written <= 2 * copied <=
                // 2n - 2`, so below `base + 2n + 32`, inside the capacity reserved above (nothing
                // pushed since); spare capacity written through a raw pointer.
                let (bad, esc, low_bytes) = unsafe {
                    let p = src.as_ptr().add(at).cast::<__m128i>();
                    let packed = _mm_packus_epi16(_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)));
                    let (bytes, escaped, bad) = classify(packed);
                    let esc = _mm_movemask_epi8(escaped) as u32;
                    let (low, high) = ((esc & 0xff) as usize, (esc >> 8) as usize);
                    let low_bytes = 8 + low.count_ones() as usize;
                    let to = out.as_mut_ptr().add(base + written);
                    let index = _mm_loadu_si128(EXPAND[low].as_ptr().cast::<__m128i>());
                    let lanes = _mm_unpacklo_epi64(bytes, backslashes);
                    _mm_storeu_si128(to.cast::<__m128i>(), _mm_shuffle_epi8(lanes, index));
                    let index = _mm_loadu_si128(EXPAND[high].as_ptr().cast::<__m128i>());
                    let lanes = _mm_unpackhi_epi64(bytes, backslashes);
                    _mm_storeu_si128(
                        to.add(low_bytes).cast::<__m128i>(),
                        _mm_shuffle_epi8(lanes, index),
                    );
                    (_mm_movemask_epi8(bad) as u32, esc, low_bytes)
                };
                // A whole step by a branch, with `copied` moved by the constant: the next step's
                // loads then wait for no vector result of this one (the branch is predicted), where
                // `copied += lanes` made each load wait for the previous step's masks (H155: ~3 %
                // slower in wall time than the SSE2 kernel, for fewer instructions).
                if bad == 0 && n - copied >= 16 {
                    written += low_bytes + 8 + (esc >> 8).count_ones() as usize;
                    copied += 16;
                    continue;
                }
                let (lanes, bytes) = last_step(bad, esc, 16, n - copied);
                written += bytes;
                copied += lanes;
                break 'run;
            }
            let steps = n.min(src.len().saturating_sub(start + 14) / 2);
            while copied < steps {
                let at = start + 2 * copied;
                // SAFETY: the features are the caller's promise. The load: `copied < steps <=
                // (src.len() - start - 14) / 2`, so `at + 16 <= src.len()`; no alignment
                // required. `EXPAND[esc]`: `esc < 256`. The store: 16 bytes at `base + written <=
                // base + 2n - 2` (as above), inside the capacity reserved above.
                let (bad, esc) = unsafe {
                    let v = _mm_loadu_si128(src.as_ptr().add(at).cast::<__m128i>());
                    let (bytes, escaped, bad) = classify(_mm_packus_epi16(v, v));
                    let esc = (_mm_movemask_epi8(escaped) as u32) & 0xff;
                    let index = _mm_loadu_si128(EXPAND[esc as usize].as_ptr().cast::<__m128i>());
                    _mm_storeu_si128(
                        out.as_mut_ptr().add(base + written).cast::<__m128i>(),
                        _mm_shuffle_epi8(_mm_unpacklo_epi64(bytes, backslashes), index),
                    );
                    ((_mm_movemask_epi8(bad) as u32) & 0xff, esc)
                };
                if bad == 0 && n - copied >= 8 {
                    written += 8 + esc.count_ones() as usize;
                    copied += 8;
                    continue;
                }
                let (lanes, bytes) = last_step(bad, esc, 8, n - copied);
                written += bytes;
                copied += lanes;
                break;
            }
        }
        // Every step took lanes inside the string: a whole one only with as many left, the
        // last one cut to the end.
        debug_assert!(copied <= n);
        // SAFETY: `base + written <= base + 2n <= capacity`, and bytes `base..base + written`
        // were written: each step stored, from `base + written`, its lanes in order with `\\`
        // before every escaped one (`EXPAND`; a 16-unit step's second half right after the
        // first's), and counted only the lanes it took and their escapes, a prefix of what it
        // stored.
        unsafe { out.set_len(base + written) };
        copied
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the property test needs no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A unit from every class that matters: plain ASCII, each special, controls, NUL,
    /// Latin-1, BMP, surrogates, and units whose low byte is plain but the high byte is not.
    fn unit(rng: &mut Rng) -> u16 {
        const SPECIAL: [u16; 14] = [
            0, 0x09, 0x0a, 0x0d, 0x1f, 0x22, 0x26, 0x27, 0x3c, 0x3e, 0x5c, 0x7f, 0x80, 0xff,
        ];
        match rng.below(10) {
            0..=5 => 0x20 + rng.below(0x5f) as u16,
            6 => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
            7 => 0x100 * (1 + rng.below(0xff) as u16) + 0x41,
            8 => 0xd800 + rng.below(0x800) as u16,
            _ => rng.next() as u16,
        }
    }

    const ALL: [Specials; 4] = [
        Specials::Json,
        Specials::XmlText,
        Specials::XmlAttr,
        Specials::Raw,
    ];

    #[test]
    fn literal_copy_equals_extend_from_slice() {
        // Every run length around the step (0..=LITERAL_STEP + 8) from every start near both
        // ends of a padded and an unpadded source, into output with 0..=2 steps of spare
        // capacity: the fixed copy where it applies, `extend_from_slice` elsewhere, the same
        // bytes and length either way, and the capacity never grown by the fixed copy.
        let src: Vec<u8> = (0..3 * LITERAL_STEP as u32)
            .map(|k| (k * 7 + 3) as u8)
            .collect();
        for src_len in [2 * LITERAL_STEP, 3 * LITERAL_STEP] {
            let src = &src[..src_len];
            for len in 0..=LITERAL_STEP + 8 {
                for start in (0..=src_len - len).filter(|s| *s < 20 || src_len - len - s < 80) {
                    for spare in [0, 1, LITERAL_STEP - 1, LITERAL_STEP, 2 * LITERAL_STEP] {
                        let mut out = Vec::with_capacity(5 + spare);
                        out.extend_from_slice(b"head:");
                        out.reserve_exact(spare);
                        let cap = out.capacity();
                        copy_literal(&mut out, src, start, len);
                        let mut want = b"head:".to_vec();
                        want.extend_from_slice(&src[start..start + len]);
                        assert_eq!(out, want, "{src_len} {start} {len} {spare}");
                        if cap - 5 >= LITERAL_STEP && len <= LITERAL_STEP {
                            assert_eq!(out.capacity(), cap, "{start} {len} {spare}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn kernel_equals_scalar_on_random_strings() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            // A string inside a larger buffer: some slack after it (so loads run past `end`),
            // sometimes none (so the kernel must stop short of the buffer's end).
            let units = rng.below(40) as usize;
            let slack = if rng.below(3) == 0 {
                0
            } else {
                rng.below(24) as usize
            };
            let lead = rng.below(4) as usize;
            let mut src = Vec::new();
            for _ in 0..lead + units + slack {
                src.extend_from_slice(&unit(&mut rng).to_le_bytes());
            }
            // Odd start offsets too (units are not aligned in a chunk).
            if rng.below(2) == 0 {
                src.insert(0, 0x41);
            }
            let start = src.len() - 2 * (units + slack + lead) + 2 * lead;
            let end = start + 2 * units;
            for sp in ALL {
                let prefix = b"xy".to_vec();
                let (mut a, mut b) = (prefix.clone(), prefix.clone());
                // The kernel may stop early near the buffer's end: drive it as the escaper does,
                // taking one unit by hand when it copies none and is not at a stop.
                let mut at = start;
                loop {
                    at += 2 * plain_run(&mut a, &src, at, end, sp);
                    if at == end || sp.stops_at(u16::from_le_bytes([src[at], src[at + 1]])) {
                        break;
                    }
                    a.push(src[at]);
                    at += 2;
                }
                let got = (at - start) / 2;
                let want = plain_run_scalar(&mut b, &src, start, end, sp);
                assert_eq!(got, want, "{sp:?} {:x?}", &src[start..end]);
                assert_eq!(a, b, "{sp:?} {:x?}", &src[start..end]);
            }
            // `xml_run` likewise, with tab, LF and CR plain (`unit` draws them often).
            for sp in [Specials::XmlText, Specials::XmlAttr] {
                let stops = |u: u16| !matches!(u, 0x09 | 0x0a | 0x0d) && sp.stops_at(u);
                let (mut a, mut b) = (b"xy".to_vec(), b"xy".to_vec());
                let mut at = start;
                loop {
                    at += 2 * xml_run(&mut a, &src, at, end, sp);
                    if at == end || stops(u16::from_le_bytes([src[at], src[at + 1]])) {
                        break;
                    }
                    a.push(src[at]);
                    at += 2;
                }
                let want = xml_run_scalar(&mut b, &src, start, end, sp);
                assert_eq!((at - start) / 2, want, "{sp:?} {:x?}", &src[start..end]);
                assert_eq!(a, b, "{sp:?} {:x?}", &src[start..end]);
            }
        }
    }

    #[test]
    fn byte_kernel_equals_scalar_on_random_texts() {
        // Bytes of every class (plain ASCII, each mode's specials, controls, NUL, 0x7f, 0x80 and
        // up), 0-70 long so that runs end inside a step, at its edge and in the scalar tail,
        // from every start offset.
        let mut rng = Rng(0x6a09_e667_f3bc_c908);
        for _ in 0..5_000 {
            let len = rng.below(71) as usize;
            let src: Vec<u8> = (0..len)
                .map(|_| match rng.below(12) {
                    0 => unit(&mut rng) as u8,
                    1 => 0x80 | rng.next() as u8,
                    _ => 0x20 + rng.below(0x60) as u8,
                })
                .collect();
            for start in 0..=len {
                for sp in ALL {
                    assert_eq!(
                        plain_bytes(&src, start, sp),
                        plain_bytes_scalar(&src, start, sp),
                        "{sp:?} {start} {src:x?}"
                    );
                }
            }
        }
    }

    #[test]
    fn escaping_kernel_equals_scalar_on_random_texts() {
        // `escaped_ascii` and, from where it stopped, its scalar twin, against the twin alone:
        // bytes of every class (plain ASCII, each mode's specials, controls, NUL, non-ASCII),
        // the specials drawn often so that a step escapes none, one, several or all sixteen of
        // its lanes, 0-80 bytes from every start offset, every mode's table with NULs kept and
        // dropped.
        use crate::escape::{escapes, Mode};
        let modes = [
            (Mode::XmlText, Specials::XmlText),
            (Mode::XmlAttr, Specials::XmlAttr),
            (Mode::JsonUpper, Specials::Json),
            (Mode::JsonLower, Specials::Json),
            (Mode::Raw, Specials::Raw),
        ];
        const SPECIAL: &[u8] = b"&<>\"'\\\t\r\n\0\x01\x1f";
        let mut rng = Rng(0x5be0_cd19_137e_2179);
        for _ in 0..3_000 {
            let len = rng.below(81) as usize;
            let dense = rng.below(3);
            let src: Vec<u8> = (0..len)
                .map(|_| match rng.below(16) {
                    0 => 0x80 | rng.next() as u8,
                    k if k <= 2 + 4 * dense => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
                    _ => 0x20 + rng.below(0x60) as u8,
                })
                .collect();
            for start in 0..=len {
                let (mode, sp) = modes[rng.below(modes.len() as u64) as usize];
                let esc = escapes(mode, rng.below(2) == 0);
                let (mut got, mut want) = (b"xy".to_vec(), b"xy".to_vec());
                let mut n = escaped_ascii(&mut got, &src, start, sp, esc);
                n += escaped_ascii_scalar(&mut got, &src, start + n, esc);
                assert_eq!(n, escaped_ascii_scalar(&mut want, &src, start, esc));
                assert_eq!(got, want, "{mode:?} {start} {src:x?}");
            }
        }
    }

    #[test]
    fn escaping_kernel_takes_whole_steps() {
        // 41 bytes of XML-like text (a NUL dropped): two whole steps (nearly every lane of the
        // second escaped), then the last 9 left to the caller; a non-ASCII byte ends the run
        // at its lane.
        use crate::escape::{escapes, Mode};
        let esc = escapes(Mode::XmlText, true);
        let src = b"<a>b</a>\0<c>d</c>&&<<>>&&<<>>&&0123456789";
        let mut out = Vec::new();
        assert_eq!(escaped_ascii(&mut out, src, 0, Specials::XmlText, esc), 32);
        assert_eq!(
            out,
            b"&lt;a&gt;b&lt;/a&gt;&lt;c&gt;d&lt;/c&gt;&amp;&amp;&lt;&lt;&gt;&gt;&amp;&amp;&lt;&lt;\
              &gt;&gt;&amp;&amp;0"
        );
        let mut out = Vec::new();
        let text = b"plain <text> caf\xc3\xa9 and more text after it";
        assert_eq!(escaped_ascii(&mut out, text, 0, Specials::XmlText, esc), 16);
        assert_eq!(out, b"plain &lt;text&gt; caf");
    }

    /// A kernel of [`json_run`]'s signature.
    type JsonKernel = fn(&mut Vec<u8>, &[u8], usize, usize) -> usize;

    /// `json_run` and each kernel it may dispatch to on this CPU, by name: the SSE2 one always,
    /// the SSSE3 one where the CPU runs it (the tests say which they skipped).
    fn json_kernels() -> Vec<(&'static str, JsonKernel)> {
        #[allow(unused_mut)]
        let mut kernels: Vec<(&'static str, JsonKernel)> = vec![("json_run", json_run)];
        #[cfg(target_arch = "x86_64")]
        {
            kernels.push(("sse2", sse2::json_run));
            if ssse3::available() {
                // SAFETY: the CPU has SSSE3 and POPCNT (`available`), all the kernel asks.
                kernels.push(("ssse3", |out, src, start, end| unsafe {
                    ssse3::json_run(out, src, start, end)
                }));
            } else {
                eprintln!("no SSSE3 and POPCNT on this CPU: ssse3::json_run not tested");
            }
        }
        kernels
    }

    #[test]
    fn json_kernels_expand_every_mask() {
        // 24 lanes: lane k is `"` when bit k % 8 of `mask` (lanes 0-7, 16-23) or of
        // `mask ^ 0xa5` (lanes 8-15) is set (`\"` shows the order of the escape's two bytes),
        // a plain letter otherwise; the string ends after 4, 8, 16 or 24 units. Both halves of
        // `ssse3`'s 16-unit step and its 8-unit step meet every entry of `EXPAND`, the SSE2
        // loop every set of escaped lanes; against the scalar twin.
        for (name, kernel) in json_kernels() {
            for mask in 0..256u32 {
                let text: String = (0..24)
                    .map(|k| {
                        let m = if (8..16).contains(&k) {
                            mask ^ 0xa5
                        } else {
                            mask
                        };
                        if (m >> (k % 8)) & 1 == 1 {
                            '"'
                        } else {
                            (b'a' + k) as char
                        }
                    })
                    .collect();
                let src: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
                for end in [8, 16, 32, 48] {
                    let (mut got, mut want) = (b"xy".to_vec(), b"xy".to_vec());
                    let n = kernel(&mut got, &src, 0, end);
                    assert_eq!(
                        n,
                        json_run_scalar(&mut want, &src, 0, end),
                        "{name} {mask:#x} {end}"
                    );
                    assert_eq!(got, want, "{name} {mask:#x} {end}");
                }
            }
        }
    }

    #[test]
    fn json_kernel_equals_scalar_on_random_strings() {
        // As above, for `json_run`, with `\`, `"` and tabs drawn often (paths, quoted arguments,
        // privilege lists): a step may escape any number of its lanes, the first, the last, or
        // all eight; `unit` adds NUL and controls written `\u00xx`, where the run ends.
        let kernels = json_kernels();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let units = rng.below(40) as usize;
            let slack = if rng.below(3) == 0 {
                0
            } else {
                rng.below(24) as usize
            };
            let mut src = Vec::new();
            if rng.below(2) == 0 {
                src.push(0x41);
            }
            let start = src.len();
            let quotes = rng.below(4);
            for _ in 0..units + slack {
                let u = match rng.below(8) {
                    0 if quotes > 0 => u16::from(b'\\'),
                    1 if quotes > 1 => u16::from(b'"'),
                    2 if quotes > 2 => u16::from(b'\t'),
                    _ => unit(&mut rng),
                };
                src.extend_from_slice(&u.to_le_bytes());
            }
            let end = start + 2 * units;
            let mut b = b"xy".to_vec();
            let want = json_run_scalar(&mut b, &src, start, end);
            for (name, kernel) in &kernels {
                let mut a = b"xy".to_vec();
                // Driven as the escaper does: near the buffer's end the kernel may stop before
                // a unit it takes; the driver writes that unit as the scalar twin would.
                let mut at = start;
                loop {
                    at += 2 * kernel(&mut a, &src, at, end);
                    if at == end {
                        break;
                    }
                    if json_run_scalar(&mut a, &src, at, at + 2) == 0 {
                        break;
                    }
                    at += 2;
                }
                let got = (at - start) / 2;
                assert_eq!(got, want, "{name} {:x?}", &src[start..end]);
                assert_eq!(a, b, "{name} {:x?}", &src[start..end]);
            }
        }
    }

    #[test]
    fn json_kernel_escapes_every_lane() {
        for (name, kernel) in json_kernels() {
            let run = |s: &str| {
                let mut src: Vec<u8> = s.encode_utf16().flat_map(u16::to_le_bytes).collect();
                let end = src.len();
                src.extend_from_slice(&[0x41; 16]);
                let mut out = b"x".to_vec();
                let n = kernel(&mut out, &src, 0, end);
                (n, String::from_utf8(out).unwrap())
            };
            let path = "C:\\Windows\\System32\\svchost.exe";
            let want = r"xC:\\Windows\\System32\\svchost.exe";
            assert_eq!(run(path), (31, want.into()), "{name}");
            let slashes = format!("x{}", r"\\".repeat(8));
            assert_eq!(run("\\\\\\\\\\\\\\\\"), (8, slashes), "{name}");
            assert_eq!(run("a\"b\"c\u{e9}d"), (5, r#"xa\"b\"c"#.into()), "{name}");
            assert_eq!(run("\\\tab\r\n"), (6, r"x\\\tab\r\n".into()), "{name}");
            assert_eq!(run("a\u{1}b"), (1, "xa".into()), "{name}");
            assert_eq!(run("\u{8}\u{c}\0"), (2, r"x\b\f".into()), "{name}");
            // Non-ASCII lanes of every kind end the run: Latin-1, a high unit whose low byte is
            // plain, 0x8000 and up (signed saturation packs it to 0x00), a control from 0x10.
            assert_eq!(run("ab\u{80}c"), (2, "xab".into()), "{name}");
            assert_eq!(run("ab\u{15c}c"), (2, "xab".into()), "{name}");
            assert_eq!(run("ab\u{8022}c"), (2, "xab".into()), "{name}");
            assert_eq!(run("ab\u{1d}\\"), (2, "xab".into()), "{name}");
            assert_eq!(run(""), (0, "x".into()), "{name}");
        }
    }

    #[test]
    fn stops_where_the_contract_escapes() {
        let run = |s: &str, sp| {
            let mut src: Vec<u8> = s.encode_utf16().flat_map(u16::to_le_bytes).collect();
            let end = src.len();
            src.extend_from_slice(&[0x41; 16]); // room for the last load
            let mut out = Vec::new();
            let n = plain_run(&mut out, &src, 0, end, sp);
            (n, String::from_utf8(out).unwrap())
        };
        let path = "C:\\Windows\\System32";
        assert_eq!(run(path, Specials::Json), (2, "C:".into()));
        assert_eq!(run(path, Specials::XmlText), (19, path.into()));
        assert_eq!(
            run("say \"hi\"", Specials::XmlText),
            (8, "say \"hi\"".into())
        );
        assert_eq!(run("say \"hi\"", Specials::XmlAttr), (4, "say ".into()));
        assert_eq!(run("a&b", Specials::Raw), (3, "a&b".into()));
        assert_eq!(run("tab\there", Specials::Raw), (3, "tab".into()));
        assert_eq!(run("caf\u{e9}", Specials::Json), (3, "caf".into()));
        assert_eq!(run("", Specials::Json), (0, String::new()));
    }

    #[test]
    fn plain_run_steps_while_the_load_fits() {
        // A 20-unit plain string at `start` (odd, as in a chunk), `src` ending `tail` bytes
        // after it: the kernel takes a whole 8-unit step wherever its 16-byte load fits in
        // `src` and stops before the first one that does not (PERF.md H86), never past the
        // string's end however much room follows.
        for tail in 0..24 {
            let start = 3;
            let mut src = vec![0x41; start];
            src.extend(
                "abcdefghijklmnopqrst"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            );
            let end = src.len();
            src.extend(std::iter::repeat_n(0x42, tail));
            let mut out = b"x".to_vec();
            let n = plain_run(&mut out, &src, start, end, Specials::Json);
            // Step k loads bytes start + 16k .. start + 16k + 16.
            let fits = (0..3).filter(|k| start + 16 * k + 16 <= src.len()).count();
            let want = (8 * fits).min(20);
            #[cfg(not(target_arch = "x86_64"))]
            let want = 20;
            assert_eq!(n, want, "tail {tail}");
            assert_eq!(out, &b"xabcdefghijklmnopqrst"[..1 + want], "tail {tail}");
        }
    }
}
