//! Rewind: a bounded history of save states, newest kept whole, older ones as compressed
//! differences.
//!
//! Consecutive states of a running game differ in a few kilobytes (RAM variables, part of the
//! picture, audio state), so each older snapshot is stored as the XOR of itself with the next
//! newer one, LZ4-compressed: long runs of zeros compress to almost nothing. Because every
//! difference only depends on the newer snapshot, the oldest entries can be dropped at any time
//! to stay under the memory budget, and stepping back rebuilds one snapshot per step.

use std::collections::VecDeque;

use nes::Nes;

/// A rewind history for one console (see the module documentation).
#[derive(Debug, Clone)]
pub struct Rewind {
    /// Frames between two snapshots (1 = every frame).
    interval: u32,
    frames_since_snapshot: u32,
    /// Upper bound for the bytes held (the newest snapshot plus all differences).
    memory_budget: usize,
    /// The newest snapshot, uncompressed; empty when the history is empty.
    newest: Vec<u8>,
    /// Compressed `older XOR newer` differences, oldest first; the last one rebuilds the
    /// snapshot just before `newest`.
    older: VecDeque<Vec<u8>>,
    older_bytes: usize,
    /// Buffers reused from one snapshot to the next.
    scratch: Vec<u8>,
    difference: Vec<u8>,
}

impl Rewind {
    /// A history that takes a snapshot every `interval_frames` frames (at least 1) and holds at
    /// most about `memory_budget_bytes` (always at least the newest snapshot).
    pub fn new(memory_budget_bytes: usize, interval_frames: u32) -> Rewind {
        Rewind {
            interval: interval_frames.max(1),
            frames_since_snapshot: 0,
            memory_budget: memory_budget_bytes,
            newest: Vec::new(),
            older: VecDeque::new(),
            older_bytes: 0,
            scratch: Vec::new(),
            difference: Vec::new(),
        }
    }

    /// Call once after every emulated frame: takes a snapshot when one is due.
    pub fn record(&mut self, nes: &Nes) {
        self.frames_since_snapshot += 1;
        if self.frames_since_snapshot < self.interval {
            return;
        }
        self.frames_since_snapshot = 0;
        self.snapshot(nes);
    }

    /// Takes a snapshot now.
    pub fn snapshot(&mut self, nes: &Nes) {
        nes.save_state_into(&mut self.scratch);
        if !self.newest.is_empty() {
            xor_into(&self.newest, &self.scratch, &mut self.difference);
            let compressed = lz4_flex::compress_prepend_size(&self.difference);
            self.older_bytes += compressed.len();
            self.older.push_back(compressed);
        }
        std::mem::swap(&mut self.newest, &mut self.scratch);
        while self.older_bytes + self.newest.len() > self.memory_budget {
            let Some(oldest) = self.older.pop_front() else {
                break;
            };
            self.older_bytes -= oldest.len();
        }
    }

    /// Restores the newest snapshot into `nes` and drops it from the history, so the next call
    /// goes further back. Returns false (and leaves `nes` alone) when the history is empty.
    pub fn step_back(&mut self, nes: &mut Nes) -> bool {
        if self.newest.is_empty() || nes.load_state(&self.newest).is_err() {
            // A snapshot that does not load (another ROM was inserted since) ends the history.
            self.clear();
            return false;
        }
        self.frames_since_snapshot = 0;
        match self.older.pop_back() {
            Some(compressed) => {
                self.older_bytes -= compressed.len();
                match lz4_flex::decompress_size_prepended(&compressed) {
                    Ok(difference) => {
                        let mut previous = std::mem::take(&mut self.scratch);
                        xor_into(&self.newest, &difference, &mut previous);
                        self.scratch = std::mem::replace(&mut self.newest, previous);
                    }
                    // Cannot happen for data compressed above; dropping the history is the
                    // safe answer if it ever did.
                    Err(_) => self.clear(),
                }
            }
            None => self.newest.clear(),
        }
        true
    }

    /// Snapshots held.
    pub fn len(&self) -> usize {
        if self.newest.is_empty() {
            0
        } else {
            self.older.len() + 1
        }
    }

    pub fn is_empty(&self) -> bool {
        self.newest.is_empty()
    }

    /// Bytes held by the snapshots.
    pub fn memory_used(&self) -> usize {
        self.older_bytes + self.newest.len()
    }

    /// Forgets every snapshot (after loading a state or another ROM).
    pub fn clear(&mut self) {
        self.newest.clear();
        self.older.clear();
        self.older_bytes = 0;
        self.frames_since_snapshot = 0;
    }
}

/// `out = a XOR b`, as long as the longer input; the shorter one counts as zero-padded (states
/// of one ROM all have the same length, so this only matters for robustness).
fn xor_into(a: &[u8], b: &[u8], out: &mut Vec<u8>) {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    out.clear();
    out.extend_from_slice(long);
    for (byte, other) in out.iter_mut().zip(short) {
        *byte ^= other;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nes::test_programs::busy_rom;
    use nes::Buttons;

    fn input_for(frame: u64) -> Buttons {
        Buttons::from_bits_retain((frame / 7).wrapping_mul(29) as u8)
    }

    fn run_to(nes: &mut Nes, last_frame: u64, rewind: &mut Rewind) {
        while nes.frame_count() < last_frame {
            nes.set_buttons(0, input_for(nes.frame_count() + 1));
            nes.run_frame();
            rewind.record(nes);
        }
    }

    #[test]
    fn rewinding_ten_seconds_and_replaying_reaches_the_same_state() {
        let mut nes = Nes::from_ines(&busy_rom()).unwrap();
        nes.set_audio_sample_rate(48_000);
        let budget = 32 << 20;
        let mut rewind = Rewind::new(budget, 2);
        run_to(&mut nes, 1200, &mut rewind);
        let end_state = nes.save_state();
        assert!(rewind.memory_used() <= budget);
        assert_eq!(
            rewind.len(),
            600,
            "one snapshot every 2 frames, none evicted"
        );

        // Ten seconds of 60 frames, two frames per snapshot.
        for _ in 0..300 {
            assert!(rewind.step_back(&mut nes));
        }
        assert_eq!(
            nes.frame_count(),
            1200 - 600 + 2,
            "the 300th newest snapshot"
        );
        let mut replay = Rewind::new(budget, 2);
        run_to(&mut nes, 1200, &mut replay);
        assert_eq!(
            nes.save_state(),
            end_state,
            "replay ends in the identical state"
        );
    }

    #[test]
    fn the_memory_budget_evicts_the_oldest_snapshots() {
        let mut nes = Nes::from_ines(&busy_rom()).unwrap();
        let state_len = nes.save_state().len();
        let budget = state_len + 20_000;
        let mut rewind = Rewind::new(budget, 1);
        run_to(&mut nes, 300, &mut rewind);
        assert!(rewind.memory_used() <= budget, "{}", rewind.memory_used());
        let held = rewind.len();
        assert!(held > 1 && held < 300, "{held} snapshots held");
        let mut steps = 0;
        while rewind.step_back(&mut nes) {
            steps += 1;
        }
        assert_eq!(steps, held);
        assert_eq!(
            nes.frame_count(),
            300 - held as u64 + 1,
            "the oldest snapshot kept"
        );
        assert!(rewind.is_empty());
        assert!(!rewind.step_back(&mut nes));
    }

    #[test]
    fn xor_is_its_own_inverse() {
        let a = [1u8, 2, 3, 4, 5];
        let b = [9u8, 2, 7, 4, 0];
        let mut difference = Vec::new();
        xor_into(&a, &b, &mut difference);
        assert_eq!(difference, [8, 0, 4, 0, 5]);
        let mut back = Vec::new();
        xor_into(&b, &difference, &mut back);
        assert_eq!(back, a);
    }
}
