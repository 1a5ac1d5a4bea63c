//! Scripted controller input for headless runs: "hold these buttons on these frames".
//!
//! An entry is `FRAME:BUTTONS[:HOLD_FRAMES]`. FRAME counts from 1 like the console's frame
//! numbers (the buttons are held while frame FRAME is produced, i.e. they are what $4016 returns
//! from the vblank before it). BUTTONS is either letters from `ABsSUDLR` (`s` select, `S` start)
//! or button names joined with `+` (`start+a`); HOLD_FRAMES defaults to 1. Entries that overlap
//! add their buttons together. All of this is for controller 1.

use std::fmt;

use nes::Buttons;

/// Why a `--press` entry or a button list was not accepted: what is wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PressError(String);

impl From<String> for PressError {
    fn from(message: String) -> PressError {
        PressError(message)
    }
}

impl From<&str> for PressError {
    fn from(message: &str) -> PressError {
        PressError(message.to_owned())
    }
}

/// Why an input file was not accepted: its first bad entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {error}")]
pub struct ScheduleFileError {
    /// The 1-based line of the file.
    pub line: usize,
    pub error: PressError,
}

/// One `FRAME:BUTTONS[:HOLD_FRAMES]` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScheduledPress {
    /// The first frame (from 1) the buttons are held for.
    pub first_frame: u64,
    pub buttons: Buttons,
    /// How many frames, at least 1.
    pub hold_frames: u64,
}

impl ScheduledPress {
    /// Parse one entry; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<ScheduledPress, PressError> {
        let text = text.trim();
        let mut parts = text.split(':');
        let frame_text = parts.next().unwrap_or_default().trim();
        let Some(buttons_text) = parts.next() else {
            return Err(format!("`{text}` is not FRAME:BUTTONS[:HOLD_FRAMES]").into());
        };
        let hold_text = parts.next();
        if parts.next().is_some() {
            return Err(format!(
                "`{text}` has too many `:` (expected FRAME:BUTTONS[:HOLD_FRAMES])"
            )
            .into());
        }
        let first_frame = frame_text
            .parse::<u64>()
            .map_err(|_| format!("`{frame_text}` is not a frame number"))?;
        if first_frame == 0 {
            return Err("frames are counted from 1: frame 0 does not exist".into());
        }
        let buttons = parse_buttons(buttons_text.trim())?;
        let hold_frames = match hold_text.map(str::trim) {
            None => 1,
            Some(hold) => match hold.parse::<u64>() {
                Ok(0) => return Err("HOLD_FRAMES must be at least 1".into()),
                Ok(n) => n,
                Err(_) => return Err(format!("`{hold}` is not a number of frames to hold").into()),
            },
        };
        Ok(ScheduledPress {
            first_frame,
            buttons,
            hold_frames,
        })
    }

    /// True if `frame` is one of FRAME..FRAME+HOLD-1.
    pub fn covers(&self, frame: u64) -> bool {
        frame >= self.first_frame && frame - self.first_frame < self.hold_frames
    }
}

impl fmt::Display for ScheduledPress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.first_frame)?;
        if self.buttons.is_empty() {
            f.write_str("none")?;
        }
        for (letter, button) in BUTTON_LETTERS {
            if self.buttons.contains(button) {
                write!(f, "{letter}")?;
            }
        }
        write!(f, ":{}", self.hold_frames)
    }
}

const BUTTON_LETTERS: [(char, Buttons); 8] = [
    ('A', Buttons::A),
    ('B', Buttons::B),
    ('s', Buttons::SELECT),
    ('S', Buttons::START),
    ('U', Buttons::UP),
    ('D', Buttons::DOWN),
    ('L', Buttons::LEFT),
    ('R', Buttons::RIGHT),
];

fn button_named(name: &str) -> Option<Buttons> {
    Some(match name.to_ascii_lowercase().as_str() {
        "a" => Buttons::A,
        "b" => Buttons::B,
        "select" => Buttons::SELECT,
        "start" => Buttons::START,
        "up" => Buttons::UP,
        "down" => Buttons::DOWN,
        "left" => Buttons::LEFT,
        "right" => Buttons::RIGHT,
        "none" => Buttons::empty(),
        _ => return None,
    })
}

fn button_letter(letter: char) -> Option<Buttons> {
    // `s`/`S` are case-sensitive (select/start); the other letters are not ambiguous.
    match letter {
        's' => Some(Buttons::SELECT),
        'S' => Some(Buttons::START),
        'a' => Some(Buttons::A),
        'b' => Some(Buttons::B),
        'u' => Some(Buttons::UP),
        'd' => Some(Buttons::DOWN),
        'l' => Some(Buttons::LEFT),
        'r' => Some(Buttons::RIGHT),
        _ => BUTTON_LETTERS
            .iter()
            .find(|(l, _)| *l == letter)
            .map(|&(_, b)| b),
    }
}

/// `ABsSUDLR` letters, or names joined with `+` (each part may also be a group of letters).
pub fn parse_buttons(text: &str) -> Result<Buttons, PressError> {
    if text.is_empty() {
        return Err(
            "no buttons given (use letters from `ABsSUDLR`, names like `start+a`, or `none`)"
                .into(),
        );
    }
    let mut buttons = Buttons::empty();
    for part in text.split('+') {
        let part = part.trim();
        if let Some(named) = button_named(part) {
            buttons |= named;
            continue;
        }
        if part.is_empty() {
            return Err(format!("`{text}` has an empty part between `+`").into());
        }
        for letter in part.chars() {
            buttons |= button_letter(letter).ok_or_else(|| {
                format!(
                    "`{part}` is neither a button name (a, b, select, start, up, down, left, \
                     right) nor letters from `ABsSUDLR`"
                )
            })?;
        }
    }
    Ok(buttons)
}

/// A set of scripted presses for controller 1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputSchedule {
    presses: Vec<ScheduledPress>,
}

impl InputSchedule {
    pub fn new() -> InputSchedule {
        InputSchedule::default()
    }

    pub fn push(&mut self, press: ScheduledPress) {
        self.presses.push(press);
    }

    pub fn presses(&self) -> &[ScheduledPress] {
        &self.presses
    }

    pub fn is_empty(&self) -> bool {
        self.presses.is_empty()
    }

    /// Parse a file of entries, one per line; `#` starts a comment, blank lines are skipped.
    /// Errors read `line N: ...`.
    pub fn parse_file(text: &str) -> Result<InputSchedule, ScheduleFileError> {
        let mut schedule = InputSchedule::new();
        for (index, line) in text.lines().enumerate() {
            let entry = line.split('#').next().unwrap_or_default().trim();
            if entry.is_empty() {
                continue;
            }
            let press = ScheduledPress::parse(entry).map_err(|error| ScheduleFileError {
                line: index + 1,
                error,
            })?;
            schedule.push(press);
        }
        Ok(schedule)
    }

    /// The buttons held for frame `frame` (from 1): every entry covering it, combined.
    pub fn buttons_for_frame(&self, frame: u64) -> Buttons {
        self.presses
            .iter()
            .filter(|press| press.covers(frame))
            .fold(Buttons::empty(), |held, press| held | press.buttons)
    }

    /// The last frame any entry holds buttons for (0 when empty).
    pub fn last_frame(&self) -> u64 {
        self.presses
            .iter()
            .map(|p| p.first_frame.saturating_add(p.hold_frames - 1))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_letters_names_and_hold() {
        let press = ScheduledPress::parse("120:S").unwrap();
        assert_eq!(
            press,
            ScheduledPress {
                first_frame: 120,
                buttons: Buttons::START,
                hold_frames: 1
            }
        );
        assert_eq!(
            ScheduledPress::parse("5:s").unwrap().buttons,
            Buttons::SELECT
        );
        assert_eq!(
            ScheduledPress::parse("5:ABUDLR").unwrap().buttons,
            Buttons::A | Buttons::B | Buttons::UP | Buttons::DOWN | Buttons::LEFT | Buttons::RIGHT
        );
        let press = ScheduledPress::parse("300:start+a:10").unwrap();
        assert_eq!(press.buttons, Buttons::START | Buttons::A);
        assert_eq!(press.hold_frames, 10);
        assert_eq!(
            ScheduledPress::parse(" 7 : Right+B : 2 ").unwrap(),
            ScheduledPress {
                first_frame: 7,
                buttons: Buttons::RIGHT | Buttons::B,
                hold_frames: 2
            }
        );
        assert_eq!(
            ScheduledPress::parse("9:select+LR").unwrap().buttons,
            Buttons::SELECT | Buttons::LEFT | Buttons::RIGHT
        );
        assert_eq!(
            ScheduledPress::parse("9:none").unwrap().buttons,
            Buttons::empty()
        );
    }

    #[test]
    fn rejects_bad_entries_with_a_reason() {
        let cases: [(&str, &str); 8] = [
            ("120", "FRAME:BUTTONS"),
            ("x:A", "not a frame number"),
            ("0:A", "counted from 1"),
            ("1:Q", "neither a button name"),
            ("1:start+jump", "`jump`"),
            ("1:A:0", "at least 1"),
            ("1:A:lots", "not a number of frames"),
            ("1:A:2:3", "too many"),
        ];
        for (text, needle) in cases {
            let err = ScheduledPress::parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
        assert!(ScheduledPress::parse("1:")
            .unwrap_err()
            .to_string()
            .contains("no buttons"));
        assert!(ScheduledPress::parse("1:a++b")
            .unwrap_err()
            .to_string()
            .contains("empty part"));
    }

    #[test]
    fn holds_cover_frame_through_frame_plus_hold_minus_one() {
        let mut schedule = InputSchedule::new();
        schedule.push(ScheduledPress::parse("10:A:3").unwrap());
        schedule.push(ScheduledPress::parse("12:S").unwrap());
        assert_eq!(schedule.buttons_for_frame(9), Buttons::empty());
        assert_eq!(schedule.buttons_for_frame(10), Buttons::A);
        assert_eq!(schedule.buttons_for_frame(11), Buttons::A);
        assert_eq!(schedule.buttons_for_frame(12), Buttons::A | Buttons::START);
        assert_eq!(schedule.buttons_for_frame(13), Buttons::empty());
        assert_eq!(schedule.last_frame(), 12);
    }

    #[test]
    fn huge_holds_do_not_overflow() {
        let press = ScheduledPress::parse(&format!("{}:A:{}", u64::MAX, u64::MAX)).unwrap();
        assert!(press.covers(u64::MAX));
        assert!(!press.covers(1));
        let mut schedule = InputSchedule::new();
        schedule.push(press);
        assert_eq!(schedule.last_frame(), u64::MAX);
    }

    #[test]
    fn parses_files_with_comments_and_names_bad_lines() {
        let text =
            "# Tetris: start the game\n\n100:S   # title screen\n  160:start:2\n200:A+B:30\n";
        let schedule = InputSchedule::parse_file(text).unwrap();
        assert_eq!(schedule.presses().len(), 3);
        assert_eq!(schedule.buttons_for_frame(161), Buttons::START);
        assert_eq!(schedule.buttons_for_frame(229), Buttons::A | Buttons::B);

        let err = InputSchedule::parse_file("100:S\n\n# fine\n150:jump\n").unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.to_string().starts_with("line 4: "), "{err}");
        assert!(err.error.to_string().contains("jump"), "{err}");
    }

    #[test]
    fn display_round_trips() {
        let press = ScheduledPress::parse("42:start+a+left:5").unwrap();
        assert_eq!(press.to_string(), "42:ASL:5");
        assert_eq!(ScheduledPress::parse(&press.to_string()).unwrap(), press);
    }
}
