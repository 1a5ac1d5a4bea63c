//! Sprite evaluation into secondary OAM, dot by dot (NESdev wiki "PPU sprite evaluation").
//!
//! On visible lines, dots 1-64 fill secondary OAM with $FF; dots 65-256 walk primary OAM with
//! OAMADDR as the (n, m) counter: odd dots read OAM, even dots write secondary OAM / decide.
//! Once eight sprites are found, the hardware keeps looking for a ninth to set the overflow
//! flag, but increments m together with n when a sprite is not in range, so it checks tile,
//! attribute and X bytes as if they were Y: the famous false positives and negatives.

use crate::{check_range, ctrl, Ppu};
use borsh::{BorshDeserialize, BorshSerialize};
use nes_state::InvalidState;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
enum EvaluationState {
    /// Looking for in-range sprites, fewer than 8 found so far.
    #[default]
    Scanning,
    /// Eight found: writes to secondary OAM are disabled, the buggy overflow search runs.
    Full,
    /// Overflow found: reading the next bytes of that sprite (steps left).
    OverflowCopy(u8),
    /// All 64 sprites examined (or overflow handled): n keeps incrementing, nothing is stored.
    Done,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub(crate) struct SpriteEvaluation {
    state: EvaluationState,
    /// The byte read from primary OAM on the previous (odd) dot.
    latch: u8,
    /// Next byte of secondary OAM to write (0-32).
    secondary_index: u8,
    /// Bytes of the current in-range sprite still to copy.
    bytes_to_copy: u8,
    /// True until the first Y comparison of the line: the sprite checked then is "sprite 0"
    /// for the hit logic.
    first_check: bool,
    sprite_zero_found: bool,
    /// Sprites found for the next line (0-8); used by the fetches at dots 257-320.
    pub sprite_count: u8,
    /// Whether secondary slot 0 holds the sprite that was checked first.
    pub sprite_zero_in_line: bool,
}

impl SpriteEvaluation {
    /// Checks an evaluation decoded from a save state (see `Ppu::validate_state`): the
    /// secondary OAM index stops at 32 (the byte after the eighth sprite), a sprite has at
    /// most 3 bytes left to copy (and so does an overflowing one), and at most 8 sprites are
    /// found. An index far past 32 would overflow its increments.
    pub(crate) fn validate_state(&self) -> Result<(), InvalidState> {
        check_range(
            "PPU sprite evaluation secondary OAM index",
            self.secondary_index,
            0..=32,
        )?;
        check_range(
            "PPU sprite evaluation bytes to copy",
            self.bytes_to_copy,
            0..=3,
        )?;
        if let EvaluationState::OverflowCopy(left) = self.state {
            check_range("PPU sprite overflow bytes to copy", left, 1..=3)?;
        }
        check_range("PPU sprites on the next line", self.sprite_count, 0..=8)
    }

    fn begin(&mut self) {
        self.state = EvaluationState::Scanning;
        self.secondary_index = 0;
        self.bytes_to_copy = 0;
        self.first_check = true;
        self.sprite_zero_found = false;
    }

    fn finish(&mut self) {
        self.sprite_count = self.secondary_index.div_ceil(4).min(8);
        self.sprite_zero_in_line = self.sprite_zero_found;
    }
}

/// Which sprites of OAM each line finds in range, for one sprite height: bit `i` of line
/// `line` is set when `line - Y < height` for sprite `i`'s Y (the evaluation's in-range test).
/// With it the whole-line evaluation goes from one sprite found to the next without a
/// comparison per sprite, and a line no sprite covers (most lines of most games) needs none.
/// Derived from OAM, so not in save states; every OAM store clears `valid`
/// (`Ppu::oam_changed`) and the next evaluation rebuilds it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct SpriteRows {
    sprites: Box<[u64; 256]>,
    height: u16,
    valid: bool,
}

impl Default for SpriteRows {
    fn default() -> Self {
        SpriteRows {
            sprites: Box::new([0; 256]),
            height: 0,
            valid: false,
        }
    }
}

impl SpriteRows {
    fn rebuild(&mut self, oam: &[u8; 256], height: u16) {
        self.sprites.fill(0);
        for (index, sprite) in oam.chunks_exact(4).enumerate() {
            let top = usize::from(sprite[0]);
            let end = (top + usize::from(height)).min(256);
            for line in &mut self.sprites[top..end] {
                *line |= 1 << index;
            }
        }
        self.height = height;
        self.valid = true;
    }

    #[cfg(debug_assertions)]
    fn of(oam: &[u8; 256], height: u16) -> SpriteRows {
        let mut rows = SpriteRows::default();
        rows.rebuild(oam, height);
        rows
    }

    /// The sprites in range on `line`, bit `i` for sprite `i`.
    fn on(&self, line: u16) -> u64 {
        self.sprites[usize::from(line & 0xFF)]
    }
}

impl Ppu {
    /// OAM was stored to: the lines its sprites cover are worked out again when next needed.
    #[inline]
    pub(crate) fn oam_changed(&mut self) {
        self.sprite_rows.valid = false;
    }

    /// The sprites of OAM in range on `line` (0-239) for sprites `height` tall, bit `i` for
    /// sprite `i`.
    fn sprites_on_line(&mut self, line: u16, height: u16) -> u64 {
        if !self.sprite_rows.valid || self.sprite_rows.height != height {
            self.sprite_rows.rebuild(&self.oam, height);
        }
        #[cfg(debug_assertions)]
        assert_eq!(
            self.sprite_rows,
            SpriteRows::of(&self.oam, height),
            "OAM changed without Ppu::oam_changed"
        );
        self.sprite_rows.on(line)
    }

    /// Runs the evaluation dots from the cursor up to (not including) `end` (at most 257).
    #[inline]
    pub(crate) fn run_evaluation_until(&mut self, end: u16) {
        let mut dot = self.evaluation_cursor;
        if dot == 1 && end == 257 {
            // Nothing observed this line's evaluation while it ran: do it in one go.
            self.evaluate_whole_line();
            self.evaluation_cursor = 257;
            return;
        }
        while dot < end {
            self.sprite_evaluation_dot(dot);
            dot += 1;
        }
        self.evaluation_cursor = dot;
    }

    /// Dots 1-256 of a visible line at once, leaving exactly the state the dot-by-dot path
    /// leaves (secondary OAM, OAMADDR, the OAM bus value, the overflow flag). The common case,
    /// an aligned OAMADDR while fewer than eight sprites are found, takes one comparison per
    /// sprite; the buggy overflow search and misaligned starts use the per-dot steps.
    fn evaluate_whole_line(&mut self) {
        // Dots 1-64: secondary OAM clear (the OAM bus reads $FF meanwhile).
        self.secondary_oam = [0xFF; 32];
        self.oam_bus = 0xFF;
        self.evaluation.begin();
        if self.oam_addr & 3 != 0 {
            self.run_evaluation_steps(65);
            return;
        }
        let height: u16 = if self.ctrl & ctrl::SPRITE_8X16 != 0 {
            16
        } else {
            8
        };
        let line = self.scanline;
        // Dots 65-256 are 96 read/write pairs. From an aligned address the scan below uses at
        // most 8 * 4 + 56 = 88 of them, so it always ends by wrapping or by filling up.
        let start = usize::from(self.oam_addr);
        let mut addr = start;
        let mut found: usize = 0;
        let mut last_read = self.oam_bus;
        // The Y of the out-of-range sprites checked since the last one found: each was
        // written to the next free slot (the write happens whatever the comparison says;
        // only the index decides whether the byte stays), so the last of them is what the
        // slot holds. Kept in a register until the scan ends.
        let mut unkept_y: Option<u8> = None;
        // The sprites from OAMADDR on that are in range, in OAM order: the scan finds them
        // one after another, up to eight; every sprite checked between two of them (or after
        // the last) was written to the next free slot and not kept.
        let mut in_range = self.sprites_on_line(line, height) & (u64::MAX << (start / 4));
        while found < 8 && in_range != 0 {
            let index = in_range.trailing_zeros() as usize;
            in_range &= in_range - 1;
            addr = index * 4;
            if addr == start {
                self.evaluation.sprite_zero_found = true;
            }
            let slot = found * 4;
            for byte in 0..4 {
                self.secondary_oam[(slot + byte) & 31] = self.oam[(addr + byte) & 0xFF];
            }
            last_read = self.oam[(addr + 3) & 0xFF];
            found += 1;
            addr += 4;
        }
        if found < 8 {
            // The scan ran to the end of OAM; unless the last sprite was found, its Y was
            // the last byte read and stays in the next free slot.
            let last_found = found > 0 && addr == 0x100;
            if !last_found {
                let last_y = self.oam[0xFC];
                unkept_y = Some(last_y);
                last_read = last_y;
            }
            addr = 0x100;
        }
        let wrapped = addr > 0xFF;
        if let Some(y) = unkept_y {
            self.secondary_oam[(found * 4) & 31] = y;
        }
        // One pair per sprite checked, three more per sprite copied.
        let pairs_used = ((addr - start) / 4 + 3 * found) as u16;
        let evaluation = &mut self.evaluation;
        evaluation.first_check = pairs_used == 0;
        evaluation.secondary_index = (found * 4) as u8;
        evaluation.bytes_to_copy = 0;
        self.oam_addr = (addr & 0xFF) as u8;
        if wrapped {
            // Done: every remaining pair reads OAM[OAMADDR] and steps OAMADDR by 4.
            let remaining = 96 - pairs_used;
            let mut bus_value = last_read;
            if remaining > 0 {
                let last_addr = self.oam_addr.wrapping_add(((remaining - 1) * 4) as u8);
                last_read = self.oam[usize::from(last_addr)];
                self.oam_addr = self.oam_addr.wrapping_add((remaining * 4) as u8);
                // The last write cycle read secondary OAM (see evaluation_write_step).
                bus_value = self.secondary_oam[usize::from(evaluation.secondary_index) & 31];
            }
            evaluation.state = EvaluationState::Done;
            evaluation.latch = last_read;
            self.oam_bus = bus_value;
            evaluation.finish();
        } else {
            // Eight found: the buggy overflow search runs from here.
            evaluation.state = EvaluationState::Full;
            evaluation.latch = last_read;
            self.oam_bus = last_read;
            self.run_overflow_search(96 - pairs_used, height);
        }
    }

    /// The last `pairs` read/write pairs of a line whose secondary OAM is full (state
    /// `Full`), ending on dot 256: the overflow search of `evaluation_write_step`, one pair
    /// per loop turn while it lasts, then the `Done` pairs in one step (each reads
    /// OAM[OAMADDR] and adds 4). Writes are disabled throughout, so each write cycle reads
    /// secondary OAM at the index the search stopped at, and the OAM bus ends on that byte.
    fn run_overflow_search(&mut self, mut pairs: u16, height: u16) {
        let line = self.scanline;
        let mut state = self.evaluation.state;
        let mut latch = self.evaluation.latch;
        let mut addr = self.oam_addr;
        while pairs > 0 && state != EvaluationState::Done {
            latch = self.oam[usize::from(addr)];
            pairs -= 1;
            match state {
                EvaluationState::Full => {
                    if line.wrapping_sub(u16::from(latch)) < height {
                        self.sprite_overflow = true;
                        state = EvaluationState::OverflowCopy(3);
                        addr = addr.wrapping_add(1);
                    } else {
                        // The hardware bug: n and m both increment, m without carrying.
                        let n = ((addr >> 2) + 1) & 0x3F;
                        addr = (n << 2) | (addr.wrapping_add(1) & 3);
                        if n == 0 {
                            state = EvaluationState::Done;
                        }
                    }
                }
                EvaluationState::OverflowCopy(left) if left > 1 => {
                    addr = addr.wrapping_add(1);
                    state = EvaluationState::OverflowCopy(left - 1);
                }
                // The copy's last step: "+1, then clear the low two bits".
                EvaluationState::OverflowCopy(_) => {
                    addr = addr.wrapping_add(1) & 0xFC;
                    state = EvaluationState::Done;
                }
                EvaluationState::Scanning | EvaluationState::Done => {}
            }
        }
        if pairs > 0 {
            // Done: read OAM[OAMADDR], then OAMADDR += 4, for each pair left.
            latch = self.oam[usize::from(addr.wrapping_add(((pairs - 1) * 4) as u8))];
            addr = addr.wrapping_add((pairs * 4) as u8);
        }
        self.oam_addr = addr;
        let evaluation = &mut self.evaluation;
        evaluation.state = state;
        evaluation.latch = latch;
        self.oam_bus = self.secondary_oam[usize::from(evaluation.secondary_index) & 31];
        evaluation.finish();
    }

    /// The per-dot evaluation steps from `first_dot` through dot 256.
    fn run_evaluation_steps(&mut self, first_dot: u16) {
        for dot in first_dot..=256 {
            self.sprite_evaluation_dot(dot);
        }
    }

    /// The sprite-evaluation work of visible-line dot `dot` (1-256) with rendering enabled.
    #[inline]
    pub(crate) fn sprite_evaluation_dot(&mut self, dot: u16) {
        if dot <= 64 {
            // Secondary OAM clear: reads of the OAM bus return $FF, even dots store it.
            self.oam_bus = 0xFF;
            if dot & 1 == 0 {
                let index = usize::from((dot >> 1) - 1) & 31;
                self.secondary_oam[index] = 0xFF;
            }
            if dot == 64 {
                self.evaluation.begin();
            }
            return;
        }
        if dot & 1 == 1 {
            let value = self.oam[usize::from(self.oam_addr)];
            self.evaluation.latch = value;
            self.oam_bus = value;
        } else {
            self.evaluation_write_step();
        }
        if dot == 256 {
            self.evaluation.finish();
        }
    }

    /// The even-dot half of an evaluation step: store and/or compare the byte just read.
    fn evaluation_write_step(&mut self) {
        let height: u16 = if self.ctrl & ctrl::SPRITE_8X16 != 0 {
            16
        } else {
            8
        };
        let value = self.evaluation.latch;
        let in_range = self.scanline.wrapping_sub(u16::from(value)) < height;
        if self.evaluation.state != EvaluationState::Scanning {
            // Writes to secondary OAM are disabled: the write cycle reads it instead, at the
            // index where the search stopped, and that is what the OAM bus shows
            // (AccuracyCoin "$2004 Stress Test").
            self.oam_bus = self.secondary_oam[usize::from(self.evaluation.secondary_index) & 31];
        }
        let eval = &mut self.evaluation;
        match eval.state {
            EvaluationState::Scanning => {
                // The byte is written whether or not it belongs to an in-range sprite; only
                // the secondary index decides whether it stays.
                self.secondary_oam[usize::from(eval.secondary_index) & 31] = value;
                if eval.bytes_to_copy > 0 {
                    eval.bytes_to_copy -= 1;
                    eval.secondary_index += 1;
                    let (next, wrapped) = self.oam_addr.overflowing_add(1);
                    self.oam_addr = next;
                    if eval.bytes_to_copy == 0 {
                        if wrapped {
                            eval.state = EvaluationState::Done;
                        } else if eval.secondary_index >= 32 {
                            eval.state = EvaluationState::Full;
                        }
                    }
                } else {
                    let first = std::mem::replace(&mut eval.first_check, false);
                    if in_range {
                        eval.sprite_zero_found |= first;
                        eval.secondary_index += 1;
                        eval.bytes_to_copy = 3;
                        self.oam_addr = self.oam_addr.wrapping_add(1);
                    } else {
                        let (next, wrapped) = self.oam_addr.overflowing_add(4);
                        self.oam_addr = next;
                        if wrapped {
                            eval.state = EvaluationState::Done;
                        }
                    }
                }
            }
            EvaluationState::Full => {
                if in_range {
                    self.sprite_overflow = true;
                    eval.state = EvaluationState::OverflowCopy(3);
                    self.oam_addr = self.oam_addr.wrapping_add(1);
                } else {
                    // The hardware bug: n and m both increment, m without carrying into n.
                    let n = ((self.oam_addr >> 2) + 1) & 0x3F;
                    let m = self.oam_addr.wrapping_add(1) & 3;
                    self.oam_addr = (n << 2) | m;
                    if n == 0 {
                        eval.state = EvaluationState::Done;
                    }
                }
            }
            EvaluationState::OverflowCopy(left) => {
                if left <= 1 {
                    // The copy ends with the counter's "+1, then clear the low two bits"
                    // step (AccuracyCoin "$2004 Stress Test": three bytes after the
                    // overflowing Y the next read is from an aligned address again).
                    self.oam_addr = self.oam_addr.wrapping_add(1) & 0xFC;
                    eval.state = EvaluationState::Done;
                } else {
                    self.oam_addr = self.oam_addr.wrapping_add(1);
                    eval.state = EvaluationState::OverflowCopy(left - 1);
                }
            }
            EvaluationState::Done => {
                self.oam_addr = self.oam_addr.wrapping_add(4);
            }
        }
    }

    /// Sprites found for the next scanline by the last evaluation (0-8).
    pub fn sprites_on_next_line(&self) -> u8 {
        self.evaluation.sprite_count
    }
}

#[cfg(test)]
mod tests {
    use super::{EvaluationState, SpriteEvaluation};
    use crate::test_support::{run_to, FlatBus};
    use crate::Ppu;

    /// A PPU with sprites rendering on, the warm-up skipped and `oam` loaded, stopped at the
    /// end of evaluation (dot 257) of `scanline`.
    fn evaluate(oam: &[u8; 256], ctrl: u8, scanline: u16) -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        let mut bus = FlatBus::new();
        ppu.set_warmup(false);
        ppu.write_register(0x2000, ctrl, &mut bus);
        ppu.write_register(0x2003, 0, &mut bus);
        for &byte in oam.iter() {
            ppu.write_register(0x2004, byte, &mut bus);
        }
        ppu.write_register(0x2001, 0x18, &mut bus);
        run_to(&mut ppu, &mut bus, scanline, 257);
        (ppu, bus)
    }

    fn hidden_oam() -> [u8; 256] {
        // Y = $F0 is never in range on a visible line.
        let mut oam = [0u8; 256];
        for sprite in oam.chunks_exact_mut(4) {
            sprite.copy_from_slice(&[0xF0, 0, 0, 0]);
        }
        oam
    }

    #[test]
    fn secondary_oam_holds_in_range_sprites_in_oam_order() {
        let mut oam = hidden_oam();
        oam[4 * 3..4 * 3 + 4].copy_from_slice(&[20, 0x11, 0x03, 40]);
        oam[4 * 9..4 * 9 + 4].copy_from_slice(&[27, 0x22, 0xE3, 50]);
        oam[4 * 10..4 * 10 + 4].copy_from_slice(&[28, 0x33, 0x00, 60]); // one line too low
        let (ppu, _) = evaluate(&oam, 0, 27);
        let secondary = ppu.secondary_oam();
        assert_eq!(&secondary[0..8], &[20, 0x11, 0x03, 40, 27, 0x22, 0xE3, 50]);
        // The next slot received the Y of the last sprite checked (the write is not gated),
        // the rest stays $FF.
        assert_eq!(&secondary[9..32], &[0xFF; 23]);
        assert_eq!(ppu.sprites_on_next_line(), 2);
        assert!(!ppu.evaluation.sprite_zero_in_line);
        assert!(!ppu.sprite_overflow);
    }

    #[test]
    fn sprite_zero_is_flagged_and_8x16_doubles_the_range() {
        let mut oam = hidden_oam();
        oam[0..4].copy_from_slice(&[10, 1, 0, 0]);
        let (ppu, _) = evaluate(&oam, 0x20, 25);
        assert_eq!(ppu.sprites_on_next_line(), 1);
        assert!(ppu.evaluation.sprite_zero_in_line);
        let (ppu, _) = evaluate(&oam, 0x00, 25);
        assert_eq!(ppu.sprites_on_next_line(), 0);
    }

    #[test]
    fn eight_sprite_limit_and_overflow_flag() {
        let mut oam = hidden_oam();
        for n in 0..9 {
            oam[n * 4..n * 4 + 4].copy_from_slice(&[50, n as u8, 0, n as u8 * 8]);
        }
        let (ppu, _) = evaluate(&oam, 0, 50);
        assert_eq!(ppu.sprites_on_next_line(), 8);
        for slot in 0..8 {
            assert_eq!(ppu.secondary_oam()[slot * 4 + 1], slot as u8);
        }
        assert!(ppu.sprite_overflow, "a 9th sprite in range sets the flag");

        // Exactly eight: no overflow.
        let mut oam8 = oam;
        oam8[8 * 4] = 0xF0;
        let (ppu, _) = evaluate(&oam8, 0, 50);
        assert_eq!(ppu.sprites_on_next_line(), 8);
        assert!(!ppu.sprite_overflow);
    }

    #[test]
    fn overflow_bug_false_negative() {
        // Eight in range, then sprite 8 out of range: the search moves to sprite 9 byte 1
        // (m incremented). Sprite 9 has an in-range Y but an out-of-range tile byte, so the
        // real ninth sprite is missed.
        let mut oam = hidden_oam();
        for n in 0..8 {
            oam[n * 4..n * 4 + 4].copy_from_slice(&[50, 0xF0, 0, 0]);
        }
        oam[9 * 4..9 * 4 + 4].copy_from_slice(&[50, 0xF0, 0xF0, 0xF0]);
        let (ppu, _) = evaluate(&oam, 0, 50);
        assert_eq!(ppu.sprites_on_next_line(), 8);
        assert!(
            !ppu.sprite_overflow,
            "the diagonal search skipped the 9th in-range sprite"
        );
    }

    #[test]
    fn overflow_bug_false_positive() {
        // Eight in range, sprite 8 out of range; the search then reads sprite 9's *tile*
        // byte as a Y coordinate. A tile number that happens to be in range sets the flag
        // although no ninth sprite is on the line.
        let mut oam = hidden_oam();
        for n in 0..8 {
            oam[n * 4..n * 4 + 4].copy_from_slice(&[50, 0xF0, 0, 0]);
        }
        oam[9 * 4..9 * 4 + 4].copy_from_slice(&[0xF0, 47, 0, 0]);
        let (ppu, _) = evaluate(&oam, 0, 50);
        assert!(ppu.sprite_overflow);
    }

    /// The whole-line fast path must leave exactly the state the dot-by-dot path leaves.
    #[test]
    fn whole_line_evaluation_matches_the_per_dot_steps() {
        let mut seed = 0x1234_5678u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 24) as u8
        };
        for case in 0..3000u32 {
            let mut ppu = Ppu::new();
            ppu.set_warmup(false);
            let line = u16::from(next()) % 240;
            let density = next() % 5;
            for byte in 0..256 {
                let value = next();
                ppu.oam[byte] = match density {
                    0 => value,
                    // No sprite on the line: each Y is below it or 56+ lines above it.
                    4 => (line as u8).wrapping_add(1 + value % 200),
                    // Many Y values near the line: fills secondary OAM and overflows.
                    _ => (line as u8).wrapping_sub(value % (8 * density + 4)),
                };
            }
            ppu.ctrl = if case % 2 == 0 { 0 } else { 0x20 };
            ppu.oam_addr = match case % 5 {
                0 | 1 => 0,
                2 => next() & 0xFC,
                _ => next(),
            };
            ppu.scanline = line;
            ppu.secondary_oam = [next(); 32];
            let mut slow = ppu.clone();
            ppu.evaluation_cursor = 1;
            ppu.run_evaluation_until(257);
            for dot in 1..=256 {
                slow.sprite_evaluation_dot(dot);
            }
            assert_eq!(ppu.secondary_oam, slow.secondary_oam, "case {case}");
            assert_eq!(ppu.oam_addr, slow.oam_addr, "case {case}");
            assert_eq!(ppu.oam_bus, slow.oam_bus, "case {case}");
            assert_eq!(ppu.sprite_overflow, slow.sprite_overflow, "case {case}");
            assert_eq!(ppu.evaluation, slow.evaluation, "case {case}");
        }
    }

    /// The lines sprites cover are cached between lines: a `$2004` store or the OAM row
    /// corruption must make the next evaluation see the new OAM.
    #[test]
    fn evaluation_sees_oam_stores_after_the_covered_lines_were_cached() {
        let mut oam = hidden_oam();
        oam[8..12].copy_from_slice(&[0xF0, 0x22, 0x01, 30]);
        let (mut ppu, mut bus) = evaluate(&oam, 0, 40);
        assert_eq!(ppu.evaluation.sprite_count, 0);
        // A $2004 store as outside rendering: sprite 2's Y moves onto line 40.
        ppu.rendering_enabled = false;
        ppu.oam_addr = 8;
        ppu.write_register(0x2004, 38, &mut bus);
        ppu.rendering_enabled = true;
        ppu.oam_addr = 0;
        ppu.run_evaluation_until(257);
        assert_eq!(ppu.evaluation.sprite_count, 0, "the cursor was at 257");
        ppu.evaluation_cursor = 1;
        ppu.run_evaluation_until(257);
        assert_eq!(ppu.evaluation.sprite_count, 1);
        assert_eq!(ppu.secondary_oam[..4], [38, 0x22, 0x01, 30]);
        // Row 0 (sprites 0 and 1) copied over row 1 (sprites 2 and 3): none on line 40 again.
        ppu.oam_corruption_rows = 1 << 1;
        ppu.corrupt_oam_rows();
        ppu.evaluation_cursor = 1;
        ppu.run_evaluation_until(257);
        assert_eq!(ppu.evaluation.sprite_count, 0);
    }

    #[test]
    fn after_the_search_ends_write_cycles_show_secondary_oam() {
        // No sprite in range: every Y is written to secondary slot 0, the last one being
        // sprite 63's. After OAMADDR wraps the reads walk OAM again (all $F0) but the write
        // cycles read secondary OAM, so the bus ends on $F1.
        let mut oam = hidden_oam();
        oam[63 * 4] = 0xF1;
        let (ppu, _) = evaluate(&oam, 0, 30);
        assert_eq!(ppu.secondary_oam()[0], 0xF1);
        assert_eq!(ppu.oam_bus, 0xF1);
        assert_eq!(ppu.oam_addr, 0x80, "32 more steps of 4 after the wrap");
    }

    #[test]
    fn overflow_copy_realigns_oamaddr() {
        // Eight in range, then sprite 8 in range too: the flag sets, three more bytes are
        // read, and the last step clears the low address bits (from $21 + 3 to $20 + 4...).
        let mut oam = hidden_oam();
        for n in 0..9 {
            oam[n * 4..n * 4 + 4].copy_from_slice(&[50, 0, 0, 0]);
        }
        let mut ppu = Ppu::new();
        let mut bus = FlatBus::new();
        ppu.set_warmup(false);
        ppu.write_register(0x2003, 0, &mut bus);
        for &byte in oam.iter() {
            ppu.write_register(0x2004, byte, &mut bus);
        }
        ppu.write_register(0x2001, 0x18, &mut bus);
        // Eight copies take dots 65-128; sprite 8's Y is checked on dots 129-130, its next
        // bytes on 131-136.
        run_to(&mut ppu, &mut bus, 50, 137);
        assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x20, 0x20);
        assert_eq!(ppu.oam_addr & 3, 0, "realigned after the overflow copy");
    }

    #[test]
    fn evaluation_clears_secondary_oam_each_line() {
        let mut oam = hidden_oam();
        oam[0..4].copy_from_slice(&[30, 7, 1, 9]);
        let (mut ppu, mut bus) = evaluate(&oam, 0, 30);
        assert_eq!(&ppu.secondary_oam()[0..4], &[30, 7, 1, 9]);
        run_to(&mut ppu, &mut bus, 40, 257);
        assert_eq!(ppu.sprites_on_next_line(), 0);
        assert_eq!(&ppu.secondary_oam()[1..4], &[0xFF; 3]);
    }

    #[test]
    fn state_fields_out_of_range_are_refused() {
        let (ppu, _) = evaluate(&[0x10; 256], 0, 0x10);
        assert_eq!(ppu.evaluation.validate_state(), Ok(()));
        type Edit = fn(&mut SpriteEvaluation);
        let cases: [(Edit, &str); 3] = [
            // Incremented while copying: 255 would overflow.
            (
                |e| e.secondary_index = 255,
                "PPU sprite evaluation secondary OAM index 255 is out of range 0..=32",
            ),
            (
                |e| e.bytes_to_copy = 4,
                "PPU sprite evaluation bytes to copy 4 is out of range 0..=3",
            ),
            (
                |e| e.state = EvaluationState::OverflowCopy(0),
                "PPU sprite overflow bytes to copy 0 is out of range 1..=3",
            ),
        ];
        for (edit, message) in cases {
            let mut evaluation = ppu.evaluation.clone();
            edit(&mut evaluation);
            assert_eq!(
                evaluation.validate_state().map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
    }
}
