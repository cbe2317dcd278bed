//! A log under construction: records go into chunks, a new chunk starts when one is full.

use crate::writer::{file_of, filetime, Chunk, ChunkOverrides, Tok};

pub struct Log {
    pub chunks: Vec<Vec<u8>>,
    pub cur: Chunk,
    pub next_id: u64,
    pub time: u64,
}

/// 2024-03-01T08:00:00Z as FILETIME.
pub const BASE_TIME: u64 = (1_709_280_000 + 11_644_473_600) * 10_000_000;

impl Default for Log {
    fn default() -> Self {
        Self::new()
    }
}

impl Log {
    pub fn new() -> Log {
        Log {
            chunks: Vec::new(),
            cur: Chunk::new(),
            next_id: 1,
            time: BASE_TIME,
        }
    }

    /// Appends a record (new chunk if needed); returns its id.
    pub fn rec(&mut self, toks: Vec<Tok>) -> u64 {
        let t = self.time + 12_345_678;
        self.rec_at(toks, t)
    }

    /// Appends a record written at FILETIME `time`.
    pub fn rec_at(&mut self, toks: Vec<Tok>, time: u64) -> u64 {
        let id = self.next_id;
        self.time = time;
        if self.cur.record(id, self.time, &toks).is_err() {
            self.new_chunk();
            self.cur
                .record(id, self.time, &toks)
                .expect("record larger than a chunk");
        }
        self.next_id += 1;
        id
    }

    /// Finishes the current chunk (if it holds anything) and starts a new one.
    pub fn new_chunk(&mut self) {
        if !self.cur.records.is_empty() || self.cur.data.len() > 512 {
            let c = std::mem::take(&mut self.cur);
            self.chunks.push(c.finish(&ChunkOverrides::default()));
        }
    }

    /// All finished chunks (the current one included).
    pub fn into_chunks(mut self) -> Vec<Vec<u8>> {
        self.new_chunk();
        self.chunks
    }

    pub fn into_file(self) -> Vec<u8> {
        file_of(&self.into_chunks())
    }
}

/// FILETIME helper re-export for fixtures.
pub fn ft(unix_secs: u64, ticks: u64) -> u64 {
    filetime(unix_secs, ticks)
}
