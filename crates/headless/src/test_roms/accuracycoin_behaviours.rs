//! The AccuracyCoin tests that pass with more than one behaviour code, what hardware each
//! code stands for, and which code each emulated console must give.
//!
//! From the comments of AccuracyCoin.asm (the build in ../shared: upstream c82fc7a) at each
//! test's `LDA #((code << 2) | 1)` pass: a test with several passing behaviours stores the
//! code in bits 7-2 of its result byte. A console passes AccuracyCoin only with the codes of
//! its own chips, not with a mix that happens to pass.

use nes::{ControllerPorts, CpuRevision, Hardware, PpuRevision};

/// What a console must produce for one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// A pass with this code.
    Pass(u8),
    /// The ROM skips the test on this hardware (result $FF).
    Skipped,
}

/// One test with several passing behaviours.
#[derive(Debug)]
pub struct MultiCodeTest {
    pub result_addr: u16,
    /// Each code the ROM accepts as a pass and the hardware it stands for.
    pub codes: &'static [(u8, &'static str)],
    /// The code `hardware` gives.
    pub expected: fn(&Hardware) -> u8,
}

const NES_OR_AV_FAMICOM: &str = "NES / AV Famicom ports";
const RF_FAMICOM: &str = "RF Famicom ports";

fn famicom_port_code(hardware: &Hardware) -> u8 {
    if hardware.ports == ControllerPorts::Famicom {
        2
    } else {
        1
    }
}

fn ppu_revision_code(hardware: &Hardware) -> u8 {
    match hardware.ppu {
        PpuRevision::G => 16,
        PpuRevision::PreG => 14,
    }
}

/// The SHA/SHS high-byte corruption: "these instructions behave differently with different
/// manufacturers" (no console model is named); the emulated 6502 follows the documented one.
const SHA_CODES: &[(u8, &str)] = &[
    (1, "A & X & (H+1), the documented behaviour (emulated)"),
    (2, "X & (H+1), \"many consoles\""),
    (3, "A & magic number"),
    (4, "A | X"),
];

pub const MULTI_CODE_TESTS: &[MultiCodeTest] = &[
    MultiCodeTest {
        result_addr: 0x0446, // $93 SHA indirect,Y
        codes: SHA_CODES,
        expected: |_| 1,
    },
    MultiCodeTest {
        result_addr: 0x0447, // $9F SHA absolute,Y
        codes: SHA_CODES,
        expected: |_| 1,
    },
    MultiCodeTest {
        result_addr: 0x0448, // $9B SHS absolute,Y
        codes: SHA_CODES,
        expected: |_| 1,
    },
    MultiCodeTest {
        result_addr: 0x0488, // DMA + $2002 Read
        codes: &[
            (1, "load DMA after 2 APU cycles, the common 2A03s"),
            (
                2,
                "after 3 APU cycles, \"very rare CPU revisions\" (not emulated)",
            ),
        ],
        expected: |_| 1,
    },
    MultiCodeTest {
        result_addr: 0x045E, // DMA + $4016 Read
        codes: &[(1, NES_OR_AV_FAMICOM), (2, RF_FAMICOM)],
        expected: famicom_port_code,
    },
    MultiCodeTest {
        result_addr: 0x046B, // DMC DMA Bus Conflicts: the $4016 bits that float
        codes: &[
            (0, "front-loader NES-001 ports"),
            (1, "top-loader NES-101 ports"),
            (2, RF_FAMICOM),
        ],
        expected: |hardware| match hardware.ports {
            ControllerPorts::FrontLoader => 0,
            ControllerPorts::TopLoader => 1,
            ControllerPorts::Famicom => 2,
        },
    },
    MultiCodeTest {
        result_addr: 0x0478, // Implicit DMA Abort
        codes: &[
            (1, "2A03 from mid-1990 on (late G, H)"),
            (2, "2A03 before mid-1990 (early G)"),
        ],
        expected: |hardware| match hardware.cpu {
            CpuRevision::EarlyG => 2,
            CpuRevision::LateG => 1,
        },
    },
    MultiCodeTest {
        result_addr: 0x045C, // APU Register Activation
        codes: &[
            (1, "OAM DMA bus conflict does not clock the pads"),
            (
                2,
                "OAM DMA bus conflict clocks the pads (emulated; no model named)",
            ),
        ],
        expected: |_| 2,
    },
    MultiCodeTest {
        result_addr: 0x047A, // Controller Clocking
        codes: &[(1, NES_OR_AV_FAMICOM), (2, RF_FAMICOM)],
        expected: famicom_port_code,
    },
    MultiCodeTest {
        result_addr: 0x0476, // PPU Read Buffer
        codes: &[
            (16, "\"G\": RP2C02G or later"),
            (14, "\"E\": before RP2C02G"),
        ],
        expected: ppu_revision_code,
    },
    MultiCodeTest {
        result_addr: 0x045B, // Address $2004 behavior
        codes: &[
            (16, "\"G\": RP2C02G or later"),
            (14, "\"E\": before RP2C02G"),
        ],
        expected: ppu_revision_code,
    },
    MultiCodeTest {
        result_addr: 0x0484, // Sprites On Scanline 0
        codes: &[
            (1, "composite 2C02 (odd-frame dot skip)"),
            (2, "RGB 2C03/2C04/2C05 (not emulated)"),
        ],
        expected: |_| 1,
    },
];

/// Tests that need OAMDATA or palette reads and skip themselves on a PPU before revision G
/// ("This test requires rev G / later"): $2004 Stress Test, APU Register Activation, OAM
/// Corruption, Palette RAM Quirks.
const SKIPPED_BEFORE_PPU_G: [u16; 4] = [0x048C, 0x045C, 0x047B, 0x047E];

/// What `hardware` must give for the test whose result byte is at `result_addr`.
pub fn expected(result_addr: u16, hardware: &Hardware) -> Expected {
    if hardware.ppu == PpuRevision::PreG && SKIPPED_BEFORE_PPU_G.contains(&result_addr) {
        return Expected::Skipped;
    }
    match multi_code_test(result_addr) {
        Some(test) => Expected::Pass((test.expected)(hardware)),
        None => Expected::Pass(0),
    }
}

pub fn multi_code_test(result_addr: u16) -> Option<&'static MultiCodeTest> {
    MULTI_CODE_TESTS
        .iter()
        .find(|test| test.result_addr == result_addr)
}

/// The hardware a passing `code` of the test at `result_addr` stands for, when the test has
/// several passing behaviours.
pub fn variant_of(result_addr: u16, code: u8) -> Option<&'static str> {
    let test = multi_code_test(result_addr)?;
    test.codes
        .iter()
        .find(|(known, _)| *known == code)
        .map(|(_, variant)| *variant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_expected_code_is_one_the_rom_documents() {
        let consoles = [
            Hardware::NES_001,
            Hardware {
                cpu: CpuRevision::LateG,
                ppu: PpuRevision::PreG,
                ports: ControllerPorts::Famicom,
            },
            Hardware {
                ports: ControllerPorts::TopLoader,
                ..Hardware::NES_001
            },
        ];
        for hardware in &consoles {
            for test in MULTI_CODE_TESTS {
                let code = (test.expected)(hardware);
                assert!(
                    variant_of(test.result_addr, code).is_some(),
                    "${:04X}: code {code} for {hardware}",
                    test.result_addr
                );
            }
        }
    }

    #[test]
    fn the_reference_console_gives_the_reference_codes() {
        let reference = Hardware::NES_001;
        assert_eq!(expected(0x0478, &reference), Expected::Pass(2));
        assert_eq!(expected(0x046B, &reference), Expected::Pass(0));
        assert_eq!(expected(0x0484, &reference), Expected::Pass(1));
        assert_eq!(expected(0x0476, &reference), Expected::Pass(16));
        assert_eq!(expected(0x0405, &reference), Expected::Pass(0));
        let pre_g = Hardware {
            ppu: PpuRevision::PreG,
            ..reference
        };
        assert_eq!(expected(0x045C, &pre_g), Expected::Skipped);
        assert_eq!(expected(0x045B, &pre_g), Expected::Pass(14));
    }
}
