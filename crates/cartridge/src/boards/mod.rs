//! The boards (mappers). Each board owns only its registers; the bank tables live in
//! [`Memory`] and are rewritten by a board when one of its registers changes, so reads never
//! reach board code.

use borsh::{BorshDeserialize, BorshSerialize};
mod axrom;
mod bnrom_nina001;
mod cnrom;
mod color_dreams;
mod gxrom;
mod mmc1;
mod mmc3;
mod nrom;
mod uxrom;

pub use mmc3::Mmc3Revision;

use crate::error::CartridgeError;
use crate::header::RomInfo;
use crate::memory::{BankTables, Memory};

#[derive(Debug, Clone, BorshSerialize, BorshDeserialize)]
pub(crate) enum Board {
    Nrom(nrom::Nrom),
    Mmc1(mmc1::Mmc1),
    Uxrom(uxrom::Uxrom),
    Cnrom(cnrom::Cnrom),
    Axrom(axrom::Axrom),
    ColorDreams(color_dreams::ColorDreams),
    Bnrom(bnrom_nina001::Bnrom),
    Nina001(bnrom_nina001::Nina001),
    Gxrom(gxrom::Gxrom),
    Mmc3(mmc3::Mmc3),
}

impl Board {
    /// Builds the board the header asks for and sets its power-on bank tables.
    pub fn new(info: &RomInfo, mem: &mut Memory) -> Result<(Board, &'static str), CartridgeError> {
        let board = match info.mapper {
            0 => Board::Nrom(nrom::Nrom::new(info, mem)?),
            1 => Board::Mmc1(mmc1::Mmc1::new(info, mem)),
            2 => Board::Uxrom(uxrom::Uxrom::new(info, mem)),
            3 => Board::Cnrom(cnrom::Cnrom::new(info, mem)),
            4 => Board::Mmc3(mmc3::Mmc3::new(info, mem)),
            7 => Board::Axrom(axrom::Axrom::new(info, mem)),
            11 => Board::ColorDreams(color_dreams::ColorDreams::new(info, mem)),
            34 if bnrom_nina001::is_nina001(info) => {
                Board::Nina001(bnrom_nina001::Nina001::new(info, mem))
            }
            34 => Board::Bnrom(bnrom_nina001::Bnrom::new(info, mem)),
            66 => Board::Gxrom(gxrom::Gxrom::new(info, mem)),
            mapper => {
                return Err(CartridgeError::UnsupportedMapper {
                    mapper,
                    submapper: info.submapper,
                })
            }
        };
        let name = board.name(info);
        Ok((board, name))
    }

    fn name(&self, info: &RomInfo) -> &'static str {
        match self {
            Board::Nrom(_) => "NROM",
            Board::Mmc1(_) => mmc1::board_name(info),
            Board::Uxrom(_) => {
                if info.prg_rom_len > 128 * 1024 {
                    "UOROM"
                } else {
                    "UNROM"
                }
            }
            Board::Cnrom(_) => "CNROM",
            Board::Axrom(_) => {
                if info.prg_rom_len > 128 * 1024 {
                    "AOROM"
                } else {
                    "ANROM"
                }
            }
            Board::ColorDreams(_) => "COLOR DREAMS",
            Board::Bnrom(_) => "BNROM",
            Board::Nina001(_) => "NINA-001",
            Board::Gxrom(_) => "GNROM",
            Board::Mmc3(_) => "TxROM",
        }
    }

    /// Checks a board decoded from a save state, with its bank tables `tables`, against the
    /// cartridge it is to be loaded into (`info`, `mem`): the wiring the header fixed is this
    /// cartridge's, each register lies in its range, and the bank tables are a mapping the
    /// board can select. Boards with registers (MMC1, MMC3) must have exactly the tables
    /// their registers give; latch boards keep their one register in the tables themselves,
    /// so theirs must be what some value written to the latch gives. Nothing else reaches
    /// ROM with a write, or a bank past a chip. Err says what is wrong.
    pub fn validate_state(
        &self,
        info: &RomInfo,
        mem: &Memory,
        tables: &BankTables,
    ) -> Result<(), String> {
        let mut scratch = mem.layout();
        let (mut fresh, name) =
            Board::new(info, &mut scratch).map_err(|error| error.to_string())?;
        let wiring_matches = match (self, &fresh) {
            (Board::Mmc1(loaded), Board::Mmc1(fresh)) => {
                loaded.validate_state(fresh)?;
                loaded.apply(&mut scratch);
                return tables_match(&scratch, tables, name);
            }
            (Board::Mmc3(loaded), Board::Mmc3(fresh)) => {
                loaded.validate_state(fresh)?;
                loaded.apply(&mut scratch);
                return tables_match(&scratch, tables, name);
            }
            (Board::Uxrom(loaded), Board::Uxrom(fresh)) => loaded.wiring() == fresh.wiring(),
            (Board::Cnrom(loaded), Board::Cnrom(fresh)) => loaded.wiring() == fresh.wiring(),
            (Board::Axrom(loaded), Board::Axrom(fresh)) => loaded.wiring() == fresh.wiring(),
            (Board::Nrom(_), Board::Nrom(_))
            | (Board::ColorDreams(_), Board::ColorDreams(_))
            | (Board::Bnrom(_), Board::Bnrom(_))
            | (Board::Nina001(_), Board::Nina001(_))
            | (Board::Gxrom(_), Board::Gxrom(_)) => true,
            _ => return Err("the state is for another kind of board".to_string()),
        };
        if !wiring_matches {
            return Err(format!(
                "the {name} board's bus conflicts do not match this cartridge's"
            ));
        }
        // The power-on mapping, then each value of the latch (a latch write rewrites every
        // window the latch selects). A state-less scratch memory reads open bus, so a bus
        // conflict leaves each value as written.
        let mut reachable = scratch.has_tables(tables);
        match &mut fresh {
            Board::Nrom(_) => {}
            Board::Nina001(board) => {
                // Three registers selecting separate windows.
                'search: for prg in 0..2 {
                    board.cpu_write(&mut scratch, 0x7FFD, prg);
                    for chr_low in 0..16 {
                        board.cpu_write(&mut scratch, 0x7FFE, chr_low);
                        for chr_high in 0..16 {
                            board.cpu_write(&mut scratch, 0x7FFF, chr_high);
                            if scratch.has_tables(tables) {
                                reachable = true;
                                break 'search;
                            }
                        }
                    }
                }
            }
            latch => {
                for value in 0..=u8::MAX {
                    if reachable {
                        break;
                    }
                    latch.cpu_write(&mut scratch, 0x8000, value, 0);
                    reachable = scratch.has_tables(tables);
                }
            }
        }
        if reachable {
            Ok(())
        } else {
            Err(format!(
                "the cartridge bank tables are not a mapping the {name} board can select"
            ))
        }
    }

    /// A CPU write to $4020-$FFFF (RAM at $6000 has already taken the value).
    #[inline]
    pub fn cpu_write(&mut self, mem: &mut Memory, addr: u16, value: u8, cpu_cycle: u64) {
        match self {
            Board::Nrom(_) => {}
            Board::Mmc1(b) => b.cpu_write(mem, addr, value, cpu_cycle),
            Board::Uxrom(b) => b.cpu_write(mem, addr, value),
            Board::Cnrom(b) => b.cpu_write(mem, addr, value),
            Board::Axrom(b) => b.cpu_write(mem, addr, value),
            Board::ColorDreams(b) => b.cpu_write(mem, addr, value),
            Board::Bnrom(b) => b.cpu_write(mem, addr, value),
            Board::Nina001(b) => b.cpu_write(mem, addr, value),
            Board::Gxrom(b) => b.cpu_write(mem, addr, value),
            Board::Mmc3(b) => b.cpu_write(mem, addr, value),
        }
    }

    /// The PPU put `addr` on its bus.
    #[inline]
    pub fn ppu_address_changed(&mut self, mem: &mut Memory, addr: u16, cpu_cycle: u64) {
        match self {
            Board::Mmc1(b) => b.ppu_address_changed(mem, addr),
            Board::Mmc3(b) => b.observe_ppu_address(addr, cpu_cycle),
            _ => {}
        }
    }

    /// Whether the board needs to see PPU addresses (A12) at all.
    pub fn watches_a12(&self) -> bool {
        match self {
            Board::Mmc1(b) => b.watches_a12(),
            Board::Mmc3(_) => true,
            _ => false,
        }
    }

    #[inline]
    pub fn irq_line(&self) -> bool {
        match self {
            Board::Mmc3(b) => b.irq_line(),
            _ => false,
        }
    }

    /// Whether the board's CPU-side mapping follows PPU A12 with its registers as they are
    /// (MMC1 boards using the CHR lines for PRG/RAM selection, in 4 KiB CHR mode with the two
    /// CHR registers disagreeing in those lines): then every CPU access needs the PPU caught
    /// up. Changes only with a CPU write to the board.
    #[inline]
    pub fn cpu_mapping_follows_a12(&self) -> bool {
        match self {
            Board::Mmc1(b) => b.cpu_mapping_follows_a12(),
            _ => false,
        }
    }

    /// Lower bound on the PPU dots before the board's IRQ output may rise (see
    /// `Mmc3::dots_until_irq_possible`); `u32::MAX` for boards without an IRQ.
    #[inline]
    pub fn dots_until_irq_possible(&self) -> u32 {
        match self {
            Board::Mmc3(b) => b.dots_until_irq_possible(),
            _ => u32::MAX,
        }
    }

    pub fn mmc3_revision(&self) -> Option<Mmc3Revision> {
        match self {
            Board::Mmc3(b) => Some(b.revision()),
            _ => None,
        }
    }

    pub fn set_mmc3_revision(&mut self, revision: Mmc3Revision) {
        if let Board::Mmc3(b) = self {
            b.set_revision(revision);
        }
    }
}

/// `Ok` when `mem` has `tables`, else the error naming the board whose registers they do not
/// match.
fn tables_match(mem: &Memory, tables: &BankTables, board: &str) -> Result<(), String> {
    if mem.has_tables(tables) {
        Ok(())
    } else {
        Err(format!(
            "the cartridge bank tables do not match the {board} board's registers"
        ))
    }
}

/// Power-on wiring shared by boards with solder-pad mirroring: the header's mirroring and
/// PRG RAM bank 0 at $6000 (open bus when the image declares none).
pub(crate) fn map_fixed_board(info: &RomInfo, mem: &mut Memory) {
    mem.set_mirroring(info.mirroring);
    mem.map_prg_ram(0, true);
}

/// Discrete-logic boards whose latch sits on the CPU data bus while the PRG ROM is also
/// enabled: the ROM drives the byte at the written address, and a 0 bit from either side
/// wins (open-collector-like behaviour of NMOS vs CMOS drivers, as emulators model it).
#[inline]
pub(crate) fn with_bus_conflict(mem: &Memory, addr: u16, value: u8) -> u8 {
    value & mem.cpu_read(addr).unwrap_or(0xFF)
}

#[cfg(test)]
pub(crate) mod tests {
    use borsh::{BorshDeserialize, BorshSerialize};

    use super::Board;
    use crate::Cartridge;

    /// Reads `c`'s own state back into it after `edit` changed the board and the bytes
    /// before it (the bank tables, eight-byte offsets in the order CPU read, CPU write, PPU
    /// read, PPU write, then the RAM), as a crafted state would. Err is the refusal.
    pub fn reload_edited(
        c: &Cartridge,
        edit: impl FnOnce(&mut Board, &mut Vec<u8>),
    ) -> Result<(), String> {
        let mut bytes = Vec::new();
        c.save_state(&mut bytes).unwrap();
        let board_at = borsh::to_vec(c.mem.tables()).unwrap().len() + c.mem.writable_len();
        let mut rest = &bytes[board_at..];
        let mut board = Board::deserialize_reader(&mut rest).unwrap();
        let cpu_cycle = rest.to_vec();
        let mut edited = bytes[..board_at].to_vec();
        edit(&mut board, &mut edited);
        board.serialize(&mut edited).unwrap();
        edited.extend(cpu_cycle);
        c.read_state(&mut &edited[..])
            .map(|_| ())
            .map_err(|error| error.to_string())
    }

    /// The bank table entry `index` (0-47, see `reload_edited`) in state bytes.
    pub fn table_entry(bytes: &mut [u8], index: usize) -> &mut [u8] {
        &mut bytes[index * 8..index * 8 + 8]
    }

    /// PRG byte at `offset` of 8 KiB bank `bank` in images built by [`image`].
    pub fn prg_tag(bank: usize, offset: usize) -> u8 {
        (bank as u8).wrapping_mul(3).wrapping_add(offset as u8)
    }

    /// CHR byte at `offset` of 1 KiB bank `bank` in images built by [`image`].
    pub fn chr_tag(bank: usize, offset: usize) -> u8 {
        (bank as u8).wrapping_mul(5).wrapping_add(offset as u8)
    }

    fn body(prg_len: usize, chr_len: usize) -> Vec<u8> {
        let mut bytes: Vec<u8> = (0..prg_len).map(|i| prg_tag(i / 8192, i % 8192)).collect();
        bytes.extend((0..chr_len).map(|i| chr_tag(i / 1024, i % 1024)));
        bytes
    }

    /// An iNES 1.0 image of mapper `mapper` (flags 6 low nibble `flags6`), `prg_16k` x 16 KiB
    /// PRG and `chr_8k` x 8 KiB CHR ROM (0 = CHR RAM).
    pub fn image(mapper: u8, flags6: u8, prg_16k: u8, chr_8k: u8) -> Vec<u8> {
        let mut bytes = vec![
            0x4E,
            0x45,
            0x53,
            0x1A,
            prg_16k,
            chr_8k,
            (mapper << 4) | (flags6 & 0x0F),
            mapper & 0xF0,
        ];
        bytes.resize(16, 0);
        bytes.extend(body(
            usize::from(prg_16k) * 16384,
            usize::from(chr_8k) * 8192,
        ));
        bytes
    }

    /// A NES 2.0 image: `prg_ram`/`chr_ram` are byte 10/11 (shift counts), `submapper` byte 8 high nibble.
    pub fn image_nes2(
        mapper: u8,
        submapper: u8,
        flags6: u8,
        prg_16k: u8,
        chr_8k: u8,
        prg_ram: u8,
        chr_ram: u8,
    ) -> Vec<u8> {
        let mut bytes = vec![
            0x4E,
            0x45,
            0x53,
            0x1A,
            prg_16k,
            chr_8k,
            (mapper << 4) | (flags6 & 0x0F),
            (mapper & 0xF0) | 0x08,
        ];
        bytes.extend([submapper << 4, 0, prg_ram, chr_ram, 0, 0, 0, 0]);
        bytes.extend(body(
            usize::from(prg_16k) * 16384,
            usize::from(chr_8k) * 8192,
        ));
        bytes
    }

    pub fn cart(mapper: u8, flags6: u8, prg_16k: u8, chr_8k: u8) -> Cartridge {
        Cartridge::from_ines(&image(mapper, flags6, prg_16k, chr_8k)).unwrap()
    }

    /// Which 8 KiB PRG bank is visible at `addr` (assumes the tag layout of [`image`]).
    pub fn prg_bank_at(c: &Cartridge, addr: u16) -> usize {
        let value = c.cpu_peek(addr).expect("PRG ROM mapped");
        let offset = usize::from(addr & 0x1FFF);
        (0..256).find(|&b| prg_tag(b, offset) == value).unwrap()
    }

    /// Which 1 KiB CHR bank is visible at PPU `addr`.
    pub fn chr_bank_at(c: &Cartridge, addr: u16) -> usize {
        let value = c.ppu_peek(addr);
        let offset = usize::from(addr & 0x3FF);
        (0..256).find(|&b| chr_tag(b, offset) == value).unwrap()
    }

    /// Which 1 KiB CIRAM page each nametable shows (0-1, or 0-3 with four-screen VRAM).
    pub fn nametable_layout(c: &Cartridge) -> [usize; 4] {
        c.mem.nametable_pages()
    }
}
