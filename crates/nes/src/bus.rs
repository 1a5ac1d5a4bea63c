//! The console's CPU bus: memory map, master clock and everything that happens on one CPU cycle.
//!
//! The CPU is the master (see `nes_cpu::Bus`): each `read`/`write` call is one CPU cycle, and
//! around it this bus advances the PPU by exactly three dots and the APU by one CPU cycle.

use borsh::{BorshDeserialize, BorshSerialize};
use nes_apu::Apu;
use nes_cartridge::Cartridge;
use nes_cpu::DmaKind;
use nes_ppu::{Ppu, PpuBus};

use crate::controller::Controller;
use crate::hardware::ControllerPorts;

// The CPU's DMA unit and the APU each keep the get/put phase convention as a constant (neither
// crate depends on the other); the console is where they meet, so it insists they agree.
const _: () = assert!(nes_cpu::DMA_GET_CYCLE_PARITY == nes_apu::GET_CYCLE_PARITY);

/// Whether CPU cycle `cycle` is a DMA get cycle (the first half of an APU cycle).
#[inline]
fn is_dma_get_cycle(cycle: u64) -> bool {
    cycle & 1 == nes_cpu::DMA_GET_CYCLE_PARITY
}

/// PPU dots that elapse in a CPU cycle before its bus access; the rest follow it.
///
/// On NTSC a CPU cycle is 12 master clocks and a dot 4, so three dots per cycle. The 2A03 puts
/// the address out early in the cycle and latches read data near its end; with the power-on
/// CPU/PPU alignment used here, the register access lands after the second of the cycle's three
/// dots, which is what blargg's ppu_vbl_nmi suite measures to the dot ($2002 read races,
/// NMI enable timing).
const DOTS_BEFORE_ACCESS: u32 = 2;
const DOTS_PER_CPU_CYCLE: u32 = 3;

/// 2 KiB of work RAM, mirrored through $0000-$1FFF.
const RAM_SIZE: usize = 0x800;

/// The PPU's view of the cartridge (pattern tables and nametables).
///
/// `TIMED`: the board watches PPU A12 and is told the CPU cycle of each access. The console
/// picks `false` for every other board, so the PPU's fetch loop for them carries neither
/// the clock nor the A12 test (their PPU reads have no side effect at all).
pub(crate) struct PpuMemory<'a, const TIMED: bool> {
    pub(crate) cart: &'a mut Cartridge,
    /// The dot the PPU is on, counted from power-on at three per CPU cycle, so the CPU cycle
    /// of dot `d` is `d / 3`: the time of each access, for boards that time PPU A12 (the
    /// PPU reports its dots through `dots_elapsed`, batches included). Kept only if `TIMED`.
    pub(crate) dot: u64,
}

impl<const TIMED: bool> PpuMemory<'_, TIMED> {
    /// The CPU cycle of an access made on dot `dot`.
    #[inline(always)]
    fn cpu_cycle(dot: u64) -> u64 {
        dot / u64::from(DOTS_PER_CPU_CYCLE)
    }
}

impl<const TIMED: bool> PpuBus for PpuMemory<'_, TIMED> {
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        if TIMED {
            let dot = self.dot;
            self.cart.ppu_read_timed(addr, || Self::cpu_cycle(dot))
        } else {
            debug_assert!(!self.cart.watches_ppu_address());
            // Only A12-watching boards react to PPU reads: for the rest a read is a peek.
            self.cart.ppu_peek(addr)
        }
    }

    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        let dot = self.dot;
        self.cart
            .ppu_write_timed(addr, value, || Self::cpu_cycle(dot));
    }

    #[inline(always)]
    fn peek(&self, addr: u16) -> u8 {
        self.cart.ppu_peek(addr)
    }

    #[inline(always)]
    fn address_changed(&mut self, addr: u16) {
        let dot = self.dot;
        self.cart
            .ppu_address_changed_timed(addr, || Self::cpu_cycle(dot));
    }

    #[inline(always)]
    fn dots_elapsed(&mut self, dots: u32) {
        if TIMED {
            // Dot counts wrap as the cycle counts they come from do (see `sync_ppu`).
            self.dot = self.dot.wrapping_add(u64::from(dots));
        }
    }
}

/// Everything on the CPU's side of the console except the CPU itself.
#[derive(Debug, Clone)]
pub(crate) struct SystemBus {
    pub(crate) ram: Box<[u8; RAM_SIZE]>,
    pub(crate) ppu: Ppu,
    pub(crate) apu: Apu,
    pub(crate) cart: Cartridge,
    pub(crate) controllers: [Controller; 2],
    /// How the console wires the ports to `$4016`/`$4017` (a console setting, not state).
    pub(crate) ports: ControllerPorts,
    /// The external CPU data bus keeps the last value driven on it (capacitance), so reads of
    /// addresses nothing drives return it: "open bus".
    pub(crate) open_bus: u8,
    /// The 2A03's internal data bus, between the 6502 core and its registers: the last byte
    /// the 6502 read or wrote. It differs from the external bus after a $4015 read (whose
    /// value never leaves the chip) and after a DMA get (which only drives the external bus),
    /// and it supplies $4015's undriven bit 5 (AccuracyCoin "Internal Data Bus").
    internal_bus: u8,
    /// Source page of an OAM DMA requested by a $4014 write and not yet started.
    pub(crate) oam_dma_page: Option<u8>,
    /// Set when a game reads $4016/$4017 (lag-frame accounting).
    pub(crate) controller_read: bool,
    /// The 2A03's OUT0 latch ($4016 bit 0) and the cycle on which it reaches the OUT0 pin,
    /// the controllers' strobe: the pins are only updated at the start of a put cycle.
    pending_strobe: Option<(bool, u64)>,
    /// The cycle each port's /OE line was last asserted (a $4016/$4017 read), if any, and the
    /// bit the pad put out during that run of reads.
    joypad_read_cycle: [Option<u64>; 2],
    joypad_read_bit: [u8; 2],
    /// PPU dots elapsed but not yet run. The PPU is caught up lazily: only when the CPU
    /// touches a PPU register, the cartridge (writes, and reads of its $4020-$5FFF register
    /// space) or a controller port, when the PPU reaches an event the CPU side
    /// sees without asking (NMI output change, frame end; see `Ppu::dots_until_event`; the
    /// earliest dot a board's IRQ could rise, see `Cartridge::ppu_dots_until_irq_possible`),
    /// and at the end of every `Nes` step. Boards whose CPU-side mapping follows the PPU
    /// address lines get it every cycle. Always 0 between `Nes` calls.
    ///
    /// Counted at the end of each CPU cycle; an access that catches the PPU up mid-cycle runs
    /// the cycle's first dots too and leaves the count at minus those (wrapping), so the end
    /// of the cycle brings it back to the dots still owed.
    ppu_dots_owed: u32,
    /// Owed dots at which the PPU must be caught up (0 = every cycle).
    ppu_sync_at: u32,
    /// The cartridge's CPU-side mapping follows the PPU address lines (as its registers now
    /// stand): catch the PPU up before every access. Refreshed at every catch-up, which every
    /// cartridge write makes first, and after the write.
    ppu_sync_each_cycle: bool,
    /// Catch the PPU up on every CPU cycle whatever the cartridge (the eager reference the
    /// lazy scheduling is tested against: see `Nes::set_eager_ppu`). A setting, not state.
    pub(crate) eager_ppu: bool,
    /// The PPU's /NMI output as of its last catch-up or register access, the only times it
    /// can change: the CPU samples it every cycle, and one cached flag is cheaper there
    /// than the PPU's two fields.
    nmi_line: bool,
}

/// The bus's own part of a save state: everything in [`SystemBus`] but the chips, which
/// store themselves. Built and applied by destructuring `SystemBus` without `..`, so a field
/// added there and forgotten here is a compile error, not a state that silently loses it.
#[derive(Debug, BorshSerialize, BorshDeserialize)]
pub(crate) struct BusState {
    ram: Box<[u8; RAM_SIZE]>,
    controllers: [Controller; 2],
    open_bus: u8,
    internal_bus: u8,
    oam_dma_page: Option<u8>,
    controller_read: bool,
    pending_strobe: Option<(bool, u64)>,
    joypad_read_cycle: [Option<u64>; 2],
    joypad_read_bit: [u8; 2],
}

impl BusState {
    /// Checks a bus state decoded from a save state against the CPU cycle `cycle` it was
    /// taken at (the APU's count, decoded with it): a pending strobe reaches the pads within
    /// the two cycles a $4016 write waits, and the joypad reads happened before now. A later
    /// strobe would leave the pads unstrobed however long the game waits.
    pub(crate) fn validate_state(&self, cycle: u64) -> Result<(), String> {
        if let Some((_, due)) = self.pending_strobe {
            if due > cycle.saturating_add(2) {
                return Err(format!(
                    "controller strobe due at cycle {due} is out of range 0..={}",
                    cycle.saturating_add(2)
                ));
            }
        }
        for (port, read) in self.joypad_read_cycle.iter().enumerate() {
            if let Some(read) = *read {
                if read > cycle {
                    return Err(format!(
                        "controller port {port} read at cycle {read} is out of range 0..={cycle}"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl SystemBus {
    pub(crate) fn bus_state(&self) -> BusState {
        let SystemBus {
            ram,
            ppu: _,
            apu: _,
            cart: _,
            controllers,
            // The console's wiring, not its state.
            ports: _,
            open_bus,
            internal_bus,
            oam_dma_page,
            controller_read,
            pending_strobe,
            joypad_read_cycle,
            joypad_read_bit,
            // Always caught up between `Nes` calls, when states are taken.
            ppu_dots_owed: _,
            ppu_sync_at: _,
            // Follows the cartridge's registers.
            ppu_sync_each_cycle: _,
            // Settings.
            eager_ppu: _,
            // Follows the PPU, restored with it.
            nmi_line: _,
        } = self;
        BusState {
            ram: ram.clone(),
            controllers: controllers.clone(),
            open_bus: *open_bus,
            internal_bus: *internal_bus,
            oam_dma_page: *oam_dma_page,
            controller_read: *controller_read,
            pending_strobe: *pending_strobe,
            joypad_read_cycle: *joypad_read_cycle,
            joypad_read_bit: *joypad_read_bit,
        }
    }

    pub(crate) fn restore_bus_state(&mut self, state: BusState) {
        let SystemBus {
            ram,
            ppu: _,
            apu: _,
            cart: _,
            controllers,
            ports: _,
            open_bus,
            internal_bus,
            oam_dma_page,
            controller_read,
            pending_strobe,
            joypad_read_cycle,
            joypad_read_bit,
            ppu_dots_owed: _,
            ppu_sync_at: _,
            ppu_sync_each_cycle: _,
            eager_ppu: _,
            nmi_line: _,
        } = self;
        *ram = state.ram;
        *controllers = state.controllers;
        *open_bus = state.open_bus;
        *internal_bus = state.internal_bus;
        *oam_dma_page = state.oam_dma_page;
        *controller_read = state.controller_read;
        *pending_strobe = state.pending_strobe;
        *joypad_read_cycle = state.joypad_read_cycle;
        *joypad_read_bit = state.joypad_read_bit;
    }

    pub(crate) fn new(cart: Cartridge) -> SystemBus {
        SystemBus {
            // Power-on RAM content is a fixed, documented choice: all zero. Real consoles
            // power up with mostly-random RAM; determinism matters more here.
            ram: Box::new([0; RAM_SIZE]),
            ppu: Ppu::new(),
            apu: Apu::new(),
            controllers: Default::default(),
            ports: ControllerPorts::default(),
            open_bus: 0,
            internal_bus: 0,
            oam_dma_page: None,
            controller_read: false,
            pending_strobe: None,
            joypad_read_cycle: [None; 2],
            joypad_read_bit: [0; 2],
            ppu_dots_owed: 0,
            ppu_sync_at: 0,
            ppu_sync_each_cycle: cart.cpu_mapping_follows_ppu(),
            eager_ppu: false,
            nmi_line: false,
            cart,
        }
    }

    /// CPU cycles since power-on (the number of the cycle in progress). The APU is ticked
    /// exactly once per CPU cycle from power-on, so its tick count is this number; one
    /// counter instead of two on the per-cycle path.
    #[inline(always)]
    pub(crate) fn cycle(&self) -> u64 {
        self.apu.cycle()
    }

    /// Runs the PPU dots owed and schedules the next catch-up (see `ppu_dots_owed`), between
    /// CPU cycles.
    ///
    /// Dots are counted from power-on at three per cycle, wrapping: a loaded state's cycle
    /// count is bounded (see `Apu::validate_state`) far below where this could wrap, and
    /// the explicit wrapping keeps a debug build (overflow checks) and a release build alike
    /// whatever the count.
    #[inline(never)]
    pub(crate) fn sync_ppu(&mut self) {
        self.run_owed_dots(Self::first_dot_of(self.cycle()));
    }

    /// The first PPU dot of CPU cycle `cycle` (see `sync_ppu`).
    #[inline(always)]
    fn first_dot_of(cycle: u64) -> u64 {
        u64::from(DOTS_PER_CPU_CYCLE).wrapping_mul(cycle)
    }

    /// Runs the PPU dots owed, which end just before dot `end_dot` (counted from power-on at
    /// three per CPU cycle), and schedules the next catch-up.
    #[inline(never)]
    fn run_owed_dots(&mut self, end_dot: u64) {
        // Kept in step for states and boards without per-access timing; A12-timing boards
        // get each access's own cycle through `PpuMemory`.
        self.cart.set_cpu_cycle(self.cycle());
        let dots = self.ppu_dots_owed;
        let dot = end_dot.wrapping_sub(u64::from(dots));
        if self.cart.watches_ppu_address() {
            let mut mem = PpuMemory::<true> {
                cart: &mut self.cart,
                dot,
            };
            self.ppu.run_dots(dots, &mut mem);
        } else {
            let mut mem = PpuMemory::<false> {
                cart: &mut self.cart,
                dot,
            };
            self.ppu.run_dots(dots, &mut mem);
        }
        self.ppu_dots_owed = 0;
        self.nmi_line = self.ppu.nmi_line();
        self.schedule_ppu_sync();
    }

    /// Sets the owed-dot count at which the PPU must next be caught up: at its next event,
    /// or earlier if the cartridge's IRQ could rise before. Called after anything that may
    /// change either (a catch-up, an access to the PPU or the cartridge).
    #[inline]
    fn schedule_ppu_sync(&mut self) {
        self.ppu_sync_each_cycle = self.eager_ppu || self.cart.cpu_mapping_follows_ppu();
        self.ppu_sync_at = if self.ppu_sync_each_cycle {
            0
        } else {
            self.ppu
                .dots_until_event()
                .min(self.cart.ppu_dots_until_irq_possible())
        };
    }

    /// A store from outside the CPU's cycles (debugger, script): the same effect as a CPU
    /// write, with no time passing and the data bus left alone.
    pub(crate) fn poke(&mut self, addr: u16, value: u8) {
        self.sync_ppu();
        // No cycle is in progress: an access catching the PPU up must not run any dots.
        self.ppu_dots_owed = 0u32.wrapping_sub(DOTS_BEFORE_ACCESS);
        let open_bus = self.open_bus;
        self.write_mapped(addr, value);
        self.open_bus = open_bus;
        self.ppu_dots_owed = 0;
    }

    /// Catches the PPU up to the access of the cycle in progress (its first dots included):
    /// for accesses that see or change what the PPU does.
    fn sync_ppu_for_access(&mut self) {
        self.ppu_dots_owed = self.ppu_dots_owed.wrapping_add(DOTS_BEFORE_ACCESS);
        self.run_owed_dots(self.access_dot());
        self.ppu_dots_owed = 0u32.wrapping_sub(DOTS_BEFORE_ACCESS);
    }

    /// The dot (counted as in `PpuMemory::dot`) at which the access of the cycle in progress
    /// reaches the PPU and the cartridge.
    #[inline]
    fn access_dot(&self) -> u64 {
        Self::first_dot_of(self.cycle()).wrapping_add(u64::from(DOTS_BEFORE_ACCESS))
    }

    #[inline(always)]
    fn begin_cycle(&mut self) {
        if self.ppu_sync_each_cycle {
            self.sync_ppu_for_access();
        }
    }

    #[inline(always)]
    fn end_cycle(&mut self) {
        self.ppu_dots_owed = self.ppu_dots_owed.wrapping_add(DOTS_PER_CPU_CYCLE);
        if self.ppu_dots_owed >= self.ppu_sync_at {
            // The dots owed end with this cycle's last.
            self.run_owed_dots(Self::first_dot_of(self.cycle().wrapping_add(1)));
        }
        self.apu.tick();
    }

    /// The effect of a CPU read at `addr` without the clocking around it.
    ///
    /// Cartridge space and work RAM take nearly every CPU read, so they are tested first and
    /// inlined into each access; the registers go through an out-of-line call.
    #[inline(always)]
    fn read_mapped(&mut self, addr: u16) -> u8 {
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
    /// cartridge's register space ($4020-$5FFF).
    #[inline(never)]
    fn read_registers(&mut self, addr: u16) -> u8 {
        if addr >= 0x4020 {
            // Board registers here may report PPU state (a scanline counter, a status
            // flag): the PPU is caught up to the access first, as for cartridge writes.
            self.sync_ppu_for_access();
            let value = self.cart.cpu_read(addr).unwrap_or(self.open_bus);
            self.open_bus = value;
            value
        } else if addr < 0x4000 {
            self.sync_ppu_for_access();
            let mut mem = PpuMemory::<true> {
                dot: self.access_dot(),
                cart: &mut self.cart,
            };
            let value = self.ppu.read_register(addr, &mut mem);
            self.open_bus = value;
            // A $2002 read clears VBlank.
            self.nmi_line = self.ppu.nmi_line();
            if self.cart.watches_ppu_address() {
                // The access may have clocked the board's IRQ counter (A12 from $2007).
                self.schedule_ppu_sync();
            }
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
                let floating = self.ports.open_bus_bits(usize::from(addr & 1));
                let value = (self.open_bus & floating) | self.read_joypad(addr);
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

    /// A CPU write above work RAM: PPU and 2A03 registers, cartridge.
    #[inline(never)]
    fn write_devices(&mut self, addr: u16, value: u8) {
        match addr {
            0x0000..=0x1FFF => self.ram[usize::from(addr) & (RAM_SIZE - 1)] = value,
            0x2000..=0x3FFF => {
                self.sync_ppu_for_access();
                let mut mem = PpuMemory::<true> {
                    dot: self.access_dot(),
                    cart: &mut self.cart,
                };
                self.ppu.write_register(addr, value, &mut mem);
                // A $2000 write switches the NMI output.
                self.nmi_line = self.ppu.nmi_line();
                if self.cart.watches_ppu_address() {
                    // The access may have clocked the board's IRQ counter (A12 from
                    // $2006/$2007).
                    self.schedule_ppu_sync();
                }
            }
            0x4014 => self.oam_dma_page = Some(value),
            0x4016 => {
                self.apply_pending_strobe();
                // OUT0 is latched now but only reaches the pin at the next get->put transition
                // (AccuracyCoin "Controller Strobing"): a 1 overwritten before then never
                // strobes the pads.
                let cycle = self.cycle();
                let next_put = if is_dma_get_cycle(cycle) {
                    cycle.wrapping_add(1)
                } else {
                    cycle.wrapping_add(2)
                };
                self.pending_strobe = Some((value & 1 != 0, next_put));
            }
            0x4000..=0x4013 | 0x4015 | 0x4017 => self.apu.write_register(addr, value),
            0x4018..=0x401F => {}
            _ => {
                // Bank switches and mirroring changes apply from this dot on.
                self.sync_ppu_for_access();
                self.cart.cpu_write(addr, value, self.cycle());
                // The write may have armed or reloaded the board's IRQ.
                self.schedule_ppu_sync();
            }
        }
    }

    /// A DMA get cycle's access (without the clocking): `addr` is on the external address bus
    /// while the halted 6502 keeps `cpu_addr` on its own.
    ///
    /// The 2A03 enables its readable registers ($4015-$4017) from the 6502's address, and
    /// selects among them with the low five bits of the DMA address (NESdev "DMA", register
    /// conflicts; AccuracyCoin "APU Register Activation", "DMC DMA Bus Conflicts"):
    /// - 6502 outside $4000-$401F: the registers are off; a DMA read of $4000-$401F finds
    ///   nothing on the external bus (open bus).
    /// - 6502 inside: every DMA address mirrors a register. $4016/$4017 put the port's D0-D4
    ///   on the external bus over the addressed device (D5-D7 keep its value) and clock the
    ///   pad. $4015 is read (acknowledging the frame IRQ); its value only reaches the internal
    ///   bus, which the OAM DMA latches from (bit 5 still comes from the external bus) while
    ///   the DMC takes its sample from the external bus.
    fn dma_read_mapped(&mut self, addr: u16, cpu_addr: u16, kind: DmaKind) -> u8 {
        let internal_register = (0x4000..=0x401F).contains(&addr);
        let registers_selected = (0x4000..=0x401F).contains(&cpu_addr);
        let external = if internal_register {
            self.open_bus
        } else {
            self.read_mapped(addr)
        };
        if !registers_selected {
            return external;
        }
        let register = 0x4000 | (addr & 0x1F);
        match register {
            0x4015 => {
                let status = self.apu.read_status();
                match kind {
                    DmaKind::Oam => (status & !0x20) | (external & 0x20),
                    DmaKind::Dmc => external,
                }
            }
            0x4016 | 0x4017 => {
                let floating = self.ports.open_bus_bits(usize::from(register & 1));
                let value = (external & floating) | self.read_joypad(register);
                self.open_bus = value;
                value
            }
            _ => external,
        }
    }

    /// Drive OUT0 onto the controllers' strobe input if the pin update is due by this cycle.
    #[inline]
    fn apply_pending_strobe(&mut self) {
        if let Some((high, due)) = self.pending_strobe {
            if due <= self.cycle() {
                self.pending_strobe = None;
                for pad in &mut self.controllers {
                    pad.write_strobe(high);
                }
            }
        }
    }

    /// A read of joypad register $4016 or $4017: the pad's bit (the port's other driven
    /// bits read 0 with nothing attached; see `ControllerPorts` for which float).
    ///
    /// The 2A03 asserts the port's /OE for the whole cycle, and keeps it asserted across
    /// consecutive read cycles of the same register, so the pad sees one clock per run of
    /// back-to-back reads, and every read of the run returns the same bit (NES-001 and AV
    /// Famicom; NESdev "Standard controller", "DMA"; AccuracyCoin "Controller Clocking").
    /// The RF Famicom clocks the pad on every read cycle.
    fn read_joypad(&mut self, addr: u16) -> u8 {
        // A device on the port may sense the picture (a light gun): it sees the PPU as of
        // this cycle.
        self.sync_ppu_for_access();
        self.apply_pending_strobe();
        self.controller_read = true;
        let port = usize::from(addr & 1);
        let continued = self.ports.merges_consecutive_reads()
            && matches!(
                self.joypad_read_cycle[port],
                Some(last) if last.wrapping_add(1) == self.cycle()
            );
        self.joypad_read_cycle[port] = Some(self.cycle());
        if !continued {
            self.joypad_read_bit[port] = self.controllers[port].read();
        }
        self.joypad_read_bit[port]
    }

    /// Read the CPU address space as a debugger would: no register side effects.
    pub(crate) fn peek(&self, addr: u16) -> u8 {
        match addr {
            0x0000..=0x1FFF => self.ram[usize::from(addr) & (RAM_SIZE - 1)],
            0x2000..=0x3FFF => self.ppu.peek_register(addr),
            0x4015 => self.apu.peek_status() | (self.internal_bus & 0x20),
            0x4016 | 0x4017 => {
                let port = usize::from(addr & 1);
                (self.open_bus & self.ports.open_bus_bits(port)) | self.controllers[port].peek()
            }
            0x4000..=0x401F => self.open_bus,
            _ => self.cart.cpu_peek(addr).unwrap_or(self.open_bus),
        }
    }

    /// Read the PPU address space without side effects.
    pub(crate) fn peek_ppu(&self, addr: u16) -> u8 {
        let addr = addr & 0x3FFF;
        if addr >= 0x3F00 {
            self.ppu.peek_palette((addr & 0x1F) as u8)
        } else {
            self.cart.ppu_peek(addr)
        }
    }
}

impl nes_cpu::Bus for SystemBus {
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.begin_cycle();
        let value = self.read_mapped(addr);
        self.internal_bus = value;
        self.end_cycle();
        value
    }

    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        self.begin_cycle();
        self.internal_bus = value;
        self.write_mapped(addr, value);
        self.end_cycle();
    }

    #[inline]
    fn dma_read(&mut self, addr: u16, halted_cpu_addr: u16, kind: DmaKind) -> u8 {
        self.begin_cycle();
        let value = self.dma_read_mapped(addr, halted_cpu_addr, kind);
        self.end_cycle();
        value
    }

    #[inline(always)]
    fn nmi_line(&self) -> bool {
        self.nmi_line
    }

    #[inline(always)]
    fn irq_line(&self) -> bool {
        self.apu.irq_line() || self.cart.irq_line()
    }

    #[inline(always)]
    fn dma_requested(&self) -> bool {
        // Non-short-circuit: two loads and one branch on the per-read path.
        self.oam_dma_page.is_some() | self.apu.dmc_dma_wanted()
    }

    #[inline]
    fn oam_dma_page(&self) -> Option<u8> {
        self.oam_dma_page
    }

    #[inline]
    fn oam_dma_started(&mut self) {
        self.oam_dma_page = None;
    }

    #[inline]
    fn dmc_dma_address(&self) -> Option<u16> {
        self.apu.dmc_dma_address()
    }

    #[inline]
    fn dmc_dma_complete(&mut self, value: u8) {
        self.apu.dmc_dma_complete(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buttons;
    use nes_cpu::Bus;

    /// NROM, 32 KiB PRG where byte `i` holds `i as u8`, 8 KiB CHR ROM.
    fn bus() -> SystemBus {
        let mut image = vec![b'N', b'E', b'S', 0x1A, 2, 1, 0, 0];
        image.resize(16, 0);
        image.extend((0..0x8000u32).map(|i| i as u8));
        image.resize(image.len() + 0x2000, 0);
        let cart = Cartridge::from_ines(&image).expect("valid NROM image");
        SystemBus::new(cart)
    }

    /// Strobe both pads with a 1 then a 0 written two cycles apart, as LDA/STA code does.
    fn strobe(bus: &mut SystemBus) {
        bus.write(0x4016, 1);
        bus.read(0x0000);
        bus.write(0x4016, 0);
        bus.read(0x0000);
    }

    #[test]
    fn cycle_counts_every_access_and_dma_cycle() {
        let mut bus = bus();
        assert_eq!(bus.cycle(), 0);
        bus.read(0x8000);
        bus.write(0x0000, 1);
        bus.dma_read(0x8000, 0x8000, DmaKind::Dmc);
        assert_eq!(bus.cycle(), 3);
    }

    #[test]
    fn back_to_back_joypad_reads_clock_once_and_repeat_the_bit() {
        let mut bus = bus();
        bus.controllers[0].set_held(Buttons::A);
        strobe(&mut bus);
        // SLO $4016,X: dummy read and read on consecutive cycles see A twice.
        assert_eq!(bus.read(0x4016) & 1, 1);
        assert_eq!(bus.read(0x4016) & 1, 1);
        bus.read(0x0000);
        // The run ended: the pad was clocked once, so B (not held) comes next.
        assert_eq!(bus.read(0x4016) & 1, 0);
        bus.read(0x0000);
        assert_eq!(bus.read(0x4016) & 1, 0, "select");
        // The other port has its own /OE line.
        assert_eq!(bus.read(0x4017) & 1, 0);
    }

    #[test]
    fn famicom_ports_clock_on_every_read_and_float_other_bits() {
        let mut bus = bus();
        bus.ports = ControllerPorts::Famicom;
        bus.controllers[0].set_held(Buttons::A | Buttons::SELECT);
        strobe(&mut bus);
        // Consecutive read cycles each clock the pad: A, then B.
        bus.open_bus = 0xFF;
        assert_eq!(bus.read(0x4016), 0xF9, "D3-D7 float, D1-D2 read 0, D0 = A");
        assert_eq!(bus.read(0x4016) & 1, 0, "B");
        assert_eq!(bus.read(0x4016) & 1, 1, "select");
        bus.open_bus = 0xFF;
        assert_eq!(bus.read(0x4017), 0xE0, "$4017: D0-D4 driven");
        bus.ports = ControllerPorts::TopLoader;
        bus.open_bus = 0xFF;
        assert_eq!(bus.read(0x4016) & 0x1E, 0x04, "top-loader: $4016 D2 floats");
    }

    #[test]
    fn strobe_reaches_the_pads_only_at_a_get_to_put_transition() {
        for (first_write_on_get, strobed) in [(true, true), (false, false)] {
            let mut bus = bus();
            bus.controllers[0].set_held(Buttons::B);
            strobe(&mut bus);
            for _ in 0..8 {
                bus.read(0x4016);
                bus.read(0x0000);
            }
            if is_dma_get_cycle(bus.cycle()) != first_write_on_get {
                bus.read(0x0000);
            }
            // DEC $4016's two writes: $01 then $00 on consecutive cycles.
            bus.write(0x4016, 1);
            bus.write(0x4016, 0);
            bus.read(0x0000);
            // Reloaded: A (not held) reads 0. Not reloaded: the emptied register reads 1.
            let bit = bus.read(0x4016) & 1;
            assert_eq!(
                bit == 0,
                strobed,
                "1 written on a get cycle: {first_write_on_get}"
            );
        }
    }

    #[test]
    fn dma_sees_internal_registers_only_while_the_cpu_is_parked_on_them() {
        let mut bus = bus();
        bus.write(0x4015, 0x01);
        bus.write(0x4003, 0x08); // pulse 1 length loaded: $4015 bit 0
        bus.read(0x0000);
        // CPU parked on ROM: $4015 is not selected; nothing drives the external bus.
        bus.open_bus = 0xA0;
        assert_eq!(bus.dma_read(0x4015, 0x8123, DmaKind::Oam), 0xA0);
        // CPU parked on $4000-$401F: every $20 bytes mirror the registers. The OAM DMA latches
        // the status from the internal bus, bit 5 from the addressed byte (ROM $8035 = $35).
        assert_eq!(bus.dma_read(0x8035, 0x4000, DmaKind::Oam), 0x21);
        // The DMC takes its sample from the external bus: the ROM byte.
        assert_eq!(bus.dma_read(0x8035, 0x4000, DmaKind::Dmc), 0x35);
        // $xx16: the pad drives D0-D4 over the ROM byte ($96 -> D5-D7 = $80).
        bus.controllers[0].set_held(Buttons::A);
        strobe(&mut bus);
        assert_eq!(bus.dma_read(0x8096, 0x4000, DmaKind::Dmc), 0x81);
        assert_eq!(
            bus.open_bus, 0x81,
            "the conflict value is on the external bus"
        );
    }

    #[test]
    fn dmc_conflict_on_4015_acknowledges_the_frame_irq() {
        let mut bus = bus();
        while !bus.apu.irq_line() {
            bus.read(0x0000);
        }
        // Past the three cycles on which the sequencer sets the flag.
        for _ in 0..4 {
            bus.read(0x0000);
        }
        assert_ne!(bus.apu.peek_status() & 0x40, 0);
        bus.dma_read(0x8015, 0x4016, DmaKind::Dmc);
        bus.read(0x0000);
        bus.read(0x0000);
        assert_eq!(bus.apu.peek_status() & 0x40, 0);
    }

    #[test]
    fn status_bit_5_comes_from_the_internal_bus() {
        let mut bus = bus();
        bus.ram[0x10] = 0x20;
        bus.read(0x0010);
        // A DMC fetch drives only the external bus.
        assert_eq!(bus.dma_read(0x8000, 0x8000, DmaKind::Dmc), 0x00);
        assert_eq!(bus.open_bus, 0x00);
        assert_eq!(bus.read(0x4015) & 0x20, 0x20);
        // ...and the $4015 value never reaches the external bus.
        assert_eq!(bus.open_bus, 0x00);
        assert_eq!(bus.read(0x4000), 0x00, "open bus");
        assert_eq!(
            bus.read(0x4015) & 0x20,
            0x00,
            "the open-bus read refreshed it"
        );
    }

    #[test]
    fn bus_state_timing_out_of_range_is_refused() {
        let mut bus = bus();
        for _ in 0..10 {
            bus.read(0x0000);
        }
        bus.write(0x4016, 1);
        bus.read(0x4017);
        let cycle = bus.cycle();
        assert_eq!(bus.bus_state().validate_state(cycle), Ok(()));
        let mut late_strobe = bus.bus_state();
        late_strobe.pending_strobe = Some((true, cycle + 3));
        assert_eq!(
            late_strobe.validate_state(cycle),
            Err(format!(
                "controller strobe due at cycle {} is out of range 0..={}",
                cycle + 3,
                cycle + 2
            ))
        );
        let mut future_read = bus.bus_state();
        future_read.joypad_read_cycle[1] = Some(u64::MAX);
        assert_eq!(
            future_read.validate_state(cycle),
            Err(format!(
                "controller port 1 read at cycle {} is out of range 0..={cycle}",
                u64::MAX
            ))
        );
    }

    #[test]
    fn dot_counts_wrap_instead_of_overflowing() {
        // Debug builds (overflow checks) and release builds agree past the wrap.
        assert_eq!(SystemBus::first_dot_of(u64::MAX / 3 + 1), 2);
        assert_eq!(SystemBus::first_dot_of(u64::MAX), u64::MAX - 2);
    }
}
