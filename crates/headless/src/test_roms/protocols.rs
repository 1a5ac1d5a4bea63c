//! One function per result protocol of `shared/test-roms/README.md`. Each drives a [`Machine`]
//! that was just powered on, stops as soon as the verdict is known, and returns it.

use nes::CpuRegisters;

use super::accuracycoin::AccuracyCoinTestResult;
use super::machine::{
    ascii_and_3f_char, ascii_char, read_screen_rows, read_tile_text, summarize_rows, trim_row,
    truncate, Machine, ParkDetector, DETAIL_LIMIT, NON_TEXT,
};
use super::manifest::{
    BlarggSpec, DoneCondition, HolyMapperelRows, NestestSpec, RamByteSpec, ScreenSpec, TextEncoding,
};

/// What a protocol decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolOutcome {
    pub passed: bool,
    pub detail: String,
    /// Per-test results (AccuracyCoin only).
    pub tests: Option<Vec<AccuracyCoinTestResult>>,
}

impl ProtocolOutcome {
    pub fn pass(detail: impl Into<String>) -> ProtocolOutcome {
        ProtocolOutcome {
            passed: true,
            detail: detail.into(),
            tests: None,
        }
    }
    pub fn fail(detail: impl Into<String>) -> ProtocolOutcome {
        ProtocolOutcome {
            passed: false,
            detail: detail.into(),
            tests: None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// blargg-6000

/// blargg's status values at $6000.
const STATUS_RUNNING: u8 = 0x80;
const STATUS_WANTS_RESET: u8 = 0x81;
/// Finished statuses are $00-$7F.
const STATUS_FINISHED_MAX: u8 = 0x7F;
/// The ROM asks for the reset button to be held off for at least 100 ms (6 NTSC frames).
pub const RESET_DELAY_FRAMES: u64 = 6;
/// Longest text log read from cartridge RAM ($6004 up to the end of $7FFF).
const TEXT_LIMIT: u16 = 0x1FFC;

/// Read the NUL-terminated log at `addr`, without ANSI colour escapes.
pub fn read_blargg_text<M: Machine>(machine: &M, addr: u16) -> String {
    let mut bytes = Vec::new();
    for offset in 0..TEXT_LIMIT {
        let byte = machine.peek(addr.wrapping_add(offset));
        if byte == 0 {
            break;
        }
        bytes.push(byte);
    }
    strip_ansi_escapes(&String::from_utf8_lossy(&bytes))
}

/// Remove `ESC [ ... <letter>` sequences (some ROMs colour their log).
pub fn strip_ansi_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                // Parameters and intermediates run until the final byte, a letter.
                for next in chars.by_ref() {
                    if next.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A log as one table cell: non-empty lines joined with " | ".
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    truncate(&lines.join(" | "), DETAIL_LIMIT)
}

fn signature_present<M: Machine>(machine: &M, spec: &BlarggSpec) -> bool {
    spec.signature
        .iter()
        .enumerate()
        .all(|(offset, &expected)| {
            let offset = u16::try_from(offset + 1).unwrap_or(u16::MAX);
            machine.peek(spec.status_addr.wrapping_add(offset)) == expected
        })
}

fn fallback_tiles_present<M: Machine>(machine: &M, spec: &BlarggSpec) -> bool {
    let Some(addr) = spec.fallback_nametable_addr else {
        return false;
    };
    spec.fallback.as_deref() == Some("screen")
        && !spec.fallback_tiles.is_empty()
        && spec
            .fallback_tiles
            .iter()
            .enumerate()
            .all(|(offset, &tile)| {
                let offset = u16::try_from(offset).unwrap_or(u16::MAX);
                machine.peek_ppu(addr.wrapping_add(offset)) == tile
            })
}

/// `blargg-6000`: follow $6000 while the signature is present, pressing reset when asked.
pub fn run_blargg_6000<M: Machine>(
    machine: &mut M,
    spec: &BlarggSpec,
    max_frames: u64,
) -> ProtocolOutcome {
    let mut resets_done: u32 = 0;
    // After a reset $6000 can still hold the old $81; ignore it until the ROM writes $80.
    let mut waiting_for_running_again = false;
    let mut reset_requested_at: Option<u64> = None;
    let mut ever_signed = false;
    let mut last_status: Option<u8> = None;

    while machine.frame_count() < max_frames {
        machine.run_frame();
        let frame = machine.frame_count();

        if !signature_present(machine, spec) {
            if fallback_tiles_present(machine, spec) {
                return ProtocolOutcome::pass("passed (screen fallback: no $6000 signature)");
            }
            continue;
        }
        ever_signed = true;
        let status = machine.peek(spec.status_addr);
        last_status = Some(status);

        match status {
            0..=STATUS_FINISHED_MAX => {
                return blargg_verdict(machine, spec, status, resets_done);
            }
            STATUS_RUNNING => {
                waiting_for_running_again = false;
                reset_requested_at = None;
            }
            STATUS_WANTS_RESET if !waiting_for_running_again => {
                let requested = *reset_requested_at.get_or_insert(frame);
                if frame.saturating_sub(requested) >= RESET_DELAY_FRAMES {
                    machine.soft_reset();
                    resets_done = resets_done.saturating_add(1);
                    waiting_for_running_again = true;
                    reset_requested_at = None;
                }
            }
            _ => {}
        }

        if let Some(pc) = machine.jammed_at() {
            if reset_requested_at.is_none() {
                return ProtocolOutcome::fail(format!(
                    "CPU jammed at ${pc:04X} (status ${status:02X}): {}",
                    one_line(&read_blargg_text(machine, spec.text_addr))
                ));
            }
        }
    }

    if !ever_signed {
        let mut detail = format!(
            "no signature at ${:04X} after {max_frames} frames",
            spec.status_addr.wrapping_add(1)
        );
        if spec.fallback.is_some() {
            detail.push_str(" and no fallback tiles on screen");
        }
        return ProtocolOutcome::fail(detail);
    }
    let status = last_status.unwrap_or(STATUS_RUNNING);
    ProtocolOutcome::fail(format!(
        "hang: status ${status:02X} after {max_frames} frames ({resets_done}/{} resets): {}",
        spec.resets_needed,
        one_line(&read_blargg_text(machine, spec.text_addr))
    ))
}

fn blargg_verdict<M: Machine>(
    machine: &M,
    spec: &BlarggSpec,
    status: u8,
    resets_done: u32,
) -> ProtocolOutcome {
    let text = read_blargg_text(machine, spec.text_addr);
    let text_ok = spec
        .text_contains
        .as_deref()
        .is_none_or(|needle| text.contains(needle));
    let reset_note = if resets_done == spec.resets_needed {
        String::new()
    } else {
        format!(
            " [{resets_done} resets, manifest expects {}]",
            spec.resets_needed
        )
    };
    if status == spec.pass_value && text_ok {
        let summary = text
            .lines()
            .map(str::trim)
            .rfind(|line| !line.is_empty())
            .unwrap_or("passed");
        ProtocolOutcome::pass(format!("{summary}{reset_note}"))
    } else if status == spec.pass_value {
        ProtocolOutcome::fail(format!(
            "status $00 but text lacks {:?}{reset_note}: {}",
            spec.text_contains.as_deref().unwrap_or_default(),
            one_line(&text)
        ))
    } else {
        ProtocolOutcome::fail(format!("code {status}{reset_note}: {}", one_line(&text)))
    }
}

// ---------------------------------------------------------------------------------------------
// ram-byte

/// `ram-byte`: read the result byte once the CPU has parked (or at `max_frames`).
pub fn run_ram_byte<M: Machine>(
    machine: &mut M,
    spec: &RamByteSpec,
    max_frames: u64,
) -> ProtocolOutcome {
    let mut detector = ParkDetector::default();
    while machine.frame_count() < max_frames {
        machine.run_frame();
        if let Some(pc) = machine.jammed_at() {
            let value = machine.peek(spec.result_addr);
            return ProtocolOutcome::fail(format!(
                "CPU jammed at ${pc:04X}; ${:02X} = ${value:02X}",
                spec.result_addr
            ));
        }
        // Every ram-byte ROM parks when done (`done = "jmp-self"`); other `done` values have no
        // meaning for this protocol, so they also wait for parking or the timeout.
        if detector.observe(machine) {
            let value = machine.peek(spec.result_addr);
            let label = format!("${:02X} = ${value:02X}", spec.result_addr);
            return if value == spec.pass_value {
                ProtocolOutcome::pass(label)
            } else {
                ProtocolOutcome::fail(format!("code {value} ({label})"))
            };
        }
    }
    // Never parked: the byte may be a sub-test number, so a pass also needs the on-screen text.
    let value = machine.peek(spec.result_addr);
    let label = format!(
        "not parked after {max_frames} frames; ${:02X} = ${value:02X}",
        spec.result_addr
    );
    let rows = read_screen_rows(machine, ascii_char);
    let screen_ok = spec
        .screen_text
        .as_deref()
        .is_none_or(|needle| rows.iter().any(|row| row.contains(needle)));
    if value == spec.pass_value && screen_ok {
        ProtocolOutcome::pass(label)
    } else {
        ProtocolOutcome::fail(format!("{label}; screen: {}", summarize_rows(&rows)))
    }
}

// ---------------------------------------------------------------------------------------------
// screen

/// Frames to keep running after a verdict text first appears, in case the ROM is still printing.
pub const TEXT_SETTLE_FRAMES: u64 = 10;
/// Frames the Holy Mapperel table must stay unchanged before an early verdict.
pub const HOLY_MAPPEREL_STABLE_FRAMES: u64 = 60;

/// What the screen says right now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ScreenVerdict {
    Pass(String),
    Fail(String),
    Undecided,
}

/// `screen`: ASCII text, CRC lists or the Holy Mapperel table.
pub fn run_screen<M: Machine>(
    machine: &mut M,
    spec: &ScreenSpec,
    max_frames: u64,
) -> ProtocolOutcome {
    if spec.text_encoding == TextEncoding::AsciiAnd3f {
        return match &spec.nametable_rows {
            Some(rows) => run_holy_mapperel(machine, spec, rows, max_frames),
            None => ProtocolOutcome::fail("manifest: ascii-and-3f entry without nametable_rows"),
        };
    }
    let mut detector = ParkDetector::default();
    let mut verdict_seen_at: Option<u64> = None;
    while machine.frame_count() < max_frames {
        machine.run_frame();
        let frame = machine.frame_count();
        let parked = detector.observe(machine);
        let rows = read_screen_rows(machine, ascii_char);
        let verdict = judge_ascii_screen(spec, &rows);
        if let Some(pc) = machine.jammed_at() {
            return ProtocolOutcome::fail(format!(
                "CPU jammed at ${pc:04X}; screen: {}",
                summarize_rows(&rows)
            ));
        }
        let decisive = verdict != ScreenVerdict::Undecided;
        let finished = match spec.done {
            DoneCondition::JmpSelf => parked && decisive,
            DoneCondition::Text => {
                if decisive {
                    let first = *verdict_seen_at.get_or_insert(frame);
                    frame.saturating_sub(first) >= TEXT_SETTLE_FRAMES
                } else {
                    verdict_seen_at = None;
                    false
                }
            }
            DoneCondition::Frames => false,
        };
        if finished {
            return screen_outcome(verdict, &rows);
        }
    }
    let rows = read_screen_rows(machine, ascii_char);
    match judge_ascii_screen(spec, &rows) {
        ScreenVerdict::Undecided => ProtocolOutcome::fail(format!(
            "no result text after {max_frames} frames; screen: {}",
            summarize_rows(&rows)
        )),
        verdict => screen_outcome(verdict, &rows),
    }
}

fn screen_outcome(verdict: ScreenVerdict, rows: &[String]) -> ProtocolOutcome {
    match verdict {
        ScreenVerdict::Pass(detail) => ProtocolOutcome::pass(detail),
        ScreenVerdict::Fail(detail) => {
            ProtocolOutcome::fail(format!("{detail}; screen: {}", summarize_rows(rows)))
        }
        ScreenVerdict::Undecided => ProtocolOutcome::fail("undecided"),
    }
}

/// A token of exactly 8 hex digits: the CRC the non-self-checking ROMs print last.
fn is_crc_token(token: &str) -> bool {
    token.len() == 8 && token.chars().all(|c| c.is_ascii_hexdigit())
}

fn judge_ascii_screen(spec: &ScreenSpec, rows: &[String]) -> ScreenVerdict {
    if let Some(row) = spec
        .fail_texts
        .iter()
        .find_map(|needle| rows.iter().find(|row| row.contains(needle.as_str())))
    {
        return ScreenVerdict::Fail(format!("failure text {row:?}"));
    }
    if !spec.nametable_any_of.is_empty() {
        let crc = rows
            .iter()
            .flat_map(|row| row.split([' ', NON_TEXT]))
            .find(|token| is_crc_token(token));
        return match crc {
            Some(crc)
                if spec
                    .nametable_any_of
                    .iter()
                    .any(|accepted| accepted.eq_ignore_ascii_case(crc)) =>
            {
                ScreenVerdict::Pass(format!("CRC {crc}"))
            }
            Some(crc) => ScreenVerdict::Fail(format!(
                "CRC {crc} not in [{}]",
                spec.nametable_any_of.join(", ")
            )),
            None => ScreenVerdict::Undecided,
        };
    }
    match &spec.nametable_text {
        Some(needle) if rows.iter().any(|row| row.contains(needle.as_str())) => {
            ScreenVerdict::Pass(format!("{needle:?} on screen"))
        }
        _ => ScreenVerdict::Undecided,
    }
}

// ---------------------------------------------------------------------------------------------
// Holy Mapperel

/// Rows 4-8 of nametable $2000, from column 2 (the Holy Mapperel result table).
const HOLY_MAPPEREL_FIRST_ROW: u16 = 4;
const HOLY_MAPPEREL_ROW_COUNT: usize = 5;
const HOLY_MAPPEREL_COLUMN: u16 = 2;

/// Read the five result rows, decoded from ASCII & $3F.
pub fn read_holy_mapperel_rows<M: Machine>(machine: &M) -> [String; HOLY_MAPPEREL_ROW_COUNT] {
    std::array::from_fn(|index| {
        let row = HOLY_MAPPEREL_FIRST_ROW + u16::try_from(index).unwrap_or(0);
        let start = 0x2000 + row * 32 + HOLY_MAPPEREL_COLUMN;
        let text = read_tile_text(machine, start, 32 - HOLY_MAPPEREL_COLUMN, ascii_and_3f_char);
        trim_row(&text).to_string()
    })
}

/// Accepted row-6 texts from the manifest's prose `prg_ram_line`: the text before any " (" or
/// ";" is the expected line; a quoted string starting with " + " is an optional suffix, any other
/// quoted string an accepted alternative line.
pub fn accepted_prg_ram_lines(prg_ram_line: &str) -> Vec<String> {
    let primary = prg_ram_line
        .split([';', '('])
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    let quoted: Vec<&str> = prg_ram_line.split('"').skip(1).step_by(2).collect();
    let mut bases = vec![primary];
    let mut suffixes = Vec::new();
    for quote in quoted {
        if quote.trim_start().starts_with('+') {
            suffixes.push(quote.to_string());
        } else {
            bases.push(quote.trim().to_string());
        }
    }
    let mut accepted = Vec::new();
    for base in &bases {
        accepted.push(base.clone());
        for suffix in &suffixes {
            accepted.push(format!("{base}{suffix}"));
        }
    }
    accepted
}

/// Check the rows against the manifest. `Ok` holds a short summary, `Err` the first mismatch.
pub fn judge_holy_mapperel(
    rows: &[String; HOLY_MAPPEREL_ROW_COUNT],
    expected: &HolyMapperelRows,
    prg_ram_line: Option<&str>,
) -> Result<String, String> {
    if let Some(row) = rows.iter().find(|row| row.contains("PROBLEM")) {
        return Err(format!("{row:?}"));
    }
    let [row4, row5, row6, row7, row8] = rows;
    if !row4.starts_with(expected.row4_prefix.as_str()) {
        return Err(format!(
            "row 4 {row4:?} does not start with {:?}",
            expected.row4_prefix
        ));
    }
    for (number, actual, wanted) in [
        (5, row5, &expected.row5),
        (7, row7, &expected.row7),
        (8, row8, &expected.row8),
    ] {
        if actual != wanted {
            return Err(format!("row {number} {actual:?}, expected {wanted:?}"));
        }
    }
    if let Some(line) = prg_ram_line {
        let accepted = accepted_prg_ram_lines(line);
        if !accepted.iter().any(|ok| ok == row6) {
            return Err(format!("row 6 {row6:?}, expected one of {accepted:?}"));
        }
    }
    Ok(format!("{row4} | {row6}"))
}

/// Row 8 once the ROM has drawn it completely.
fn holy_mapperel_table_drawn(row8: &str) -> bool {
    row8.strip_prefix("DETAILED TEST RESULT: ")
        .is_some_and(|code| code.len() == 4 && code.chars().all(|c| c.is_ascii_hexdigit()))
}

fn run_holy_mapperel<M: Machine>(
    machine: &mut M,
    spec: &ScreenSpec,
    expected: &HolyMapperelRows,
    max_frames: u64,
) -> ProtocolOutcome {
    let mut last_rows: Option<[String; HOLY_MAPPEREL_ROW_COUNT]> = None;
    let mut stable_since = 0;
    while machine.frame_count() < max_frames {
        machine.run_frame();
        let frame = machine.frame_count();
        let rows = read_holy_mapperel_rows(machine);
        if last_rows.as_ref() != Some(&rows) {
            stable_since = frame;
            last_rows = Some(rows);
            continue;
        }
        // The table is drawn once; when it is complete and has not changed for a while, the
        // verdict can no longer change before max_frames.
        if holy_mapperel_table_drawn(&rows[4])
            && frame.saturating_sub(stable_since) >= HOLY_MAPPEREL_STABLE_FRAMES
        {
            break;
        }
    }
    let rows = read_holy_mapperel_rows(machine);
    match judge_holy_mapperel(&rows, expected, spec.prg_ram_line.as_deref()) {
        Ok(summary) => ProtocolOutcome::pass(summary),
        Err(mismatch) => ProtocolOutcome::fail(truncate(
            &format!("{mismatch}; rows 4-8: {}", rows.join(" | ")),
            DETAIL_LIMIT,
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// nestest-log

/// The columns of one nestest.log line that can be compared.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraceFields {
    pub pc: String,
    pub opcode_bytes: String,
    pub a: String,
    pub x: String,
    pub y: String,
    pub p: String,
    pub sp: String,
    pub ppu_scanline: String,
    pub ppu_dot: String,
    pub cpu_cycle: String,
}

impl TraceFields {
    /// The value of a `compare_columns` name, `None` for an unknown name.
    pub fn column(&self, name: &str) -> Option<&str> {
        Some(match name {
            "pc" => &self.pc,
            "opcode_bytes" => &self.opcode_bytes,
            "a" => &self.a,
            "x" => &self.x,
            "y" => &self.y,
            "p" => &self.p,
            "sp" => &self.sp,
            "ppu_scanline" => &self.ppu_scanline,
            "ppu_dot" => &self.ppu_dot,
            "cpu_cycle" => &self.cpu_cycle,
            _ => return None,
        })
    }
}

/// Value after `key` (` A:`, ` X:`, ...) up to the next space.
fn register_value(line: &str, key: &str) -> String {
    line.find(key)
        .map(|at| &line[at + key.len()..])
        .map(|rest| rest.split_whitespace().next().unwrap_or_default())
        .unwrap_or_default()
        .to_string()
}

/// Split a nestest.log-format line into its comparable columns. The disassembly (columns
/// 16-47) is skipped: the register block is found by its `A:` label.
pub fn parse_trace_line(line: &str) -> TraceFields {
    let line = line.trim_end();
    let mut tokens = line.split_whitespace();
    let pc = tokens.next().unwrap_or_default().to_string();
    // Up to three 2-digit hex bytes follow the PC; the mnemonic (3 letters or `*XXX`) ends them.
    let opcode_bytes: Vec<&str> = tokens
        .take_while(|token| token.len() == 2 && token.chars().all(|c| c.is_ascii_hexdigit()))
        .take(3)
        .collect();
    // The register block starts with " A:"; the disassembly never contains a colon.
    let registers = line.find(" A:").map_or("", |at| &line[at..]);
    let (ppu_scanline, ppu_dot) = registers
        .find("PPU:")
        .map(|at| &registers[at + 4..])
        .and_then(|rest| rest.split("CYC:").next())
        .and_then(|ppu| ppu.split_once(','))
        .map(|(scanline, dot)| (scanline.trim().to_string(), dot.trim().to_string()))
        .unwrap_or_default();
    TraceFields {
        pc,
        opcode_bytes: opcode_bytes.join(" "),
        a: register_value(registers, " A:"),
        x: register_value(registers, " X:"),
        y: register_value(registers, " Y:"),
        p: register_value(registers, " P:"),
        sp: register_value(registers, " SP:"),
        ppu_scanline,
        ppu_dot,
        cpu_cycle: register_value(registers, "CYC:"),
    }
}

/// Names of the compared columns on which `expected` and `actual` differ.
pub fn differing_columns(
    expected: &TraceFields,
    actual: &TraceFields,
    columns: &[String],
) -> Vec<String> {
    columns
        .iter()
        .filter(|name| expected.column(name) != actual.column(name))
        .cloned()
        .collect()
}

/// `nestest-log`: automation mode from $C000, compared line by line against the log.
pub fn run_nestest<M: Machine>(
    machine: &mut M,
    spec: &NestestSpec,
    log: &str,
    max_frames: u64,
) -> ProtocolOutcome {
    if let Some(unknown) = spec
        .compare_columns
        .iter()
        .find(|name| TraceFields::default().column(name).is_none())
    {
        return ProtocolOutcome::fail(format!("manifest: unknown compare column {unknown:?}"));
    }
    let expected_lines: Vec<&str> = log.lines().collect();
    if expected_lines.len() < spec.log_lines {
        return ProtocolOutcome::fail(format!(
            "log has {} lines, manifest says {}",
            expected_lines.len(),
            spec.log_lines
        ));
    }
    let line_count = spec
        .max_instructions
        .unwrap_or(spec.log_lines)
        .min(spec.log_lines);

    // Automation mode: the documented register state, CPU cycle counter 7 (the reset sequence),
    // which leaves the PPU at scanline 0, dot 21.
    machine.set_cpu_registers(CpuRegisters {
        pc: spec.start_pc,
        a: 0,
        x: 0,
        y: 0,
        s: 0xFD,
        p: 0x24,
        cycles: 7,
    });

    for (index, expected_line) in expected_lines.iter().take(line_count).enumerate() {
        let line_number = index + 1;
        if let Some(pc) = machine.jammed_at() {
            return ProtocolOutcome::fail(format!(
                "CPU jammed at ${pc:04X} before line {line_number}: expected {:?}",
                expected_line.trim_end()
            ));
        }
        if machine.frame_count() >= max_frames {
            return ProtocolOutcome::fail(format!(
                "timeout after {max_frames} frames at line {line_number}"
            ));
        }
        let actual_line = machine.trace_line();
        let expected = parse_trace_line(expected_line);
        let actual = parse_trace_line(&actual_line);
        let differing = differing_columns(&expected, &actual, &spec.compare_columns);
        if !differing.is_empty() {
            return ProtocolOutcome::fail(format!(
                "line {line_number} differs in {}: expected {:?} got {:?}",
                differing.join(", "),
                expected_line.trim_end(),
                actual_line.trim_end()
            ));
        }
        machine.step_instruction();
    }

    let end_pc = machine.cpu_registers().pc;
    let results: Vec<u8> = spec
        .result_addrs
        .iter()
        .map(|&addr| machine.peek(addr))
        .collect();
    let results_text = spec
        .result_addrs
        .iter()
        .zip(&results)
        .map(|(addr, value)| format!("${addr:04X}=${value:02X}"))
        .collect::<Vec<_>>()
        .join(" ");
    if end_pc != spec.end_pc {
        return ProtocolOutcome::fail(format!(
            "{line_count} lines match but PC ended at ${end_pc:04X}, expected ${:04X}; {results_text}",
            spec.end_pc
        ));
    }
    if results.iter().all(|&value| value == spec.pass_value) {
        ProtocolOutcome::pass(format!("{line_count} lines match; {results_text}"))
    } else {
        ProtocolOutcome::fail(format!(
            "{line_count} lines match but result codes {results_text} (see nestest.txt)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::machine::fake::{FakeMachine, FakeState};
    use super::*;

    fn blargg_spec(resets_needed: u32) -> BlarggSpec {
        BlarggSpec {
            status_addr: 0x6000,
            signature: vec![0xDE, 0xB0, 0x61],
            text_addr: 0x6004,
            pass_value: 0,
            resets_needed,
            text_contains: Some("Passed".into()),
            fallback: None,
            fallback_nametable_addr: None,
            fallback_tiles: Vec::new(),
        }
    }

    fn write_blargg(state: &mut FakeState, status: u8, text: &str) {
        state.cpu_memory[0x6000] = status;
        state.cpu_memory[0x6001..0x6004].copy_from_slice(&[0xDE, 0xB0, 0x61]);
        let start = 0x6004;
        state.cpu_memory[start..start + text.len()].copy_from_slice(text.as_bytes());
        state.cpu_memory[start + text.len()] = 0;
    }

    #[test]
    fn blargg_pass_stops_at_the_final_status() {
        let mut machine = FakeMachine::new(|state| {
            if state.frame < 20 {
                write_blargg(state, 0x80, "01-basics\n");
            } else {
                write_blargg(state, 0x00, "01-basics\n\nPassed\n");
            }
        });
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(0), 600);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(outcome.detail, "Passed");
        assert_eq!(machine.frame_count(), 20);
    }

    #[test]
    fn blargg_failure_reports_code_and_text_without_ansi() {
        let mut machine = FakeMachine::new(|state| {
            write_blargg(
                state,
                0x03,
                "\u{1b}[0;31mBRK should set B\n\u{1b}[0mFailed #3\n",
            );
        });
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(0), 600);
        assert!(!outcome.passed);
        assert_eq!(outcome.detail, "code 3: BRK should set B | Failed #3");
    }

    #[test]
    fn blargg_status_zero_without_expected_text_fails() {
        let mut machine = FakeMachine::new(|state| write_blargg(state, 0x00, "Done\n"));
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(0), 600);
        assert!(!outcome.passed);
        assert!(
            outcome.detail.contains("lacks \"Passed\""),
            "{}",
            outcome.detail
        );
    }

    #[test]
    fn blargg_hang_times_out_at_max_frames() {
        let mut machine = FakeMachine::new(|state| write_blargg(state, 0x80, "working\n"));
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(0), 300);
        assert!(!outcome.passed);
        assert_eq!(machine.frame_count(), 300);
        assert!(
            outcome.detail.starts_with("hang: status $80"),
            "{}",
            outcome.detail
        );
        assert!(outcome.detail.contains("working"));
    }

    #[test]
    fn blargg_ignores_status_while_signature_is_missing() {
        // Without the signature a $00 at $6000 is just power-on RAM.
        let mut machine = FakeMachine::new(|state| {
            state.cpu_memory[0x6000] = 0x00;
            if state.frame >= 50 {
                write_blargg(state, 0x01, "Failed\n");
            }
        });
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(0), 600);
        assert!(!outcome.passed);
        assert_eq!(machine.frame_count(), 50);
        assert!(outcome.detail.starts_with("code 1"));
    }

    #[test]
    fn blargg_never_signed_reports_missing_signature() {
        let mut machine = FakeMachine::new(|_| {});
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(0), 100);
        assert!(!outcome.passed);
        assert_eq!(outcome.detail, "no signature at $6001 after 100 frames");
    }

    #[test]
    fn blargg_resets_after_delay_and_ignores_stale_81() {
        use std::cell::Cell;
        use std::rc::Rc;
        // The ROM asks for a reset at frame 10. After the reset, $6000 keeps the stale $81 for
        // 12 frames before the ROM writes $80, then asks again at frame 40 (second reset),
        // and passes after that.
        let phase = Rc::new(Cell::new(0u32));
        let phase_in_frame = Rc::clone(&phase);
        let mut machine = FakeMachine::new(move |state| {
            let last_reset = state.resets.last().copied();
            match (phase_in_frame.get(), last_reset) {
                (0, _) if state.frame >= 10 => write_blargg(state, 0x81, ""),
                (0, _) => write_blargg(state, 0x80, ""),
                (1, Some(reset)) if state.frame < reset + 12 => {} // stale $81 stays
                (1, _) if state.frame < 40 => write_blargg(state, 0x80, ""),
                (1, _) => write_blargg(state, 0x81, ""),
                (_, Some(reset)) if state.frame < reset + 3 => {}
                (_, _) => write_blargg(state, 0x00, "Passed\n"),
            }
        })
        .with_reset(move |_| phase.set(phase.get() + 1));
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(2), 600);
        assert!(outcome.passed, "{outcome:?}");
        let resets = machine.state.resets.clone();
        assert_eq!(resets.len(), 2, "{resets:?}");
        // First request seen at frame 10: reset no earlier than 6 frames later.
        assert_eq!(resets[0], 10 + RESET_DELAY_FRAMES);
        // The stale $81 must not have triggered a reset; the second request starts at frame 40.
        assert_eq!(resets[1], 40 + RESET_DELAY_FRAMES);
    }

    #[test]
    fn blargg_counts_missing_resets_in_detail() {
        let mut machine = FakeMachine::new(|state| write_blargg(state, 0x00, "Passed\n"));
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(1), 600);
        assert!(outcome.passed);
        assert!(outcome.detail.contains("0 resets, manifest expects 1"));
    }

    #[test]
    fn blargg_screen_fallback_passes_without_signature() {
        let mut spec = blargg_spec(0);
        spec.fallback = Some("screen".into());
        spec.fallback_nametable_addr = Some(0x2361);
        spec.fallback_tiles = vec![0x20, 0x04, 0x02, 0x02, 0x05, 0x09];
        let mut machine = FakeMachine::new(|state| {
            if state.frame == 30 {
                state.ppu_memory[0x2361..0x2367]
                    .copy_from_slice(&[0x20, 0x04, 0x02, 0x02, 0x05, 0x09]);
            }
        });
        let outcome = run_blargg_6000(&mut machine, &spec, 600);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(machine.frame_count(), 30);

        let mut silent = FakeMachine::new(|_| {});
        let outcome = run_blargg_6000(&mut silent, &spec, 60);
        assert!(!outcome.passed);
        assert!(outcome.detail.contains("no fallback tiles"));
    }

    #[test]
    fn blargg_jam_fails_early() {
        let mut machine = FakeMachine::new(|state| {
            write_blargg(state, 0x80, "");
            if state.frame == 7 {
                state.jammed_at = Some(0xE123);
            }
        });
        let outcome = run_blargg_6000(&mut machine, &blargg_spec(0), 600);
        assert!(!outcome.passed);
        assert_eq!(machine.frame_count(), 7);
        assert!(outcome.detail.starts_with("CPU jammed at $E123"));
    }

    fn ram_byte_spec() -> RamByteSpec {
        RamByteSpec {
            result_addr: 0xF8,
            pass_value: 1,
            done: DoneCondition::JmpSelf,
            screen_text: Some("PASSED".into()),
        }
    }

    #[test]
    fn ram_byte_reads_only_once_parked() {
        // While running, $F8 holds the sub-test number (1 first); the failure code 4 is final
        // only once the CPU parks at frame 30.
        let mut machine = FakeMachine::new(|state| {
            if state.frame < 30 {
                state.cpu_memory[0xF8] = 1;
                state.unpark();
            } else {
                state.cpu_memory[0xF8] = 4;
                state.park_at(0xE000);
            }
        });
        let outcome = run_ram_byte(&mut machine, &ram_byte_spec(), 600);
        assert!(!outcome.passed);
        assert_eq!(outcome.detail, "code 4 ($F8 = $04)");
        assert_eq!(
            machine.frame_count(),
            30 + u64::from(super::super::machine::JMP_SELF_CONFIRM_FRAMES) - 1
        );
    }

    #[test]
    fn ram_byte_pass_when_parked_with_pass_value() {
        let mut machine = FakeMachine::new(|state| {
            state.cpu_memory[0xF0] = 1;
            if state.frame >= 12 {
                state.park_at(0xF123);
            }
        });
        let mut spec = ram_byte_spec();
        spec.result_addr = 0xF0;
        let outcome = run_ram_byte(&mut machine, &spec, 600);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(outcome.detail, "$F0 = $01");
    }

    #[test]
    fn ram_byte_timeout_needs_screen_text_to_pass() {
        let mut machine = FakeMachine::new(|state| {
            state.cpu_memory[0xF8] = 1;
            state.unpark();
        });
        let outcome = run_ram_byte(&mut machine, &ram_byte_spec(), 100);
        assert!(!outcome.passed);
        assert!(outcome.detail.starts_with("not parked after 100 frames"));

        let mut machine = FakeMachine::new(|state| {
            state.cpu_memory[0xF8] = 1;
            state.unpark();
            state.write_ppu_text(0x20C4, "PASSED");
        });
        let outcome = run_ram_byte(&mut machine, &ram_byte_spec(), 100);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(machine.frame_count(), 100);
    }

    fn ascii_screen_spec(done: DoneCondition) -> ScreenSpec {
        ScreenSpec {
            done,
            text_encoding: TextEncoding::Ascii,
            nametable_text: Some("Passed".into()),
            fail_texts: vec!["Failed".into(), "Error".into()],
            nametable_any_of: Vec::new(),
            nametable_rows: None,
            prg_ram_line: None,
            board_name_reference: None,
        }
    }

    #[test]
    fn screen_ascii_pass_after_settling() {
        let mut machine = FakeMachine::new(|state| {
            if state.frame == 40 {
                state.write_ppu_text(0x2000 + 3 * 32 + 1, "cpu_dummy_reads");
                state.write_ppu_text(0x2000 + 5 * 32 + 1, "Passed");
            }
        });
        let outcome = run_screen(&mut machine, &ascii_screen_spec(DoneCondition::Text), 600);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(machine.frame_count(), 40 + TEXT_SETTLE_FRAMES);
    }

    #[test]
    fn screen_ascii_fail_text_wins() {
        let mut machine = FakeMachine::new(|state| {
            if state.frame == 40 {
                state.write_ppu_text(0x2400 + 7 * 32, "Error 4");
            }
        });
        let outcome = run_screen(&mut machine, &ascii_screen_spec(DoneCondition::Text), 600);
        assert!(!outcome.passed);
        assert!(
            outcome.detail.starts_with("failure text \"Error 4\""),
            "{}",
            outcome.detail
        );
    }

    #[test]
    fn screen_ascii_timeout_without_text() {
        let mut machine = FakeMachine::new(|_| {});
        let outcome = run_screen(&mut machine, &ascii_screen_spec(DoneCondition::Text), 90);
        assert!(!outcome.passed);
        assert!(outcome.detail.starts_with("no result text after 90 frames"));
    }

    #[test]
    fn screen_jmp_self_waits_for_parking() {
        // PASSED is on screen from frame 10, but the ROM only parks at frame 100.
        let mut machine = FakeMachine::new(|state| {
            if state.frame >= 10 {
                state.write_ppu_text(0x2000 + 10 * 32 + 4, "PASSED");
            }
            if state.frame >= 100 {
                state.park_at(0xC000);
            } else {
                state.unpark();
            }
        });
        let mut spec = ascii_screen_spec(DoneCondition::JmpSelf);
        spec.nametable_text = Some("PASSED".into());
        spec.fail_texts = vec!["FAIL".into(), "ERROR".into(), "WRONG".into()];
        let outcome = run_screen(&mut machine, &spec, 1500);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(
            machine.frame_count(),
            100 + u64::from(super::super::machine::JMP_SELF_CONFIRM_FRAMES) - 1
        );
    }

    fn crc_spec() -> ScreenSpec {
        ScreenSpec {
            nametable_text: None,
            fail_texts: Vec::new(),
            nametable_any_of: vec!["159A7A8F".into(), "5E3DF9C4".into()],
            ..ascii_screen_spec(DoneCondition::Text)
        }
    }

    #[test]
    fn screen_crc_list_accepts_listed_crc() {
        let mut machine = FakeMachine::new(|state| {
            state.write_ppu_text(0x2000 + 4 * 32 + 1, "11 22");
            state.write_ppu_text(0x2000 + 5 * 32 + 1, "33 44");
            if state.frame >= 60 {
                state.write_ppu_text(0x2000 + 9 * 32 + 1, "5E3DF9C4");
            }
        });
        let outcome = run_screen(&mut machine, &crc_spec(), 600);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(outcome.detail, "CRC 5E3DF9C4");
    }

    #[test]
    fn screen_crc_list_rejects_other_crc() {
        let mut machine = FakeMachine::new(|state| {
            state.write_ppu_text(0x2000 + 9 * 32 + 1, "DEADBEEF");
        });
        let outcome = run_screen(&mut machine, &crc_spec(), 600);
        assert!(!outcome.passed);
        assert!(outcome
            .detail
            .starts_with("CRC DEADBEEF not in [159A7A8F, 5E3DF9C4]"));
    }

    /// Write `text` at nametable row `row`, column 2, encoded as ASCII & $3F.
    fn write_3f_row(state: &mut FakeState, row: usize, text: &str) {
        let start = 0x2000 + row * 32 + 2;
        for (offset, byte) in text.bytes().enumerate() {
            state.ppu_memory[start + offset] = byte & 0x3F;
        }
    }

    fn holy_spec(prg_ram_line: &str) -> ScreenSpec {
        ScreenSpec {
            done: DoneCondition::Frames,
            text_encoding: TextEncoding::AsciiAnd3f,
            nametable_text: None,
            fail_texts: Vec::new(),
            nametable_any_of: Vec::new(),
            nametable_rows: Some(HolyMapperelRows {
                row4_prefix: "001".into(),
                row5: "128K PRG ROM".into(),
                row7: "32K CHR ROM OK".into(),
                row8: "DETAILED TEST RESULT: 0000".into(),
            }),
            prg_ram_line: Some(prg_ram_line.into()),
            board_name_reference: Some("SJROM".into()),
        }
    }

    const PRG_RAM_8K: &str =
        "8K PRG RAM OK (may be followed by \" + BATTERY\" on a second run with saved battery RAM)";
    const PRG_RAM_MISSING: &str = "PRG RAM MISSING (header declares none); \"8K PRG RAM OK\" is tolerated for emulators that always map $6000 RAM";

    fn draw_holy_table(state: &mut FakeState, row6: &str, row8: &str) {
        write_3f_row(state, 4, "001 SJROM (MMC1)");
        write_3f_row(state, 5, "128K PRG ROM");
        write_3f_row(state, 6, row6);
        write_3f_row(state, 7, "32K CHR ROM OK");
        write_3f_row(state, 8, row8);
    }

    #[test]
    fn holy_mapperel_rows_decode_from_ascii_and_3f() {
        let mut machine = FakeMachine::new(|_| {});
        draw_holy_table(
            &mut machine.state,
            "8K PRG RAM OK",
            "DETAILED TEST RESULT: 0000",
        );
        // Letters are stored as $01-$1A, not ASCII.
        assert_eq!(machine.state.ppu_memory[0x2082 + 4], b'S' & 0x3F);
        let rows = read_holy_mapperel_rows(&machine);
        assert_eq!(rows[0], "001 SJROM (MMC1)");
        assert_eq!(rows[4], "DETAILED TEST RESULT: 0000");
    }

    #[test]
    fn holy_mapperel_passes_and_stops_early_once_stable() {
        let mut machine = FakeMachine::new(|state| {
            if state.frame == 80 {
                draw_holy_table(state, "8K PRG RAM OK", "DETAILED TEST RESULT: 0000");
            }
        });
        let outcome = run_screen(&mut machine, &holy_spec(PRG_RAM_8K), 900);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(outcome.detail, "001 SJROM (MMC1) | 8K PRG RAM OK");
        assert_eq!(machine.frame_count(), 80 + HOLY_MAPPEREL_STABLE_FRAMES);
    }

    #[test]
    fn holy_mapperel_nonzero_detail_code_fails() {
        let mut machine = FakeMachine::new(|state| {
            if state.frame == 150 {
                draw_holy_table(state, "PRG RAM MISSING", "DETAILED TEST RESULT: 4000");
            }
        });
        let outcome = run_screen(&mut machine, &holy_spec(PRG_RAM_MISSING), 900);
        assert!(!outcome.passed);
        assert!(
            outcome.detail.starts_with(
                "row 8 \"DETAILED TEST RESULT: 4000\", expected \"DETAILED TEST RESULT: 0000\""
            ),
            "{}",
            outcome.detail
        );
    }

    #[test]
    fn holy_mapperel_without_table_fails_at_max_frames() {
        let mut machine = FakeMachine::new(|_| {});
        let outcome = run_screen(&mut machine, &holy_spec(PRG_RAM_8K), 900);
        assert!(!outcome.passed);
        assert_eq!(machine.frame_count(), 900);
    }

    #[test]
    fn holy_mapperel_problem_row_fails() {
        let rows: [String; 5] = [
            "001 SJROM (MMC1)".into(),
            "128K PRG ROM".into(),
            "8K PRG RAM PROBLEM".into(),
            "32K CHR ROM OK".into(),
            "DETAILED TEST RESULT: 0000".into(),
        ];
        let expected = holy_spec(PRG_RAM_8K).nametable_rows.unwrap();
        let verdict = judge_holy_mapperel(&rows, &expected, Some(PRG_RAM_8K));
        assert_eq!(verdict, Err("\"8K PRG RAM PROBLEM\"".to_string()));
    }

    #[test]
    fn prg_ram_line_variants() {
        assert_eq!(
            accepted_prg_ram_lines(PRG_RAM_8K),
            vec!["8K PRG RAM OK", "8K PRG RAM OK + BATTERY"]
        );
        assert_eq!(
            accepted_prg_ram_lines(PRG_RAM_MISSING),
            vec!["PRG RAM MISSING", "8K PRG RAM OK"]
        );
        let expected = holy_spec(PRG_RAM_MISSING).nametable_rows.unwrap();
        let mut rows: [String; 5] = [
            "001 SJROM (MMC1)".into(),
            "128K PRG ROM".into(),
            "8K PRG RAM OK".into(),
            "32K CHR ROM OK".into(),
            "DETAILED TEST RESULT: 0000".into(),
        ];
        assert!(judge_holy_mapperel(&rows, &expected, Some(PRG_RAM_MISSING)).is_ok());
        rows[2] = "32K PRG RAM OK".into();
        assert!(judge_holy_mapperel(&rows, &expected, Some(PRG_RAM_MISSING)).is_err());
    }

    const NESTEST_LOG: &str = "\
C000  4C F5 C5  JMP $C5F5                       A:00 X:00 Y:00 P:24 SP:FD PPU:  0, 21 CYC:7
C5F5  A2 00     LDX #$00                        A:00 X:00 Y:00 P:24 SP:FD PPU:  0, 30 CYC:10
C5F7  86 00     STX $00 = 00                    A:00 X:00 Y:00 P:26 SP:FD PPU:  0, 36 CYC:12
";

    fn nestest_spec(lines: usize) -> NestestSpec {
        NestestSpec {
            start_pc: 0xC000,
            log: "cpu/nestest/nestest.log".into(),
            log_lines: lines,
            end_pc: 0x0001,
            result_addrs: vec![0x0002, 0x0003],
            pass_value: 0,
            compare_columns: [
                "pc",
                "opcode_bytes",
                "a",
                "x",
                "y",
                "p",
                "sp",
                "ppu_scanline",
                "ppu_dot",
                "cpu_cycle",
            ]
            .map(String::from)
            .to_vec(),
            max_instructions: Some(lines),
        }
    }

    fn nestest_machine(trace: Vec<String>) -> FakeMachine {
        let steps = trace.len();
        let mut machine = FakeMachine::new(|_| {}).with_step(move |state| {
            if state.trace_position == steps {
                state.registers.pc = 0x0001;
            }
        });
        machine.state.trace = trace;
        machine
    }

    #[test]
    fn parses_trace_columns() {
        let fields = parse_trace_line(NESTEST_LOG.lines().nth(2).unwrap());
        assert_eq!(fields.pc, "C5F7");
        assert_eq!(fields.opcode_bytes, "86 00");
        assert_eq!(fields.p, "26");
        assert_eq!(fields.sp, "FD");
        assert_eq!(fields.ppu_scanline, "0");
        assert_eq!(fields.ppu_dot, "36");
        assert_eq!(fields.cpu_cycle, "12");
        let unofficial = parse_trace_line(
            "DCC1  04 A9    *NOP $A9 = 00                    A:AA X:97 Y:4E P:EF SP:F5 PPU:112,104 CYC:14578",
        );
        assert_eq!(unofficial.opcode_bytes, "04 A9");
        assert_eq!(unofficial.ppu_scanline, "112");
        assert_eq!(unofficial.ppu_dot, "104");
        assert_eq!(unofficial.a, "AA");
    }

    #[test]
    fn nestest_passes_when_every_line_matches() {
        let trace: Vec<String> = NESTEST_LOG.lines().map(String::from).collect();
        let mut machine = nestest_machine(trace);
        let outcome = run_nestest(&mut machine, &nestest_spec(3), NESTEST_LOG, 60);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(machine.state.instructions, 3);
        let regs = machine.state.registers;
        assert_eq!((regs.s, regs.p, regs.cycles), (0xFD, 0x24, 7));
    }

    #[test]
    fn nestest_ignores_disassembly_but_reports_first_register_mismatch() {
        let mut trace: Vec<String> = NESTEST_LOG.lines().map(String::from).collect();
        // A different memory value in the disassembly text is not a mismatch...
        trace[2] = trace[2].replace("STX $00 = 00", "STX $00 = FF");
        // ...but a wrong P on line 2 is, and it is reported with both lines.
        trace[1] = trace[1].replace("P:24", "P:A4");
        let mut machine = nestest_machine(trace);
        let outcome = run_nestest(&mut machine, &nestest_spec(3), NESTEST_LOG, 60);
        assert!(!outcome.passed);
        assert!(
            outcome.detail.starts_with("line 2 differs in p:"),
            "{}",
            outcome.detail
        );
        assert!(outcome.detail.contains("P:A4"));
        assert!(outcome.detail.contains("P:24"));
        assert_eq!(machine.state.instructions, 1);
    }

    #[test]
    fn nestest_checks_result_bytes() {
        let trace: Vec<String> = NESTEST_LOG.lines().map(String::from).collect();
        let mut machine = nestest_machine(trace);
        machine.state.cpu_memory[0x0003] = 0x17;
        let outcome = run_nestest(&mut machine, &nestest_spec(3), NESTEST_LOG, 60);
        assert!(!outcome.passed);
        assert!(outcome.detail.contains("$0003=$17"), "{}", outcome.detail);
    }

    #[test]
    fn nestest_cycle_column_mismatch() {
        let mut trace: Vec<String> = NESTEST_LOG.lines().map(String::from).collect();
        trace[2] = trace[2].replace("CYC:12", "CYC:13");
        let mut machine = nestest_machine(trace);
        let outcome = run_nestest(&mut machine, &nestest_spec(3), NESTEST_LOG, 60);
        assert!(!outcome.passed);
        assert!(outcome.detail.starts_with("line 3 differs in cpu_cycle"));
    }
}
