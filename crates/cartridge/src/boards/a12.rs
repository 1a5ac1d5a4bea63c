//! PPU address line A12 as the boards that watch it see it.
//!
//! The PPU's A12 selects the pattern table ($0000 or $1000), so it toggles as rendering
//! fetches background and sprite tiles, and as `$2006`/`$2007` move the address. Two chips
//! here listen to it: the MMC3 counts its rises (after a long enough low period: the chip's
//! filter, NESdev "MMC3", IRQ specifics) and the MMC1 outputs the CHR register A12 selects
//! on the CHR lines that SxROM boards also wire to PRG and RAM (NESdev "SxROM"). Both only
//! react when the level changes, so the cartridge keeps one [`A12Filter`], compares each PPU
//! address with it (one test while A12 holds), and hands the board an [`A12Edge`] when it
//! changes.

use borsh::{BorshDeserialize, BorshSerialize};

/// A12 as last driven, and since when it has been low.
#[derive(Debug, Clone, Copy, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct A12Filter {
    high: bool,
    /// The CPU cycle (M2 count) on which A12 last fell.
    low_since: u64,
}

/// A change of A12, as [`A12Filter::drive`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum A12Edge {
    Fell,
    /// A12 rose after `low_cycles` M2 cycles low: the CPU cycle of the rise minus that of
    /// the fall (both counted whole, as a counter clocked by M2 sees them).
    Rose {
        low_cycles: u64,
    },
}

impl A12Filter {
    /// At power-on the PPU has driven nothing: A12 counts as low since cycle 0.
    pub const POWER_ON: A12Filter = A12Filter {
        high: false,
        low_since: 0,
    };

    #[inline(always)]
    pub fn is_high(&self) -> bool {
        self.high
    }

    /// Whether driving `addr` changes A12: the one test made on every PPU access.
    #[inline(always)]
    pub fn changes_with(&self, addr: u16) -> bool {
        (addr & 0x1000 != 0) != self.high
    }

    /// Drives `addr` during CPU cycle `cpu_cycle()` (asked for only when A12 changes) and
    /// returns the change, if any.
    #[inline(always)]
    pub fn drive(&mut self, addr: u16, cpu_cycle: impl FnOnce() -> u64) -> Option<A12Edge> {
        if !self.changes_with(addr) {
            return None;
        }
        self.high = !self.high;
        let cycle = cpu_cycle();
        if self.high {
            Some(A12Edge::Rose {
                low_cycles: cycle.wrapping_sub(self.low_since),
            })
        } else {
            self.low_since = cycle;
            Some(A12Edge::Fell)
        }
    }
}

impl A12Edge {
    /// The level A12 is at after this change.
    #[inline]
    pub fn is_high(self) -> bool {
        matches!(self, A12Edge::Rose { .. })
    }

    /// Whether this is a rise that follows at least `min_low_cycles` M2 cycles of A12 low:
    /// one that passes a filter like the MMC3's, which ignores the short low periods between
    /// sprite pattern fetches.
    #[inline]
    pub fn rises_after_low(self, min_low_cycles: u64) -> bool {
        matches!(self, A12Edge::Rose { low_cycles } if low_cycles >= min_low_cycles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_changes_only_with_their_low_time() {
        let mut a12 = A12Filter::POWER_ON;
        let never = || -> u64 { panic!("the cycle is asked for only on a change") };
        assert_eq!(a12.drive(0x0FFF, never), None);
        assert_eq!(
            a12.drive(0x1000, || 7),
            Some(A12Edge::Rose { low_cycles: 7 })
        );
        assert_eq!(a12.drive(0x1FFF, never), None);
        assert_eq!(a12.drive(0x2000, || 9), Some(A12Edge::Fell));
        assert!(!a12.is_high());
        let rise = a12.drive(0x3000, || 12).unwrap();
        assert_eq!(rise, A12Edge::Rose { low_cycles: 3 });
        assert!(rise.is_high() && a12.is_high());
        assert!(!rise.rises_after_low(4) && rise.rises_after_low(3));
        assert!(!A12Edge::Fell.rises_after_low(0));
    }
}
