//! Console regions: which CPU, PPU and clock a console has (NESdev "Cycle reference chart",
//! "Clock rate", "Dendy").
//!
//! The chips hold their own facts (`nes_ppu::PpuModel`: frame layout and emphasis order;
//! `nes_apu::ApuModel`: frame sequencer, noise and DMC periods); the clock's dividers are in
//! `clock.rs`. A region picks one of each.

use nes_apu::ApuModel;
use nes_cartridge::{HeaderTiming, RomInfo};
use nes_ppu::PpuModel;

use crate::clock::Clock;
use crate::hardware::VariantNames;

/// Which console: NTSC, PAL or a Dendy-style famiclone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Region {
    /// RP2A03 CPU and RP2C02 PPU: 262 lines, 60.0988 Hz.
    #[default]
    Ntsc,
    /// RP2A07 CPU and RP2C07 PPU (PAL NES): 312 lines, 3.2 dots per CPU cycle, the PAL APU
    /// periods, 50.007 Hz.
    Pal,
    /// UA6527P CPU and UA6538 PPU: PAL's 312 lines and crystal, with the CPU at master/15 (3
    /// dots per cycle) and the NTSC APU periods; VBlank starts at line 291, so code counting
    /// cycles from NMI to the picture works as on NTSC.
    Dendy,
}

impl Region {
    /// The region an image's header asks for: NES 2.0's timing field (a multi-region image
    /// runs as NTSC), or the iNES 1.0 TV-system bit; NTSC when the header says nothing.
    pub fn for_rom(info: &RomInfo) -> Region {
        match info.timing {
            Some(HeaderTiming::Pal) => Region::Pal,
            Some(HeaderTiming::Dendy) => Region::Dendy,
            Some(HeaderTiming::Ntsc | HeaderTiming::MultiRegion) | None => Region::Ntsc,
        }
    }

    pub(crate) fn clock(self) -> Clock {
        match self {
            Region::Ntsc => Clock::NTSC,
            Region::Pal => Clock::PAL,
            Region::Dendy => Clock::DENDY,
        }
    }

    pub(crate) fn ppu_model(self) -> PpuModel {
        match self {
            Region::Ntsc => PpuModel::Rp2c02,
            Region::Pal => PpuModel::Rp2c07,
            Region::Dendy => PpuModel::Ua6538,
        }
    }

    pub(crate) fn apu_model(self) -> ApuModel {
        match self {
            Region::Pal => ApuModel::Rp2a07,
            Region::Ntsc | Region::Dendy => ApuModel::Rp2a03,
        }
    }

    /// The CPU's frequency in Hz.
    pub fn cpu_hz(self) -> f64 {
        self.clock().cpu_hz()
    }

    /// Frames per second: the master clock over a frame's dots (NTSC: averaged over the
    /// rendering console's alternating short frames, 89341.5 dots).
    pub fn frame_rate_hz(self) -> f64 {
        let model = self.ppu_model();
        let mut dots = f64::from(model.dots_per_frame());
        if model.skips_odd_frame_dot() {
            dots -= 0.5;
        }
        self.clock().cpu_hz() * self.clock().dots_per_cpu_cycle() / dots
    }

    /// The code a save state stores for this region (0 is NTSC, so states from before
    /// regions existed, whose byte is 0, read as NTSC).
    pub(crate) fn state_code(self) -> u8 {
        match self {
            Region::Ntsc => 0,
            Region::Pal => 1,
            Region::Dendy => 2,
        }
    }

    pub(crate) fn from_state_code(code: u8) -> Option<Region> {
        [Region::Ntsc, Region::Pal, Region::Dendy]
            .into_iter()
            .find(|region| region.state_code() == code)
    }
}

impl VariantNames for Region {
    const WHAT: &'static str = "region";
    const NAMES: &'static [(Self, &'static str)] = &[
        (Region::Ntsc, "ntsc"),
        (Region::Pal, "pal"),
        (Region::Dendy, "dendy"),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ines_image, ClockAlignment, Nes, StateError};

    /// NROM looping forever with rendering off; `tv_byte` goes to header byte 9 (iNES TV
    /// system: 1 = PAL) or, with `nes2`, byte 12 (NES 2.0 timing).
    fn idle_image(timing_byte: u8, nes2: bool) -> Vec<u8> {
        let mut prg = vec![0xEA; 0x8000];
        prg[..3].copy_from_slice(&[0x4C, 0x00, 0x80]); // JMP $8000
        prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
        let mut image = ines_image(0, &prg, &[0; 0x2000]);
        if nes2 {
            image[7] |= 0x08;
            image[12] = timing_byte;
        } else {
            image[9] = timing_byte;
        }
        image
    }

    fn cycles_over_frames(nes: &mut Nes, frames: u64) -> u64 {
        nes.run_frame();
        let start = nes.cpu_registers().cycles;
        for _ in 0..frames {
            nes.run_frame();
        }
        nes.cpu_registers().cycles - start
    }

    #[test]
    fn the_header_picks_the_region() {
        let region = |image: Vec<u8>| Nes::from_ines(&image).unwrap().region();
        assert_eq!(region(idle_image(0, false)), Region::Ntsc);
        assert_eq!(region(idle_image(1, false)), Region::Pal);
        assert_eq!(region(idle_image(1, true)), Region::Pal);
        assert_eq!(region(idle_image(2, true)), Region::Ntsc, "multi-region");
        assert_eq!(region(idle_image(3, true)), Region::Dendy);
    }

    #[test]
    fn frames_last_the_cycles_of_each_region() {
        // NESdev "Cycle reference chart": 29780.67 (rendering off: no short frames), 33247.5
        // and 35464 CPU cycles per frame. Frames end at instruction boundaries (JMP: 3
        // cycles), so 600 frames are within one instruction of the exact count.
        for (region, per_frame) in [
            (Region::Ntsc, 89_342.0 / 3.0),
            (Region::Pal, 33_247.5),
            (Region::Dendy, 35_464.0),
        ] {
            let mut nes = Nes::from_ines(&idle_image(0, false)).unwrap();
            nes.set_region(region, ClockAlignment::default());
            assert_eq!(nes.region(), region);
            let cycles = cycles_over_frames(&mut nes, 600) as f64;
            assert!(
                (cycles - per_frame * 600.0).abs() <= 3.0,
                "{region:?}: {cycles} cycles in 600 frames"
            );
        }
    }

    #[test]
    fn a_state_loads_only_into_a_console_of_its_region() {
        let mut pal = Nes::from_ines(&idle_image(1, false)).unwrap();
        pal.run_frame();
        let state = pal.save_state();
        let mut ntsc = Nes::from_ines(&idle_image(1, false)).unwrap();
        ntsc.set_region(Region::Ntsc, ClockAlignment::default());
        assert_eq!(
            ntsc.load_state(&state),
            Err(StateError::WrongRegion {
                state: "pal",
                console: "ntsc"
            })
        );
        // Into a PAL console it loads and continues as the original does.
        let mut other = Nes::from_ines(&idle_image(1, false)).unwrap();
        other.load_state(&state).unwrap();
        for _ in 0..3 {
            pal.run_frame();
            other.run_frame();
        }
        assert_eq!(pal.save_state(), other.save_state());
    }

    #[test]
    fn the_region_survives_power_cycles() {
        let mut nes = Nes::from_ines(&idle_image(0, false)).unwrap();
        nes.set_region(Region::Dendy, ClockAlignment::default());
        nes.power_cycle();
        assert_eq!(nes.region(), Region::Dendy);
    }

    #[test]
    fn frame_rates_are_the_documented_ones() {
        assert!((Region::Ntsc.frame_rate_hz() - 60.0988).abs() < 0.0001);
        assert!((Region::Pal.frame_rate_hz() - 50.0070).abs() < 0.0001);
        assert!((Region::Dendy.frame_rate_hz() - 50.0070).abs() < 0.0001);
    }

    #[test]
    fn state_codes_round_trip() {
        for &(region, _) in Region::NAMES {
            assert_eq!(Region::from_state_code(region.state_code()), Some(region));
        }
        assert_eq!(Region::from_state_code(3), None);
    }
}
