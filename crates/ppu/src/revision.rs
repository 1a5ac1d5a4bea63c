//! Which 2C02 the PPU is. Revisions differ in what the CPU can read back; everything else a
//! program can observe is the same on the composite (NTSC video) 2C02s emulated here.

/// A composite NTSC 2C02 by revision (NESdev wiki "PPU variants", "PPU registers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PpuRevision {
    /// RP2C02G (and the later H): OAMDATA (`$2004`) and palette RAM read back.
    #[default]
    G,
    /// The 2C02s before G (letterless to E): `$2004` is write-only, so a read returns the I/O
    /// latch (open bus), and a `$2007` read of `$3F00-$3FFF` goes through the read buffer
    /// like any other address, returning the nametable byte underneath one read later
    /// (AccuracyCoin "Address $2004 behavior" and "PPU Read Buffer", code "E").
    PreG,
}

impl PpuRevision {
    /// Whether `$2004` reads return OAM (or the OAM bus while rendering).
    pub(crate) fn reads_oam(self) -> bool {
        self == PpuRevision::G
    }

    /// Whether `$2007` reads of palette addresses return palette RAM at once.
    pub(crate) fn reads_palette(self) -> bool {
        self == PpuRevision::G
    }
}
