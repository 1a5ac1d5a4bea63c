//! The two controller ports as the 2A03 drives them: the OUT0 strobe latch and when it reaches
//! the pads, the per-port /OE lines of `$4016`/`$4017` reads, and which data bits the
//! console's wiring leaves floating.

use crate::controller::Controller;
use crate::hardware::ControllerPorts;
use nes_state::InvalidState;

/// The pads and the 2A03's port logic.
#[derive(Debug, Clone, Default)]
pub(crate) struct JoypadPorts {
    pub(crate) pads: [Controller; 2],
    /// How the console wires the ports (a console setting, not state).
    pub(crate) wiring: ControllerPorts,
    /// Set when a game reads `$4016`/`$4017` (lag-frame accounting).
    pub(crate) read_this_frame: bool,
    /// The 2A03's OUT0 latch (`$4016` bit 0) and the cycle on which it reaches the OUT0 pin,
    /// the pads' strobe: the pins are only updated at the start of a put cycle.
    pub(crate) pending_strobe: Option<(bool, u64)>,
    /// The cycle each port's /OE line was last asserted (a read), if any, and the bit the
    /// pad put out during that run of reads.
    pub(crate) read_cycle: [Option<u64>; 2],
    pub(crate) read_bit: [u8; 2],
}

impl JoypadPorts {
    /// A `$4016` write on CPU cycle `cycle` (a get cycle when `on_get_cycle`): OUT0 is
    /// latched now but only reaches the pin at the next get->put transition (AccuracyCoin
    /// "Controller Strobing"), so a 1 overwritten before then never strobes the pads.
    pub(crate) fn write_out0(&mut self, value: u8, cycle: u64, on_get_cycle: bool) {
        self.apply_pending_strobe(cycle);
        let next_put = if on_get_cycle {
            cycle.wrapping_add(1)
        } else {
            cycle.wrapping_add(2)
        };
        self.pending_strobe = Some((value & 1 != 0, next_put));
    }

    /// Drive OUT0 onto the pads' strobe input if the pin update is due by `cycle`.
    #[inline]
    fn apply_pending_strobe(&mut self, cycle: u64) {
        if let Some((high, due)) = self.pending_strobe {
            if due <= cycle {
                self.pending_strobe = None;
                for pad in &mut self.pads {
                    pad.write_strobe(high);
                }
            }
        }
    }

    /// The bits of `$4016` (`port` 0) or `$4017` (1) that nothing drives.
    #[inline]
    pub(crate) fn floating_bits(&self, port: usize) -> u8 {
        self.wiring.open_bus_bits(port)
    }

    /// A read of joypad register `$4016` (`port` 0) or `$4017` on cycle `cycle`: the pad's
    /// bit (the port's other driven bits read 0 with nothing attached; see
    /// `ControllerPorts` for which float).
    ///
    /// The 2A03 asserts the port's /OE for the whole cycle, and keeps it asserted across
    /// consecutive read cycles of the same register, so the pad sees one clock per run of
    /// back-to-back reads, and every read of the run returns the same bit (NES-001 and AV
    /// Famicom; NESdev "Standard controller", "DMA"; AccuracyCoin "Controller Clocking").
    /// The RF Famicom clocks the pad on every read cycle.
    pub(crate) fn read(&mut self, port: usize, cycle: u64) -> u8 {
        self.apply_pending_strobe(cycle);
        self.read_this_frame = true;
        let continued = self.wiring.merges_consecutive_reads()
            && matches!(self.read_cycle[port], Some(last) if last.wrapping_add(1) == cycle);
        self.read_cycle[port] = Some(cycle);
        if !continued {
            self.read_bit[port] = self.pads[port].read();
        }
        self.read_bit[port]
    }

    /// What a read of `port` would return, without clocking anything: `open_bus` in the
    /// floating bits.
    pub(crate) fn peek(&self, port: usize, open_bus: u8) -> u8 {
        (open_bus & self.floating_bits(port)) | self.pads[port].peek()
    }

    /// Checks the ports' part of a save state taken at CPU cycle `cycle`: a pending strobe
    /// reaches the pads within the two cycles a `$4016` write waits, and the reads happened
    /// before now. A later strobe would leave the pads unstrobed however long the game waits.
    pub(crate) fn validate_state(
        pending_strobe: Option<(bool, u64)>,
        read_cycle: &[Option<u64>; 2],
        cycle: u64,
    ) -> Result<(), InvalidState> {
        if let Some((_, due)) = pending_strobe {
            if due > cycle.saturating_add(2) {
                return Err(InvalidState::impossible(format!(
                    "controller strobe due at cycle {due} is out of range 0..={}",
                    cycle.saturating_add(2)
                )));
            }
        }
        for (port, read) in read_cycle.iter().enumerate() {
            if let Some(read) = *read {
                if read > cycle {
                    return Err(InvalidState::impossible(format!(
                        "controller port {port} read at cycle {read} is out of range 0..={cycle}"
                    )));
                }
            }
        }
        Ok(())
    }
}
