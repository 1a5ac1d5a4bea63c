//! `--region`, `--cpu`, `--ppu`, `--ports` and `--mmc3`, shared by `nes run`, `nes play` and
//! `nes sweep`, and the manifest keys of the same names: which console is emulated (see
//! `nes::Region` and `nes::Hardware`). The region defaults to the one the ROM's header names.
//! The default is the reference console, an NTSC front-loader NES-001 with an early RP2A03G
//! and an RP2C02G; MMC3 boards follow their header (NES 2.0 submapper 4 is an MMC3A).

use nes::{
    variant_name, BoardOptions, Cartridge, CartridgeError, ClockAlignment, ControllerPorts,
    CpuRevision, Hardware, Mmc3Revision, Nes, PowerOn, PpuRevision, Region, VariantNames,
};

/// Which console to emulate.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HardwareArgs {
    /// The console's region: `ntsc`, `pal` (PAL NES: 2A07 and 2C07, 50 Hz) or `dendy`
    /// (UA6527P/UA6538 famiclone). Default: what the ROM's header says (NES 2.0 timing field
    /// or the iNES TV-system bit), else NTSC.
    #[arg(long, value_name = "ntsc|pal|dendy", value_parser = parse::<Region>)]
    pub region: Option<Region>,
    /// The 2A03 CPU: `early-g` (RP2A03G made before mid-1990, the reference console's) or
    /// `late-g` (late RP2A03G and RP2A03H: a DMC reload can follow a fetch with no gap).
    #[arg(long, value_name = "early-g|late-g", value_parser = parse::<CpuRevision>)]
    pub cpu: Option<CpuRevision>,
    /// The 2C02 PPU: `g` (RP2C02G, the default) or `pre-g` (letterless to RP2C02E: `$2004`
    /// and palette RAM do not read back).
    #[arg(long, value_name = "g|pre-g", value_parser = parse::<PpuRevision>)]
    pub ppu: Option<PpuRevision>,
    /// The controller ports: `front-loader` (NES-001, the default), `top-loader` (NES-101)
    /// or `famicom` (RF Famicom: every read cycle clocks the pad).
    #[arg(long, value_name = "front-loader|top-loader|famicom", value_parser = parse::<ControllerPorts>)]
    pub ports: Option<ControllerPorts>,
    /// The MMC3's revision on MMC3 boards: `a` (MMC3A) or `b` (MMC3B/C). Default: what the
    /// header says (NES 2.0 submapper 4 is an MMC3A), else `b`.
    #[arg(long, value_name = "a|b", value_parser = parse::<Mmc3Revision>)]
    pub mmc3: Option<Mmc3Revision>,
}

/// A resolved console choice: the hardware, and the MMC3 revision when one was asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HardwareChoice {
    /// `None`: the ROM header's.
    pub region: Option<Region>,
    pub hardware: Hardware,
    pub mmc3: Option<Mmc3Revision>,
}

impl HardwareArgs {
    pub fn resolve(&self) -> HardwareChoice {
        let reference = Hardware::default();
        HardwareChoice {
            region: self.region,
            hardware: Hardware {
                cpu: self.cpu.unwrap_or(reference.cpu),
                ppu: self.ppu.unwrap_or(reference.ppu),
                ports: self.ports.unwrap_or(reference.ports),
            },
            mmc3: self.mmc3,
        }
    }
}

impl HardwareChoice {
    /// The board choices this console choice makes (the MMC3 revision, when one was asked
    /// for; the header's otherwise).
    pub fn board_options(&self) -> BoardOptions {
        BoardOptions { mmc3: self.mmc3 }
    }

    /// The cartridge in the iNES / NES 2.0 image `image`, its board built as this choice
    /// says ([`HardwareChoice::board_options`]).
    pub fn cartridge(&self, image: &[u8]) -> Result<Cartridge, CartridgeError> {
        Cartridge::from_ines_with(image, self.board_options())
    }

    /// Powers this console on with `cart` (made by [`HardwareChoice::cartridge`], which
    /// settles the board's choices).
    pub fn power_on(&self, cart: Cartridge, power_on: PowerOn) -> Nes {
        let region = self.region.unwrap_or_else(|| Region::for_rom(cart.info()));
        let mut nes = Nes::with_region(cart, power_on, region, ClockAlignment::default());
        nes.set_hardware(self.hardware);
        nes
    }

    /// The choice as `sweep.json` and the sweep workers carry it.
    pub fn record(&self) -> HardwareRecord {
        HardwareRecord {
            region: self.region.map(|region| variant_name(region).to_string()),
            cpu: variant_name(self.hardware.cpu).to_string(),
            ppu: variant_name(self.hardware.ppu).to_string(),
            ports: variant_name(self.hardware.ports).to_string(),
            mmc3: self.mmc3.map(|revision| variant_name(revision).to_string()),
        }
    }
}

/// [`HardwareChoice`] by name, as `sweep.json` records it and sweep workers receive it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HardwareRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub cpu: String,
    pub ppu: String,
    pub ports: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmc3: Option<String>,
}

impl Default for HardwareRecord {
    fn default() -> HardwareRecord {
        HardwareChoice::default().record()
    }
}

impl HardwareRecord {
    pub fn choice(&self) -> Result<HardwareChoice, String> {
        Ok(HardwareChoice {
            region: self.region.as_deref().map(parse).transpose()?,
            hardware: Hardware {
                cpu: parse(&self.cpu)?,
                ppu: parse(&self.ppu)?,
                ports: parse(&self.ports)?,
            },
            mmc3: self.mmc3.as_deref().map(parse).transpose()?,
        })
    }
}

/// Parses a setting's variant name, for clap and the manifest (see `nes::VariantNames`).
pub fn parse<T: VariantNames>(text: &str) -> Result<T, String> {
    nes::parse_variant(text).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_reference_console_and_the_header_mmc3() {
        let choice = HardwareArgs::default().resolve();
        assert_eq!(choice.hardware, Hardware::NES_001);
        assert_eq!(choice.mmc3, None);
    }

    #[test]
    fn records_round_trip_and_bad_names_are_refused() {
        let choice = HardwareChoice {
            region: Some(Region::Pal),
            hardware: Hardware {
                cpu: CpuRevision::LateG,
                ppu: PpuRevision::PreG,
                ports: ControllerPorts::Famicom,
            },
            mmc3: Some(Mmc3Revision::A),
        };
        assert_eq!(choice.record().choice(), Ok(choice));
        let mut record = choice.record();
        record.ports = "sideways".into();
        assert_eq!(
            record.choice(),
            Err(
                "unknown controller ports `sideways` (expected one of: front-loader top-loader \
                 famicom)"
                    .to_string()
            )
        );
        assert!(parse::<Mmc3Revision>("c")
            .unwrap_err()
            .contains("expected one of: a b"));
    }
}
