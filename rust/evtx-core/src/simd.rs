//! The one module of evtx-core with `unsafe` code (issue 14): vector kernels for the hot text
//! paths, each with a scalar twin that a property test holds it equal to.
//!
//! [`plain_run`] copies the leading run of "plain" UTF-16 units of a string (ASCII that the
//! escape mode writes as itself) narrowed to bytes, eight units per SSE2 step. Everything else
//! (escapes, non-ASCII, NUL, surrogates) is left to the scalar escaper in `escape`, which calls
//! back here after each such unit.
//!
//! SSE2 is part of the x86-64 baseline, so no runtime detection is needed; other targets use
//! the scalar twin.

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
    let run = src[start..end]
        .chunks_exact(2)
        .take_while(|c| !sp.stops_at(u16::from_le_bytes([c[0], c[1]])))
        .count();
    out.extend(src[start..start + 2 * run].chunks_exact(2).map(|c| c[0]));
    run
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi16, _mm_cmplt_epi16,
        _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16, _mm_set1_epi16,
        _mm_setzero_si128, _mm_storel_epi64,
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
        match MODE {
            0 => _mm_or_si128(low, _mm_or_si128(eq(v, b'"'), eq(v, b'\\'))),
            1 => _mm_or_si128(
                low,
                _mm_or_si128(eq(v, b'&'), _mm_or_si128(eq(v, b'<'), eq(v, b'>'))),
            ),
            2 => _mm_or_si128(
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
        let mut copied = 0;
        while copied < n {
            let at = start + 2 * copied;
            if at + 16 > src.len() {
                break;
            }
            // SAFETY: SSE2 is part of the x86-64 baseline, so every intrinsic here is
            // available. The load: `at + 16 <= src.len()` (checked above), so the 16 bytes read
            // are inside `src`, and `_mm_loadu_si128` has no alignment requirement. The store:
            // the capacity is at least `base + n + 8` (reserved above, nothing pushed since) and
            // `copied < n`, so the 8 bytes written at `base + copied` are inside the allocation
            // (spare capacity, written through a raw pointer, never read as a `&[u8]`);
            // `_mm_storel_epi64` has no alignment requirement either.
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
            let left = n - copied;
            if stop == 0 {
                copied += left.min(8);
                continue;
            }
            // Two mask bits per lane: the first stopping lane, or the string's end if sooner.
            copied += ((stop.trailing_zeros() / 2) as usize).min(left);
            break;
        }
        // SAFETY: `base + copied <= base + n <= capacity`, and bytes `base..base + copied` were
        // written: each step wrote 8 bytes from `base + copied` and advanced `copied` by at
        // most 8 (`left.min(8)` or a lane index below 8), so every byte it accounts for was
        // written by that step.
        unsafe { out.set_len(base + copied) };
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
}
