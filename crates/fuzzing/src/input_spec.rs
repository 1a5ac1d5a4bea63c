//! Fuzz target: the controller-input specs of `nes run`, `--press FRAME:BUTTONS[:HOLD]` and
//! `--input FILE` (one entry a line, `#` comments), parsed and played.
//!
//! The bytes, as lossy UTF-8, go through every parser behind those options: the whole text as
//! one `--press` value and as a BUTTONS field, each line as a `--press` value, and the text as
//! an `--input` file. What parses must make sense (an entry prints back to itself and covers
//! exactly its frames; a file is its lines' entries) and a schedule that parses is played on a
//! console the way `nes run` plays one: controller 1 holds the schedule's buttons for each
//! frame. The schedule may name frames far apart, so the console plays up to [`MAX_FRAMES`]
//! of the frames that matter (the first, and where entries start and end) back to back.

use nes::{Buttons, Nes};
use nes_movie::input_schedule::{parse_buttons, InputSchedule, ScheduledPress};

/// libFuzzer's `-max_len`: an input file of a few hundred entries.
pub const MAX_LEN: usize = 4096;

/// Frames played per schedule.
pub const MAX_FRAMES: usize = 4;

/// One fuzz input.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(press) = ScheduledPress::parse(&text) {
        check_press(&press);
    }
    if let Ok(buttons) = parse_buttons(text.trim()) {
        // A BUTTONS field is read the same inside an entry.
        let entry = format!("1:{}", text.trim());
        if !text.contains(':') {
            assert_eq!(
                ScheduledPress::parse(&entry).map(|p| p.buttons),
                Ok(buttons)
            );
        }
    }
    let mut entries = Vec::new();
    for line in text.lines() {
        if let Ok(press) = ScheduledPress::parse(line) {
            check_press(&press);
            entries.push(press);
        }
    }
    match InputSchedule::parse_file(&text) {
        Ok(schedule) => {
            // Comments aside, every line of a file that parses is an entry.
            if !text.contains('#') {
                assert_eq!(schedule.presses(), &entries[..]);
            }
            play(&schedule);
        }
        Err(error) => assert!(
            error.line >= 1 && error.to_string().starts_with("line "),
            "{error}"
        ),
    }
}

/// What every parsed entry must satisfy.
fn check_press(press: &ScheduledPress) {
    assert!(
        press.first_frame >= 1 && press.hold_frames >= 1,
        "{press:?}"
    );
    let printed = press.to_string();
    assert_eq!(
        ScheduledPress::parse(&printed).as_ref(),
        Ok(press),
        "`{printed}` reads back"
    );
    let last = press.first_frame.saturating_add(press.hold_frames - 1);
    assert!(press.covers(press.first_frame) && press.covers(last));
    assert!(!press.covers(press.first_frame - 1));
    assert!(last == u64::MAX || !press.covers(last + 1));
}

/// `nes run`'s loop with a schedule, over the frames that matter.
fn play(schedule: &InputSchedule) {
    let mut frames = vec![1, schedule.last_frame(), u64::MAX];
    for press in schedule.presses() {
        frames.push(press.first_frame);
        frames.push(press.first_frame.saturating_add(press.hold_frames - 1));
    }
    frames.sort_unstable();
    frames.dedup();
    let mut nes = Nes::new(crate::corpus::console().1.clone());
    for frame in frames.into_iter().take(MAX_FRAMES) {
        nes.set_buttons(0, schedule.buttons_for_frame(frame));
        nes.set_buttons(1, Buttons::empty());
        nes.run_frame();
    }
}

/// Every form `--press` and `--input` document: letters (`s` select, `S` start, the others
/// either case), names joined with `+` (mixed with letter groups, any case, `none`), the
/// optional hold, spaces around the parts, huge numbers; files with comments, blank lines and
/// CRLF; and entries the parsers must refuse.
const SYNTHETIC: &[&str] = &[
    "120:S",
    "5:s",
    "5:ABUDLR",
    "5:abudlr",
    "300:start+a:10",
    " 7 : Right+B : 2 ",
    "9:select+LR",
    "9:none",
    "1:a+b+select+start+up+down+left+right",
    "1:NONE+Start",
    "18446744073709551615:A:18446744073709551615",
    "2:A:18446744073709551615",
    "# Tetris: start the game\n\n100:S   # title screen\n  160:start:2\n200:A+B:30\n",
    "1:A\r\n2:B:3\r\n# comment\r\n\r\n10:start+select\r\n",
    "1:A\n1:B\n1:S:5\n3:none\n",
    // Refused.
    "120",
    "x:A",
    "0:A",
    "1:Q",
    "1:start+jump",
    "1:A:0",
    "1:A:lots",
    "1:A:2:3",
    "1:",
    "1:a++b",
    "18446744073709551616:A",
    "100:S\n\n# fine\n150:jump\n",
];

/// The seed inputs.
pub fn seeds() -> Vec<Vec<u8>> {
    SYNTHETIC
        .iter()
        .map(|text| text.as_bytes().to_vec())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke() {
        let seeds = seeds();
        let ran = crate::mutate::smoke(&seeds, 3000, 0x1_4907_5BEC, MAX_LEN, run);
        assert_eq!(ran, seeds.len() + 3000);
    }

    #[test]
    fn the_synthetic_specs_parse_or_fail_as_meant() {
        let files = SYNTHETIC
            .iter()
            .filter(|text| InputSchedule::parse_file(text).is_ok())
            .count();
        assert_eq!(
            files, 15,
            "the first fifteen parse as files, the rest are refused"
        );
    }
}
