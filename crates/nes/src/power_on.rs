//! What CPU RAM holds when the console is switched on.
//!
//! Real consoles power up with RAM in a mostly random, chip-dependent pattern, and a few
//! games read it before writing it (for a random seed, or by mistake). The default here is a
//! fixed, documented choice, all zero, so that runs are reproducible; a seeded random fill is
//! available to shake out code that depends on it, reproducible for a given seed.

/// The content of the 2 KiB of CPU RAM at power-on. Other memories (PRG RAM without battery,
/// CHR RAM, nametable RAM, OAM, palette) always start zeroed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PowerOnRam {
    /// Every byte 0.
    #[default]
    Zeroed,
    /// Pseudo-random bytes from this seed (the same seed gives the same RAM every time).
    Random { seed: u64 },
}

impl PowerOnRam {
    pub(crate) fn fill(self, ram: &mut [u8]) {
        match self {
            PowerOnRam::Zeroed => ram.fill(0),
            PowerOnRam::Random { seed } => {
                let mut generator = SplitMix64(seed);
                for chunk in ram.chunks_mut(8) {
                    let bytes = generator.next().to_le_bytes();
                    chunk.copy_from_slice(&bytes[..chunk.len()]);
                }
            }
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): tiny, statistically good enough for filling RAM,
/// and fully determined by its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_clears_everything() {
        let mut ram = [0x55u8; 2048];
        PowerOnRam::Zeroed.fill(&mut ram);
        assert!(ram.iter().all(|&byte| byte == 0));
    }

    #[test]
    fn random_fill_depends_only_on_the_seed() {
        let mut first = [0u8; 2048];
        let mut again = [0u8; 2048];
        let mut other = [0u8; 2048];
        PowerOnRam::Random { seed: 7 }.fill(&mut first);
        PowerOnRam::Random { seed: 7 }.fill(&mut again);
        PowerOnRam::Random { seed: 8 }.fill(&mut other);
        assert_eq!(first, again);
        assert_ne!(first, other);
        // Not degenerate: all byte values show up in 2 KiB of output.
        let distinct: std::collections::HashSet<u8> = first.iter().copied().collect();
        assert!(
            distinct.len() > 200,
            "only {} distinct bytes",
            distinct.len()
        );
    }
}
