//! iNES 1.0 / NES 2.0 header parsing.
//!
//! Layout (NESdev "iNES" and "NES 2.0" pages): bytes 0-3 `NES\x1A`; 4 PRG ROM size; 5 CHR ROM
//! size; 6 flags (mirroring, battery, trainer, four-screen, mapper low nibble); 7 flags (console
//! type, NES 2.0 identifier in bits 2-3, mapper middle nibble); NES 2.0 only: 8 mapper high nibble
//! and submapper, 9 size MSBs, 10 PRG-RAM/NVRAM shift counts, 11 CHR-RAM/NVRAM shift counts.

use md5::Md5;
use sha1::{Digest, Sha1};

use crate::error::CartridgeError;

pub(crate) const HEADER_LEN: usize = 16;

/// Builds an iNES 1.0 image for a ROM made in code (tools, tests): the header for `prg` (a
/// multiple of 16 KiB) and `chr` (a multiple of 8 KiB; empty for 8 KiB of CHR RAM) on
/// `mapper` (0-255), vertical mirroring, no battery or trainer, then PRG and CHR.
pub fn ines_image(mapper: u8, prg: &[u8], chr: &[u8]) -> Vec<u8> {
    let mut image = vec![
        b'N',
        b'E',
        b'S',
        0x1A,
        (prg.len() as u64 / PRG_UNIT) as u8,
        (chr.len() as u64 / CHR_UNIT) as u8,
        (mapper << 4) | 0x01,
        mapper & 0xF0,
    ];
    image.resize(HEADER_LEN, 0);
    image.extend_from_slice(prg);
    image.extend_from_slice(chr);
    image
}
pub(crate) const TRAINER_LEN: usize = 512;
const PRG_UNIT: u64 = 16 * 1024;
const CHR_UNIT: u64 = 8 * 1024;
/// Largest ROM chip this crate accepts (64 MiB); bigger declarations are treated as corrupt.
const MAX_ROM_LEN: u64 = 64 * 1024 * 1024;

/// How the four logical nametables map onto the console's nametable RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mirroring {
    /// $2000 = $2400, $2800 = $2C00 (vertical arrangement, horizontal scrolling games).
    Horizontal,
    /// $2000 = $2800, $2400 = $2C00.
    Vertical,
    /// All four nametables show the first 1 KiB of CIRAM.
    SingleScreenLower,
    /// All four nametables show the second 1 KiB of CIRAM.
    SingleScreenUpper,
    /// Four separate nametables (2 KiB of extra VRAM on the cartridge).
    FourScreen,
}

/// Which header dialect the image uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RomFormat {
    INes,
    Nes2,
}

/// Everything the header says about the cartridge, and the image's identity: its hashes,
/// computed once here for everyone who names the ROM (save states, movies, scripts, reports).
#[derive(Debug, Clone)]
pub struct RomInfo {
    /// The image's 16 header bytes as the file has them.
    pub header: [u8; 16],
    pub format: RomFormat,
    pub mapper: u16,
    pub submapper: u8,
    pub prg_rom_len: usize,
    pub chr_rom_len: usize,
    /// Volatile PRG RAM at $6000 (for iNES 1.0 images without a battery: always 8 KiB).
    pub prg_ram_len: usize,
    /// Battery-backed PRG RAM (for iNES 1.0 images with the battery bit: 8 KiB).
    pub prg_nvram_len: usize,
    /// CHR RAM (8 KiB when the image has no CHR ROM and declares no CHR RAM).
    pub chr_ram_len: usize,
    pub chr_nvram_len: usize,
    pub mirroring: Mirroring,
    pub battery: bool,
    pub trainer: bool,
    /// The TV system the header names, if it names one (see [`HeaderTiming`]).
    pub timing: Option<HeaderTiming>,
    /// MD5 of the whole file, as tools listing ROM files show it.
    pub file_md5: [u8; 16],
    pub file_sha1: [u8; 20],
    /// MD5 of PRG ROM followed by CHR ROM (header, trainer and anything after CHR ROM
    /// excluded): FCEUX's ROM checksum, which FM2 movies (`romChecksum`) and Lua's
    /// `rom.gethash("md5")` give.
    pub prg_chr_md5: [u8; 16],
    /// SHA-1 of PRG ROM followed by CHR ROM, as `prg_chr_md5` (save states name their ROM by it).
    pub prg_chr_sha1: [u8; 20],
    pub known_title: Option<&'static str>,
    pub board_name: &'static str,
}

/// The console timing a header asks for: NES 2.0 byte 12 bits 0-1, or the iNES 1.0 TV-system
/// bit (byte 9 bit 0, PAL when set) in headers whose bytes 10-15 are clean (NESdev "NES 2.0",
/// "INES": few iNES 1.0 dumps set it, and junk-filled headers would set it at random).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeaderTiming {
    /// RP2C02 ("NTSC NES").
    Ntsc,
    /// RP2C07 ("Licensed PAL NES").
    Pal,
    /// Runs on either (NES 2.0 value 2).
    MultiRegion,
    /// UA6538 ("Dendy").
    Dendy,
}

/// A parsed image: header facts plus slices of the file's ROM chips.
#[derive(Debug)]
pub(crate) struct ParsedImage<'a> {
    pub info: RomInfo,
    pub trainer: Option<&'a [u8]>,
    pub prg_rom: &'a [u8],
    pub chr_rom: &'a [u8],
}

/// Images recognised by hash: (whole-file SHA-1, PRG+CHR SHA-1, title).
const KNOWN_IMAGES: &[([u8; 20], [u8; 20], &str)] = &[(
    hex20("77747840541bfc62a28a5957692a98c550bd6b2b"),
    hex20("fd9079cb5e8479eb06d93c2ae5175bfce871746a"),
    "Tetris (USA)",
)];

/// Parses 40 hex digits at compile time (used only for the constant table above).
const fn hex20(text: &str) -> [u8; 20] {
    const fn nibble(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("not a hex digit"),
        }
    }
    let bytes = text.as_bytes();
    assert!(bytes.len() == 40);
    let mut out = [0u8; 20];
    let mut i = 0;
    while i < 20 {
        out[i] = (nibble(bytes[2 * i]) << 4) | nibble(bytes[2 * i + 1]);
        i += 1;
    }
    out
}

/// Looks an image up in a table of known hashes; either hash is enough.
fn recognise_in(
    table: &[([u8; 20], [u8; 20], &'static str)],
    file_sha1: &[u8; 20],
    prg_chr_sha1: &[u8; 20],
) -> Option<&'static str> {
    table
        .iter()
        .find(|(file, prg_chr, _)| file == file_sha1 || prg_chr == prg_chr_sha1)
        .map(|&(_, _, title)| title)
}

fn recognise(file_sha1: &[u8; 20], prg_chr_sha1: &[u8; 20]) -> Option<&'static str> {
    recognise_in(KNOWN_IMAGES, file_sha1, prg_chr_sha1)
}

/// NES 2.0 RAM sizes are `64 << shift` bytes, with shift 0 meaning none.
fn shift_size(shift: u8) -> usize {
    if shift == 0 {
        0
    } else {
        64usize << shift
    }
}

/// NES 2.0 ROM size: a 12-bit count of `unit`s, or, when the MSB nibble is $F, the
/// exponent-multiplier form `2^E * (MM * 2 + 1)` from the LSB byte `EEEEEEMM`.
fn nes2_rom_size(
    lsb: u8,
    msb_nibble: u8,
    unit: u64,
    field: &'static str,
) -> Result<usize, CartridgeError> {
    let size = if msb_nibble == 0x0F {
        let exponent = u32::from(lsb >> 2);
        let multiplier = u64::from(lsb & 3) * 2 + 1;
        1u64.checked_shl(exponent)
            .filter(|_| exponent < 63)
            .and_then(|power| power.checked_mul(multiplier))
    } else {
        Some(((u64::from(msb_nibble) << 8) | u64::from(lsb)) * unit)
    };
    match size {
        Some(len) if len <= MAX_ROM_LEN => Ok(len as usize),
        _ => Err(CartridgeError::InvalidHeader {
            field,
            reason: format!(
                "declared size (byte {lsb:#04X}, MSB nibble {msb_nibble:#X}) exceeds 64 MiB"
            ),
        }),
    }
}

fn sha1_of(parts: &[&[u8]]) -> [u8; 20] {
    let mut hasher = Sha1::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

fn md5_of(parts: &[&[u8]]) -> [u8; 16] {
    let mut hasher = Md5::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// MD5 of a whole file, as [`RomInfo::file_md5`] has it: for reports on files that did not
/// load as a cartridge.
pub fn file_md5(bytes: &[u8]) -> [u8; 16] {
    md5_of(&[bytes])
}

/// Takes `len` bytes at `offset`, or explains how short the file is.
fn take<'a>(
    bytes: &'a [u8],
    offset: usize,
    len: usize,
    part: &'static str,
) -> Result<&'a [u8], CartridgeError> {
    let available = bytes.len().saturating_sub(offset);
    if available < len {
        return Err(CartridgeError::Truncated {
            part,
            offset,
            expected: len,
            actual: available,
        });
    }
    Ok(&bytes[offset..offset + len])
}

pub(crate) fn parse(bytes: &[u8]) -> Result<ParsedImage<'_>, CartridgeError> {
    if bytes.len() < 4 || bytes[..4] != *b"NES\x1A" {
        return Err(CartridgeError::BadMagic {
            found: bytes.iter().take(4).copied().collect(),
        });
    }
    let header = take(bytes, 0, HEADER_LEN, "header")?;
    let flags6 = header[6];
    let flags7 = header[7];
    let trainer = flags6 & 0x04 != 0;
    let battery = flags6 & 0x02 != 0;
    let mirroring = if flags6 & 0x08 != 0 {
        Mirroring::FourScreen
    } else if flags6 & 0x01 != 0 {
        Mirroring::Vertical
    } else {
        Mirroring::Horizontal
    };
    let data_start = HEADER_LEN + if trainer { TRAINER_LEN } else { 0 };

    // NES 2.0 only when the identifier is present *and* the NES 2.0 sizes fit in the file
    // (NESdev's recommended detection); otherwise fall back to iNES 1.0 rules.
    let nes2_sizes = if flags7 & 0x0C == 0x08 {
        let prg = nes2_rom_size(header[4], header[9] & 0x0F, PRG_UNIT, "PRG ROM size")?;
        let chr = nes2_rom_size(header[5], header[9] >> 4, CHR_UNIT, "CHR ROM size")?;
        let fits = (data_start as u64) + (prg as u64) + (chr as u64) <= bytes.len() as u64;
        fits.then_some((prg, chr))
    } else {
        None
    };

    let (format, mapper, submapper, prg_rom_len, chr_rom_len, timing);
    let (mut prg_ram_len, mut prg_nvram_len, mut chr_ram_len, chr_nvram_len);
    if let Some((prg, chr)) = nes2_sizes {
        format = RomFormat::Nes2;
        mapper =
            u16::from(flags6 >> 4) | u16::from(flags7 & 0xF0) | (u16::from(header[8] & 0x0F) << 8);
        submapper = header[8] >> 4;
        prg_rom_len = prg;
        chr_rom_len = chr;
        prg_ram_len = shift_size(header[10] & 0x0F);
        prg_nvram_len = shift_size(header[10] >> 4);
        chr_ram_len = shift_size(header[11] & 0x0F);
        chr_nvram_len = shift_size(header[11] >> 4);
        timing = Some(match header[12] & 3 {
            0 => HeaderTiming::Ntsc,
            1 => HeaderTiming::Pal,
            2 => HeaderTiming::MultiRegion,
            _ => HeaderTiming::Dendy,
        });
    } else {
        format = RomFormat::INes;
        // "DiskDude!" and similar junk in bytes 7-15 corrupts the mapper's upper nibble: when
        // byte 7 carries the archaic-iNES pattern or bytes 12-15 are not zero, ignore byte 7.
        let junk = flags7 & 0x0C == 0x04 || header[12..16].iter().any(|&b| b != 0);
        let upper = if junk { 0 } else { flags7 & 0xF0 };
        mapper = u16::from(flags6 >> 4) | u16::from(upper);
        submapper = 0;
        let clean = flags7 & 0x0C == 0 && header[10..16].iter().all(|&b| b == 0);
        timing = (clean && header[9] & 1 != 0).then_some(HeaderTiming::Pal);
        prg_rom_len = usize::from(header[4]) * PRG_UNIT as usize;
        chr_rom_len = usize::from(header[5]) * CHR_UNIT as usize;
        // iNES 1.0 has no reliable PRG-RAM size: always provide 8 KiB at $6000 (blargg's test
        // ROMs report there even on boards whose header declares none).
        if battery {
            prg_ram_len = 0;
            prg_nvram_len = 8 * 1024;
        } else {
            prg_ram_len = 8 * 1024;
            prg_nvram_len = 0;
        }
        chr_ram_len = 0;
        chr_nvram_len = 0;
    }

    if prg_rom_len == 0 {
        return Err(CartridgeError::ZeroPrgRom);
    }
    // No CHR ROM and no declared CHR RAM: the board has 8 KiB of CHR RAM.
    if chr_rom_len == 0 && chr_ram_len == 0 && chr_nvram_len == 0 {
        chr_ram_len = 8 * 1024;
    }
    // A trainer is loaded at $7000, so there must be RAM there.
    if trainer && prg_ram_len + prg_nvram_len < 8 * 1024 {
        prg_ram_len = 8 * 1024 - prg_nvram_len.min(8 * 1024);
    }
    // A battery bit with no NVRAM declared (NES 2.0) means the declared RAM is the saved RAM.
    if battery && prg_nvram_len == 0 && prg_ram_len > 0 {
        prg_nvram_len = prg_ram_len;
        prg_ram_len = 0;
    }

    let trainer_bytes = if trainer {
        Some(take(bytes, HEADER_LEN, TRAINER_LEN, "trainer")?)
    } else {
        None
    };
    let prg_rom = take(bytes, data_start, prg_rom_len, "PRG ROM")?;
    let chr_rom = take(bytes, data_start + prg_rom_len, chr_rom_len, "CHR ROM")?;

    let file_sha1 = sha1_of(&[bytes]);
    let prg_chr_sha1 = sha1_of(&[prg_rom, chr_rom]);
    let mut header_bytes = [0; HEADER_LEN];
    header_bytes.copy_from_slice(header);
    let info = RomInfo {
        header: header_bytes,
        format,
        mapper,
        submapper,
        prg_rom_len,
        chr_rom_len,
        prg_ram_len,
        prg_nvram_len,
        chr_ram_len,
        chr_nvram_len,
        mirroring,
        battery,
        trainer,
        timing,
        file_md5: file_md5(bytes),
        file_sha1,
        prg_chr_md5: md5_of(&[prg_rom, chr_rom]),
        prg_chr_sha1,
        known_title: recognise(&file_sha1, &prg_chr_sha1),
        board_name: "",
    };
    Ok(ParsedImage {
        info,
        trainer: trainer_bytes,
        prg_rom,
        chr_rom,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn built_images_parse_back_to_what_was_asked() {
        let prg: Vec<u8> = (0..0x8000u32).map(|i| i as u8).collect();
        let chr = vec![0x5A; 0x2000];
        let bytes = ines_image(0x42, &prg, &chr);
        let parsed = parse(&bytes).unwrap();
        assert_eq!(parsed.info.format, RomFormat::INes);
        assert_eq!(parsed.info.mapper, 0x42);
        assert_eq!(parsed.info.mirroring, Mirroring::Vertical);
        assert!(!parsed.info.battery && parsed.trainer.is_none());
        assert_eq!((parsed.prg_rom, parsed.chr_rom), (&prg[..], &chr[..]));
        let chr_ram = parse(&ines_image(1, &prg[..0x4000], &[])).unwrap().info;
        assert_eq!((chr_ram.mapper, chr_ram.chr_rom_len), (1, 0));
    }

    /// Builds an image: a 16-byte header from `header`, an optional trainer, then PRG and CHR
    /// filled with a recognisable pattern (byte = low 8 bits of offset ^ chip tag).
    pub(crate) fn image(header: [u8; 16], prg_len: usize, chr_len: usize) -> Vec<u8> {
        let mut bytes = header.to_vec();
        if header[6] & 0x04 != 0 {
            bytes.extend((0..TRAINER_LEN).map(|i| (i as u8) ^ 0x77));
        }
        bytes.extend((0..prg_len).map(|i| (i as u8) ^ 0x11));
        bytes.extend((0..chr_len).map(|i| (i as u8) ^ 0x22));
        bytes
    }

    fn ines(prg_16k: u8, chr_8k: u8, flags6: u8, flags7: u8) -> [u8; 16] {
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(b"NES\x1A");
        h[4] = prg_16k;
        h[5] = chr_8k;
        h[6] = flags6;
        h[7] = flags7;
        h
    }

    #[test]
    fn ines_basic_fields() {
        let bytes = image(ines(2, 1, 0x01, 0x00), 32768, 8192);
        let p = parse(&bytes).unwrap();
        let i = &p.info;
        assert_eq!(i.format, RomFormat::INes);
        assert_eq!((i.mapper, i.submapper), (0, 0));
        assert_eq!((i.prg_rom_len, i.chr_rom_len), (32768, 8192));
        assert_eq!((i.prg_ram_len, i.prg_nvram_len), (8192, 0));
        assert_eq!((i.chr_ram_len, i.chr_nvram_len), (0, 0));
        assert_eq!(i.mirroring, Mirroring::Vertical);
        assert!(!i.battery && !i.trainer);
        assert_eq!(p.prg_rom.len(), 32768);
        assert_eq!(p.chr_rom[1], 1 ^ 0x22);
    }

    #[test]
    fn ines_mapper_nibbles_battery_horizontal_chr_ram() {
        let bytes = image(ines(1, 0, 0x12, 0x40), 16384, 0);
        let i = parse(&bytes).unwrap().info;
        assert_eq!(i.mapper, 0x41);
        assert_eq!(i.mirroring, Mirroring::Horizontal);
        assert!(i.battery);
        assert_eq!((i.prg_ram_len, i.prg_nvram_len), (0, 8192));
        assert_eq!(i.chr_ram_len, 8192, "CHR size 0 means 8 KiB CHR RAM");
    }

    #[test]
    fn ines_four_screen_and_trainer() {
        let bytes = image(ines(1, 1, 0x0C | 0x01, 0), 16384, 8192);
        let p = parse(&bytes).unwrap();
        assert_eq!(p.info.mirroring, Mirroring::FourScreen);
        assert!(p.info.trainer);
        let trainer = p.trainer.unwrap();
        assert_eq!(trainer.len(), 512);
        assert_eq!(trainer[3], 3 ^ 0x77);
        // PRG starts after the trainer.
        assert_eq!(p.prg_rom[5], 5 ^ 0x11);
    }

    #[test]
    fn diskdude_junk_masks_upper_mapper_nibble() {
        let mut h = ines(1, 1, 0x40, 0);
        h[7..16].copy_from_slice(b"DiskDude!");
        let i = parse(&image(h, 16384, 8192)).unwrap().info;
        assert_eq!(i.format, RomFormat::INes);
        assert_eq!(i.mapper, 4);
    }

    #[test]
    fn nes2_fields() {
        let mut h = ines(2, 1, 0x13, 0x48);
        h[8] = 0x51; // submapper 5, mapper bits 8-11 = 1
        h[10] = 0x97; // NVRAM 64<<9 = 32K, RAM 64<<7 = 8K
        h[11] = 0x87; // CHR NVRAM 16K, CHR RAM 8K
        let i = parse(&image(h, 32768, 8192)).unwrap().info;
        assert_eq!(i.format, RomFormat::Nes2);
        assert_eq!(i.mapper, 0x141);
        assert_eq!(i.submapper, 5);
        assert_eq!((i.prg_ram_len, i.prg_nvram_len), (8192, 32768));
        assert_eq!((i.chr_ram_len, i.chr_nvram_len), (8192, 16384));
        assert!(i.battery);
        assert_eq!(i.mirroring, Mirroring::Vertical);
    }

    #[test]
    fn timing_from_nes2_byte_12_and_the_clean_ines_tv_bit() {
        let timings = [0u8, 1, 2, 3].map(|value| {
            let mut h = ines(1, 1, 0, 0x08);
            h[12] = 0xFC | value; // the upper bits are not the timing field
            parse(&image(h, 16384, 8192)).unwrap().info.timing
        });
        use HeaderTiming::*;
        assert_eq!(timings, [Ntsc, Pal, MultiRegion, Dendy].map(Some));
        let mut h = ines(1, 1, 0, 0);
        h[9] = 1;
        assert_eq!(
            parse(&image(h, 16384, 8192)).unwrap().info.timing,
            Some(Pal)
        );
        h[9] = 0;
        assert_eq!(parse(&image(h, 16384, 8192)).unwrap().info.timing, None);
        // Junk past byte 9 makes the bit meaningless.
        let mut h = ines(1, 1, 0, 0);
        h[7..16].copy_from_slice(b"DiskDude!");
        assert_eq!(parse(&image(h, 16384, 8192)).unwrap().info.timing, None);
    }

    #[test]
    fn nes2_size_msb_nibbles() {
        let mut h = ines(0x00, 0x00, 0, 0x08);
        h[9] = 0x11; // PRG 0x100 * 16K = 4 MiB, CHR 0x100 * 8K = 2 MiB
        let bytes = image(h, 4 << 20, 2 << 20);
        let i = parse(&bytes).unwrap().info;
        assert_eq!(i.format, RomFormat::Nes2);
        assert_eq!((i.prg_rom_len, i.chr_rom_len), (4 << 20, 2 << 20));
    }

    #[test]
    fn nes2_exponent_multiplier_sizes() {
        let mut h = ines(0, 0, 0, 0x08);
        // PRG: E = 14, MM = 1 -> 2^14 * 3 = 48 KiB; CHR: E = 13, MM = 0 -> 8 KiB.
        h[4] = (14 << 2) | 1;
        h[5] = 13 << 2;
        h[9] = 0xFF;
        let i = parse(&image(h, 49152, 8192)).unwrap().info;
        assert_eq!((i.prg_rom_len, i.chr_rom_len), (49152, 8192));
        h[4] = 0xFF; // 2^63 * 7: absurd
        assert!(matches!(
            parse(&image(h, 16, 0)),
            Err(CartridgeError::InvalidHeader {
                field: "PRG ROM size",
                ..
            })
        ));
    }

    #[test]
    fn nes2_identifier_with_sizes_past_the_file_falls_back_to_ines() {
        let mut h = ines(1, 0, 0, 0x08);
        h[9] = 0x0F;
        h[4] = 40 << 2; // exponent form, 2^40 bytes: an invalid size, whatever the file holds
        let bytes = image(h, 16384, 0);
        let result = parse(&bytes);
        assert!(
            matches!(result, Err(CartridgeError::InvalidHeader { .. })),
            "2^40 is over the cap"
        );
        let mut h = ines(1, 0, 0, 0x08);
        h[9] = 0x01; // 0x101 * 16K: past the end of a 16K file -> iNES 1.0 rules
        let i = parse(&image(h, 16384, 0)).unwrap().info;
        assert_eq!(i.format, RomFormat::INes);
        assert_eq!(i.prg_rom_len, 16384);
    }

    #[test]
    fn nes2_battery_without_nvram_marks_ram_as_saved() {
        let mut h = ines(1, 1, 0x02, 0x08);
        h[10] = 0x07;
        let i = parse(&image(h, 16384, 8192)).unwrap().info;
        assert_eq!((i.prg_ram_len, i.prg_nvram_len), (0, 8192));
    }

    #[test]
    fn bad_magic() {
        let err = parse(b"NES\x00rest-of-file").unwrap_err();
        assert_eq!(
            err,
            CartridgeError::BadMagic {
                found: b"NES\x00".to_vec()
            }
        );
        assert!(err.to_string().contains("4E 45 53 1A"), "{err}");
        assert!(matches!(parse(b"NE"), Err(CartridgeError::BadMagic { .. })));
        assert!(matches!(parse(b""), Err(CartridgeError::BadMagic { .. })));
    }

    #[test]
    fn truncated_header() {
        let err = parse(b"NES\x1A\x01\x01").unwrap_err();
        assert_eq!(
            err,
            CartridgeError::Truncated {
                part: "header",
                offset: 0,
                expected: 16,
                actual: 6
            }
        );
        assert_eq!(
            err.to_string(),
            "truncated image: the header needs 16 bytes from offset 0, but only 6 are present"
        );
    }

    #[test]
    fn truncated_prg_chr_and_trainer() {
        let full = image(ines(2, 1, 0, 0), 32768, 8192);
        let err = parse(&full[..16 + 1000]).unwrap_err();
        assert_eq!(
            err,
            CartridgeError::Truncated {
                part: "PRG ROM",
                offset: 16,
                expected: 32768,
                actual: 1000
            }
        );
        let err = parse(&full[..full.len() - 1]).unwrap_err();
        assert_eq!(
            err,
            CartridgeError::Truncated {
                part: "CHR ROM",
                offset: 16 + 32768,
                expected: 8192,
                actual: 8191
            }
        );
        assert!(err.to_string().contains("8192") && err.to_string().contains("8191"));
        let with_trainer = image(ines(1, 0, 0x04, 0), 16384, 0);
        assert!(matches!(
            parse(&with_trainer[..100]),
            Err(CartridgeError::Truncated {
                part: "trainer",
                ..
            })
        ));
    }

    #[test]
    fn zero_prg_size() {
        let err = parse(&image(ines(0, 1, 0, 0), 0, 8192)).unwrap_err();
        assert_eq!(err, CartridgeError::ZeroPrgRom);
        assert_eq!(err.to_string(), "the header declares 0 bytes of PRG ROM");
    }

    #[test]
    fn hashes_and_recognition_table() {
        let bytes = image(ines(1, 1, 0, 0), 16384, 8192);
        let i = parse(&bytes).unwrap().info;
        assert_eq!(i.file_sha1, sha1_of(&[&bytes]));
        assert_eq!(i.prg_chr_sha1, sha1_of(&[&bytes[16..]]));
        assert_eq!(i.file_md5, md5_of(&[&bytes]));
        assert_eq!(i.prg_chr_md5, md5_of(&[&bytes[16..]]));
        assert_eq!(i.header[..], bytes[..16]);
        assert_eq!(i.known_title, None);
        // Either hash recognises an entry of an injected table.
        let table = [
            (i.file_sha1, [0u8; 20], "Synthetic by file"),
            ([1u8; 20], i.prg_chr_sha1, "Synthetic by PRG+CHR"),
        ];
        assert_eq!(
            recognise_in(&table[..1], &i.file_sha1, &[9; 20]),
            Some("Synthetic by file")
        );
        assert_eq!(
            recognise_in(&table[1..], &[9; 20], &i.prg_chr_sha1),
            Some("Synthetic by PRG+CHR")
        );
        assert_eq!(recognise_in(&table, &[9; 20], &[9; 20]), None);
    }

    #[test]
    fn fceux_md5_covers_prg_and_chr_only() {
        let mut bytes = image(ines(1, 1, 0x04, 0), 16384, 8192); // with a trainer
        let prg_chr = bytes[16 + 512..].to_vec();
        bytes.extend(b"title block");
        let i = parse(&bytes).unwrap().info;
        assert_eq!(i.prg_chr_md5, md5_of(&[&prg_chr]));
        assert_eq!(i.file_md5, file_md5(&bytes));
        assert_ne!(i.file_md5, i.prg_chr_md5);
        // MD5 itself: RFC 1321's test vector.
        let abc = file_md5(b"abc");
        assert_eq!(abc[..4], [0x90, 0x01, 0x50, 0x98]);
        assert_eq!(abc[12..], [0x28, 0xe1, 0x7f, 0x72]);
    }

    #[test]
    fn tetris_hashes_are_in_the_table() {
        let file = hex20("77747840541bfc62a28a5957692a98c550bd6b2b");
        let prg_chr = hex20("fd9079cb5e8479eb06d93c2ae5175bfce871746a");
        assert_eq!(file[0], 0x77);
        assert_eq!(file[19], 0x2b);
        assert_eq!(recognise(&file, &[0; 20]), Some("Tetris (USA)"));
        assert_eq!(recognise(&[0; 20], &prg_chr), Some("Tetris (USA)"));
        assert_eq!(recognise(&[0; 20], &[0; 20]), None);
    }
}
