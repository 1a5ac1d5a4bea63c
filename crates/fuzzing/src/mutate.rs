//! A small deterministic mutator for the stable smoke runs: the same seed gives the same
//! inputs on every machine, so a smoke failure reproduces exactly. (The long runs use
//! libFuzzer's own coverage-guided mutations.)

/// xorshift64* random numbers and libFuzzer-like byte mutations.
#[derive(Debug, Clone)]
pub struct Mutator {
    state: u64,
}

/// Values that often sit on a boundary: 0, 1, sign bits, all ones.
const INTERESTING: [u8; 8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x10, 0x40];

impl Mutator {
    pub fn new(seed: u64) -> Mutator {
        Mutator {
            state: seed | 1, // xorshift must not start at zero
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    /// `input` with 1 to 8 random edits (bit flips, boundary bytes, random bytes, inserted,
    /// removed or duplicated runs, a splice from `other`), at most `max_len` bytes long.
    pub fn mutate(&mut self, input: &[u8], other: &[u8], max_len: usize) -> Vec<u8> {
        let mut data = input.to_vec();
        for _ in 0..1 + self.below(8) {
            self.edit(&mut data, other);
        }
        data.truncate(max_len);
        data
    }

    fn edit(&mut self, data: &mut Vec<u8>, other: &[u8]) {
        if data.is_empty() {
            data.push(self.next_u64() as u8);
            return;
        }
        let at = self.below(data.len());
        match self.below(7) {
            0 => data[at] ^= 1 << self.below(8),
            1 => data[at] = INTERESTING[self.below(INTERESTING.len())],
            2 => data[at] = self.next_u64() as u8,
            3 => {
                let len = 1 + self.below(16);
                let bytes: Vec<u8> = (0..len).map(|_| self.next_u64() as u8).collect();
                data.splice(at..at, bytes);
            }
            4 => {
                let end = (at + 1 + self.below(64)).min(data.len());
                data.drain(at..end);
            }
            5 => {
                let end = (at + 1 + self.below(64)).min(data.len());
                let run = data[at..end].to_vec();
                let to = self.below(data.len());
                data.splice(to..to, run);
            }
            _ => {
                if !other.is_empty() {
                    let from = self.below(other.len());
                    let end = (from + 1 + self.below(256)).min(other.len());
                    let to = self.below(data.len());
                    let len = (end - from).min(data.len() - to);
                    data[to..to + len].copy_from_slice(&other[from..from + len]);
                }
            }
        }
    }
}

/// Runs `target` on every seed and then on `count` mutants of them (mutator seeded with
/// `seed`). Returns how many inputs ran. A panic in `target` propagates, so a test fails with
/// the target's message; the failing input is saved to a file first (its name is printed) so
/// it can be replayed.
pub fn smoke(
    seeds: &[Vec<u8>],
    count: usize,
    seed: u64,
    max_len: usize,
    target: impl Fn(&[u8]),
) -> usize {
    assert!(!seeds.is_empty(), "a smoke run needs at least one seed");
    for input in seeds {
        run_reporting(input, &target);
    }
    let mut mutator = Mutator::new(seed);
    for _ in 0..count {
        let base = &seeds[mutator.below(seeds.len())];
        let other = &seeds[mutator.below(seeds.len())];
        let input = mutator.mutate(base, other, max_len);
        run_reporting(&input, &target);
    }
    seeds.len() + count
}

fn run_reporting(input: &[u8], target: &impl Fn(&[u8])) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target(input)));
    if let Err(panic) = outcome {
        let shown: String = input
            .iter()
            .take(256)
            .map(|byte| format!("{byte:02x}"))
            .collect();
        // The whole input goes to a file, for `scripts/fuzz.sh replay TARGET FILE`.
        let path = std::env::temp_dir().join(format!("nes-fuzz-smoke-{:016x}", input_hash(input)));
        let saved = match std::fs::write(&path, input) {
            Ok(()) => format!("saved as {}", path.display()),
            Err(error) => format!("not saved ({}: {error})", path.display()),
        };
        eprintln!(
            "fuzz smoke: the target panicked on this {}-byte input, {saved}; its first 256 \
             bytes (hex): {shown}",
            input.len()
        );
        std::panic::resume_unwind(panic);
    }
}

/// A stable name for an input's bytes (64-bit FNV-1a): seed files and saved failures are
/// named by it, so writing the same input again is idempotent.
pub fn input_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let seeds = [b"hello world".to_vec(), b"NES\x1a".to_vec()];
        let run = |seed| {
            let mut mutator = Mutator::new(seed);
            (0..100)
                .map(|i| mutator.mutate(&seeds[i % 2], &seeds[(i + 1) % 2], 64))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().all(|input| input.len() <= 64));
        assert!(run(7)
            .iter()
            .any(|input| input != &seeds[0] && input != &seeds[1]));
    }
}
