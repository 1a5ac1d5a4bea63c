//! On-screen messages ("State 3 saved") and status, drawn into the 256x240 picture with a
//! small built-in bitmap font.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use nes::{SCREEN_HEIGHT, SCREEN_WIDTH};

/// Glyphs are 5 pixels wide and 7 tall; each row is 5 bits, the leftmost pixel in bit 4.
const GLYPH_WIDTH: usize = 5;
const GLYPH_HEIGHT: usize = 7;
/// Character cell: glyph plus one pixel of spacing (two between lines).
const CELL_WIDTH: usize = GLYPH_WIDTH + 1;
const CELL_HEIGHT: usize = GLYPH_HEIGHT + 2;

#[rustfmt::skip]
const GLYPHS: &[(char, [u8; GLYPH_HEIGHT])] = &[
    ('A', [0b01110, 0b10001, 0b10001, 0b11111, 0b10001, 0b10001, 0b10001]),
    ('B', [0b11110, 0b10001, 0b10001, 0b11110, 0b10001, 0b10001, 0b11110]),
    ('C', [0b01110, 0b10001, 0b10000, 0b10000, 0b10000, 0b10001, 0b01110]),
    ('D', [0b11110, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b11110]),
    ('E', [0b11111, 0b10000, 0b10000, 0b11110, 0b10000, 0b10000, 0b11111]),
    ('F', [0b11111, 0b10000, 0b10000, 0b11110, 0b10000, 0b10000, 0b10000]),
    ('G', [0b01110, 0b10001, 0b10000, 0b10111, 0b10001, 0b10001, 0b01111]),
    ('H', [0b10001, 0b10001, 0b10001, 0b11111, 0b10001, 0b10001, 0b10001]),
    ('I', [0b01110, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110]),
    ('J', [0b00111, 0b00010, 0b00010, 0b00010, 0b00010, 0b10010, 0b01100]),
    ('K', [0b10001, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010, 0b10001]),
    ('L', [0b10000, 0b10000, 0b10000, 0b10000, 0b10000, 0b10000, 0b11111]),
    ('M', [0b10001, 0b11011, 0b10101, 0b10101, 0b10001, 0b10001, 0b10001]),
    ('N', [0b10001, 0b10001, 0b11001, 0b10101, 0b10011, 0b10001, 0b10001]),
    ('O', [0b01110, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01110]),
    ('P', [0b11110, 0b10001, 0b10001, 0b11110, 0b10000, 0b10000, 0b10000]),
    ('Q', [0b01110, 0b10001, 0b10001, 0b10001, 0b10101, 0b10010, 0b01101]),
    ('R', [0b11110, 0b10001, 0b10001, 0b11110, 0b10100, 0b10010, 0b10001]),
    ('S', [0b01111, 0b10000, 0b10000, 0b01110, 0b00001, 0b00001, 0b11110]),
    ('T', [0b11111, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100]),
    ('U', [0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01110]),
    ('V', [0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100]),
    ('W', [0b10001, 0b10001, 0b10001, 0b10101, 0b10101, 0b10101, 0b01010]),
    ('X', [0b10001, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001, 0b10001]),
    ('Y', [0b10001, 0b10001, 0b01010, 0b00100, 0b00100, 0b00100, 0b00100]),
    ('Z', [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b11111]),
    ('0', [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110]),
    ('1', [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110]),
    ('2', [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111]),
    ('3', [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110]),
    ('4', [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010]),
    ('5', [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110]),
    ('6', [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110]),
    ('7', [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000]),
    ('8', [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110]),
    ('9', [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100]),
    ('.', [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b01100]),
    (',', [0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b00100, 0b01000]),
    (':', [0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b01100, 0b00000]),
    ('!', [0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00000, 0b00100]),
    ('?', [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b00000, 0b00100]),
    ('-', [0b00000, 0b00000, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000]),
    ('+', [0b00000, 0b00100, 0b00100, 0b11111, 0b00100, 0b00100, 0b00000]),
    ('/', [0b00000, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b00000]),
    ('(', [0b00010, 0b00100, 0b01000, 0b01000, 0b01000, 0b00100, 0b00010]),
    (')', [0b01000, 0b00100, 0b00010, 0b00010, 0b00010, 0b00100, 0b01000]),
    ('\'', [0b00100, 0b00100, 0b01000, 0b00000, 0b00000, 0b00000, 0b00000]),
    ('"', [0b01010, 0b01010, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000]),
    ('%', [0b11000, 0b11001, 0b00010, 0b00100, 0b01000, 0b10011, 0b00011]),
    ('=', [0b00000, 0b00000, 0b11111, 0b00000, 0b11111, 0b00000, 0b00000]),
    ('_', [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b11111]),
    ('<', [0b00010, 0b00100, 0b01000, 0b10000, 0b01000, 0b00100, 0b00010]),
    ('>', [0b01000, 0b00100, 0b00010, 0b00001, 0b00010, 0b00100, 0b01000]),
    ('#', [0b01010, 0b01010, 0b11111, 0b01010, 0b11111, 0b01010, 0b01010]),
    (' ', [0; GLYPH_HEIGHT]),
];

fn glyph(c: char) -> &'static [u8; GLYPH_HEIGHT] {
    let upper = c.to_ascii_uppercase();
    GLYPHS
        .iter()
        .find(|(known, _)| *known == upper)
        .or_else(|| GLYPHS.iter().find(|(known, _)| *known == '?'))
        .map(|(_, rows)| rows)
        .expect("the font has '?'")
}

/// Characters that fit on one line of the picture.
pub const MAX_LINE_CHARS: usize = (SCREEN_WIDTH - 4) / CELL_WIDTH;

/// Draw `text` into a 256x240 RGBA picture with its top-left corner at (x, y), on a dark box
/// so it reads over any picture. Whatever falls outside the picture is clipped.
pub fn draw_text(rgba: &mut [u8], x: usize, y: usize, text: &str, colour: [u8; 3]) {
    let chars = text.chars().count();
    let box_width = chars * CELL_WIDTH + 1;
    darken(
        rgba,
        x.saturating_sub(1),
        y.saturating_sub(1),
        box_width + 1,
        CELL_HEIGHT,
    );
    for (index, c) in text.chars().enumerate() {
        let left = x + index * CELL_WIDTH;
        for (row, bits) in glyph(c).iter().enumerate() {
            for column in 0..GLYPH_WIDTH {
                if bits & (0b10000 >> column) != 0 {
                    put(rgba, left + column, y + row, colour);
                }
            }
        }
    }
}

fn put(rgba: &mut [u8], x: usize, y: usize, colour: [u8; 3]) {
    if x < SCREEN_WIDTH && y < SCREEN_HEIGHT {
        let offset = (y * SCREEN_WIDTH + x) * 4;
        rgba[offset..offset + 3].copy_from_slice(&colour);
        rgba[offset + 3] = 0xFF;
    }
}

/// Darken a rectangle to a third of its brightness.
fn darken(rgba: &mut [u8], x: usize, y: usize, width: usize, height: usize) {
    for row in y..(y + height).min(SCREEN_HEIGHT) {
        for column in x..(x + width).min(SCREEN_WIDTH) {
            let offset = (row * SCREEN_WIDTH + column) * 4;
            for channel in &mut rgba[offset..offset + 3] {
                *channel /= 3;
            }
        }
    }
}

/// Split text into lines that fit the picture's width, breaking at spaces where possible.
pub fn wrap(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_owned();
        while word.chars().count() > MAX_LINE_CHARS {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let rest = word.split_off(
                word.char_indices()
                    .nth(MAX_LINE_CHARS)
                    .map_or(0, |(i, _)| i),
            );
            lines.push(word);
            word = rest;
        }
        let needed = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if needed > MAX_LINE_CHARS {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// How long a message stays on screen.
const MESSAGE_TIME: Duration = Duration::from_millis(2500);
/// Messages shown at once (older ones scroll away).
const MAX_MESSAGES: usize = 4;

/// Messages and status shown over the picture.
#[derive(Debug, Clone, Default)]
pub struct Osd {
    messages: VecDeque<(String, Instant)>,
    /// Persistent status in the top-right corner ("PAUSED", "FAST").
    status: String,
}

impl Osd {
    /// Show a message for a few seconds (also printed to the terminal by the caller when it
    /// matters there).
    pub fn message(&mut self, text: impl Into<String>) {
        let until = Instant::now() + MESSAGE_TIME;
        let lines = wrap(&text.into());
        // The same message again (a script's `emu.message` every frame, a key held down)
        // keeps its place and stays longer instead of filling the screen with copies.
        let repeated = lines.len() <= self.messages.len()
            && self
                .messages
                .iter()
                .skip(self.messages.len() - lines.len())
                .map(|(shown, _)| shown)
                .eq(lines.iter());
        if repeated && !lines.is_empty() {
            let start = self.messages.len() - lines.len();
            for (_, expiry) in self.messages.iter_mut().skip(start) {
                *expiry = until;
            }
            return;
        }
        for line in lines {
            self.messages.push_back((line, until));
        }
        while self.messages.len() > MAX_MESSAGES {
            self.messages.pop_front();
        }
    }

    pub fn set_status(&mut self, status: &str) {
        if self.status != status {
            self.status.clear();
            self.status.push_str(status);
        }
    }

    /// Drop messages whose time is up.
    pub fn expire(&mut self, now: Instant) {
        self.messages.retain(|(_, until)| *until > now);
    }

    /// Messages on screen now.
    pub fn message_count(&self) -> usize {
        self.messages.len()
    }

    /// The messages on screen now, oldest first.
    #[cfg(test)]
    pub fn messages(&self) -> impl Iterator<Item = String> + '_ {
        self.messages.iter().map(|(text, _)| text.clone())
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.status.is_empty()
    }

    /// Draw the status (top right) and messages (bottom left) into the picture.
    pub fn draw(&self, rgba: &mut [u8]) {
        if !self.status.is_empty() {
            let width = self.status.chars().count() * CELL_WIDTH;
            draw_text(
                rgba,
                SCREEN_WIDTH - 3 - width,
                10,
                &self.status,
                [255, 255, 96],
            );
        }
        let bottom = SCREEN_HEIGHT - 10 - CELL_HEIGHT;
        for (index, (text, _)) in self.messages.iter().rev().enumerate() {
            draw_text(rgba, 3, bottom - index * CELL_HEIGHT, text, [255, 255, 255]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> Vec<u8> {
        vec![0x60; SCREEN_WIDTH * SCREEN_HEIGHT * 4]
    }

    fn lit_pixels(rgba: &[u8]) -> usize {
        rgba.chunks_exact(4).filter(|p| p[0] == 0xFF).count()
    }

    #[test]
    fn text_lights_the_glyph_pixels() {
        let mut rgba = blank();
        draw_text(&mut rgba, 10, 10, "I", [255, 255, 255]);
        // 'I' has 3 + 5 + 3 lit pixels.
        assert_eq!(lit_pixels(&rgba), 11);
        // Top bar of the I: columns 1-3 of the glyph.
        let at = |x: usize, y: usize| rgba[(y * SCREEN_WIDTH + x) * 4];
        assert_eq!(
            (at(10, 10), at(11, 10), at(13, 10), at(14, 10)),
            (0x20, 0xFF, 0xFF, 0x20)
        );
    }

    #[test]
    fn lowercase_uses_the_capitals_and_unknown_characters_show_a_question_mark() {
        assert_eq!(glyph('a'), glyph('A'));
        assert_eq!(glyph('€'), glyph('?'));
    }

    #[test]
    fn text_off_the_edge_is_clipped() {
        let mut rgba = blank();
        draw_text(&mut rgba, 250, 236, "WWWW", [255, 255, 255]);
        assert!(lit_pixels(&rgba) > 0);
    }

    #[test]
    fn long_text_wraps_at_spaces() {
        let text = "drop a .nes file onto this window or run nes play GAME.nes from a terminal";
        let lines = wrap(text);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= MAX_LINE_CHARS));
        assert_eq!(lines.join(" "), text);
        let word = "x".repeat(MAX_LINE_CHARS + 5);
        assert_eq!(wrap(&word).len(), 2);
    }

    #[test]
    fn a_repeated_message_shows_once_and_stays_longer() {
        let mut osd = Osd::default();
        osd.message("Score 100");
        let first_expiry = osd.messages[0].1;
        std::thread::sleep(Duration::from_millis(2));
        for _ in 0..10 {
            osd.message("Score 100");
        }
        assert_eq!(osd.messages.len(), 1);
        assert!(osd.messages[0].1 > first_expiry);
        osd.message("Score 200");
        osd.message("Score 100");
        assert_eq!(osd.messages.len(), 3, "not a repeat of the latest");
        let long = "a message long enough to need two lines on the screen, or even three";
        osd.message(long);
        let lines = osd.messages.len();
        osd.message(long);
        assert_eq!(osd.messages.len(), lines);
    }

    #[test]
    fn messages_expire_and_only_the_latest_few_show() {
        let mut osd = Osd::default();
        for slot in 0..6 {
            osd.message(format!("State {slot} saved"));
        }
        assert_eq!(osd.messages.len(), MAX_MESSAGES);
        assert_eq!(osd.messages.back().unwrap().0, "State 5 saved");
        osd.expire(Instant::now() + MESSAGE_TIME + Duration::from_millis(1));
        assert!(osd.is_empty());
        let mut rgba = blank();
        osd.draw(&mut rgba);
        assert_eq!(rgba, blank(), "nothing to draw");
    }
}
