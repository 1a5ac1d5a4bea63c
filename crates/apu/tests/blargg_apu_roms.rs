//! Runs blargg's APU test ROMs (/work/shared/test-roms/apu) against the APU alone, on a small
//! cycle-stepped 6502 written only for this purpose: every bus access is one CPU cycle followed
//! by one `Apu::tick`, the contract the real console follows. The "PPU" is only a vblank flag
//! ($2002 bit 7) and NMI at the NTSC frame rate; DMC DMA steals CPU read cycles as the NESdev
//! "DMA" page describes. Enough for the APU ROMs (official opcodes, mapper 0), nothing more.
//! The ROMs are skipped when the directory is missing.

use std::path::{Path, PathBuf};

use nes_apu::Apu;

const ROM_DIR: &str = "/work/shared/test-roms/apu";
/// PPU dots per NTSC frame (odd-frame skipped dot ignored) and per CPU cycle.
const DOTS_PER_FRAME: u32 = 341 * 262;
const VBLANK_DOTS: u32 = 341 * 20;

const FLAG_C: u8 = 0x01;
const FLAG_Z: u8 = 0x02;
const FLAG_I: u8 = 0x04;
const FLAG_D: u8 = 0x08;
const FLAG_B: u8 = 0x10;
const FLAG_U: u8 = 0x20;
const FLAG_V: u8 = 0x40;
const FLAG_N: u8 = 0x80;

struct Machine {
    apu: Apu,
    ram: [u8; 0x800],
    prg_ram: [u8; 0x2000],
    prg: Vec<u8>,
    cycle: u64,
    dot: u32,
    vblank: bool,
    nmi_enabled: bool,
    nmi_pending: bool,
    irq_line_now: bool,
    irq_line_previous: bool,
    a: u8,
    x: u8,
    y: u8,
    s: u8,
    p: u8,
    pc: u16,
    /// Set when the program jumped to its own address (2005-era ROMs park there).
    parked: bool,
    unknown_opcode: Option<u8>,
}

impl Machine {
    fn new(image: &[u8]) -> Machine {
        assert_eq!(&image[..4], b"NES\x1A");
        let prg_banks = usize::from(image[4]);
        let trainer = if image[6] & 4 != 0 { 512 } else { 0 };
        let start = 16 + trainer;
        let prg = image[start..start + prg_banks * 0x4000].to_vec();
        let mut machine = Machine {
            apu: Apu::new(),
            ram: [0; 0x800],
            prg_ram: [0; 0x2000],
            prg,
            cycle: 0,
            dot: 0,
            vblank: false,
            nmi_enabled: false,
            nmi_pending: false,
            irq_line_now: false,
            irq_line_previous: false,
            a: 0,
            x: 0,
            y: 0,
            s: 0,
            p: FLAG_I | FLAG_U,
            pc: 0,
            parked: false,
            unknown_opcode: None,
        };
        machine.reset_sequence();
        machine
    }

    /// The 6502's 7-cycle reset: two reads, three suppressed pushes, the vector.
    fn reset_sequence(&mut self) {
        let pc = self.pc;
        self.read(pc);
        self.read(pc);
        for _ in 0..3 {
            self.read(0x100 | u16::from(self.s));
            self.s = self.s.wrapping_sub(1);
        }
        self.p |= FLAG_I;
        let lo = self.read(0xFFFC);
        let hi = self.read(0xFFFD);
        self.pc = u16::from_le_bytes([lo, hi]);
    }

    fn press_reset(&mut self) {
        self.parked = false;
        self.apu.reset();
        self.reset_sequence();
    }

    fn end_cycle(&mut self) {
        self.apu.tick();
        self.cycle += 1;
        for _ in 0..3 {
            self.dot += 1;
            if self.dot == DOTS_PER_FRAME {
                self.dot = 0;
                self.vblank = true;
                if self.nmi_enabled {
                    self.nmi_pending = true;
                }
            } else if self.dot == VBLANK_DOTS {
                self.vblank = false;
            }
        }
        self.irq_line_previous = self.irq_line_now;
        self.irq_line_now = self.apu.irq_line();
    }

    fn bus_read(&mut self, addr: u16) -> u8 {
        match addr {
            0x0000..=0x1FFF => self.ram[usize::from(addr & 0x7FF)],
            0x2000..=0x3FFF => {
                if addr & 7 == 2 {
                    let value = u8::from(self.vblank) << 7;
                    self.vblank = false;
                    value
                } else {
                    0
                }
            }
            0x4015 => self.apu.read_status(),
            0x4000..=0x5FFF => 0,
            0x6000..=0x7FFF => self.prg_ram[usize::from(addr & 0x1FFF)],
            _ => self.prg[usize::from(addr - 0x8000) % self.prg.len()],
        }
    }

    fn read(&mut self, addr: u16) -> u8 {
        if let Some(dma_address) = self.apu.dmc_dma_address() {
            // DMC DMA: halt cycle, dummy cycle, optional alignment, then the get.
            self.bus_read(addr);
            self.end_cycle();
            self.bus_read(addr);
            self.end_cycle();
            if self.cycle & 1 != nes_apu::GET_CYCLE_PARITY {
                self.bus_read(addr);
                self.end_cycle();
            }
            let value = self.bus_read(dma_address);
            self.apu.dmc_dma_complete(value);
            self.end_cycle();
        }
        let value = self.bus_read(addr);
        self.end_cycle();
        value
    }

    fn write(&mut self, addr: u16, value: u8) {
        match addr {
            0x0000..=0x1FFF => self.ram[usize::from(addr & 0x7FF)] = value,
            0x2000..=0x3FFF if addr & 7 == 0 => {
                let enable = value & 0x80 != 0;
                if enable && !self.nmi_enabled && self.vblank {
                    self.nmi_pending = true;
                }
                self.nmi_enabled = enable;
            }
            0x4014 => {
                self.end_cycle();
                for _ in 0..(512 + (self.cycle & 1)) {
                    self.end_cycle();
                }
                return;
            }
            0x4000..=0x4017 => self.apu.write_register(addr, value),
            0x6000..=0x7FFF => self.prg_ram[usize::from(addr & 0x1FFF)] = value,
            _ => {}
        }
        self.end_cycle();
    }

    fn fetch(&mut self) -> u8 {
        let value = self.read(self.pc);
        self.pc = self.pc.wrapping_add(1);
        value
    }

    fn push(&mut self, value: u8) {
        self.write(0x100 | u16::from(self.s), value);
        self.s = self.s.wrapping_sub(1);
    }

    fn pull(&mut self) -> u8 {
        self.s = self.s.wrapping_add(1);
        self.read(0x100 | u16::from(self.s))
    }

    fn set_zn(&mut self, value: u8) {
        self.p &= !(FLAG_Z | FLAG_N);
        if value == 0 {
            self.p |= FLAG_Z;
        }
        self.p |= value & FLAG_N;
    }

    fn flag(&self, flag: u8) -> bool {
        self.p & flag != 0
    }

    fn set_flag(&mut self, flag: u8, on: bool) {
        if on {
            self.p |= flag;
        } else {
            self.p &= !flag;
        }
    }

    fn interrupt(&mut self, vector: u16, brk: bool) {
        if !brk {
            self.read(self.pc);
            self.read(self.pc);
        }
        let [lo, hi] = self.pc.to_le_bytes();
        self.push(hi);
        self.push(lo);
        let pushed = if brk {
            self.p | FLAG_B | FLAG_U
        } else {
            (self.p & !FLAG_B) | FLAG_U
        };
        self.push(pushed);
        self.p |= FLAG_I;
        let lo = self.read(vector);
        let hi = self.read(vector + 1);
        self.pc = u16::from_le_bytes([lo, hi]);
    }

    // ---- addressing modes: each returns the effective address after the right bus cycles.

    fn addr_zero_page(&mut self) -> u16 {
        u16::from(self.fetch())
    }

    fn addr_zero_page_indexed(&mut self, index: u8) -> u16 {
        let base = self.fetch();
        self.read(u16::from(base));
        u16::from(base.wrapping_add(index))
    }

    fn addr_absolute(&mut self) -> u16 {
        let lo = self.fetch();
        let hi = self.fetch();
        u16::from_le_bytes([lo, hi])
    }

    fn addr_absolute_indexed(&mut self, index: u8, always_dummy: bool) -> u16 {
        let base = self.addr_absolute();
        let target = base.wrapping_add(u16::from(index));
        if always_dummy || (base & 0xFF00) != (target & 0xFF00) {
            self.read((base & 0xFF00) | (target & 0x00FF));
        }
        target
    }

    fn addr_indexed_indirect(&mut self) -> u16 {
        let pointer = self.fetch();
        self.read(u16::from(pointer));
        let pointer = pointer.wrapping_add(self.x);
        let lo = self.read(u16::from(pointer));
        let hi = self.read(u16::from(pointer.wrapping_add(1)));
        u16::from_le_bytes([lo, hi])
    }

    fn addr_indirect_indexed(&mut self, always_dummy: bool) -> u16 {
        let pointer = self.fetch();
        let lo = self.read(u16::from(pointer));
        let hi = self.read(u16::from(pointer.wrapping_add(1)));
        let base = u16::from_le_bytes([lo, hi]);
        let target = base.wrapping_add(u16::from(self.y));
        if always_dummy || (base & 0xFF00) != (target & 0xFF00) {
            self.read((base & 0xFF00) | (target & 0x00FF));
        }
        target
    }

    /// Effective address for the addressing mode in bits 2-4 of a group-1 style opcode.
    /// `store` forces the indexed dummy read (writes and read-modify-writes).
    fn operand_address(&mut self, opcode: u8, store: bool) -> Option<u16> {
        let index_y_for_x_ops = matches!(opcode, 0x96 | 0xB6 | 0xBE);
        Some(match opcode & 0x1F {
            0x01 | 0x03 => self.addr_indexed_indirect(),
            0x04..=0x07 => self.addr_zero_page(),
            0x0C..=0x0F => self.addr_absolute(),
            0x11 | 0x13 => self.addr_indirect_indexed(store),
            0x14..=0x17 => {
                let index = if index_y_for_x_ops { self.y } else { self.x };
                self.addr_zero_page_indexed(index)
            }
            0x19 | 0x1B => self.addr_absolute_indexed(self.y, store),
            0x1C..=0x1F => {
                let index = if index_y_for_x_ops { self.y } else { self.x };
                self.addr_absolute_indexed(index, store)
            }
            _ => return None,
        })
    }

    fn read_operand(&mut self, opcode: u8) -> u8 {
        // Immediate: $x9 (group 1), $A0/$A2/$C0/$E0 (group 0/2).
        if opcode & 0x1F == 0x09 || matches!(opcode, 0xA0 | 0xA2 | 0xC0 | 0xE0) {
            return self.fetch();
        }
        match self.operand_address(opcode, false) {
            Some(addr) => self.read(addr),
            None => self.fetch(),
        }
    }

    fn compare(&mut self, register: u8, value: u8) {
        self.set_flag(FLAG_C, register >= value);
        self.set_zn(register.wrapping_sub(value));
    }

    fn add(&mut self, value: u8) {
        let sum = u16::from(self.a) + u16::from(value) + u16::from(self.flag(FLAG_C));
        let result = sum as u8;
        self.set_flag(FLAG_C, sum > 0xFF);
        self.set_flag(FLAG_V, (!(self.a ^ value) & (self.a ^ result) & 0x80) != 0);
        self.a = result;
        self.set_zn(result);
    }

    fn branch(&mut self, taken: bool) {
        let offset = self.fetch() as i8;
        if taken {
            self.read(self.pc);
            let target = self.pc.wrapping_add(offset as u16);
            if target & 0xFF00 != self.pc & 0xFF00 {
                self.read((self.pc & 0xFF00) | (target & 0xFF));
            }
            self.pc = target;
        }
    }

    fn read_modify_write(&mut self, opcode: u8) {
        let accumulator = opcode & 0x1F == 0x0A;
        let (addr, value) = if accumulator {
            self.read(self.pc);
            (0, self.a)
        } else {
            let addr = self.operand_address(opcode, true).unwrap_or(0);
            let value = self.read(addr);
            self.write(addr, value);
            (addr, value)
        };
        let result = match opcode >> 5 {
            0 => {
                self.set_flag(FLAG_C, value & 0x80 != 0);
                value << 1
            }
            1 => {
                let carry = u8::from(self.flag(FLAG_C));
                self.set_flag(FLAG_C, value & 0x80 != 0);
                (value << 1) | carry
            }
            2 => {
                self.set_flag(FLAG_C, value & 1 != 0);
                value >> 1
            }
            3 => {
                let carry = u8::from(self.flag(FLAG_C)) << 7;
                self.set_flag(FLAG_C, value & 1 != 0);
                (value >> 1) | carry
            }
            6 => value.wrapping_sub(1),
            _ => value.wrapping_add(1),
        };
        self.set_zn(result);
        if accumulator {
            self.a = result;
        } else {
            self.write(addr, result);
        }
    }

    fn step(&mut self) {
        let opcode = self.fetch();
        let i_before = self.flag(FLAG_I);
        match opcode {
            0x00 => {
                self.fetch();
                self.interrupt(0xFFFE, true);
            }
            0x20 => {
                let lo = self.fetch();
                self.read(0x100 | u16::from(self.s));
                let [pcl, pch] = self.pc.to_le_bytes();
                self.push(pch);
                self.push(pcl);
                let hi = self.read(self.pc);
                self.pc = u16::from_le_bytes([lo, hi]);
            }
            0x40 => {
                self.read(self.pc);
                self.read(0x100 | u16::from(self.s));
                self.p = (self.pull() & !FLAG_B) | FLAG_U;
                let lo = self.pull();
                let hi = self.pull();
                self.pc = u16::from_le_bytes([lo, hi]);
            }
            0x60 => {
                self.read(self.pc);
                self.read(0x100 | u16::from(self.s));
                let lo = self.pull();
                let hi = self.pull();
                self.pc = u16::from_le_bytes([lo, hi]);
                self.fetch();
            }
            0x4C => {
                let start = self.pc.wrapping_sub(1);
                self.pc = self.addr_absolute();
                self.parked |= self.pc == start;
            }
            0x6C => {
                let pointer = self.addr_absolute();
                let lo = self.read(pointer);
                let hi = self.read((pointer & 0xFF00) | (pointer.wrapping_add(1) & 0xFF));
                self.pc = u16::from_le_bytes([lo, hi]);
            }
            0x08 | 0x48 | 0x28 | 0x68 => {
                self.read(self.pc);
                match opcode {
                    0x08 => self.push(self.p | FLAG_B | FLAG_U),
                    0x48 => self.push(self.a),
                    _ => {
                        self.read(0x100 | u16::from(self.s));
                        let value = self.pull();
                        if opcode == 0x28 {
                            self.p = (value & !FLAG_B) | FLAG_U;
                        } else {
                            self.a = value;
                            self.set_zn(value);
                        }
                    }
                }
            }
            0x10 => self.branch(!self.flag(FLAG_N)),
            0x30 => self.branch(self.flag(FLAG_N)),
            0x50 => self.branch(!self.flag(FLAG_V)),
            0x70 => self.branch(self.flag(FLAG_V)),
            0x90 => self.branch(!self.flag(FLAG_C)),
            0xB0 => self.branch(self.flag(FLAG_C)),
            0xD0 => self.branch(!self.flag(FLAG_Z)),
            0xF0 => self.branch(self.flag(FLAG_Z)),
            0x18 | 0x38 | 0x58 | 0x78 | 0xB8 | 0xD8 | 0xF8 | 0xAA | 0x8A | 0xA8 | 0x98 | 0xBA
            | 0x9A | 0xE8 | 0xC8 | 0xCA | 0x88 | 0xEA => {
                self.read(self.pc);
                match opcode {
                    0x18 => self.set_flag(FLAG_C, false),
                    0x38 => self.set_flag(FLAG_C, true),
                    0x58 => self.set_flag(FLAG_I, false),
                    0x78 => self.set_flag(FLAG_I, true),
                    0xB8 => self.set_flag(FLAG_V, false),
                    0xD8 => self.set_flag(FLAG_D, false),
                    0xF8 => self.set_flag(FLAG_D, true),
                    0xAA => {
                        self.x = self.a;
                        self.set_zn(self.x);
                    }
                    0x8A => {
                        self.a = self.x;
                        self.set_zn(self.a);
                    }
                    0xA8 => {
                        self.y = self.a;
                        self.set_zn(self.y);
                    }
                    0x98 => {
                        self.a = self.y;
                        self.set_zn(self.a);
                    }
                    0xBA => {
                        self.x = self.s;
                        self.set_zn(self.x);
                    }
                    0x9A => self.s = self.x,
                    0xE8 => {
                        self.x = self.x.wrapping_add(1);
                        self.set_zn(self.x);
                    }
                    0xC8 => {
                        self.y = self.y.wrapping_add(1);
                        self.set_zn(self.y);
                    }
                    0xCA => {
                        self.x = self.x.wrapping_sub(1);
                        self.set_zn(self.x);
                    }
                    0x88 => {
                        self.y = self.y.wrapping_sub(1);
                        self.set_zn(self.y);
                    }
                    _ => {}
                }
            }
            // Stores.
            0x81 | 0x85 | 0x8D | 0x91 | 0x95 | 0x99 | 0x9D | 0x84 | 0x8C | 0x94 | 0x86 | 0x8E
            | 0x96 => {
                let addr = self.operand_address(opcode, true).unwrap_or(0);
                let value = match opcode & 3 {
                    0 => self.y,
                    1 => self.a,
                    _ => self.x,
                };
                self.write(addr, value);
            }
            // Read-modify-write and accumulator shifts.
            0x06 | 0x0A | 0x0E | 0x16 | 0x1E | 0x26 | 0x2A | 0x2E | 0x36 | 0x3E | 0x46 | 0x4A
            | 0x4E | 0x56 | 0x5E | 0x66 | 0x6A | 0x6E | 0x76 | 0x7E | 0xC6 | 0xCE | 0xD6 | 0xDE
            | 0xE6 | 0xEE | 0xF6 | 0xFE => self.read_modify_write(opcode),
            // Group 1 reads: ORA AND EOR ADC LDA CMP SBC.
            _ if opcode & 3 == 1 && opcode != 0x89 => {
                let value = self.read_operand(opcode);
                match opcode >> 5 {
                    0 => {
                        self.a |= value;
                        self.set_zn(self.a);
                    }
                    1 => {
                        self.a &= value;
                        self.set_zn(self.a);
                    }
                    2 => {
                        self.a ^= value;
                        self.set_zn(self.a);
                    }
                    3 => self.add(value),
                    5 => {
                        self.a = value;
                        self.set_zn(value);
                    }
                    6 => self.compare(self.a, value),
                    _ => self.add(!value),
                }
            }
            0xA0 | 0xA4 | 0xAC | 0xB4 | 0xBC => {
                self.y = self.read_operand(opcode);
                self.set_zn(self.y);
            }
            0xA2 | 0xA6 | 0xAE | 0xB6 | 0xBE => {
                self.x = self.read_operand(opcode);
                self.set_zn(self.x);
            }
            0xC0 | 0xC4 | 0xCC => {
                let value = self.read_operand(opcode);
                self.compare(self.y, value);
            }
            0xE0 | 0xE4 | 0xEC => {
                let value = self.read_operand(opcode);
                self.compare(self.x, value);
            }
            0x24 | 0x2C => {
                let value = self.read_operand(opcode);
                self.set_flag(FLAG_Z, self.a & value == 0);
                self.p = (self.p & !(FLAG_N | FLAG_V)) | (value & (FLAG_N | FLAG_V));
            }
            _ => {
                self.unknown_opcode.get_or_insert(opcode);
                self.read(self.pc);
            }
        }
        // Interrupts are polled before the last cycle: CLI/SEI/PLP act after the poll.
        let i_flag = if matches!(opcode, 0x58 | 0x78 | 0x28) {
            i_before
        } else {
            self.flag(FLAG_I)
        };
        if self.nmi_pending {
            self.nmi_pending = false;
            self.interrupt(0xFFFA, false);
        } else if self.irq_line_previous && !i_flag {
            self.interrupt(0xFFFE, false);
        }
    }

    /// Run `frames` frames of CPU time, or until the program parks when `stop_when_parked`.
    fn run_frames(&mut self, frames: u64, stop_when_parked: bool) {
        let end = self.cycle + frames * 29_781;
        while self.cycle < end && !(stop_when_parked && self.parked) {
            self.step();
        }
    }

    fn text(&self) -> String {
        let bytes = &self.prg_ram[4..];
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    }
}

fn rom_path(relative: &str) -> Option<PathBuf> {
    let path = Path::new(ROM_DIR).join(relative);
    path.exists().then_some(path)
}

/// blargg-6000 protocol: returns (status, text).
fn run_blargg_6000(relative: &str, max_frames: u64) -> Option<(u8, String)> {
    let image = std::fs::read(rom_path(relative)?).ok()?;
    let mut machine = Machine::new(&image);
    let mut frames = 0;
    let mut reset_armed = true;
    while frames < max_frames {
        machine.run_frames(1, false);
        frames += 1;
        if std::env::var("HARNESS_TRACE").is_ok() {
            eprintln!(
                "frame {frames} status {:02X} sig {:02X?} pc {:04X}",
                machine.prg_ram[0],
                &machine.prg_ram[1..4],
                machine.pc
            );
        }
        if machine.prg_ram[1..4] != [0xDE, 0xB0, 0x61] {
            continue;
        }
        match machine.prg_ram[0] {
            0x80 => reset_armed = true,
            0x81 if reset_armed => {
                machine.run_frames(8, false);
                frames += 8;
                machine.press_reset();
                reset_armed = false;
            }
            0x81 => {}
            status => return Some((status, machine.text())),
        }
    }
    assert_eq!(machine.unknown_opcode, None, "harness lacks an opcode");
    Some((0xFF, format!("timeout: {}", machine.text())))
}

/// ram-byte protocol ($F0, jmp-self): returns the result code.
fn run_ram_byte(relative: &str, max_frames: u64) -> Option<u8> {
    let image = std::fs::read(rom_path(relative)?).ok()?;
    let mut machine = Machine::new(&image);
    machine.run_frames(max_frames, true);
    assert_eq!(machine.unknown_opcode, None, "harness lacks an opcode");
    Some(machine.ram[0xF0])
}

macro_rules! blargg_6000 {
    ($name:ident, $path:expr) => {
        #[test]
        fn $name() {
            match run_blargg_6000($path, 1200) {
                None => eprintln!("skipped: {} not found", $path),
                Some((status, text)) => assert_eq!(status, 0, "{}: {}", $path, text),
            }
        }
    };
}

macro_rules! ram_byte {
    ($name:ident, $path:expr) => {
        #[test]
        fn $name() {
            match run_ram_byte($path, 600) {
                None => eprintln!("skipped: {} not found", $path),
                Some(code) => assert_eq!(code, 1, "{}: result code {}", $path, code),
            }
        }
    };
}

blargg_6000!(apu_test_1_len_ctr, "apu_test/rom_singles/1-len_ctr.nes");
blargg_6000!(apu_test_2_len_table, "apu_test/rom_singles/2-len_table.nes");
blargg_6000!(apu_test_3_irq_flag, "apu_test/rom_singles/3-irq_flag.nes");
blargg_6000!(apu_test_4_jitter, "apu_test/rom_singles/4-jitter.nes");
blargg_6000!(
    apu_test_5_len_timing,
    "apu_test/rom_singles/5-len_timing.nes"
);
blargg_6000!(
    apu_test_6_irq_flag_timing,
    "apu_test/rom_singles/6-irq_flag_timing.nes"
);
blargg_6000!(
    apu_test_7_dmc_basics,
    "apu_test/rom_singles/7-dmc_basics.nes"
);
blargg_6000!(apu_test_8_dmc_rates, "apu_test/rom_singles/8-dmc_rates.nes");
blargg_6000!(apu_reset_4015_cleared, "apu_reset/4015_cleared.nes");
blargg_6000!(apu_reset_4017_timing, "apu_reset/4017_timing.nes");
blargg_6000!(apu_reset_4017_written, "apu_reset/4017_written.nes");
blargg_6000!(apu_reset_irq_flag_cleared, "apu_reset/irq_flag_cleared.nes");
blargg_6000!(apu_reset_len_ctrs_enabled, "apu_reset/len_ctrs_enabled.nes");
blargg_6000!(
    apu_reset_works_immediately,
    "apu_reset/works_immediately.nes"
);
ram_byte!(apu_2005_01_len_ctr, "blargg_apu_2005.07.30/01.len_ctr.nes");
ram_byte!(
    apu_2005_02_len_table,
    "blargg_apu_2005.07.30/02.len_table.nes"
);
ram_byte!(
    apu_2005_03_irq_flag,
    "blargg_apu_2005.07.30/03.irq_flag.nes"
);
ram_byte!(
    apu_2005_04_clock_jitter,
    "blargg_apu_2005.07.30/04.clock_jitter.nes"
);
ram_byte!(
    apu_2005_05_len_timing_mode0,
    "blargg_apu_2005.07.30/05.len_timing_mode0.nes"
);
ram_byte!(
    apu_2005_06_len_timing_mode1,
    "blargg_apu_2005.07.30/06.len_timing_mode1.nes"
);
ram_byte!(
    apu_2005_07_irq_flag_timing,
    "blargg_apu_2005.07.30/07.irq_flag_timing.nes"
);
ram_byte!(
    apu_2005_08_irq_timing,
    "blargg_apu_2005.07.30/08.irq_timing.nes"
);
ram_byte!(
    apu_2005_09_reset_timing,
    "blargg_apu_2005.07.30/09.reset_timing.nes"
);
ram_byte!(
    apu_2005_10_len_halt_timing,
    "blargg_apu_2005.07.30/10.len_halt_timing.nes"
);
ram_byte!(
    apu_2005_11_len_reload_timing,
    "blargg_apu_2005.07.30/11.len_reload_timing.nes"
);
