//! Which console this is: the chip revisions and the controller-port wiring that change what
//! a program can observe. AccuracyCoin tells them apart (its per-test behaviour codes), and
//! the default is the console its author uses as the reference: an NTSC front-loader NES-001
//! with an early RP2A03G CPU and an RP2C02G PPU.
//!
//! The chips only know behaviours (the PPU its revision, the APU whether a reload DMA can
//! follow a fetch without a gap); the part numbers are mapped to them here.

use std::fmt;

pub use nes_ppu::PpuRevision;

use nes_cartridge::Mmc3Revision;

/// The 2A03 CPU by production run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CpuRevision {
    /// RP2A03G made before mid-1990 (and earlier letters): at least one APU cycle passes
    /// between the end of one DMC DMA and the next, so a sample byte fetched on the APU
    /// cycle in which the output unit found its buffer empty waits for the next output cycle
    /// (AccuracyCoin "Implicit DMA Abort" code 2).
    #[default]
    EarlyG,
    /// Late RP2A03G and RP2A03H: that gap is gone, so such a byte still feeds the output
    /// cycle that just began, and the reload DMA follows at once; when the byte ended a
    /// one-shot sample the reload fetches it again ("an unexpected reload DMA", NESdev wiki
    /// "DMA", bugs; MesenCE pull request 80; AccuracyCoin "Implicit DMA Abort" code 1).
    LateG,
}

/// How the console wires the controller ports to `$4016`/`$4017`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ControllerPorts {
    /// NES-001 (front-loader): D0-D4 of both registers are driven (nothing attached reads 0),
    /// D5-D7 are open bus; the 2A03's joypad /OE stays asserted across consecutive read
    /// cycles of one register, so the pad sees one clock per run of reads (NESdev wiki
    /// "Standard controller", "DMA"; AccuracyCoin "Controller Clocking" code 1).
    #[default]
    FrontLoader,
    /// NES-101 (top-loader): as the front-loader, but `$4016` D2 is open bus too
    /// (AccuracyCoin "DMC DMA Bus Conflicts" code 1; its "APU Register Activation" and
    /// "Implied Dummy Reads" masks expect `$4017` D2 driven, as Mesen2 models it).
    TopLoader,
    /// RF Famicom (HVC-001): logic outside the 2A03 passes /OE through for half of each
    /// cycle, so every read cycle clocks the pad, consecutive ones included; `$4016` drives
    /// D0-D2 (D2 is the second controller's microphone, silent here) and `$4017` D0-D4
    /// (NESdev wiki "DMA", joypad conflicts; AccuracyCoin "Controller Clocking",
    /// "DMA + $4016 Read" and "DMC DMA Bus Conflicts" code 2).
    Famicom,
}

impl ControllerPorts {
    /// The bits of `$4016` (`port` 0) or `$4017` (1) that nothing drives: open bus.
    pub(crate) fn open_bus_bits(self, port: usize) -> u8 {
        match (self, port) {
            (ControllerPorts::FrontLoader, _) => 0xE0,
            (ControllerPorts::TopLoader, 0) => 0xE4,
            (ControllerPorts::TopLoader, _) => 0xE0,
            (ControllerPorts::Famicom, 0) => 0xF8,
            (ControllerPorts::Famicom, _) => 0xE0,
        }
    }

    /// Whether consecutive read cycles of one joypad register clock the pad only once.
    pub(crate) fn merges_consecutive_reads(self) -> bool {
        self != ControllerPorts::Famicom
    }
}

/// The whole console's hardware profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Hardware {
    pub cpu: CpuRevision,
    pub ppu: PpuRevision,
    pub ports: ControllerPorts,
}

impl Hardware {
    /// The reference console: NES-001, early RP2A03G, RP2C02G.
    pub const NES_001: Hardware = Hardware {
        cpu: CpuRevision::EarlyG,
        ppu: PpuRevision::G,
        ports: ControllerPorts::FrontLoader,
    };
}

/// An option value that names no variant, with the names that would have been accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}` (expected one of: {expected})")]
pub struct UnknownVariant {
    pub what: &'static str,
    pub given: String,
    pub expected: String,
}

/// A console setting whose variants options and manifests name: one table per setting, from
/// which both parsing and display come.
pub trait VariantNames: Copy + PartialEq + 'static {
    /// What the setting is, for error messages.
    const WHAT: &'static str;
    /// Every variant with its name.
    const NAMES: &'static [(Self, &'static str)];
}

impl VariantNames for CpuRevision {
    const WHAT: &'static str = "CPU revision";
    const NAMES: &'static [(Self, &'static str)] = &[
        (CpuRevision::EarlyG, "early-g"),
        (CpuRevision::LateG, "late-g"),
    ];
}

impl VariantNames for PpuRevision {
    const WHAT: &'static str = "PPU revision";
    const NAMES: &'static [(Self, &'static str)] =
        &[(PpuRevision::G, "g"), (PpuRevision::PreG, "pre-g")];
}

impl VariantNames for ControllerPorts {
    const WHAT: &'static str = "controller ports";
    const NAMES: &'static [(Self, &'static str)] = &[
        (ControllerPorts::FrontLoader, "front-loader"),
        (ControllerPorts::TopLoader, "top-loader"),
        (ControllerPorts::Famicom, "famicom"),
    ];
}

impl VariantNames for Mmc3Revision {
    const WHAT: &'static str = "MMC3 revision";
    const NAMES: &'static [(Self, &'static str)] =
        &[(Mmc3Revision::A, "a"), (Mmc3Revision::B, "b")];
}

/// The name of `value` as options and manifests spell it.
pub fn variant_name<T: VariantNames>(value: T) -> &'static str {
    T::NAMES
        .iter()
        .find(|(variant, _)| *variant == value)
        .map_or("?", |(_, name)| name)
}

/// The variant `text` names (any letter case).
pub fn parse_variant<T: VariantNames>(text: &str) -> Result<T, UnknownVariant> {
    T::NAMES
        .iter()
        .find(|(_, name)| name.eq_ignore_ascii_case(text))
        .map(|(variant, _)| *variant)
        .ok_or_else(|| UnknownVariant {
            what: T::WHAT,
            given: text.to_string(),
            expected: T::NAMES
                .iter()
                .map(|(_, name)| *name)
                .collect::<Vec<_>>()
                .join(" "),
        })
}

impl fmt::Display for Hardware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CPU {}, PPU {}, ports {}",
            variant_name(self.cpu),
            variant_name(self.ppu),
            variant_name(self.ports)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_accepted_ones() {
        fn round_trip<T: VariantNames + std::fmt::Debug>() {
            for &(variant, name) in T::NAMES {
                assert_eq!(variant_name(variant), name);
                assert_eq!(parse_variant::<T>(name), Ok(variant));
            }
        }
        round_trip::<CpuRevision>();
        round_trip::<PpuRevision>();
        round_trip::<ControllerPorts>();
        round_trip::<Mmc3Revision>();
        let error = parse_variant::<ControllerPorts>("famicon").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown controller ports `famicon` (expected one of: front-loader top-loader famicom)"
        );
        assert_eq!(parse_variant("LATE-G"), Ok(CpuRevision::LateG));
    }

    #[test]
    fn the_default_is_the_reference_console() {
        assert_eq!(Hardware::default(), Hardware::NES_001);
        assert_eq!(
            Hardware::default().to_string(),
            "CPU early-g, PPU g, ports front-loader"
        );
    }

    #[test]
    fn port_wiring() {
        assert_eq!(ControllerPorts::FrontLoader.open_bus_bits(0), 0xE0);
        assert_eq!(ControllerPorts::TopLoader.open_bus_bits(0), 0xE4);
        assert_eq!(ControllerPorts::TopLoader.open_bus_bits(1), 0xE0);
        assert_eq!(ControllerPorts::Famicom.open_bus_bits(0), 0xF8);
        assert_eq!(ControllerPorts::Famicom.open_bus_bits(1), 0xE0);
        assert!(!ControllerPorts::Famicom.merges_consecutive_reads());
    }
}
