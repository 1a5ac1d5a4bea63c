//! What a debugger, a script host and a test-result protocol read and change of a console
//! without running it: one trait for the whole console between instructions ([`Nes`]) and for
//! a console stopped inside an instruction, in a memory hook ([`HookMachine`]), so that code on
//! top (the Lua host, the test-ROM runner) is written once against either.

use crate::{CpuRegisters, HookMachine, Nes};

/// Side-effect-free access to a console's memory, CPU registers, lag flag, instruction count
/// and ROM image.
pub trait Inspect {
    /// Read the CPU address space without side effects (no $2002 clear, no $4016 shift).
    fn peek(&self, addr: u16) -> u8;
    /// Store a byte as a debugger would: CPU RAM directly; other addresses through the bus
    /// write path (registers see the write) without advancing time. It fires no memory hook.
    fn poke(&mut self, addr: u16, value: u8);
    fn cpu_registers(&self) -> CpuRegisters;
    /// Force the CPU registers. Between instructions the cycle count is set too; inside an
    /// instruction it is kept (the instruction's timing is already under way).
    fn set_cpu_registers(&mut self, regs: CpuRegisters);
    /// FCEUX's lag flag, live (Lua's `emu.lagged`): see [`Nes::lagged`].
    fn lagged(&self) -> bool;
    /// Lua's `emu.setlagflag`: see [`Nes::set_lagged`].
    fn set_lagged(&mut self, lagged: bool);
    /// FCEUX's debugger instruction counter: see [`Nes::instruction_count`].
    fn instruction_count(&self) -> u64;
    /// Count instructions from 0 again.
    fn reset_instruction_count(&mut self);
    /// The cartridge's ROM image after the iNES header: see [`Nes::rom_byte`].
    fn rom_byte(&self, offset: usize) -> Option<u8>;
    /// Patch that image (see [`Nes::patch_rom`]); whether `offset` named a byte.
    fn patch_rom(&mut self, offset: usize, value: u8) -> bool;
}

impl Inspect for Nes {
    fn peek(&self, addr: u16) -> u8 {
        Nes::peek(self, addr)
    }
    fn poke(&mut self, addr: u16, value: u8) {
        Nes::poke(self, addr, value)
    }
    fn cpu_registers(&self) -> CpuRegisters {
        Nes::cpu_registers(self)
    }
    fn set_cpu_registers(&mut self, regs: CpuRegisters) {
        Nes::set_cpu_registers(self, regs)
    }
    fn lagged(&self) -> bool {
        Nes::lagged(self)
    }
    fn set_lagged(&mut self, lagged: bool) {
        Nes::set_lagged(self, lagged)
    }
    fn instruction_count(&self) -> u64 {
        Nes::instruction_count(self)
    }
    fn reset_instruction_count(&mut self) {
        Nes::reset_instruction_count(self)
    }
    fn rom_byte(&self, offset: usize) -> Option<u8> {
        Nes::rom_byte(self, offset)
    }
    fn patch_rom(&mut self, offset: usize, value: u8) -> bool {
        Nes::patch_rom(self, offset, value)
    }
}

impl Inspect for HookMachine<'_> {
    fn peek(&self, addr: u16) -> u8 {
        self.board.peek(addr)
    }
    fn poke(&mut self, addr: u16, value: u8) {
        self.board.poke(addr, value);
    }
    fn cpu_registers(&self) -> CpuRegisters {
        CpuRegisters::of(self.cpu)
    }
    fn set_cpu_registers(&mut self, regs: CpuRegisters) {
        regs.store_in(self.cpu);
    }
    fn lagged(&self) -> bool {
        !self.board.ports.read_this_frame
    }
    fn set_lagged(&mut self, lagged: bool) {
        self.board.ports.read_this_frame = !lagged;
    }
    /// The hooked instruction is counted, as FCEUX counts it before its hooks run.
    fn instruction_count(&self) -> u64 {
        self.cpu.instructions().wrapping_add(self.uncounted)
    }
    /// The hooked instruction counts from 0 too, so the rest of its hooks see 0 (as in FCEUX).
    fn reset_instruction_count(&mut self) {
        self.cpu.set_instructions(0u64.wrapping_sub(self.uncounted));
    }
    fn rom_byte(&self, offset: usize) -> Option<u8> {
        self.board.cart.rom_byte(offset)
    }
    /// The PPU has been caught up to this cycle, so a CHR patch shows from the next dot on.
    fn patch_rom(&mut self, offset: usize, value: u8) -> bool {
        self.board.cart.patch_rom(offset, value)
    }
}
