//! When the PPU runs: lazily, behind the CPU, caught up to the master clock only where the
//! CPU side can observe it.
//!
//! The PPU is caught up when the CPU touches a PPU register, the cartridge (writes, and reads
//! of its $4020-$5FFF register space) or a controller port; when the PPU reaches an event the
//! CPU side sees without asking (an NMI output change or a frame end, see
//! `Ppu::dots_until_event`, and the earliest dot a board's IRQ could rise, see
//! `Cartridge::dots_until_irq_possible`); and at the end of every `Nes` step. Boards whose
//! CPU-side mapping follows the PPU address lines get it before every CPU access; in the
//! eager mode the lazy one is tested against (`tests/lazy_equals_eager.rs`) every board gets
//! it before every access and at the end of every cycle.

use nes_cartridge::{Cartridge, PpuPages};
use nes_ppu::{Ppu, PpuBus, PpuWriteBus};

use crate::clock::Clock;

/// The PPU's view of the cartridge (pattern tables and nametables).
///
/// `TIMED`: the board watches PPU A12 and is told the CPU cycle of each access. The console
/// picks `false` for every other board, so the PPU's fetch loop for them carries neither
/// the clock nor the A12 test (their PPU reads have no side effect at all).
pub(crate) struct PpuMemory<'a, const TIMED: bool> {
    pub(crate) cart: &'a mut Cartridge,
    /// The dot the PPU is on, counted from power-on: the time of each access, for boards that
    /// time PPU A12 (the PPU reports its dots through `dots_elapsed`, batches included). Kept
    /// only if `TIMED`.
    pub(crate) dot: u64,
    pub(crate) clock: &'a Clock,
}

impl<const TIMED: bool> PpuMemory<'_, TIMED> {
    /// The CPU cycle of an access made on the current dot.
    #[inline(always)]
    fn cpu_cycle(clock: &Clock, dot: u64) -> u64 {
        clock.cycle_of_dot(dot)
    }
}

impl<const TIMED: bool> PpuBus for PpuMemory<'_, TIMED> {
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        if TIMED {
            let (clock, dot) = (self.clock, self.dot);
            // `TIMED` is only chosen for a board that watches A12.
            self.cart
                .ppu_read_watched(addr, || Self::cpu_cycle(clock, dot))
        } else {
            debug_assert!(!self.cart.watches_a12());
            // Only A12-watching boards react to PPU reads: for the rest a read is a peek.
            self.cart.ppu_peek(addr)
        }
    }

    #[inline(always)]
    fn peek(&self, addr: u16) -> u8 {
        self.cart.ppu_peek(addr)
    }

    #[inline(always)]
    fn address_changed(&mut self, addr: u16) {
        let (clock, dot) = (self.clock, self.dot);
        self.cart
            .ppu_address_changed(addr, || Self::cpu_cycle(clock, dot));
    }

    #[inline(always)]
    fn dots_elapsed(&mut self, dots: u32) {
        if TIMED {
            self.dot += u64::from(dots);
        }
    }
}

impl<const TIMED: bool> PpuWriteBus for PpuMemory<'_, TIMED> {
    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        let (clock, dot) = (self.clock, self.dot);
        self.cart
            .ppu_write(addr, value, || Self::cpu_cycle(clock, dot));
    }
}

/// The PPU's view of a cartridge whose PPU reads have no side effect, for a catch-up: its
/// pages looked up once for all the catch-up's reads (nothing changes a board's banks while
/// the PPU runs, only the CPU's writes do).
struct PagedMemory<'a>(PpuPages<'a>);

impl PpuBus for PagedMemory<'_> {
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.0.read(addr)
    }

    #[inline(always)]
    fn peek(&self, addr: u16) -> u8 {
        self.0.read(addr)
    }
}

/// The fewest dots a catch-up runs through [`PagedMemory`]: a scanline, about 150 reads,
/// against about 100 instructions to look the pages up (many catch-ups are a few dots).
/// The eager reference's catch-ups are a cycle's three dots, so `tests/lazy_equals_eager.rs`
/// checks the paged reads against the per-read lookup.
const PAGED_CATCH_UP_DOTS: u32 = 341;

/// The catch-up bookkeeping. Dots are counted from power-on; the CPU cycle count they derive
/// from is bounded (`clock::MAX_CPU_CYCLES`), so neither can overflow.
#[derive(Debug, Clone)]
pub(crate) struct PpuScheduler {
    pub(crate) clock: Clock,
    /// Dots the PPU has run since power-on.
    dots_run: u64,
    /// The CPU cycle at whose end the PPU must next be caught up (0: every cycle, the eager
    /// mode).
    sync_cycle: u64,
    /// Catch the PPU up before every access too: the cartridge's CPU-side mapping follows
    /// the PPU address lines (as its registers now stand), or the eager mode is on.
    /// Refreshed at every catch-up, which every cartridge write makes first, and after it.
    sync_each_access: bool,
    /// Catch the PPU up on every CPU cycle whatever the cartridge (the eager reference the
    /// lazy scheduling is tested against: see `Nes::set_eager_ppu`). A setting, not state.
    pub(crate) eager: bool,
    /// The PPU's /NMI output as of its last catch-up or register access, the only times it
    /// can change: the CPU samples it every cycle, and one cached flag is cheaper there
    /// than the PPU's two fields.
    nmi_line: bool,
    /// No CPU cycle is in progress (a debugger's or script's store): accesses run no dots.
    outside_cycle: bool,
}

impl PpuScheduler {
    pub(crate) fn new(clock: Clock, cart: &Cartridge) -> PpuScheduler {
        PpuScheduler {
            clock,
            dots_run: 0,
            sync_cycle: 0,
            sync_each_access: cart.cpu_mapping_follows_a12(),
            eager: false,
            nmi_line: false,
            outside_cycle: false,
        }
    }

    #[inline(always)]
    pub(crate) fn nmi_line(&self) -> bool {
        self.nmi_line
    }

    /// Whether the PPU must be caught up before the access of each cycle.
    #[inline(always)]
    pub(crate) fn syncs_each_access(&self) -> bool {
        self.sync_each_access
    }

    /// The CPU cycle at whose end the PPU must next be caught up (0: every cycle).
    #[inline(always)]
    pub(crate) fn sync_cycle(&self) -> u64 {
        self.sync_cycle
    }

    /// Whether the PPU must be caught up at the end of CPU cycle `cycle`.
    #[inline(always)]
    pub(crate) fn due_at_end_of(&self, cycle: u64) -> bool {
        cycle >= self.sync_cycle
    }

    /// Puts the count where a loaded state's PPU is: between cycles at CPU cycle `cycle`.
    pub(crate) fn restart_at(&mut self, cycle: u64) {
        self.dots_run = self.clock.dots_before_cycle(cycle);
    }

    /// Runs the PPU to the start of CPU cycle `cycle` (between cycles), then reschedules.
    pub(crate) fn catch_up_to_cycle(&mut self, ppu: &mut Ppu, cart: &mut Cartridge, cycle: u64) {
        self.run_to(ppu, cart, self.clock.dots_before_cycle(cycle));
    }

    /// Runs the PPU to where the access of cycle `cycle` in progress (a write when `write`)
    /// reaches it, for accesses that see or change what the PPU does.
    pub(crate) fn catch_up_for_access(
        &mut self,
        ppu: &mut Ppu,
        cart: &mut Cartridge,
        cycle: u64,
        write: bool,
    ) {
        if !self.outside_cycle {
            let target = self.clock.dots_before_access(cycle, write);
            self.run_to(ppu, cart, target);
        }
    }

    /// Whether an OAMDATA (`$2004`) write on cycle `cycle` has its effect without the PPU
    /// being run to it first: the PPU stays in vertical blanking up to it (see
    /// [`Ppu::stays_in_vblank_for`]). Never in the eager mode, so that
    /// `tests/lazy_equals_eager.rs` compares such writes with caught-up ones.
    pub(crate) fn oam_data_write_needs_no_catch_up(&self, ppu: &Ppu, cycle: u64) -> bool {
        if self.eager || self.outside_cycle {
            return false;
        }
        let target = self.clock.dots_before_access(cycle, true);
        u32::try_from(target.saturating_sub(self.dots_run))
            .is_ok_and(|dots| ppu.stays_in_vblank_for(dots))
    }

    /// Marks a store from outside the CPU's cycles (`true` until it is done): accesses then
    /// run no dots.
    pub(crate) fn set_outside_cycle(&mut self, outside: bool) {
        self.outside_cycle = outside;
    }

    /// The PPU's view of the cartridge at the current dot, for a register access: `TIMED`
    /// must be `cart.watches_a12()`.
    pub(crate) fn memory<'a, const TIMED: bool>(
        &'a self,
        cart: &'a mut Cartridge,
    ) -> PpuMemory<'a, TIMED> {
        debug_assert_eq!(TIMED, cart.watches_a12());
        PpuMemory {
            cart,
            dot: self.dots_run,
            clock: &self.clock,
        }
    }

    /// After a PPU register access: the NMI output may have switched, and the access may have
    /// clocked an A12-watching board's IRQ counter.
    pub(crate) fn after_register_access(&mut self, ppu: &Ppu, cart: &Cartridge) {
        self.nmi_line = ppu.nmi_line();
        if cart.watches_a12() {
            self.schedule(ppu, cart);
        }
    }

    /// Runs the PPU's dots up to (not including) dot `target`, and schedules the next
    /// catch-up. Boards timing A12 get each access's own CPU cycle through `PpuMemory`.
    #[inline(never)]
    fn run_to(&mut self, ppu: &mut Ppu, cart: &mut Cartridge, target: u64) {
        // Targets never go back, and at most a frame's dots are ever owed (the frame end is
        // an event), so the count fits.
        debug_assert!(target >= self.dots_run && target - self.dots_run <= u64::from(u32::MAX));
        let dots = target.saturating_sub(self.dots_run) as u32;
        if cart.watches_a12() {
            let mut mem = PpuMemory::<true> {
                cart,
                dot: self.dots_run,
                clock: &self.clock,
            };
            ppu.run_dots(dots, &mut mem);
        } else if let Some(pages) = (dots >= PAGED_CATCH_UP_DOTS)
            .then(|| cart.ppu_pages())
            .flatten()
        {
            ppu.run_dots(dots, &mut PagedMemory(pages));
        } else {
            let mut mem = PpuMemory::<false> {
                cart,
                dot: self.dots_run,
                clock: &self.clock,
            };
            ppu.run_dots(dots, &mut mem);
        }
        self.dots_run = self.dots_run.max(target);
        self.nmi_line = ppu.nmi_line();
        self.schedule(ppu, cart);
    }

    /// Sets the cycle at whose end the PPU must next be caught up: the one holding the PPU's
    /// next event's dot, or the earliest dot the cartridge's IRQ could rise, if earlier.
    /// Called after anything that may change either (a catch-up, an access to the PPU or
    /// the cartridge).
    ///
    /// A board whose CPU-side mapping follows A12 has the PPU caught up before every access,
    /// which is all its mapping needs; the ends of cycles keep the event schedule (only the
    /// eager reference runs the PPU at the end of every cycle too).
    #[inline(always)]
    pub(crate) fn schedule(&mut self, ppu: &Ppu, cart: &Cartridge) {
        self.sync_each_access = self.eager || cart.cpu_mapping_follows_a12();
        self.sync_cycle = if self.eager {
            0
        } else {
            // Dots from the next one (1: it may happen on the next dot).
            let bound = ppu.dots_until_event().min(cart.dots_until_irq_possible());
            if bound == u32::MAX {
                u64::MAX
            } else {
                let event_dot = self.dots_run + u64::from(bound).saturating_sub(1);
                self.clock.cycle_of_dot(event_dot)
            }
        };
    }
}
