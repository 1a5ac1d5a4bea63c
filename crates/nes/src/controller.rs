//! The standard NES controller: a 4021 8-bit parallel-in/serial-out shift register.

use borsh::{BorshDeserialize, BorshSerialize};

use crate::Buttons;

/// One standard controller on a port.
#[derive(Debug, Clone, Default, BorshSerialize, BorshDeserialize)]
pub(crate) struct Controller {
    /// What the player holds right now.
    held: Buttons,
    /// The shift register; bits leave from bit 0 (A first). Once all eight have been read the
    /// register has filled with the 1s shifted in from its serial input, which is tied high on
    /// official pads, so further reads return 1.
    shift: u8,
    /// While the strobe ($4016 bit 0) is high the register keeps reloading, so every read returns A.
    strobe: bool,
}

impl Controller {
    pub(crate) fn set_held(&mut self, buttons: Buttons) {
        self.held = buttons;
        if self.strobe {
            self.shift = buttons.bits();
        }
    }

    pub(crate) fn held(&self) -> Buttons {
        self.held
    }

    /// A write to $4016 sets the OUT0 line, the strobe of both ports.
    pub(crate) fn write_strobe(&mut self, high: bool) {
        // The register loads continuously while the strobe is high and keeps its last load when
        // the strobe falls.
        if self.strobe || high {
            self.shift = self.held.bits();
        }
        self.strobe = high;
    }

    /// A CPU read of the port: the serial output (bit 0) and a clock pulse.
    pub(crate) fn read(&mut self) -> u8 {
        if self.strobe {
            return self.held.bits() & 1;
        }
        let bit = self.shift & 1;
        self.shift = (self.shift >> 1) | 0x80;
        bit
    }

    /// The value `read` would return, without clocking the register.
    pub(crate) fn peek(&self) -> u8 {
        if self.strobe {
            self.held.bits() & 1
        } else {
            self.shift & 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_buttons_in_order_then_ones() {
        let mut pad = Controller::default();
        pad.set_held(Buttons::A | Buttons::START | Buttons::RIGHT);
        pad.write_strobe(true);
        pad.write_strobe(false);
        let bits: Vec<u8> = (0..10).map(|_| pad.read()).collect();
        assert_eq!(bits, [1, 0, 0, 1, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn strobe_high_always_returns_a() {
        let mut pad = Controller::default();
        pad.set_held(Buttons::A);
        pad.write_strobe(true);
        assert_eq!(pad.read(), 1);
        assert_eq!(pad.read(), 1);
        pad.set_held(Buttons::B);
        assert_eq!(pad.read(), 0);
    }

    #[test]
    fn peek_does_not_clock() {
        let mut pad = Controller::default();
        pad.set_held(Buttons::B);
        pad.write_strobe(true);
        pad.write_strobe(false);
        assert_eq!(pad.peek(), 0);
        assert_eq!(pad.peek(), 0);
        assert_eq!(pad.read(), 0);
        assert_eq!(pad.peek(), 1);
    }
}
