//! nestest's automated mode on a flat memory map, compared register by register with the
//! reference log (PC, A, X, Y, P, SP and the cycle count; the PPU column needs the console).
//!
//! The ROM and log live in the shared test-ROM folder (`$NES_TEST_ROMS`, or
//! `shared/test-roms` next to the workspace); the test skips with a note when they are absent.

use std::path::PathBuf;

use nes_cpu::{Bus, Cpu, Status};

/// 2 KiB of RAM mirrored through $1FFF, the 16 KiB PRG ROM at $8000 and $C000, and plain
/// memory elsewhere (nestest only writes to the APU registers, never reads them back).
struct NestestBus {
    ram: [u8; 0x800],
    prg: Vec<u8>,
    other: Vec<u8>,
}

impl Bus for NestestBus {
    fn read(&mut self, addr: u16) -> u8 {
        let addr = usize::from(addr);
        match addr {
            0x0000..=0x1FFF => self.ram[addr & 0x7FF],
            0x8000..=0xFFFF => self.prg[(addr - 0x8000) % self.prg.len()],
            _ => self.other[addr],
        }
    }

    fn write(&mut self, addr: u16, value: u8) {
        let addr = usize::from(addr);
        match addr {
            0x0000..=0x1FFF => self.ram[addr & 0x7FF] = value,
            0x8000..=0xFFFF => {}
            _ => self.other[addr] = value,
        }
    }

    fn nmi_line(&self) -> bool {
        false
    }

    fn irq_line(&self) -> bool {
        false
    }
}

fn test_rom_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("NES_TEST_ROMS") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/test-roms")
}

/// The compared columns of one log line.
#[derive(Debug, PartialEq, Eq)]
struct TraceState {
    pc: u16,
    a: u8,
    x: u8,
    y: u8,
    p: u8,
    sp: u8,
    cycles: u64,
}

fn hex_field<T: TryFrom<u32>>(line: &str, key: &str) -> T {
    let start = line
        .find(key)
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + key.len();
    let digits: String = line[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    let value = u32::from_str_radix(&digits, 16).unwrap_or_else(|_| panic!("bad {key} in {line}"));
    T::try_from(value).unwrap_or_else(|_| panic!("{key} out of range in {line}"))
}

fn parse_line(line: &str) -> TraceState {
    let cycles_text = line
        .split("CYC:")
        .nth(1)
        .unwrap_or_else(|| panic!("no CYC in {line}"));
    TraceState {
        pc: u16::from_str_radix(&line[0..4], 16).unwrap_or_else(|_| panic!("bad PC in {line}")),
        a: hex_field(line, "A:"),
        x: hex_field(line, "X:"),
        y: hex_field(line, "Y:"),
        p: hex_field(line, "P:"),
        sp: hex_field(line, "SP:"),
        cycles: cycles_text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("bad CYC in {line}")),
    }
}

#[test]
fn nestest_matches_the_reference_log() {
    let dir = test_rom_dir().join("cpu/nestest");
    let (Ok(rom), Ok(log)) = (
        std::fs::read(dir.join("nestest.nes")),
        std::fs::read_to_string(dir.join("nestest.log")),
    ) else {
        // Skipped loudly on a machine without the test ROMs; CI must never pass vacuously.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but nestest.nes / nestest.log are missing from {}",
            dir.display()
        );
        eprintln!(
            "skipped: nestest.nes / nestest.log not found in {}",
            dir.display()
        );
        return;
    };
    // iNES: 16-byte header, then one 16 KiB PRG bank.
    let prg = rom[16..16 + 0x4000].to_vec();
    let mut bus = NestestBus {
        ram: [0; 0x800],
        prg,
        other: vec![0; 0x10000],
    };
    let mut cpu = Cpu::new();
    cpu.pc = 0xC000;
    cpu.s = 0xFD;
    cpu.p = Status::from_bits_retain(0x24);
    cpu.set_cycles(7);

    for (number, line) in log.lines().enumerate() {
        let expected = parse_line(line);
        let actual = TraceState {
            pc: cpu.pc,
            a: cpu.a,
            x: cpu.x,
            y: cpu.y,
            p: cpu.p.bits(),
            sp: cpu.s,
            cycles: cpu.cycles(),
        };
        assert_eq!(actual, expected, "line {}: {line}", number + 1);
        cpu.step(&mut bus);
    }
    // The official and unofficial test results: both 0 when everything passed.
    assert_eq!((bus.ram[2], bus.ram[3]), (0, 0));
    assert!(!cpu.jammed());
}
