//! What a DMA read finds while the 6502 is halted: the DMA unit drives its own address on the
//! external bus, but the 2A03's internal registers are selected by the 6502's address, so
//! both take part (the bus conflicts of NESdev "DMA").

use nes_cpu::DmaKind;

use crate::motherboard::Motherboard;

impl Motherboard {
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
    pub(crate) fn dma_read_mapped(&mut self, addr: u16, cpu_addr: u16, kind: DmaKind) -> u8 {
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
        let value = match register {
            0x4015 => {
                let status = self.apu.read_status();
                match kind {
                    DmaKind::Oam => (status & !0x20) | (external & 0x20),
                    DmaKind::Dmc => external,
                }
            }
            0x4016 | 0x4017 => {
                let port = usize::from(register & 1);
                let value = (external & self.ports.floating_bits(port)) | self.read_joypad(port);
                self.open_bus = value;
                value
            }
            _ => external,
        };
        // A $4015 read acknowledges the frame IRQ (the APU's next event moves).
        self.resync();
        value
    }
}
