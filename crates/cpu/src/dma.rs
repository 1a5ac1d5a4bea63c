//! The 2A03 DMA unit: OAM DMA ($4014) and DMC sample fetches (NESdev wiki, "DMA").
//!
//! The DMA unit pulls the 6502's RDY low, which only halts the CPU on a read cycle: the CPU
//! is stopped with that read on the bus, and the unit repeats it (real reads, with side
//! effects) on every cycle it does not use the bus itself. When the unit is done, the CPU
//! performs the read it was halted on.
//!
//! The unit alternates between *get* cycles (it may read) and *put* cycles (it may write).
//! Shared convention with the APU crate: CPU cycle N, counted from power-on with the reset
//! sequence included (`Cpu::cycles()` before the cycle runs), is a get cycle when
//! `N % 2 == DMA_GET_CYCLE_PARITY`.
//!
//! - OAM DMA: halt, an alignment cycle if the next cycle is a put, then 256 get (read
//!   `$XX00 + i`) / put (write `$2004`) pairs: 513 or 514 cycles.
//! - DMC DMA: halt, a dummy cycle, an alignment cycle if the next cycle is a put, then a
//!   get of the sample byte: 3 or 4 cycles. Its halt and dummy cycles may be any cycles the
//!   CPU spends halted, OAM DMA cycles included, so a DMC fetch inside an OAM DMA usually
//!   costs 2 cycles (its get, plus the OAM realignment it forces), 1 when it lands at the
//!   very end and 3 when it starts on the last OAM put.
//! - If the DMC request is withdrawn before the dummy cycle (`dmc_dma_address()` turns
//!   `None`, e.g. a $4015 write disabled the channel), the fetch is abandoned; a lone DMC
//!   DMA then ends after the cycles already spent (the 1-cycle "halt only" DMA of the
//!   explicit- and implicit-abort cases). Once the halt and dummy cycles are done the fetch
//!   is committed and the get happens even if the request is withdrawn (AccuracyCoin
//!   "Explicit DMA Abort").
//! - Gets go through `Bus::dma_read` with the halted CPU address, so the console can model
//!   the 2A03's internal-register conflicts (NESdev "DMA", register conflicts).
//!
//! Each DMA cycle samples the interrupt lines and re-polls: if the halted read is an
//! instruction's last cycle, the instruction's interrupt decision is the one made at the end
//! of the last DMA cycle, as the repeated final cycle keeps polling on the real chip.

use crate::bus::{Bus, DmaKind};
use crate::cpu::Cpu;

/// Which cycle parity is a DMA get cycle (see the module docs): CPU cycle N is a get cycle
/// when `N % 2 == DMA_GET_CYCLE_PARITY`. Flip it here only; the APU should read it from here.
pub const DMA_GET_CYCLE_PARITY: u64 = 0;

/// PPU OAMDATA, where every OAM DMA put goes.
const OAM_DATA: u16 = 0x2004;

/// Cycles a DMC fetch must spend halted before its get: the halt and the dummy cycle.
const DMC_SETUP_CYCLES: u8 = 2;

#[inline(always)]
pub(crate) fn is_get_cycle(cycle: u64) -> bool {
    cycle & 1 == DMA_GET_CYCLE_PARITY
}

/// A DMC sample fetch the DMA unit has taken up.
#[derive(Clone, Copy, Debug)]
struct DmcFetch {
    address: u16,
    /// Halt/dummy cycles still owed before the get; 0 = committed.
    setup_left: u8,
}

/// Progress of a running OAM DMA.
#[derive(Clone, Copy, Debug)]
struct OamTransfer {
    page: u8,
    /// Next byte to read, 0..=255; the transfer ends after the put of byte 255.
    index: u8,
    /// The byte read on the last get, waiting for its put.
    latched: Option<u8>,
}

impl Cpu {
    /// Run the DMA unit while the CPU is halted on a read of `halted_address`.
    #[cold]
    #[inline(never)]
    pub(crate) fn run_dma<B: Bus>(&mut self, bus: &mut B, halted_address: u16) {
        let mut oam = bus.oam_dma_page().map(|page| OamTransfer {
            page,
            index: 0,
            latched: None,
        });
        if oam.is_some() {
            bus.oam_dma_started();
        }
        let mut dmc = bus.dmc_dma_address().map(|address| DmcFetch {
            address,
            setup_left: DMC_SETUP_CYCLES,
        });
        if oam.is_none() && dmc.is_none() {
            return;
        }

        // The halt cycle: the CPU's read happens but is discarded, and will be repeated.
        self.dma_read(bus, halted_address);
        if let Some(fetch) = dmc.as_mut() {
            fetch.setup_left -= 1;
        }

        loop {
            // The DMC can ask for a fetch while the CPU is already halted (inside an OAM
            // DMA), or withdraw its request (DMA abort). Once its halt and dummy cycles are
            // done the fetch is committed: a withdrawal no longer stops the get (AccuracyCoin
            // "Explicit DMA Abort": disabling the DMC after the dummy cycle still costs the
            // whole DMA, before it only the cycles already spent).
            dmc = match (dmc, bus.dmc_dma_address()) {
                (Some(fetch), _) if fetch.setup_left == 0 => Some(fetch),
                (_, None) => None,
                (None, Some(address)) => Some(DmcFetch {
                    address,
                    setup_left: DMC_SETUP_CYCLES,
                }),
                (Some(fetch), Some(address)) => Some(DmcFetch { address, ..fetch }),
            };
            if oam.is_none() && dmc.is_none() {
                break;
            }

            if is_get_cycle(self.cycles) {
                if let Some(DmcFetch {
                    address,
                    setup_left: 0,
                }) = dmc
                {
                    // The DMC get takes precedence over an OAM get, which waits.
                    let value = self.dma_get(bus, address, halted_address, DmaKind::Dmc);
                    bus.dmc_dma_complete(value);
                    dmc = None;
                    continue;
                }
                match oam.as_mut() {
                    Some(transfer) if transfer.latched.is_none() => {
                        let address = u16::from_le_bytes([transfer.index, transfer.page]);
                        transfer.latched =
                            Some(self.dma_get(bus, address, halted_address, DmaKind::Oam));
                    }
                    // Halt, dummy or alignment cycle: the halted read is repeated.
                    _ => {
                        self.dma_read(bus, halted_address);
                    }
                }
            } else {
                match oam.as_mut() {
                    Some(transfer) if transfer.latched.is_some() => {
                        let value = transfer.latched.take().unwrap_or_default();
                        self.dma_write(bus, OAM_DATA, value);
                        if transfer.index == u8::MAX {
                            oam = None;
                        } else {
                            transfer.index += 1;
                        }
                    }
                    // Alignment (nothing to put yet) or DMC dummy cycle.
                    _ => {
                        self.dma_read(bus, halted_address);
                    }
                }
            }
            if let Some(fetch) = dmc.as_mut() {
                fetch.setup_left = fetch.setup_left.saturating_sub(1);
            }
        }
    }

    #[inline(always)]
    fn dma_read<B: Bus>(&mut self, bus: &mut B, address: u16) -> u8 {
        let value = bus.read(address);
        self.end_cycle(bus);
        self.poll_interrupts(bus);
        value
    }

    /// A get cycle: the DMA unit reads `address` with the CPU halted on `halted_address`.
    #[inline(always)]
    fn dma_get<B: Bus>(
        &mut self,
        bus: &mut B,
        address: u16,
        halted_address: u16,
        kind: DmaKind,
    ) -> u8 {
        let value = bus.dma_read(address, halted_address, kind);
        self.end_cycle(bus);
        self.poll_interrupts(bus);
        value
    }

    #[inline(always)]
    fn dma_write<B: Bus>(&mut self, bus: &mut B, address: u16, value: u8) {
        bus.write(address, value);
        self.end_cycle(bus);
        self.poll_interrupts(bus);
    }
}

#[cfg(test)]
mod tests;
