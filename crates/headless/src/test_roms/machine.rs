//! The handful of console operations the result protocols need, as a trait so every protocol can
//! be unit-tested against a scripted fake, plus helpers shared by several protocols.

use nes::{Buttons, Inspect};

/// A console the protocols can drive: what [`Inspect`] reads and changes, plus running it.
/// Implemented for [`nes::Nes`].
pub trait Machine: Inspect {
    /// Run until the next frame is complete.
    fn run_frame(&mut self);
    /// Execute one instruction.
    fn step_instruction(&mut self);
    /// Frames completed since power-on.
    fn frame_count(&self) -> u64;
    /// Pull the CPU reset line.
    fn soft_reset(&mut self);
    fn set_buttons(&mut self, port: usize, buttons: Buttons);
    /// Side-effect-free PPU-space read (nametables after mirroring).
    fn peek_ppu(&self, addr: u16) -> u8;
    /// `Some(pc)` once the CPU executed a JAM opcode.
    fn jammed_at(&self) -> Option<u16>;
    /// nestest.log-format line for the instruction about to execute.
    fn trace_line(&self) -> String;
}

impl Machine for nes::Nes {
    fn run_frame(&mut self) {
        nes::Nes::run_frame(self)
    }
    fn step_instruction(&mut self) {
        nes::Nes::step_instruction(self)
    }
    fn frame_count(&self) -> u64 {
        nes::Nes::frame_count(self)
    }
    fn soft_reset(&mut self) {
        nes::Nes::soft_reset(self)
    }
    fn set_buttons(&mut self, port: usize, buttons: Buttons) {
        nes::Nes::set_buttons(self, port, buttons)
    }
    fn peek_ppu(&self, addr: u16) -> u8 {
        nes::Nes::peek_ppu(self, addr)
    }
    fn jammed_at(&self) -> Option<u16> {
        nes::Nes::jammed_at(self)
    }
    fn trace_line(&self) -> String {
        nes::Nes::trace_line(self)
    }
}

/// Opcode of `JMP absolute`.
const JMP_ABSOLUTE: u8 = 0x4C;

/// True when the CPU sits on `JMP $xxxx` whose target is its own address: the idle loop the
/// older test ROMs park in once they are finished.
pub fn parked_on_jmp_self<M: Machine>(machine: &M) -> Option<u16> {
    let pc = machine.cpu_registers().pc;
    let low = machine.peek(pc.wrapping_add(1));
    let high = machine.peek(pc.wrapping_add(2));
    let target = u16::from_le_bytes([low, high]);
    (machine.peek(pc) == JMP_ABSOLUTE && target == pc).then_some(pc)
}

/// Frames in a row the CPU must be seen on the same JMP-to-self before a ROM counts as finished:
/// a ROM may also idle in such a loop for a frame while its NMI handler does the work.
pub const JMP_SELF_CONFIRM_FRAMES: u32 = 5;

/// Counts consecutive frame ends at which the CPU sits on the same JMP-to-self.
#[derive(Debug, Default, Clone)]
pub struct ParkDetector {
    last_pc: Option<u16>,
    frames_in_a_row: u32,
}

impl ParkDetector {
    /// Sample the CPU after a frame; true once it has been parked for
    /// [`JMP_SELF_CONFIRM_FRAMES`] samples in a row.
    pub fn observe<M: Machine>(&mut self, machine: &M) -> bool {
        match parked_on_jmp_self(machine) {
            Some(pc) if self.last_pc == Some(pc) => {
                self.frames_in_a_row = self.frames_in_a_row.saturating_add(1);
            }
            Some(pc) => {
                self.last_pc = Some(pc);
                self.frames_in_a_row = 1;
            }
            None => {
                self.last_pc = None;
                self.frames_in_a_row = 0;
            }
        }
        self.is_parked()
    }

    pub fn is_parked(&self) -> bool {
        self.frames_in_a_row >= JMP_SELF_CONFIRM_FRAMES
    }
}

/// Visible tile rows of one nametable (the last two of 32 are the attribute table).
pub const NAMETABLE_ROWS: u16 = 30;
pub const NAMETABLE_COLUMNS: u16 = 32;
/// The four logical nametables in PPU space.
pub const NAMETABLE_BASES: [u16; 4] = [0x2000, 0x2400, 0x2800, 0x2C00];

/// Character shown for tiles that are not text, chosen so it matches no expected string.
pub const NON_TEXT: char = '\u{b7}';

/// Tile → character for plain ASCII fonts.
pub fn ascii_char(tile: u8) -> char {
    if (0x20..0x7F).contains(&tile) {
        char::from(tile)
    } else {
        NON_TEXT
    }
}

/// Tile → character for fonts that store ASCII ANDed with $3F (Holy Mapperel): tiles $01-$1F are
/// `A`-`Z`, `[\]^_`, tiles $20-$3F keep their ASCII meaning. Tile $00 would be `@`, but it is
/// also what a cleared nametable holds, so it reads as blank.
pub fn ascii_and_3f_char(tile: u8) -> char {
    match tile {
        0x01..=0x1F => char::from(tile + 0x40),
        0x20..=0x3F => char::from(tile),
        _ => NON_TEXT,
    }
}

/// Read `length` tiles starting at PPU address `start` as text.
pub fn read_tile_text<M: Machine>(
    machine: &M,
    start: u16,
    length: u16,
    decode: fn(u8) -> char,
) -> String {
    (0..length)
        .map(|offset| decode(machine.peek_ppu(start.wrapping_add(offset))))
        .collect()
}

/// Every visible row of all four nametables, read through the PPU's memory map, with trailing
/// non-text trimmed. Rows are in nametable order ($2000 rows 0-29, then $2400, ...).
pub fn read_screen_rows<M: Machine>(machine: &M, decode: fn(u8) -> char) -> Vec<String> {
    let mut rows = Vec::with_capacity(NAMETABLE_BASES.len() * usize::from(NAMETABLE_ROWS));
    for base in NAMETABLE_BASES {
        for row in 0..NAMETABLE_ROWS {
            let start = base + row * NAMETABLE_COLUMNS;
            let text = read_tile_text(machine, start, NAMETABLE_COLUMNS, decode);
            rows.push(trim_row(&text).to_string());
        }
    }
    rows
}

/// A row without leading/trailing blanks or non-text tiles.
pub fn trim_row(text: &str) -> &str {
    text.trim_matches(|c: char| c == ' ' || c == NON_TEXT)
}

/// The non-empty rows of a screen joined into one line, for failure details.
pub fn summarize_rows(rows: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for row in rows {
        // Mirrored nametables repeat the same text; show it once.
        if !row.is_empty() && !seen.contains(&row.as_str()) {
            seen.push(row.as_str());
        }
    }
    truncate(&seen.join(" | "), DETAIL_LIMIT)
}

/// Longest detail text put into a table cell.
pub const DETAIL_LIMIT: usize = 240;

/// Cut `text` to at most `limit` characters, marking the cut.
pub fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(limit.saturating_sub(3)).collect();
        cut.push_str("...");
        cut
    }
}

#[cfg(test)]
pub mod fake {
    //! A scripted stand-in for the console: flat CPU and PPU memories, a frame counter and a
    //! per-frame script that plays the ROM's part.

    use super::*;
    use nes::CpuRegisters;

    /// Everything a script can see and change.
    #[derive(Debug, Clone)]
    pub struct FakeState {
        pub cpu_memory: Vec<u8>,
        pub ppu_memory: Vec<u8>,
        pub frame: u64,
        pub registers: CpuRegisters,
        pub jammed_at: Option<u16>,
        pub buttons: Buttons,
        /// Frame numbers at which `soft_reset` was called.
        pub resets: Vec<u64>,
        /// Every (frame, buttons) change made through `set_buttons`.
        pub button_log: Vec<(u64, Buttons)>,
        /// Lines `trace_line` returns, one per `step_instruction`.
        pub trace: Vec<String>,
        pub trace_position: usize,
        pub instructions: u64,
        pub lagged: bool,
    }

    impl Default for FakeState {
        fn default() -> Self {
            Self::new()
        }
    }

    impl FakeState {
        pub fn new() -> FakeState {
            FakeState {
                cpu_memory: vec![0; 0x1_0000],
                ppu_memory: vec![0; 0x4000],
                frame: 0,
                registers: CpuRegisters::default(),
                jammed_at: None,
                buttons: Buttons::empty(),
                resets: Vec::new(),
                button_log: Vec::new(),
                trace: Vec::new(),
                trace_position: 0,
                instructions: 0,
                lagged: false,
            }
        }

        /// Put an ASCII string into PPU memory at `addr`.
        pub fn write_ppu_text(&mut self, addr: u16, text: &str) {
            for (offset, byte) in text.bytes().enumerate() {
                self.ppu_memory[usize::from(addr) + offset] = byte;
            }
        }

        /// Write `JMP addr` at `addr` and point the PC at it.
        pub fn park_at(&mut self, addr: u16) {
            let [low, high] = addr.to_le_bytes();
            let at = usize::from(addr);
            self.cpu_memory[at] = 0x4C;
            self.cpu_memory[at + 1] = low;
            self.cpu_memory[at + 2] = high;
            self.registers.pc = addr;
        }

        /// Move the PC off any parking loop.
        pub fn unpark(&mut self) {
            self.registers.pc = 0x8000;
            self.cpu_memory[0x8000] = 0xEA;
        }
    }

    type Script = Box<dyn FnMut(&mut FakeState)>;

    /// The fake console. `on_frame` runs after the frame counter advanced; `on_reset` runs when
    /// the protocol presses reset.
    pub struct FakeMachine {
        pub state: FakeState,
        on_frame: Script,
        on_reset: Script,
        on_step: Script,
    }

    impl std::fmt::Debug for FakeMachine {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("FakeMachine")
                .field("frame", &self.state.frame)
                .finish()
        }
    }

    impl FakeMachine {
        pub fn new(on_frame: impl FnMut(&mut FakeState) + 'static) -> FakeMachine {
            FakeMachine {
                state: FakeState::new(),
                on_frame: Box::new(on_frame),
                on_reset: Box::new(|_| {}),
                on_step: Box::new(|_| {}),
            }
        }

        pub fn with_reset(mut self, on_reset: impl FnMut(&mut FakeState) + 'static) -> Self {
            self.on_reset = Box::new(on_reset);
            self
        }

        pub fn with_step(mut self, on_step: impl FnMut(&mut FakeState) + 'static) -> Self {
            self.on_step = Box::new(on_step);
            self
        }
    }

    impl Inspect for FakeMachine {
        fn peek(&self, addr: u16) -> u8 {
            self.state.cpu_memory[usize::from(addr)]
        }
        fn poke(&mut self, addr: u16, value: u8) {
            self.state.cpu_memory[usize::from(addr)] = value;
        }
        fn cpu_registers(&self) -> CpuRegisters {
            self.state.registers
        }
        fn set_cpu_registers(&mut self, regs: CpuRegisters) {
            self.state.registers = regs;
        }
        fn lagged(&self) -> bool {
            self.state.lagged
        }
        fn set_lagged(&mut self, lagged: bool) {
            self.state.lagged = lagged;
        }
        fn instruction_count(&self) -> u64 {
            self.state.instructions
        }
        fn reset_instruction_count(&mut self) {
            self.state.instructions = 0;
        }
        // The fake has no cartridge.
        fn rom_byte(&self, _offset: usize) -> Option<u8> {
            None
        }
        fn patch_rom(&mut self, _offset: usize, _value: u8) -> bool {
            false
        }
    }

    impl Machine for FakeMachine {
        fn run_frame(&mut self) {
            self.state.frame += 1;
            (self.on_frame)(&mut self.state);
        }
        fn step_instruction(&mut self) {
            self.state.trace_position += 1;
            self.state.instructions += 1;
            (self.on_step)(&mut self.state);
        }
        fn frame_count(&self) -> u64 {
            self.state.frame
        }
        fn soft_reset(&mut self) {
            let frame = self.state.frame;
            self.state.resets.push(frame);
            (self.on_reset)(&mut self.state);
        }
        fn set_buttons(&mut self, port: usize, buttons: Buttons) {
            assert_eq!(port, 0, "protocols only use controller 1");
            self.state.buttons = buttons;
            let frame = self.state.frame;
            self.state.button_log.push((frame, buttons));
        }
        fn peek_ppu(&self, addr: u16) -> u8 {
            self.state.ppu_memory[usize::from(addr & 0x3FFF)]
        }
        fn jammed_at(&self) -> Option<u16> {
            self.state.jammed_at
        }
        fn trace_line(&self) -> String {
            self.state
                .trace
                .get(self.state.trace_position)
                .cloned()
                .unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::*;
    use super::*;

    #[test]
    fn jmp_self_needs_several_frames_on_the_same_loop() {
        let mut machine = FakeMachine::new(|state| {
            if state.frame >= 3 {
                state.park_at(0xC123);
            } else {
                state.unpark();
            }
        });
        let mut detector = ParkDetector::default();
        let mut parked_at_frame = None;
        for _ in 0..20 {
            machine.run_frame();
            if detector.observe(&machine) {
                parked_at_frame = Some(machine.frame_count());
                break;
            }
        }
        // Parked from frame 3 on; confirmed after JMP_SELF_CONFIRM_FRAMES samples.
        assert_eq!(
            parked_at_frame,
            Some(3 + u64::from(JMP_SELF_CONFIRM_FRAMES) - 1)
        );
    }

    #[test]
    fn jmp_to_another_address_is_not_parking() {
        let mut machine = FakeMachine::new(|state| {
            state.registers.pc = 0x9000;
            state.cpu_memory[0x9000] = 0x4C;
            state.cpu_memory[0x9001] = 0x03;
            state.cpu_memory[0x9002] = 0x90;
        });
        let mut detector = ParkDetector::default();
        for _ in 0..10 {
            machine.run_frame();
            assert!(!detector.observe(&machine));
        }
    }

    #[test]
    fn interrupted_parking_restarts_the_count() {
        let mut machine = FakeMachine::new(|state| {
            // Parked except on frame 4 (e.g. sampled inside an NMI handler).
            if state.frame == 4 {
                state.unpark();
            } else {
                state.park_at(0xC000);
            }
        });
        let mut detector = ParkDetector::default();
        let mut confirmed = None;
        for _ in 0..20 {
            machine.run_frame();
            if detector.observe(&machine) {
                confirmed = Some(machine.frame_count());
                break;
            }
        }
        assert_eq!(confirmed, Some(4 + u64::from(JMP_SELF_CONFIRM_FRAMES)));
    }

    #[test]
    fn decodes_ascii_and_3f_tiles() {
        let decoded: String = [0x01u8, 0x1A, 0x20, 0x30, 0x39, 0x2B, 0x00, 0x80]
            .into_iter()
            .map(ascii_and_3f_char)
            .collect();
        assert_eq!(decoded, format!("AZ 09+{NON_TEXT}{NON_TEXT}"));
        assert_eq!(ascii_char(b'P'), 'P');
        assert_eq!(ascii_char(0x05), NON_TEXT);
    }

    #[test]
    fn screen_rows_cover_all_nametables_and_skip_attributes() {
        let mut machine = FakeMachine::new(|_| {});
        machine.state.write_ppu_text(0x2000 + 5 * 32 + 2, "Passed");
        machine.state.write_ppu_text(0x2C00 + 29 * 32, "last");
        // Attribute bytes of $2000 must not show up as a row.
        machine.state.write_ppu_text(0x23C0, "ATTRIB");
        let rows = read_screen_rows(&machine, ascii_char);
        assert_eq!(rows.len(), 120);
        assert_eq!(rows[5], "Passed");
        assert_eq!(rows[119], "last");
        assert!(rows.iter().all(|row| !row.contains("ATTRIB")));
        assert_eq!(summarize_rows(&rows), "Passed | last");
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("abcdef", 10), "abcdef");
        assert_eq!(truncate("abcdefghijkl", 8), "abcde...");
    }
}
