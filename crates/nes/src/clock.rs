//! The console's master clock, from which CPU cycles and PPU dots both derive.
//!
//! One crystal drives both chips through dividers (NESdev "Cycle reference chart", "Clock
//! rate"): NTSC 21.477272 MHz with the CPU at /12 and the PPU at /4 (3 dots per CPU cycle);
//! PAL 26.601712 MHz with the CPU at /16 and the PPU at /5 (3.2 dots per cycle: 16 dots every
//! 5 cycles); Dendy the PAL crystal with the CPU at /15 (3 dots per cycle again). Time here is
//! counted in master clocks from power-on: CPU cycle `c` spans `[c * cpu, (c + 1) * cpu)` and
//! PPU dot `d` starts at `d * dot + phase`, where `phase` is the CPU/PPU alignment the dividers
//! happened to power on with (hardware varies; see [`ClockAlignment`]).
//!
//! Within a cycle the 2A03 drives the address early and reads data late, and a write's data
//! is on the bus later than a read's: the dots a PPU register access sees are those that
//! started before its sub-cycle point, one point for reads and one for writes (the split
//! Mesen2 makes with its start/end-of-cycle clock counts). On NTSC both points fall after the
//! second of a cycle's three dots with the default alignment, which blargg's ppu_vbl_nmi suite
//! measures to the dot; on PAL the 16/5 ratio puts the two on different dots on some cycles
//! (see `Clock::PAL` for what decided its points).

/// The CPU/PPU divider alignment at power-on, in master clocks by which the PPU's dots lag
/// the CPU's cycles (0 up to one dot less one clock). The default, 0, is the alignment the
/// NTSC timing test ROMs pass with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ClockAlignment(pub u8);

/// The most CPU cycles a console may have run (about 80 years of NTSC time): master-clock
/// times up to 16 times this fit a `u64` with room to spare. Save states beyond it are
/// refused.
pub(crate) const MAX_CPU_CYCLES: u64 = 1 << 52;

/// Dividers and sub-cycle points of one console region.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Clock {
    /// Master clocks per CPU cycle.
    cpu: u64,
    /// Master clocks per PPU dot.
    dot: u64,
    /// Master clocks from a cycle's start to where a read, and a write, reaches the PPU.
    read_point: u64,
    write_point: u64,
    /// Master clocks by which dot 0 starts after cycle 0.
    phase: u64,
    /// Master clock frequency in Hz.
    master_hz: f64,
}

impl Clock {
    pub(crate) const NTSC: Clock = Clock {
        cpu: 12,
        dot: 4,
        read_point: 5,
        write_point: 7,
        phase: 0,
        master_hz: 21_477_272.0,
    };
    /// The read point follows NTSC's rule (the first master clock after M2 rises, with the
    /// same 5/8 duty: 6 of 16) rather than Mesen2's 7: blargg's nmi_sync `demo_pal` decides
    /// it. Its `$2002`-synchronised greyscale line must start between its two marker sprites
    /// (x = 82 to 84; nmi_sync/readme.txt, "PAL"): with reads at 6 it alternates 82/84, at 7
    /// 81/82, one dot left of the earliest marker. The window demos keep their documented
    /// two- and four-frame cycles either way.
    pub(crate) const PAL: Clock = Clock {
        cpu: 16,
        dot: 5,
        read_point: 6,
        write_point: 9,
        phase: 0,
        master_hz: 26_601_712.0,
    };
    pub(crate) const DENDY: Clock = Clock {
        cpu: 15,
        dot: 5,
        read_point: 6,
        write_point: 8,
        phase: 0,
        master_hz: 26_601_712.0,
    };

    /// This clock with the PPU's dots lagging by `alignment` master clocks (clamped below
    /// one dot).
    pub(crate) fn aligned(self, alignment: ClockAlignment) -> Clock {
        Clock {
            phase: u64::from(alignment.0).min(self.dot - 1),
            ..self
        }
    }

    /// The CPU's frequency in Hz.
    pub(crate) fn cpu_hz(self) -> f64 {
        self.master_hz / self.cpu as f64
    }

    /// PPU dots per CPU cycle (3, or 3.2 on PAL).
    pub(crate) fn dots_per_cpu_cycle(self) -> f64 {
        self.cpu as f64 / self.dot as f64
    }

    /// Dots that started before master time `time`.
    #[inline]
    fn dots_before(self, time: u64) -> u64 {
        // ceil((time - phase) / dot), 0 before dot 0.
        (time + self.dot - 1).saturating_sub(self.phase) / self.dot
    }

    /// Whether a CPU cycle is exactly three dots (NTSC, Dendy): then, with any alignment
    /// below one dot, cycle `c` holds dots `3c..3c + 3`, and the conversions below need no
    /// division by a run-time divisor (they run at every PPU catch-up).
    #[inline(always)]
    fn three_dots_per_cycle(self) -> bool {
        self.cpu == 3 * self.dot
    }

    /// Dots that started before CPU cycle `cycle` began: the PPU's position between cycles.
    #[inline]
    pub(crate) fn dots_before_cycle(self, cycle: u64) -> u64 {
        if self.three_dots_per_cycle() {
            3 * cycle
        } else {
            self.dots_before(cycle * self.cpu)
        }
    }

    /// Dots a read (`write` false) or write in CPU cycle `cycle` sees.
    #[inline]
    pub(crate) fn dots_before_access(self, cycle: u64, write: bool) -> u64 {
        let point = if write {
            self.write_point
        } else {
            self.read_point
        };
        self.dots_before(cycle * self.cpu + point)
    }

    /// The CPU cycle during which dot `dot` starts.
    #[inline]
    pub(crate) fn cycle_of_dot(self, dot: u64) -> u64 {
        if self.three_dots_per_cycle() {
            dot / 3
        } else {
            (dot * self.dot + self.phase) / self.cpu
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntsc_has_three_dots_per_cycle_and_both_accesses_after_the_second() {
        let clock = Clock::NTSC;
        for cycle in 0..1000 {
            assert_eq!(clock.dots_before_cycle(cycle), 3 * cycle);
            assert_eq!(clock.dots_before_access(cycle, false), 3 * cycle + 2);
            assert_eq!(clock.dots_before_access(cycle, true), 3 * cycle + 2);
            for dot in 3 * cycle..3 * cycle + 3 {
                assert_eq!(clock.cycle_of_dot(dot), cycle);
            }
        }
        assert!((clock.cpu_hz() - 1_789_772.7).abs() < 0.1);
    }

    #[test]
    fn pal_has_sixteen_dots_every_five_cycles() {
        let clock = Clock::PAL;
        let per_cycle: Vec<u64> = (0..10)
            .map(|c| clock.dots_before_cycle(c + 1) - clock.dots_before_cycle(c))
            .collect();
        assert_eq!(per_cycle, [4, 3, 3, 3, 3, 4, 3, 3, 3, 3]);
        assert_eq!(clock.dots_before_cycle(5 * 1000), 16 * 1000);
        // Reads and writes see different dots on some cycles, never more than one apart.
        let differing = (0..5)
            .filter(|&c| clock.dots_before_access(c, false) != clock.dots_before_access(c, true))
            .count();
        assert!(differing > 0 && differing < 5);
        for cycle in 0..100 {
            let read = clock.dots_before_access(cycle, false);
            assert!(read >= clock.dots_before_cycle(cycle));
            assert!(clock.dots_before_access(cycle, true) <= read + 1);
            assert!(clock.dots_before_access(cycle, true) <= clock.dots_before_cycle(cycle + 1));
        }
        assert!((clock.cpu_hz() - 1_662_607.0).abs() < 1.0);
    }

    #[test]
    fn region_frames_last_the_documented_cpu_cycles() {
        // NESdev "Cycle reference chart": PAL 106392 dots = 33247.5 cycles per frame; Dendy
        // 106392 dots = 35464 cycles; NTSC 89342 (rendering off) = 29780.67 cycles.
        let cycles = |clock: Clock, dots: u64| (dots * clock.dot) as f64 / clock.cpu as f64;
        assert_eq!(cycles(Clock::PAL, 106_392), 33_247.5);
        assert_eq!(cycles(Clock::DENDY, 106_392), 35_464.0);
        assert_eq!(cycles(Clock::NTSC, 89_342), 89_342.0 / 3.0);
        // 50.007 Hz on both PAL-crystal consoles.
        let hz = |clock: Clock| clock.master_hz / (106_392 * clock.dot) as f64;
        assert!((hz(Clock::PAL) - 50.007).abs() < 0.001);
        assert!((hz(Clock::DENDY) - 50.007).abs() < 0.001);
    }

    #[test]
    fn cycle_of_dot_inverts_dots_before_cycle() {
        for clock in [Clock::NTSC, Clock::PAL, Clock::DENDY] {
            for phase in 0..clock.dot as u8 {
                let clock = clock.aligned(ClockAlignment(phase));
                for cycle in 0..200 {
                    for dot in clock.dots_before_cycle(cycle)..clock.dots_before_cycle(cycle + 1) {
                        assert_eq!(clock.cycle_of_dot(dot), cycle, "{clock:?} dot {dot}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_three_dot_shortcut_agrees_with_the_general_formula() {
        for clock in [Clock::NTSC, Clock::DENDY] {
            for phase in 0..clock.dot as u8 {
                let clock = clock.aligned(ClockAlignment(phase));
                for cycle in 0..300 {
                    assert_eq!(
                        clock.dots_before_cycle(cycle),
                        clock.dots_before(cycle * clock.cpu)
                    );
                }
                for dot in 0..900 {
                    assert_eq!(
                        clock.cycle_of_dot(dot),
                        (dot * clock.dot + clock.phase) / clock.cpu
                    );
                }
            }
        }
    }

    #[test]
    fn the_largest_count_does_not_overflow() {
        let clock = Clock::PAL.aligned(ClockAlignment(4));
        let dots = clock.dots_before_cycle(MAX_CPU_CYCLES);
        assert_eq!(clock.cycle_of_dot(dots), MAX_CPU_CYCLES);
    }
}
