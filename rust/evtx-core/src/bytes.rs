//! Little-endian reads.
//!
//! `le_*` index directly and are only used where the caller has already checked the bounds
//! (fixed headers of a slice whose length is known); `get_*` return `None` out of bounds.

#[inline]
pub(crate) fn le_u16(data: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([data[off], data[off + 1]])
}

#[inline]
pub(crate) fn le_u32(data: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([data[off], data[off + 1], data[off + 2], data[off + 3]])
}

#[inline]
pub(crate) fn le_u64(data: &[u8], off: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[off..off + 8]);
    u64::from_le_bytes(b)
}

/// A block of zeros to compare chunk slots with.
static ZEROS: [u8; 4096] = [0; 4096];

/// Whether every byte is zero. Empty chunk slots are 64 KiB and a sparse log has tens of
/// thousands of them: slice equality is `memcmp` (vectorised, and fast in debug builds too).
pub(crate) fn all_zero(bytes: &[u8]) -> bool {
    bytes
        .chunks(ZEROS.len())
        .all(|block| block == &ZEROS[..block.len()])
}

#[inline]
pub(crate) fn get_u16(data: &[u8], off: usize) -> Option<u16> {
    let b = data.get(off..off.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

#[inline]
pub(crate) fn get_u32(data: &[u8], off: usize) -> Option<u32> {
    let b = data.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A small fast hasher for the engine's maps (keys are chunk offsets and signatures, not
/// attacker-chosen keys of a long-lived service: a collision only costs a probe, equality is
/// still checked on the full key).
#[derive(Default, Clone, Copy)]
pub struct SigHasher(u64);

impl std::hash::Hasher for SigHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        self.0 = h;
    }

    // Integer keys (chunk offsets, signature hashes, a slice's length) in one step instead of
    // `write`'s byte loop for a `u32` (PERF.md H63). The product's halves are swapped: its high
    // half depends on every key bit and becomes the low bits hashbrown picks a bucket by (chunk
    // offsets are often aligned); its top bits (hashbrown's tag) are key bits 25..31 mixed with
    // all below them.
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        let h = (self.0.rotate_left(5) ^ i).wrapping_mul(0x517c_c1b7_2722_0a95);
        self.0 = h.rotate_left(32);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

/// A `HashMap` with [`SigHasher`].
pub(crate) type FastMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<SigHasher>>;

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    #[test]
    fn sig_hasher_spreads_aligned_u32_keys_over_buckets() {
        // Chunk offsets a multiple of 8: the low 8 bits (a 256-bucket table's index) and the
        // top 7 bits (hashbrown's tag) must still take many values.
        let build = std::hash::BuildHasherDefault::<super::SigHasher>::default();
        let hashes: Vec<u64> = (0..256u32).map(|k| build.hash_one(k * 8 + 512)).collect();
        let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 0xff).collect();
        let top: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(low.len() > 128, "{}", low.len());
        assert!(top.len() > 64, "{}", top.len());
        let mut map = super::FastMap::default();
        for k in 0..4096u32 {
            map.insert(k * 8, k);
        }
        assert!((0..4096u32).all(|k| map.get(&(k * 8)) == Some(&k)));
        assert_eq!(map.get(&4), None);
    }

    #[test]
    fn all_zero_sees_any_nonzero_byte() {
        for len in [0, 1, 4095, 4096, 4097, 65536] {
            let mut bytes = vec![0u8; len];
            assert!(super::all_zero(&bytes), "{len}");
            for at in [0, len / 2, len.saturating_sub(1)] {
                if at < len {
                    bytes[at] = 1;
                    assert!(!super::all_zero(&bytes), "{len} {at}");
                    bytes[at] = 0;
                }
            }
        }
    }
}
