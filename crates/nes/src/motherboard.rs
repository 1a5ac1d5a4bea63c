//! The console's motherboard: everything on the CPU's side but the CPU itself, composed of
//! named parts, and what happens on one CPU cycle.
//!
//! The CPU is the master (see `nes_cpu::Bus`): each `read`/`write` call is one CPU cycle. Around
//! it the motherboard moves the master clock on by one CPU cycle, ticks the APU once and lets
//! the PPU fall behind, to be caught up by `PpuScheduler` where the CPU side can see it. The
//! parts:
//! - `clock.rs`: the master clock, CPU cycles and PPU dots, and the sub-cycle points of reads
//!   and writes;
//! - `ppu_scheduler.rs`: when the PPU is caught up;
//! - `memory_map.rs`: which device answers which CPU address;
//! - `dma_conflicts.rs`: what a DMA read finds on the buses while the 6502 is halted;
//! - `controller_ports.rs`: the pads, the strobe and the /OE lines.

use borsh::{BorshDeserialize, BorshSerialize};
use nes_apu::Apu;
use nes_cartridge::Cartridge;
use nes_cpu::DmaKind;
use nes_ppu::Ppu;

use crate::clock::ClockAlignment;
use crate::controller::Controller;
use crate::controller_ports::JoypadPorts;
use crate::ppu_scheduler::PpuScheduler;
use crate::region::Region;
use nes_state::InvalidState;

// The CPU's DMA unit and the APU each keep the get/put phase convention as a constant (neither
// crate depends on the other); the console is where they meet, so it insists they agree.
const _: () = assert!(nes_cpu::DMA_GET_CYCLE_PARITY == nes_apu::GET_CYCLE_PARITY);

/// Whether CPU cycle `cycle` is a DMA get cycle (the first half of an APU cycle).
#[inline]
pub(crate) fn is_dma_get_cycle(cycle: u64) -> bool {
    cycle & 1 == nes_cpu::DMA_GET_CYCLE_PARITY
}

/// 2 KiB of work RAM, mirrored through $0000-$1FFF.
pub(crate) const RAM_SIZE: usize = 0x800;

/// Everything on the CPU's side of the console except the CPU itself.
#[derive(Debug, Clone)]
pub(crate) struct Motherboard {
    pub(crate) ram: Box<[u8; RAM_SIZE]>,
    pub(crate) ppu: Ppu,
    pub(crate) apu: Apu,
    pub(crate) cart: Cartridge,
    pub(crate) ports: JoypadPorts,
    /// The external CPU data bus keeps the last value driven on it (capacitance), so reads of
    /// addresses nothing drives return it: "open bus".
    pub(crate) open_bus: u8,
    /// The 2A03's internal data bus, between the 6502 core and its registers: the last byte
    /// the 6502 read or wrote. It differs from the external bus after a $4015 read (whose
    /// value never leaves the chip) and after a DMA get (which only drives the external bus),
    /// and it supplies $4015's undriven bit 5 (AccuracyCoin "Internal Data Bus").
    pub(crate) internal_bus: u8,
    /// Source page of an OAM DMA requested by a $4014 write and not yet started.
    pub(crate) oam_dma_page: Option<u8>,
    pub(crate) scheduler: PpuScheduler,
    /// The CPU cycle at whose end something beyond counting may be due: the PPU's next
    /// catch-up or the APU's next event, whichever is first, or 0 after anything that may
    /// have moved either (a register access, a catch-up from outside a cycle, a DMA
    /// transfer, a hook). One comparison per cycle instead of one per chip; derived, not
    /// state (see `resync`).
    attention: u64,
    /// `oam_dma_page.is_some() || apu.dmc_dma_wanted()`, as of the last change to either:
    /// the CPU asks before every read cycle, and one load is cheaper there than two.
    dma_wanted: bool,
    /// The CPU's idle-loop skipping (`nes_cpu::Bus::effects`): moves on every write cycle,
    /// DMA cycle and `resync` (which every register access and every change from outside
    /// the CPU's cycles makes). Derived, not state.
    effects: u64,
    /// The cycle no idle-loop skip may pass (0: no skipping): set by the frame loops for the
    /// frame they run, so single steps and hooked runs never skip.
    pub(crate) idle_skip_limit: u64,
    /// CPU cycles idle-loop skipping has passed over since power-on (an observation for
    /// benchmarks and tests, not state).
    pub(crate) idle_cycles_skipped: u64,
}

/// The motherboard's own part of a save state: everything in [`Motherboard`] but the chips,
/// which store themselves. Built and applied by destructuring without `..`, so a field added
/// there and forgotten here is a compile error, not a state that silently loses it.
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
    /// Checks a state decoded from a save state against the CPU cycle `cycle` it was taken at
    /// (the APU's count, decoded with it).
    pub(crate) fn validate_state(&self, cycle: u64) -> Result<(), InvalidState> {
        JoypadPorts::validate_state(self.pending_strobe, &self.joypad_read_cycle, cycle)
    }
}

impl Motherboard {
    pub(crate) fn bus_state(&self) -> BusState {
        let Motherboard {
            ram,
            ppu: _,
            apu: _,
            cart: _,
            ports,
            open_bus,
            internal_bus,
            oam_dma_page,
            // Always caught up between `Nes` calls, when states are taken; the rest follows
            // the PPU, the cartridge and the settings.
            scheduler: _,
            // Derived from the chips (see `resync`).
            attention: _,
            dma_wanted: _,
            effects: _,
            idle_skip_limit: _,
            idle_cycles_skipped: _,
        } = self;
        let JoypadPorts {
            pads,
            // The console's wiring, not its state.
            wiring: _,
            read_this_frame,
            pending_strobe,
            read_cycle,
            read_bit,
        } = ports;
        BusState {
            ram: ram.clone(),
            controllers: pads.clone(),
            open_bus: *open_bus,
            internal_bus: *internal_bus,
            oam_dma_page: *oam_dma_page,
            controller_read: *read_this_frame,
            pending_strobe: *pending_strobe,
            joypad_read_cycle: *read_cycle,
            joypad_read_bit: *read_bit,
        }
    }

    pub(crate) fn restore_bus_state(&mut self, state: BusState) {
        let Motherboard {
            ram,
            ppu: _,
            apu: _,
            cart: _,
            ports,
            open_bus,
            internal_bus,
            oam_dma_page,
            scheduler: _,
            attention: _,
            dma_wanted: _,
            effects: _,
            idle_skip_limit: _,
            idle_cycles_skipped: _,
        } = self;
        let JoypadPorts {
            pads,
            wiring: _,
            read_this_frame,
            pending_strobe,
            read_cycle,
            read_bit,
        } = ports;
        *ram = state.ram;
        *pads = state.controllers;
        *open_bus = state.open_bus;
        *internal_bus = state.internal_bus;
        *oam_dma_page = state.oam_dma_page;
        *read_this_frame = state.controller_read;
        *pending_strobe = state.pending_strobe;
        *read_cycle = state.joypad_read_cycle;
        *read_bit = state.joypad_read_bit;
    }

    pub(crate) fn new(cart: Cartridge, region: Region, alignment: ClockAlignment) -> Motherboard {
        let mut ppu = Ppu::new();
        ppu.set_model(region.ppu_model());
        let mut apu = Apu::new();
        apu.set_model(region.apu_model());
        apu.set_cpu_clock_hz(region.cpu_hz());
        Motherboard {
            // Power-on RAM content is a fixed, documented choice: all zero. Real consoles
            // power up with mostly-random RAM; determinism matters more here.
            ram: Box::new([0; RAM_SIZE]),
            ppu,
            apu,
            ports: JoypadPorts::default(),
            open_bus: 0,
            internal_bus: 0,
            oam_dma_page: None,
            scheduler: PpuScheduler::new(region.clock().aligned(alignment), &cart),
            cart,
            attention: 0,
            dma_wanted: false,
            effects: 0,
            idle_skip_limit: 0,
            idle_cycles_skipped: 0,
        }
    }

    /// CPU cycles since power-on (the number of the cycle in progress). The APU is ticked
    /// exactly once per CPU cycle from power-on, so its tick count is this number; one
    /// counter instead of two on the per-cycle path.
    #[inline(always)]
    pub(crate) fn cycle(&self) -> u64 {
        self.apu.cycle()
    }

    /// The PPU's /NMI output as the CPU samples it.
    #[inline(always)]
    pub(crate) fn nmi_line(&self) -> bool {
        self.scheduler.nmi_line()
    }

    /// Runs the PPU to the present and schedules its next catch-up, between CPU cycles.
    /// Every `Nes` call ends here and every hook starts here, so it also makes the next
    /// cycle re-derive what the per-cycle tests cache (see `resync`).
    #[inline(never)]
    pub(crate) fn sync_ppu(&mut self) {
        let cycle = self.cycle();
        self.scheduler
            .catch_up_to_cycle(&mut self.ppu, &mut self.cart, cycle);
        self.resync();
    }

    /// Re-derives the per-cycle caches after something outside the cycle's own clocking may
    /// have changed a chip: the DMA request now, and the attention cycle at the end of the
    /// cycle in progress (0 makes that cycle take the full path, which recomputes it). Called
    /// by every path that can change the PPU's next catch-up, the APU's next event or a DMA
    /// request: register accesses, DMA completions, catch-ups from outside a cycle, and
    /// `Nes` before it runs the CPU (settings and state loads change chips between calls).
    #[inline]
    pub(crate) fn resync(&mut self) {
        self.attention = 0;
        self.effects = self.effects.wrapping_add(1);
        self.refresh_dma_wanted();
    }

    #[inline(always)]
    fn refresh_dma_wanted(&mut self) {
        self.dma_wanted = self.oam_dma_page.is_some() | self.apu.dmc_dma_wanted();
    }

    /// After a state load: the PPU's dot count restarts from the restored cycle count.
    pub(crate) fn restart_ppu_clock(&mut self) {
        self.scheduler.restart_at(self.cycle());
        self.sync_ppu();
    }

    /// Catches the PPU up to the access of the cycle in progress (a write when `write`): for
    /// accesses that see or change what the PPU does.
    #[inline]
    pub(crate) fn sync_ppu_for_access(&mut self, write: bool) {
        let cycle = self.cycle();
        self.scheduler
            .catch_up_for_access(&mut self.ppu, &mut self.cart, cycle, write);
    }

    /// A store from outside the CPU's cycles (debugger, script): the same effect as a CPU
    /// write, with no time passing and the data bus left alone.
    pub(crate) fn poke(&mut self, addr: u16, value: u8) {
        self.sync_ppu();
        let open_bus = self.open_bus;
        self.scheduler.set_outside_cycle(true);
        self.write_mapped(addr, value);
        self.scheduler.set_outside_cycle(false);
        self.open_bus = open_bus;
    }

    #[inline(always)]
    fn begin_cycle(&mut self, write: bool) {
        if self.scheduler.syncs_each_access() {
            self.sync_ppu_for_access(write);
            // The catch-up rescheduled: never let the cached attention cycle pass its result.
            self.attention = self.attention.min(self.scheduler.sync_cycle());
        }
    }

    /// The end of CPU cycle `cycle()`: on most cycles only the APU's count moves (the PPU
    /// falls behind, the APU has no event due); `attention` says when more may be due.
    #[inline(always)]
    fn end_cycle(&mut self) {
        let cycle = self.cycle();
        if cycle >= self.attention {
            self.end_cycle_with_attention(cycle);
        } else {
            debug_assert!(!self.scheduler.due_at_end_of(cycle));
            self.apu.tick_before_event();
        }
    }

    /// The end of a cycle at or past `attention`: the PPU catch-up if due, the APU's tick
    /// with its events, then the next attention cycle and DMA request from what they left.
    #[inline(never)]
    fn end_cycle_with_attention(&mut self, cycle: u64) {
        if self.scheduler.due_at_end_of(cycle) {
            self.scheduler
                .catch_up_to_cycle(&mut self.ppu, &mut self.cart, cycle + 1);
        }
        self.apu.tick();
        self.attention = self.scheduler.sync_cycle().min(self.apu.next_event());
        self.refresh_dma_wanted();
    }

    /// Read the CPU address space as a debugger would: no register side effects.
    pub(crate) fn peek(&self, addr: u16) -> u8 {
        match addr {
            0x0000..=0x1FFF => self.ram[usize::from(addr) & (RAM_SIZE - 1)],
            0x2000..=0x3FFF => self.ppu.peek_register(addr),
            0x4015 => self.apu.peek_status() | (self.internal_bus & 0x20),
            0x4016 | 0x4017 => self.ports.peek(usize::from(addr & 1), self.open_bus),
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

impl nes_cpu::Bus for Motherboard {
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.begin_cycle(false);
        let value = self.read_mapped(addr);
        self.internal_bus = value;
        self.end_cycle();
        value
    }

    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        self.begin_cycle(true);
        self.internal_bus = value;
        self.effects = self.effects.wrapping_add(1);
        self.write_mapped(addr, value);
        self.end_cycle();
    }

    #[inline]
    fn dma_read(&mut self, addr: u16, halted_cpu_addr: u16, kind: DmaKind) -> u8 {
        self.effects = self.effects.wrapping_add(1);
        self.begin_cycle(false);
        let value = self.dma_read_mapped(addr, halted_cpu_addr, kind);
        self.end_cycle();
        value
    }

    #[inline(always)]
    fn nmi_line(&self) -> bool {
        self.scheduler.nmi_line()
    }

    #[inline(always)]
    fn irq_line(&self) -> bool {
        self.apu.irq_line() || self.cart.irq_line()
    }

    #[inline(always)]
    fn dma_requested(&self) -> bool {
        debug_assert_eq!(
            self.dma_wanted,
            self.oam_dma_page.is_some() | self.apu.dmc_dma_wanted()
        );
        self.dma_wanted
    }

    #[inline(always)]
    fn effects(&self) -> u64 {
        self.effects
    }

    /// Until the earliest of the PPU's next catch-up (its NMI output, a frame end, a board's
    /// IRQ), the APU's next change the CPU could see (its IRQ output, a DMC request) and the
    /// run's limit, with no DMA wanted and no per-access catch-up (the eager mode, or a board
    /// whose CPU-side mapping follows the PPU). The interrupt lines only change at those
    /// events or at register accesses.
    fn quiet_cycles(&self) -> u64 {
        if self.dma_wanted || self.scheduler.syncs_each_access() {
            return 0;
        }
        let next = self
            .scheduler
            .sync_cycle()
            .min(self.apu.next_visible_event())
            .min(self.idle_skip_limit);
        next.saturating_sub(self.cycle())
    }

    /// The PPU falls further behind, as on any cycle before its catch-up; the APU runs the
    /// cycles, sound events included.
    fn skip_quiet_cycles(&mut self, cycles: u64) {
        debug_assert!(cycles <= self.quiet_cycles());
        self.apu.skip_quiet_cycles(cycles);
        self.idle_cycles_skipped += cycles;
        // The APU's next event moved: the next cycle takes the full path, which recomputes it.
        self.attention = 0;
        debug_assert!(!self.dma_wanted && !self.apu.dmc_dma_wanted());
    }

    #[inline]
    fn oam_dma_page(&self) -> Option<u8> {
        self.oam_dma_page
    }

    #[inline]
    fn oam_dma_started(&mut self) {
        self.oam_dma_page = None;
        self.refresh_dma_wanted();
    }

    #[inline]
    fn dmc_dma_address(&self) -> Option<u16> {
        self.apu.dmc_dma_address()
    }

    #[inline]
    fn dmc_dma_complete(&mut self, value: u8) {
        self.apu.dmc_dma_complete(value);
        self.resync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::ControllerPorts;
    use crate::Buttons;
    use nes_cpu::Bus;

    /// NROM, 32 KiB PRG where byte `i` holds `i as u8`, 8 KiB CHR ROM.
    fn bus() -> Motherboard {
        let prg: Vec<u8> = (0..0x8000u32).map(|i| i as u8).collect();
        let image = crate::ines_image(0, &prg, &[0; 0x2000]);
        let cart = Cartridge::from_ines(&image).expect("valid NROM image");
        Motherboard::new(cart, Region::Ntsc, ClockAlignment::default())
    }

    /// Strobe both pads with a 1 then a 0 written two cycles apart, as LDA/STA code does.
    fn strobe(bus: &mut Motherboard) {
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
        bus.ports.pads[0].set_held(Buttons::A);
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
        bus.ports.wiring = ControllerPorts::Famicom;
        bus.ports.pads[0].set_held(Buttons::A | Buttons::SELECT);
        strobe(&mut bus);
        // Consecutive read cycles each clock the pad: A, then B.
        bus.open_bus = 0xFF;
        assert_eq!(bus.read(0x4016), 0xF9, "D3-D7 float, D1-D2 read 0, D0 = A");
        assert_eq!(bus.read(0x4016) & 1, 0, "B");
        assert_eq!(bus.read(0x4016) & 1, 1, "select");
        bus.open_bus = 0xFF;
        assert_eq!(bus.read(0x4017), 0xE0, "$4017: D0-D4 driven");
        bus.ports.wiring = ControllerPorts::TopLoader;
        bus.open_bus = 0xFF;
        assert_eq!(bus.read(0x4016) & 0x1E, 0x04, "top-loader: $4016 D2 floats");
    }

    #[test]
    fn strobe_reaches_the_pads_only_at_a_get_to_put_transition() {
        for (first_write_on_get, strobed) in [(true, true), (false, false)] {
            let mut bus = bus();
            bus.ports.pads[0].set_held(Buttons::B);
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
        bus.ports.pads[0].set_held(Buttons::A);
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
            late_strobe.validate_state(cycle).map_err(|e| e.to_string()),
            Err(format!(
                "controller strobe due at cycle {} is out of range 0..={}",
                cycle + 3,
                cycle + 2
            ))
        );
        let mut future_read = bus.bus_state();
        future_read.joypad_read_cycle[1] = Some(u64::MAX);
        assert_eq!(
            future_read.validate_state(cycle).map_err(|e| e.to_string()),
            Err(format!(
                "controller port 1 read at cycle {} is out of range 0..={cycle}",
                u64::MAX
            ))
        );
    }
}
