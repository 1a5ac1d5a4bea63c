//! FCEUX's FM2 text movie format: a header of `key value` lines, then one input line per frame.
//!
//! The input log starts at the first line that begins with `|`. Each input line is
//! `|COMMANDS|PORT0|PORT1|PORT2|`: COMMANDS is a decimal bit field (1 soft reset, 2 power, 4 FDS
//! disk insert, 8 FDS side select, 16 VS coin), and a gamepad field is eight columns in the order
//! `RLDUTSBA` (Right, Left, Down, Up, sTart, Select, B, A), where `.` or a space means released
//! and any other character pressed. A port with no device (`portN 0`) has an empty field.
//!
//! Parsing and writing are pure text in, text out; [`Commands::apply`] is the one place a line
//! acts on a console.

use std::fmt;

use nes::{Buttons, Nes};

bitflags::bitflags! {
    /// The command field of an input line: console-level events applied before the frame runs.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
    pub struct Commands: u8 {
        /// Press the reset button.
        const SOFT_RESET = 0x01;
        /// Turn the console off and on again.
        const POWER = 0x02;
        /// Famicom Disk System: insert/eject the disk (no meaning on a cartridge).
        const FDS_INSERT = 0x04;
        /// Famicom Disk System: flip the disk side.
        const FDS_SELECT = 0x08;
        /// VS. System: insert a coin.
        const VS_INSERT_COIN = 0x10;
    }
}

impl Commands {
    /// Carries out an FM2 line's console commands, as FCEUX does at the input latch: power
    /// first, then reset. (FDS and VS. System commands mean nothing on this console.)
    pub fn apply(self, nes: &mut Nes) {
        if self.contains(Commands::POWER) {
            nes.power_cycle();
        }
        if self.contains(Commands::SOFT_RESET) {
            nes.soft_reset();
        }
    }
}

/// The gamepad columns of an input line, left to right, as the buttons they stand for.
const GAMEPAD_COLUMNS: [(char, Buttons); 8] = [
    ('R', Buttons::RIGHT),
    ('L', Buttons::LEFT),
    ('D', Buttons::DOWN),
    ('U', Buttons::UP),
    ('T', Buttons::START),
    ('S', Buttons::SELECT),
    ('B', Buttons::B),
    ('A', Buttons::A),
];

/// The FM2 format version this module reads and writes (the only one FCEUX defines).
pub const FM2_VERSION: u32 = 3;

/// What is plugged into controller port 0 or 1 (`port0`/`port1`: FCEUX's `SI_*` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum PortDevice {
    /// `SI_NONE` (0): the port's input field is empty.
    None,
    /// `SI_GAMEPAD` (1): a standard controller.
    #[default]
    Gamepad,
}

impl PortDevice {
    fn code(self) -> u32 {
        match self {
            PortDevice::None => 0,
            PortDevice::Gamepad => 1,
        }
    }
}

/// A `subtitle FRAME TEXT` header line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Subtitle {
    pub frame: u64,
    pub text: String,
}

/// The header keys of an FM2 file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MovieHeader {
    /// `version`: always [`FM2_VERSION`].
    pub version: u32,
    /// `emuVersion`: the version of the emulator that made the file.
    pub emu_version: u32,
    /// `rerecordCount`.
    pub rerecord_count: u32,
    /// `palFlag`: recorded with PAL timing.
    pub pal: bool,
    /// `romFilename`: the ROM's file name, without its extension.
    pub rom_filename: String,
    /// `romChecksum`: the MD5 of the ROM's PRG and CHR data (header excluded), as FCEUX hashes
    /// it, written `base64:...`.
    pub rom_checksum: Option<[u8; 16]>,
    /// `guid`: identifies the recording (8-4-4-4-12 hex digits).
    pub guid: String,
    /// `fourscore`: a Four Score adapter was used (not supported: parsing rejects it).
    pub fourscore: bool,
    /// `port0`, `port1`.
    pub ports: [PortDevice; 2],
    /// `port2`: the Famicom expansion port device (0: none; others are rejected).
    pub expansion_port: u32,
    /// `microphone`: port 2's Famicom microphone was used.
    pub microphone: bool,
    /// `FDS`: a Famicom Disk System game.
    pub fds: bool,
    /// `NewPPU`: recorded with FCEUX's "new PPU", whose timing differs from the default one.
    pub new_ppu: bool,
    /// `RAMInitOption` (FCEUX 2.6): how CPU RAM was filled at power-on (0 FCEUX's pattern,
    /// 1 $FF, 2 $00, 3 random from `RAMInitSeed`). Older movies have none: FCEUX then uses 0.
    pub ram_init_option: Option<u32>,
    /// `RAMInitSeed` (FCEUX 2.6): the seed of option 3. FCEUX writes it as a signed 32-bit
    /// number; it is kept as the same 32 bits.
    pub ram_init_seed: Option<u32>,
    /// `comment` lines, in order, without the key (e.g. `author Someone`).
    pub comments: Vec<String>,
    /// `subtitle` lines, in order.
    pub subtitles: Vec<Subtitle>,
    /// Any other key (`length`, ...), kept in file order so a rewritten movie loses nothing.
    pub other: Vec<(String, String)>,
}

impl MovieHeader {
    /// A header for a new recording: version 3, two gamepads, no expansion device.
    pub fn new() -> MovieHeader {
        MovieHeader {
            version: FM2_VERSION,
            ports: [PortDevice::Gamepad; 2],
            ..MovieHeader::default()
        }
    }
}

/// The input for one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct MovieFrame {
    /// Applied before the frame runs.
    pub command: Commands,
    /// Controllers 1 and 2.
    pub pads: [Buttons; 2],
}

/// A whole FM2 movie: input line `i` (from 0) is the input for frame `i + 1`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Movie {
    pub header: MovieHeader,
    pub frames: Vec<MovieFrame>,
}

/// Why an FM2 file was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fm2Error {
    /// The 1-based line of the file the problem is on.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Fm2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for Fm2Error {}

fn error(line: usize, message: impl Into<String>) -> Fm2Error {
    Fm2Error {
        line,
        message: message.into(),
    }
}

impl Movie {
    /// Parse FM2 text (`\n` or `\r\n` line ends).
    pub fn parse(text: &str) -> Result<Movie, Fm2Error> {
        let mut header = MovieHeader::new();
        let mut version_seen = false;
        let mut frames = Vec::new();
        let mut in_input_log = false;
        let mut last_line = 0;
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            last_line = line_no;
            // Every trailing `\r`, not just a CRLF's: a value ending in `\r` would not survive
            // `to_fm2` (its `\n` would make a CRLF of it).
            let line = raw.trim_end_matches('\r');
            if line.starts_with('|') {
                if !in_input_log {
                    in_input_log = true;
                    if !version_seen {
                        return Err(error(
                            line_no,
                            "the input log starts before a `version` key",
                        ));
                    }
                    check_supported(&header, line_no)?;
                }
                frames.push(parse_input_line(line, &header).map_err(|m| error(line_no, m))?);
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            if in_input_log {
                return Err(error(
                    line_no,
                    format!("expected an input line starting with `|`, found `{line}`"),
                ));
            }
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            parse_header_line(&mut header, key, value).map_err(|m| error(line_no, m))?;
            if key == "version" {
                version_seen = true;
            }
        }
        if !version_seen {
            return Err(error(
                last_line.max(1),
                "no `version` key: not an FM2 movie",
            ));
        }
        if !in_input_log {
            check_supported(&header, last_line.max(1))?;
        }
        Ok(Movie { header, frames })
    }

    /// The movie as FM2 text, header keys in FCEUX 2.6.5's order, `\n` line ends.
    pub fn to_fm2(&self) -> String {
        let h = &self.header;
        let mut out = String::with_capacity(512 + self.frames.len() * 24);
        let mut key = |k: &str, v: &dyn fmt::Display| {
            out.push_str(k);
            out.push(' ');
            out.push_str(&v.to_string());
            out.push('\n');
        };
        key("version", &h.version);
        key("emuVersion", &h.emu_version);
        key("rerecordCount", &h.rerecord_count);
        key("palFlag", &u8::from(h.pal));
        key("romFilename", &h.rom_filename);
        if let Some(md5) = &h.rom_checksum {
            key("romChecksum", &format!("base64:{}", base64_encode(md5)));
        }
        key("guid", &h.guid);
        key("fourscore", &u8::from(h.fourscore));
        key("microphone", &u8::from(h.microphone));
        key("port0", &h.ports[0].code());
        key("port1", &h.ports[1].code());
        key("port2", &h.expansion_port);
        key("FDS", &u8::from(h.fds));
        key("NewPPU", &u8::from(h.new_ppu));
        if let Some(option) = h.ram_init_option {
            key("RAMInitOption", &option);
        }
        if let Some(seed) = h.ram_init_seed {
            // FCEUX prints it as a C int.
            key("RAMInitSeed", &(seed as i32));
        }
        for (k, v) in &h.other {
            key(k, v);
        }
        for comment in &h.comments {
            key("comment", comment);
        }
        for subtitle in &h.subtitles {
            key("subtitle", &format!("{} {}", subtitle.frame, subtitle.text));
        }
        for frame in &self.frames {
            out.push('|');
            out.push_str(&frame.command.bits().to_string());
            out.push('|');
            for (port, device) in h.ports.iter().enumerate() {
                if *device == PortDevice::Gamepad {
                    for (letter, button) in GAMEPAD_COLUMNS {
                        out.push(if frame.pads[port].contains(button) {
                            letter
                        } else {
                            '.'
                        });
                    }
                }
                out.push('|');
            }
            // The (empty) expansion-port field.
            out.push_str("|\n");
        }
        out
    }
}

/// Reject movies this console cannot play back faithfully, before reading their input log.
fn check_supported(header: &MovieHeader, line_no: usize) -> Result<(), Fm2Error> {
    if header.fourscore {
        return Err(error(
            line_no,
            "the movie uses a Four Score (`fourscore 1`), which this console does not emulate",
        ));
    }
    if header.expansion_port != 0 {
        return Err(error(
            line_no,
            format!(
                "the movie uses expansion-port device {} (`port2`), which is not supported",
                header.expansion_port
            ),
        ));
    }
    Ok(())
}

fn parse_int(key: &str, value: &str) -> Result<u32, String> {
    value
        .trim()
        .parse::<u32>()
        .map_err(|_| format!("`{key}` needs a non-negative integer, found `{value}`"))
}

/// A C `int` as FCEUX prints it (negative values included), kept as its 32 bits.
fn parse_c_int(key: &str, value: &str) -> Result<u32, String> {
    let number = value.trim().parse::<i64>().ok();
    match number {
        Some(n) if (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(&n) => Ok(n as u32),
        _ => Err(format!("`{key}` needs a 32-bit integer, found `{value}`")),
    }
}

fn parse_bool(key: &str, value: &str) -> Result<bool, String> {
    match value.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("`{key}` needs 0 or 1, found `{value}`")),
    }
}

fn parse_header_line(header: &mut MovieHeader, key: &str, value: &str) -> Result<(), String> {
    match key {
        "version" => {
            let version = parse_int(key, value)?;
            if version != FM2_VERSION {
                return Err(format!(
                    "FM2 version {version} is not supported (only version {FM2_VERSION})"
                ));
            }
            header.version = version;
        }
        "emuVersion" => header.emu_version = parse_int(key, value)?,
        "rerecordCount" => header.rerecord_count = parse_int(key, value)?,
        "palFlag" => header.pal = parse_bool(key, value)?,
        "romFilename" => header.rom_filename = value.to_owned(),
        "romChecksum" => header.rom_checksum = Some(parse_checksum(value)?),
        "guid" => header.guid = value.to_owned(),
        "fourscore" => header.fourscore = parse_bool(key, value)?,
        "microphone" => header.microphone = parse_bool(key, value)?,
        "FDS" => header.fds = parse_bool(key, value)?,
        "NewPPU" => header.new_ppu = parse_bool(key, value)?,
        "RAMInitOption" => header.ram_init_option = Some(parse_int(key, value)?),
        "RAMInitSeed" => header.ram_init_seed = Some(parse_c_int(key, value)?),
        "port0" | "port1" => {
            let device = match parse_int(key, value)? {
                0 => PortDevice::None,
                1 => PortDevice::Gamepad,
                2 => return Err(format!("`{key} 2` is a Zapper, which is not supported")),
                other => return Err(format!("`{key}`: unknown input device {other}")),
            };
            header.ports[usize::from(key == "port1")] = device;
        }
        "port2" => header.expansion_port = parse_int(key, value)?,
        "comment" => header.comments.push(value.to_owned()),
        "subtitle" => {
            let (frame, text) = value.split_once(' ').unwrap_or((value, ""));
            let frame = frame.parse::<u64>().map_err(|_| {
                format!("`subtitle` needs a frame number then the text, found `{value}`")
            })?;
            header.subtitles.push(Subtitle {
                frame,
                text: text.to_owned(),
            });
        }
        "savestate" => {
            return Err(
                "the movie starts from an embedded savestate (`savestate` key); only \
                 movies that start from power-on are supported"
                    .to_owned(),
            )
        }
        "binary" if value.trim() != "0" => {
            return Err("binary input logs (`binary 1`) are not supported; \
                 save the movie as text"
                .to_owned())
        }
        _ => header.other.push((key.to_owned(), value.to_owned())),
    }
    Ok(())
}

fn parse_checksum(value: &str) -> Result<[u8; 16], String> {
    let bad = || format!("`romChecksum` must be `base64:` and a base64 MD5, found `{value}`");
    let encoded = value.trim().strip_prefix("base64:").ok_or_else(bad)?;
    let bytes = base64_decode(encoded).ok_or_else(bad)?;
    <[u8; 16]>::try_from(bytes.as_slice()).map_err(|_| bad())
}

fn parse_input_line(line: &str, header: &MovieHeader) -> Result<MovieFrame, String> {
    // `|c|p0|p1|p2|`: splitting on `|` gives an empty piece before the first bar and after the
    // last one.
    let fields: Vec<&str> = line.split('|').collect();
    if fields.len() != 6 || !fields[5].is_empty() {
        return Err(format!(
            "an input line must be `|commands|port0|port1|port2|` (5 bars), found `{line}`"
        ));
    }
    let command_text = fields[1].trim();
    let command = if command_text.is_empty() {
        Commands::empty()
    } else {
        let bits = command_text.parse::<u8>().map_err(|_| {
            format!("the command field must be a number from 0 to 255, found `{command_text}`")
        })?;
        Commands::from_bits_retain(bits)
    };
    let mut pads = [Buttons::empty(); 2];
    for (port, device) in header.ports.iter().enumerate() {
        let field = fields[port + 2];
        pads[port] = match device {
            PortDevice::Gamepad => parse_gamepad(field).map_err(|m| format!("port {port}: {m}"))?,
            PortDevice::None if field.is_empty() => Buttons::empty(),
            PortDevice::None => {
                return Err(format!(
                    "port {port} has no device (`port{port} 0`) but its field is `{field}`"
                ))
            }
        };
    }
    Ok(MovieFrame { command, pads })
}

fn parse_gamepad(field: &str) -> Result<Buttons, String> {
    let count = field.chars().count();
    if count != GAMEPAD_COLUMNS.len() {
        return Err(format!(
            "a gamepad field has 8 columns `RLDUTSBA`, found {count} in `{field}`"
        ));
    }
    let mut buttons = Buttons::empty();
    for (column, (_, button)) in field.chars().zip(GAMEPAD_COLUMNS) {
        if column != '.' && column != ' ' {
            buttons |= button;
        }
    }
    Ok(buttons)
}

const BASE64_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with `=` padding (RFC 4648), as FCEUX writes checksums.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let group = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let sextet = (group >> (18 - 6 * i)) & 0x3F;
                out.push(char::from(BASE64_ALPHABET[sextet as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decode standard base64; padding is optional. `None` on any character outside the alphabet.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let mut accumulator: u32 = 0;
    let mut bits = 0;
    for c in digits.bytes() {
        let value = BASE64_ALPHABET.iter().position(|&a| a == c)?;
        accumulator = (accumulator << 6) | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((accumulator >> bits) as u8);
            accumulator &= (1 << bits) - 1;
        }
    }
    // A single leftover digit cannot encode a byte.
    (bits < 6).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "version 3\n\
        emuVersion 22020\n\
        rerecordCount 42\n\
        palFlag 0\n\
        romFilename Tetris\n\
        romChecksum base64:EjRWeJCrze8SNFZ4kKvN7w==\n\
        guid 452DE2C3-EF43-2FA9-77AC-0677FC51543B\n\
        fourscore 0\n\
        microphone 0\n\
        port0 1\n\
        port1 1\n\
        port2 0\n\
        FDS 0\n\
        NewPPU 0\n\
        RAMInitOption 3\n\
        RAMInitSeed -1\n\
        length 4\n\
        comment author Someone\n\
        comment A second comment\n\
        subtitle 100 Hello there\n\
        |0|........|........||\n\
        |1|R......A|........||\n\
        |2|...UT.B.|.L...S..||\n\
        |0|RLDUTSBA|xxxxxxxx||\n";

    #[test]
    fn parses_every_header_key() {
        let movie = Movie::parse(SAMPLE).unwrap();
        let h = &movie.header;
        assert_eq!(h.version, 3);
        assert_eq!(h.emu_version, 22020);
        assert_eq!(h.rerecord_count, 42);
        assert!(!h.pal);
        assert_eq!(h.rom_filename, "Tetris");
        assert_eq!(
            h.rom_checksum,
            Some([
                0x12, 0x34, 0x56, 0x78, 0x90, 0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78, 0x90, 0xAB,
                0xCD, 0xEF
            ])
        );
        assert_eq!(h.guid, "452DE2C3-EF43-2FA9-77AC-0677FC51543B");
        assert!(!h.fourscore);
        assert_eq!(h.ports, [PortDevice::Gamepad; 2]);
        assert_eq!(h.expansion_port, 0);
        assert!(!h.microphone && !h.fds && !h.new_ppu);
        assert_eq!(
            (h.ram_init_option, h.ram_init_seed),
            (Some(3), Some(4_294_967_295))
        );
        assert_eq!(h.comments, ["author Someone", "A second comment"]);
        assert_eq!(
            h.subtitles,
            [Subtitle {
                frame: 100,
                text: "Hello there".into()
            }]
        );
        assert_eq!(h.other, [("length".to_owned(), "4".to_owned())]);
    }

    #[test]
    fn parses_input_lines_in_fm2_column_order() {
        let movie = Movie::parse(SAMPLE).unwrap();
        assert_eq!(movie.frames.len(), 4);
        assert_eq!(movie.frames[0], MovieFrame::default());
        assert_eq!(movie.frames[1].command, Commands::SOFT_RESET);
        assert_eq!(movie.frames[1].pads[0], Buttons::RIGHT | Buttons::A);
        assert_eq!(movie.frames[2].command, Commands::POWER);
        assert_eq!(
            movie.frames[2].pads,
            [
                Buttons::UP | Buttons::START | Buttons::B,
                Buttons::LEFT | Buttons::SELECT
            ]
        );
        // Any character other than '.' or ' ' counts as pressed.
        assert_eq!(movie.frames[3].pads, [Buttons::all(); 2]);
    }

    #[test]
    fn spaces_count_as_released_and_crlf_is_accepted() {
        let text = "version 3\r\nport0 1\r\nport1 1\r\n|0|R      A|        ||\r\n";
        let movie = Movie::parse(text).unwrap();
        assert_eq!(
            movie.frames[0].pads,
            [Buttons::RIGHT | Buttons::A, Buttons::empty()]
        );
    }

    #[test]
    fn values_ending_in_carriage_returns_read_back_after_writing() {
        // Found by the fm2 fuzz target (its crash input is the first case): a line ending in
        // several `\r` kept all but one in its value, and the writer's `\n` after that value
        // made a `\r\n` line end, so the movie read back with a shorter value.
        for text in [
            "version 3\nsubtin 3\r\r\r\r\r\r\r\r\n",
            "version 3\ncomment abc\r\r\r\n",
            "version 3\nromFilename x\r\r",
        ] {
            let movie = Movie::parse(text).unwrap();
            assert_eq!(Movie::parse(&movie.to_fm2()).unwrap(), movie, "{text:?}");
        }
    }

    #[test]
    fn unknown_command_bits_are_kept() {
        let text = "version 3\n|20|........|........||\n";
        let movie = Movie::parse(text).unwrap();
        assert_eq!(
            movie.frames[0].command,
            Commands::FDS_INSERT | Commands::VS_INSERT_COIN
        );
        let text = "version 3\n|96|........|........||\n";
        assert_eq!(Movie::parse(text).unwrap().frames[0].command.bits(), 96);
    }

    #[test]
    fn round_trips_through_the_writer() {
        let movie = Movie::parse(SAMPLE).unwrap();
        let written = movie.to_fm2();
        assert_eq!(Movie::parse(&written).unwrap(), movie);
        // The writer emits only '.' and the column letters.
        assert!(written.contains("|1|R......A|........||\n"), "{written}");
        assert!(written.contains("|2|...UT.B.|.L...S..||\n"), "{written}");
        assert!(written.contains("romChecksum base64:EjRWeJCrze8SNFZ4kKvN7w==\n"));
        assert!(
            written
                .contains("port2 0\nFDS 0\nNewPPU 0\nRAMInitOption 3\nRAMInitSeed -1\nlength 4\n"),
            "{written}"
        );
    }

    #[test]
    fn writes_a_port_without_device_as_an_empty_field() {
        let mut movie = Movie {
            header: MovieHeader::new(),
            frames: vec![MovieFrame {
                command: Commands::empty(),
                pads: [Buttons::A, Buttons::empty()],
            }],
        };
        movie.header.ports[1] = PortDevice::None;
        let written = movie.to_fm2();
        assert!(
            written.ends_with("port1 0\nport2 0\nFDS 0\nNewPPU 0\n|0|.......A|||\n"),
            "{written}"
        );
        assert_eq!(Movie::parse(&written).unwrap(), movie);
    }

    #[test]
    fn bad_lines_name_the_line_and_the_problem() {
        let cases: [(&str, usize, &str); 10] = [
            (
                "version 3\n|0|........|........||\n|0|.......|........||\n",
                3,
                "8 columns",
            ),
            ("version 3\n|0|........||\n", 2, "5 bars"),
            ("version 3\n|x|........|........||\n", 2, "command field"),
            (
                "version 3\n|0|........|........||\nhello\n",
                3,
                "expected an input line",
            ),
            ("version 3\npalFlag maybe\n", 2, "`palFlag` needs 0 or 1"),
            ("version 2\n", 1, "version 2 is not supported"),
            ("version 3\nromChecksum 1234\n", 2, "base64"),
            ("version 3\nport0 2\n", 2, "Zapper"),
            ("version 3\nsubtitle soon text\n", 2, "frame number"),
            (
                "version 3\nport1 0\n|0|........|........||\n",
                3,
                "no device",
            ),
        ];
        for (text, line, needle) in cases {
            let err = Movie::parse(text).unwrap_err();
            assert_eq!(err.line, line, "{text:?}: {err}");
            assert!(err.message.contains(needle), "{text:?}: {err}");
            assert!(err.to_string().starts_with(&format!("line {line}: ")));
        }
    }

    #[test]
    fn savestate_anchored_movies_are_rejected() {
        let text =
            "version 3\nemuVersion 22020\nsavestate 0123456789abcdef\n|0|........|........||\n";
        let err = Movie::parse(text).unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("savestate"), "{err}");
        assert!(err.message.contains("power-on"), "{err}");
    }

    #[test]
    fn unsupported_devices_and_formats_are_rejected() {
        let err = Movie::parse("version 3\nfourscore 1\n|0|........|........||\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("Four Score"), "{err}");
        let err = Movie::parse("version 3\nbinary 1\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("binary"), "{err}");
        let err = Movie::parse("emuVersion 1\n|0|........|........||\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("version"), "{err}");
        let err = Movie::parse("").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let vectors: [(&str, &str); 7] = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64_encode(plain.as_bytes()), encoded);
            assert_eq!(base64_decode(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(base64_decode("Zm9v!"), None);
        assert_eq!(base64_decode("Z"), None);
    }
}
