//! The CPU's memory map: which device answers each address, for reads and writes made by
//! the 6502 (NESdev "CPU memory map"). The clocking around each access is in
//! `motherboard.rs`; DMA reads, which see the buses differently, in `dma_conflicts.rs`.

use crate::motherboard::{is_dma_get_cycle, Motherboard, RAM_SIZE};

impl Motherboard {
    /// The effect of a CPU read at `addr` without the clocking around it.
    ///
    /// Cartridge space and work RAM take nearly every CPU read, so they are tested first and
    /// inlined into each access; the registers go through an out-of-line call.
    #[inline(always)]
    pub(crate) fn read_mapped(&mut self, addr: u16) -> u8 {
        // Cartridge memory first: opcode and operand fetches are the commonest reads.
        let value = if addr >= 0x6000 {
            self.cart.cpu_read(addr).unwrap_or(self.open_bus)
        } else if addr < 0x2000 {
            self.ram[usize::from(addr) & (RAM_SIZE - 1)]
        } else {
            return self.read_registers(addr);
        };
        self.open_bus = value;
        value
    }

    /// A CPU read of the PPU registers ($2000-$3FFF), the 2A03's ($4000-$401F) or the
    /// cartridge's register space ($4020-$5FFF). Any of them may move the PPU's next
    /// catch-up or the APU's next event (a $2002 read, a $4015 acknowledge), hence `resync`.
    #[inline(never)]
    fn read_registers(&mut self, addr: u16) -> u8 {
        let value = self.read_register_devices(addr);
        self.resync();
        value
    }

    #[inline(always)]
    fn read_register_devices(&mut self, addr: u16) -> u8 {
        if addr >= 0x4020 {
            // Board registers here may report PPU state (a scanline counter, a status
            // flag): the PPU is caught up to the access first, as for cartridge writes.
            self.sync_ppu_for_access(false);
            let value = self.cart.cpu_read(addr).unwrap_or(self.open_bus);
            self.open_bus = value;
            value
        } else if addr < 0x4000 {
            self.sync_ppu_for_access(false);
            let value = if self.cart.watches_a12() {
                let mut mem = self.scheduler.memory::<true>(&mut self.cart);
                self.ppu.read_register(addr, &mut mem)
            } else {
                let mut mem = self.scheduler.memory::<false>(&mut self.cart);
                self.ppu.read_register(addr, &mut mem)
            };
            self.open_bus = value;
            // A $2002 read clears VBlank; a $2007 read may clock an A12-watching board.
            self.scheduler.after_register_access(&self.ppu, &self.cart);
            value
        } else {
            self.read_io(addr)
        }
    }

    #[inline]
    fn read_io(&mut self, addr: u16) -> u8 {
        match addr {
            // $4015 is read inside the 2A03: the value never reaches the external data bus, and
            // its undriven bit 5 keeps the internal bus's previous value.
            0x4015 => self.apu.read_status() | (self.internal_bus & 0x20),
            0x4016 | 0x4017 => {
                let port = usize::from(addr & 1);
                let value =
                    (self.open_bus & self.ports.floating_bits(port)) | self.read_joypad(port);
                self.open_bus = value;
                value
            }
            // Write-only APU/IO registers and the disabled test registers: nothing drives the bus.
            _ => self.open_bus,
        }
    }

    /// The effect of a CPU write without the clocking around it.
    #[inline(always)]
    pub(crate) fn write_mapped(&mut self, addr: u16, value: u8) {
        self.open_bus = value;
        // Work RAM (stack, variables) takes most writes: keep it inline.
        if addr < 0x2000 {
            self.ram[usize::from(addr) & (RAM_SIZE - 1)] = value;
        } else {
            self.write_devices(addr, value);
        }
    }

    /// A CPU write above work RAM: PPU and 2A03 registers, cartridge. Each may move the
    /// PPU's next catch-up, the APU's next event or a DMA request, hence `resync`.
    #[inline(never)]
    fn write_devices(&mut self, addr: u16, value: u8) {
        self.write_device(addr, value);
        self.resync();
    }

    #[inline(always)]
    fn write_device(&mut self, addr: u16, value: u8) {
        match addr {
            0x0000..=0x1FFF => self.ram[usize::from(addr) & (RAM_SIZE - 1)] = value,
            0x2000..=0x3FFF => {
                // OAM DMA writes OAMDATA 256 times a frame, in vertical blanking: there the
                // write's effect does not depend on where the PPU is.
                if addr & 7 != 4
                    || !self
                        .scheduler
                        .oam_data_write_needs_no_catch_up(&self.ppu, self.cycle())
                {
                    self.sync_ppu_for_access(true);
                }
                if self.cart.watches_a12() {
                    let mut mem = self.scheduler.memory::<true>(&mut self.cart);
                    self.ppu.write_register(addr, value, &mut mem);
                } else {
                    let mut mem = self.scheduler.memory::<false>(&mut self.cart);
                    self.ppu.write_register(addr, value, &mut mem);
                }
                // A $2000 write switches the NMI output; $2006/$2007 may clock an
                // A12-watching board.
                self.scheduler.after_register_access(&self.ppu, &self.cart);
            }
            0x4014 => self.oam_dma_page = Some(value),
            0x4016 => {
                let cycle = self.cycle();
                self.ports.write_out0(value, cycle, is_dma_get_cycle(cycle));
            }
            0x4000..=0x4013 | 0x4015 | 0x4017 => self.apu.write_register(addr, value),
            0x4018..=0x401F => {}
            _ => {
                // Bank switches and mirroring changes apply from this dot on.
                self.sync_ppu_for_access(true);
                self.cart.cpu_write(addr, value, self.cycle());
                // The write may have armed or reloaded the board's IRQ.
                self.scheduler.schedule(&self.ppu, &self.cart);
            }
        }
    }

    /// A read of joypad register `$4016` (`port` 0) or `$4017` (see `JoypadPorts::read`).
    pub(crate) fn read_joypad(&mut self, port: usize) -> u8 {
        // A device on the port may sense the picture (a light gun): it sees the PPU as of
        // this cycle.
        self.sync_ppu_for_access(false);
        let cycle = self.cycle();
        self.ports.read(port, cycle)
    }
}
