//! The `gui.*` overlay, drawn and composited the way FCEUX 2.6.5 does (measured with
//! `emu.getscreenpixel` and `gui.getpixel` on `tests/fceux/roms/black.nes`; the parity scripts
//! `tests/fceux/lua/gui_*.lua` keep the measurements).
//!
//! - One 256x240 RGBA canvas (FCEUX's `gui_data`). Every drawing call first "prepares" it: if
//!   nothing was drawn since the last display, the canvas is cleared. Pixels blend into it with
//!   [`blend_into`].
//! - The display (after `gui.register`'s callback, at the end of each frame) shows the canvas
//!   if something was drawn since the previous display; if nothing was, the canvas is cleared
//!   and nothing is shown. So a drawing made in the main loop before `emu.frameadvance()` (or in
//!   `registerbefore`, memory hooks or `gui.register`) shows on exactly one frame: the next one
//!   displayed. `gui.getpixel` reads the canvas, so it still sees a drawing after the display
//!   that showed it, until the next drawing call or the next empty display clears it.
//! - Compositing blends each canvas pixel over the picture and replaces it by the nearest
//!   colour of FCEUX's 8-bit palette ([`ColourTable`]): the overlay only ever shows those 255
//!   colours.

mod font;

use std::cell::RefCell;

use nes::Palette;

const WIDTH: usize = 256;
const HEIGHT: usize = 240;
/// Lines of `gui.text` are this far apart.
const LINE_HEIGHT: i64 = 8;
/// A tab moves the pen to the next multiple of this many pixels from the text's x (FCEUX
/// counts in 8-pixel cells, 8 cells a tab).
const TAB_WIDTH: i64 = 64;

/// Lines whose int arithmetic overflows in FCEUX are stepped through one by one, up to this
/// many steps.
const OVERFLOWING_STEPS: i64 = 1 << 24;

/// One axis of a `gui.line`, as FCEUX steps along it.
struct Axis {
    start: i32,
    end: i32,
    /// Twice the (int) difference's absolute value, in an int.
    double: i32,
    /// The way from start to end: 1 or -1.
    step: i32,
    /// Whether the int difference end - start is negative.
    backwards: bool,
}

/// An RGBA colour, straight alpha.
pub(crate) type Rgba = [u8; 4];

/// Whether the canvas holds anything to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Canvas {
    /// Cleared (or never drawn on): the next display shows nothing.
    Clear,
    /// Drawn on since the last display: the next display shows it.
    Drawn,
    /// Shown by the last display and not drawn on since: the next display clears it.
    Shown,
}

/// The overlay: the canvas scripts draw on and what the last display showed.
#[derive(Clone)]
pub struct Overlay {
    canvas: Vec<u8>,
    state: Canvas,
    shown: Vec<u8>,
    shown_drawn: bool,
    /// What the last display made of each shown pixel over the picture: the colour and the
    /// 8-bit palette entry (`None`: not drawn).
    composited: Vec<Option<([u8; 3], u8)>>,
    /// FCEUX's `transparencyModifier` (`gui.opacity`, `gui.transparency`): colour alphas are
    /// scaled by it / 255 when a drawing call reads its colours. 255 is opaque; it may exceed 255.
    pub(crate) alpha_scale: i32,
    colours: Option<Box<ColourTable>>,
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlay")
            .field("state", &self.state)
            .field("shown_drawn", &self.shown_drawn)
            .field("alpha_scale", &self.alpha_scale)
            .finish_non_exhaustive()
    }
}

impl Default for Overlay {
    fn default() -> Self {
        Overlay {
            canvas: vec![0; WIDTH * HEIGHT * 4],
            state: Canvas::Clear,
            shown: vec![0; WIDTH * HEIGHT * 4],
            shown_drawn: false,
            composited: vec![None; WIDTH * HEIGHT],
            alpha_scale: 255,
            colours: None,
        }
    }
}

/// FCEUX's pixel write (`blend32`): an opaque colour, or any colour onto a transparent pixel,
/// replaces it (alpha included); a transparent colour leaves it; otherwise "over" compositing
/// in integers, rounded to nearest.
fn blend_into(dst: &mut [u8], [r, g, b, a]: Rgba) {
    if a == 255 || dst[3] == 0 {
        dst.copy_from_slice(&[r, g, b, a]);
    } else if a != 0 {
        let a = u32::from(a);
        let kept = ((255 - a) * u32::from(dst[3]) + 128) / 255;
        let total = a + kept;
        for (channel, value) in dst.iter_mut().zip([r, g, b]) {
            *channel =
                ((u32::from(*channel) * kept + u32::from(value) * a + total / 2) / total) as u8;
        }
        dst[3] = total as u8;
    }
}

impl Overlay {
    /// Use `palette` for the colour table compositing snaps to and for `P00`-`P7F`.
    pub(crate) fn set_palette(&mut self, palette: &Palette) {
        self.colours = Some(Box::new(ColourTable::new(palette)));
    }

    /// Entry `index` (0-255) of the 8-bit palette (`P00`-`P7F` are entries 128-255).
    pub(crate) fn palette_entry(&self, index: usize) -> Option<[u8; 3]> {
        self.colours.as_ref().map(|table| table.entries[index])
    }

    /// What every drawing call does first (FCEUX's `gui_prepare`).
    pub(crate) fn prepare(&mut self) {
        if self.state != Canvas::Drawn {
            self.canvas.fill(0);
            self.state = Canvas::Drawn;
        }
    }

    /// The display at the end of a frame; `under(i)` is the colour of pixel i (y * 256 + x) of
    /// the frame's picture. FCEUX composites the whole overlay at every display, top row first,
    /// left to right, which matters through the colour cache of [`ColourTable`] (measured: of
    /// two colours of one cell drawn on one frame the upper left one decides, wherever the other
    /// was drawn first, and a drawing nobody reads still fills the cache).
    pub(crate) fn present(&mut self, under: impl Fn(usize) -> [u8; 3]) {
        match self.state {
            Canvas::Clear => self.shown_drawn = false,
            Canvas::Shown => {
                self.canvas.fill(0);
                self.state = Canvas::Clear;
                self.shown_drawn = false;
            }
            Canvas::Drawn => {
                self.shown.copy_from_slice(&self.canvas);
                self.shown_drawn = true;
                self.state = Canvas::Shown;
                for (i, pixel) in self.shown.chunks_exact(4).enumerate() {
                    self.composited[i] = (pixel[3] != 0).then(|| {
                        let [r, g, b, alpha] = [pixel[0], pixel[1], pixel[2], pixel[3]];
                        composite_over([r, g, b], alpha, under(i), self.colours.as_deref())
                    });
                }
            }
        }
    }

    /// The script's main chunk returned: what it drew is not shown (the canvas keeps it for
    /// `gui.getpixel` until the next drawing call).
    pub(crate) fn clear_pending(&mut self) {
        self.state = Canvas::Clear;
    }

    /// The canvas as the last display showed it (RGBA, straight alpha; all zero if it showed
    /// nothing).
    pub(crate) fn shown(&self) -> &[u8] {
        &self.shown
    }

    /// Composite what the last display showed over a 256x240 RGBA picture, as that display
    /// composited it.
    pub(crate) fn composite(&self, rgba: &mut [u8]) {
        if !self.shown_drawn {
            return;
        }
        for (dst, pixel) in rgba.chunks_exact_mut(4).zip(&self.composited) {
            if let Some((rgb, _)) = pixel {
                dst[..3].copy_from_slice(rgb);
            }
        }
    }

    /// What the last display showed at (x, y) (on the screen), with the 8-bit palette entry it
    /// became (`emu.getscreenpixel` returns it `& 0x3F` as its 4th value: measured 22 for
    /// white, 19 for "purple", 1 for "P41"); `None` where it showed nothing.
    pub(crate) fn composite_pixel(&self, x: usize, y: usize) -> Option<([u8; 3], u8)> {
        if self.shown_drawn {
            self.composited[y * WIDTH + x]
        } else {
            None
        }
    }

    /// The canvas pixel (what `gui.getpixel` reads); `None` off the screen.
    pub(crate) fn pixel(&self, x: i64, y: i64) -> Option<Rgba> {
        if !(0..WIDTH as i64).contains(&x) || !(0..HEIGHT as i64).contains(&y) {
            return None;
        }
        let i = (y as usize * WIDTH + x as usize) * 4;
        let mut pixel = [0; 4];
        pixel.copy_from_slice(&self.canvas[i..i + 4]);
        Some(pixel)
    }

    /// Blend `colour` into the canvas at (x, y); nothing off the screen.
    #[inline]
    pub(crate) fn blend(&mut self, x: i64, y: i64, colour: Rgba) {
        if (0..WIDTH as i64).contains(&x) && (0..HEIGHT as i64).contains(&y) {
            let i = (y as usize * WIDTH + x as usize) * 4;
            blend_into(&mut self.canvas[i..i + 4], colour);
        }
    }

    /// `gui.line`: from (x1, y1) to (x2, y2), both ends included unless `skip_first` leaves out
    /// the first. FCEUX's stepping (measured, `tests/fceux/lua/gui_draw.lua`): the longer axis
    /// advances one pixel a step; the shorter one follows an error term that starts at
    /// `2*minor - major` and moves when it is positive (or zero, stepping towards +x/+y).
    /// When the error is exactly zero, FCEUX also plots the corner pixel that makes the line
    /// 4-connected: before the step when going towards +, after it when going towards -, where
    /// that pixel may be one the line plots anyway (and a translucent line then blends it twice).
    ///
    /// FCEUX computes the differences, their doubles and the error term in C ints, so lines
    /// spanning 2^30 pixels or more go astray (measured: (3, 1) to (2^31-1, 5) comes out
    /// vertical, (3, 1) to (2^31-1, 1) as its first pixel alone); the same wrapping arithmetic
    /// is used here. FCEUX plots every pixel of the line, on the screen or not (gui.line(0, 0,
    /// 1e12, 0) takes it 0.6 s); only the part on the screen is stepped through here.
    pub(crate) fn line(
        &mut self,
        x1: i32,
        y1: i32,
        x2: i32,
        y2: i32,
        colour: Rgba,
        skip_first: bool,
    ) {
        if x1 == x2 && y1 == y2 {
            // A single point is drawn even with skip_first.
            self.blend(i64::from(x1), i64::from(y1), colour);
            return;
        }
        if !skip_first {
            self.blend(i64::from(x1), i64::from(y1), colour);
        }
        let (dx, dy) = (x2.wrapping_sub(x1), y2.wrapping_sub(y1));
        let (double_x, double_y) = (
            dx.wrapping_abs().wrapping_mul(2),
            dy.wrapping_abs().wrapping_mul(2),
        );
        let (step_x, step_y) = (if x2 > x1 { 1 } else { -1 }, if y2 > y1 { 1 } else { -1 });
        let (x_axis, y_axis) = (
            Axis {
                start: x1,
                end: x2,
                double: double_x,
                step: step_x,
                backwards: dx < 0,
            },
            Axis {
                start: y1,
                end: y2,
                double: double_y,
                step: step_y,
                backwards: dy < 0,
            },
        );
        if double_x >= double_y {
            self.step_line(&x_axis, &y_axis, true, colour);
        } else {
            self.step_line(&y_axis, &x_axis, false, colour);
        }
    }

    /// The stepping of [`Overlay::line`] along `major`, after its first pixel.
    fn step_line(&mut self, major: &Axis, minor: &Axis, x_major: bool, colour: Rgba) {
        let (start, step) = (i64::from(major.start), i64::from(major.step));
        let steps = (i64::from(major.end) - start).abs();
        // Step j (from 0) plots only at major coordinate start + (j + 1) * step: the steps that
        // plot on the screen.
        let size = if x_major { WIDTH } else { HEIGHT } as i64;
        let (first, last) = if step > 0 {
            (-start - 1, size - 2 - start)
        } else {
            (start - size, start - 1)
        };
        let (first, last) = (first.max(0), last.min(steps - 1));
        if first > last {
            return;
        }
        let (p, q) = (major.double, minor.double);
        let forwards = step > 0;
        let mut error = q.wrapping_sub(p >> 1);
        let mut position = minor.start;
        let fits = |axis: &Axis| (i64::from(axis.end) - i64::from(axis.start)).abs() < 1 << 30;
        let from = if fits(major) && fits(minor) {
            // No int overflow: p >= q >= 0, p > 0, and after the stepping decision of step j
            // the error is e0 + j*q - S*p in [-p, 0) going forwards or (-p, 0] backwards, with S
            // the minor steps so far. So the state at step `first` follows without the steps
            // before it.
            if first > 0 {
                let (p, q) = (i64::from(p), i64::from(q));
                let before = i64::from(error) + (first - 1) * q;
                let moved = if forwards {
                    before.div_euclid(p) + 1
                } else {
                    -(-before).div_euclid(p)
                };
                error = (i64::from(error) + first * q - moved * p) as i32;
                position = (i64::from(position) + moved * i64::from(minor.step)) as i32;
            }
            first
        } else if last < OVERFLOWING_STEPS {
            // Overflowing arithmetic: stepped from the start.
            0
        } else {
            // An overflowing line whose part on the screen is more than 2^24 steps from its
            // start: not drawn (FCEUX would spend seconds on it).
            return;
        };
        let plot = |overlay: &mut Overlay, along: i64, across: i32| {
            let across = i64::from(across);
            if x_major {
                overlay.blend(along, across, colour);
            } else {
                overlay.blend(across, along, colour);
            }
        };
        for j in from..=last {
            let along = start + j * step;
            if error == 0 && !major.backwards {
                plot(self, along + step, position);
            }
            if error > 0 || (error == 0 && forwards) {
                position = position.wrapping_add(minor.step);
                error = error.wrapping_sub(p);
            }
            plot(self, along + step, position);
            if error == 0 && major.backwards {
                plot(self, along + step, position.wrapping_add(minor.step));
            }
            error = error.wrapping_add(q);
        }
    }

    /// `gui.box`: corners in any order; the outline is four lines (so each corner is plotted
    /// twice), the fill the inside, drawn after the outline, only when the box is at least 3
    /// pixels each way.
    pub(crate) fn rect(&mut self, x1: i32, y1: i32, x2: i32, y2: i32, fill: Rgba, outline: Rgba) {
        let (left, right) = (x1.min(x2), x1.max(x2));
        let (top, bottom) = (y1.min(y2), y1.max(y2));
        // FCEUX moves off-screen sides to just outside the screen before drawing the outline.
        let (l, t) = (left.max(-1), top.max(-1));
        let (r, b) = (right.min(WIDTH as i32), bottom.min(HEIGHT as i32));
        self.line(l, t, r, t, outline, false);
        self.line(l, b, r, b, outline, false);
        self.line(l, t, l, b, outline, false);
        self.line(r, t, r, b, outline, false);
        // FCEUX's size check is int arithmetic on the unmoved sides: a box spanning 2^31 pixels
        // or more has no fill (measured: (-2^31, -2^31) to (2^31-1, 2^31-1) draws nothing).
        if right.wrapping_sub(left) >= 2 && bottom.wrapping_sub(top) >= 2 {
            let (left, right, top, bottom) = (
                i64::from(left),
                i64::from(right),
                i64::from(top),
                i64::from(bottom),
            );
            let (fill_left, fill_right) = ((left + 1).max(0), (right - 1).min(WIDTH as i64 - 1));
            let (fill_top, fill_bottom) = ((top + 1).max(0), (bottom - 1).min(HEIGHT as i64 - 1));
            for y in fill_top..=fill_bottom {
                for x in fill_left..=fill_right {
                    self.blend(x, y, fill);
                }
            }
        }
    }

    /// `gui.text`: `text` (bytes, up to the first NUL) from (x, y); returns the pen's x after
    /// it, which `gui.text` returns. FCEUX's layout, measured (`gui_text.lua`):
    /// - each glyph fills its whole cell (ink in `fg`, the rest in `bg`, never both on one
    ///   pixel); around the cells of a line `bg` adds a 1-pixel halo: the row above and the row
    ///   below each glyph, from one pixel left of it to its right edge (so a translucent `bg`
    ///   is blended twice where two glyphs' halos meet), and the column left of a glyph that
    ///   starts at the text's x;
    /// - `\n` starts a new line 8 pixels lower at the text's x, `\t` moves to the next multiple
    ///   of 64 pixels from the text's x (neither draws anything);
    /// - at the right edge a glyph is cut to the columns left on screen and the pen stops at
    ///   256; glyphs beyond it are skipped up to the next `\n` (one zero-width glyph is still
    ///   "drawn" there, so its halo column at x = 255 shows); text is not moved on screen;
    /// - at the bottom, a line starting at y > 233 shows only the rows left on screen and no
    ///   halo rows; lines at y >= 240 end the text;
    /// - coordinates are C ints, see `room` below.
    ///
    /// Nothing is drawn when both colours are fully transparent.
    pub(crate) fn text(&mut self, x: i32, y: i32, text: &[u8], fg: Rgba, bg: Rgba) -> i32 {
        if fg[3] == 0 && bg[3] == 0 {
            return x;
        }
        let text = text.split(|&byte| byte == 0).next().unwrap_or_default();
        let byte_at = |i: usize| text.get(i).copied().unwrap_or(0);
        let origin = i64::from(x);
        let (mut x, mut y) = (origin, i64::from(y));
        // The room left on the screen is an int difference in FCEUX, which overflows for a pen
        // near INT_MIN: then there is no room (measured: from x < -2^31 + 257 nothing is drawn
        // and the pen does not move, from y < -2^31 + 241 the text ends at once).
        let room = |size: usize, at: i64| i64::from((size as i32).wrapping_sub(at as i32));
        let rows_on_screen = |y: i64| room(HEIGHT, y).clamp(0, font::GLYPH_HEIGHT as i64);
        let mut rows = rows_on_screen(y);
        let mut next = 0;
        while next < text.len() && room(HEIGHT, y) > 0 {
            let mut byte = byte_at(next);
            next += 1;
            // Past the right edge: skip to the next line break (or the end).
            while x >= WIDTH as i64 && byte != b'\n' {
                byte = byte_at(next);
                if byte == 0 {
                    break;
                }
                next += 1;
            }
            match byte {
                b'\n' => {
                    x = origin;
                    y += LINE_HEIGHT;
                    rows = rows_on_screen(y);
                    continue;
                }
                b'\t' => {
                    x += TAB_WIDTH - (x - origin) / 8 % 8 * 8;
                    continue;
                }
                _ => {}
            }
            let glyph = font::glyph(byte);
            let width = i64::from(glyph.width).min(room(WIDTH, x).clamp(0, 7));
            for row in 0..rows {
                for column in 0..width {
                    let ink = glyph.ink(column as usize, row as usize);
                    self.blend(x + column, y + row, if ink { fg } else { bg });
                }
            }
            if rows == font::GLYPH_HEIGHT as i64 {
                for column in -1..width {
                    self.blend(x + column, y - 1, bg);
                    self.blend(x + column, y + font::GLYPH_HEIGHT as i64, bg);
                }
            }
            if x == origin {
                for row in 0..rows {
                    self.blend(x - 1, y + row, bg);
                }
            }
            x += width;
        }
        // FCEUX's pen is a C int.
        x as i32
    }
}

/// FCEUX's compositing of an overlay pixel over the picture's colour `under`: opaque pixels
/// replace it; otherwise `under + (over - under) * alpha / 255`, truncated toward zero. The
/// result becomes the nearest colour of the 8-bit palette (`colours`; without one, as it is).
fn composite_over(
    over: [u8; 3],
    alpha: u8,
    under: [u8; 3],
    colours: Option<&ColourTable>,
) -> ([u8; 3], u8) {
    let mut rgb = over;
    if alpha != 255 {
        let alpha = i32::from(alpha);
        for (value, under) in rgb.iter_mut().zip(under) {
            let (over, under) = (i32::from(*value), i32::from(under));
            *value = ((over - under) * alpha / 255 + under) as u8;
        }
    }
    match colours {
        Some(table) => {
            let entry = table.nearest(rgb);
            (table.entries[entry], entry as u8)
        }
        None => (rgb, 0),
    }
}

/// FCEUX's 8-bit palette and its nearest-colour search (`gui_colour_rgb`), which every
/// composited overlay pixel goes through.
///
/// Entries (measured: `P00`-`P7F` read entries 128-255 through `gui.parsecolor`, and probing
/// all 512 colour cells with opaque pixels returned only these): 0-22 fixed interface colours,
/// 23-127 grey 205, 128-191 the NES palette, 192-255 the NES palette at 3/4 (`c * 24576 >> 15`).
/// The search skips entries 0 and 255 and keeps the first best score
/// `66*|dr| + 129*|dg| + 25*|db|`. FCEUX caches the answer per cell of the top three bits of
/// each channel, for as long as the palette is unchanged: the first colour composited in a cell
/// decides the entry of every later colour in it (probed: (40,40,200) then (63,63,223) one
/// frame later both show (24,42,179)).
#[derive(Clone)]
struct ColourTable {
    entries: [[u8; 3]; 256],
    /// Entry index + 1 per cell; 0 = not searched yet.
    cache: RefCell<[u8; 512]>,
}

/// FCEUX's fixed interface colours, entries 0-22 (entry 0 is never chosen).
const INTERFACE_COLOURS: [[u8; 3]; 23] = [
    [0x00, 0x00, 0x00],
    [0xFF, 0xFF, 0xD3],
    [0x00, 0x00, 0x00],
    [0x75, 0x75, 0x92],
    [0xBE, 0x00, 0x00],
    [0x33, 0xFF, 0x33],
    [0x31, 0x0E, 0xC8],
    [0x00, 0x00, 0x00],
    [0x00, 0x00, 0x80],
    [0x00, 0x80, 0x00],
    [0x00, 0x80, 0x80],
    [0x80, 0x00, 0x00],
    [0x80, 0x00, 0x80],
    [0x80, 0x80, 0x00],
    [0x80, 0x80, 0x80],
    [0x40, 0x40, 0x40],
    [0x00, 0x00, 0xFF],
    [0x00, 0xFF, 0x00],
    [0x00, 0xFF, 0xFF],
    [0xFF, 0x00, 0x00],
    [0xFF, 0x00, 0xFF],
    [0xFF, 0xFF, 0x00],
    [0xFF, 0xFF, 0xFF],
];

/// FCEUX 2.6.5's default NES palette, as `gui.parsecolor("P00")`-`("P3F")` return it
/// (`tests/fceux/logs/lua-gui_colours.log`).
#[rustfmt::skip]
const FCEUX_PALETTE: [[u8; 3]; 64] = [
    [117, 117, 117], [36, 24, 142], [0, 0, 170], [69, 0, 158],
    [142, 0, 117], [170, 0, 16], [166, 0, 0], [125, 8, 0],
    [65, 44, 0], [0, 69, 0], [0, 81, 0], [0, 60, 20],
    [24, 60, 93], [0, 0, 0], [0, 0, 0], [0, 0, 0],
    [190, 190, 190], [0, 113, 239], [32, 56, 239], [130, 0, 243],
    [190, 0, 190], [231, 0, 89], [219, 40, 0], [203, 77, 12],
    [138, 113, 0], [0, 150, 0], [0, 170, 0], [0, 146, 56],
    [0, 130, 138], [0, 0, 0], [0, 0, 0], [0, 0, 0],
    [255, 255, 255], [60, 190, 255], [93, 150, 255], [207, 138, 255],
    [247, 121, 255], [255, 117, 182], [255, 117, 97], [255, 154, 56],
    [243, 190, 60], [130, 211, 16], [77, 223, 73], [89, 251, 154],
    [0, 235, 219], [121, 121, 121], [0, 0, 0], [0, 0, 0],
    [255, 255, 255], [170, 231, 255], [199, 215, 255], [215, 203, 255],
    [255, 199, 255], [255, 199, 219], [255, 190, 178], [255, 219, 170],
    [255, 231, 162], [227, 255, 162], [170, 243, 190], [178, 255, 207],
    [158, 255, 243], [199, 199, 199], [0, 0, 0], [0, 0, 0],
];

impl ColourTable {
    /// FCEUX builds its 8-bit palette from the NES palette it shows games with. Ours: a palette
    /// the user chose (`--palette`), or, for our built-in default, FCEUX's default palette, so
    /// that `P00`-`P7F` and the overlay's colours are FCEUX's.
    fn new(palette: &Palette) -> ColourTable {
        let fceux_default = *palette == Palette::ntsc();
        let mut entries = [[205u8; 3]; 256];
        entries[..INTERFACE_COLOURS.len()].copy_from_slice(&INTERFACE_COLOURS);
        for colour in 0..64u16 {
            let rgb = if fceux_default {
                FCEUX_PALETTE[usize::from(colour)]
            } else {
                palette.rgb(colour)
            };
            entries[128 + usize::from(colour)] = rgb;
            entries[192 + usize::from(colour)] = rgb.map(|c| ((u32::from(c) * 24576) >> 15) as u8);
        }
        ColourTable {
            entries,
            cache: RefCell::new([0; 512]),
        }
    }

    /// The palette colour FCEUX shows for `rgb`.
    #[cfg(test)]
    fn snap(&self, rgb: [u8; 3]) -> [u8; 3] {
        self.entries[self.nearest(rgb)]
    }

    /// The entry FCEUX shows for `rgb`.
    fn nearest(&self, [r, g, b]: [u8; 3]) -> usize {
        let cell = usize::from(r >> 5) << 6 | usize::from(g >> 5) << 3 | usize::from(b >> 5);
        let mut cache = self.cache.borrow_mut();
        if cache[cell] == 0 {
            let score = |entry: &[u8; 3]| {
                66 * u32::from(r.abs_diff(entry[0]))
                    + 129 * u32::from(g.abs_diff(entry[1]))
                    + 25 * u32::from(b.abs_diff(entry[2]))
            };
            let mut best = 1;
            for index in 2..255 {
                if score(&self.entries[index]) < score(&self.entries[best]) {
                    best = index;
                }
            }
            cache[cell] = best as u8 + 1;
        }
        usize::from(cache[cell] - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: Rgba = [255, 0, 0, 255];
    const BLUE: Rgba = [0, 0, 255, 255];

    /// The canvas region as rows of `#` (`ink`), `o` (`paper`), `.` (empty) and `?`.
    fn picture(
        overlay: &Overlay,
        x0: i64,
        y0: i64,
        w: i64,
        h: i64,
        ink: Rgba,
        paper: Rgba,
    ) -> String {
        let mut out = String::new();
        for y in y0..y0 + h {
            for x in x0..x0 + w {
                out.push(match overlay.pixel(x, y) {
                    Some(p) if p == ink => '#',
                    Some(p) if p == paper => 'o',
                    Some([_, _, _, 0]) | None => '.',
                    Some(_) => '?',
                });
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn drawing_shows_on_one_display_and_getpixel_sees_it_until_cleared() {
        let mut overlay = Overlay::default();
        overlay.prepare();
        overlay.blend(3, 4, RED);
        assert_eq!(overlay.pixel(3, 4), Some(RED));
        overlay.present(|_| [0; 3]);
        let i = (4 * WIDTH + 3) * 4;
        assert_eq!(&overlay.shown()[i..i + 4], &RED);
        assert_eq!(
            overlay.pixel(3, 4),
            Some(RED),
            "the canvas keeps it after the display"
        );
        overlay.present(|_| [0; 3]);
        assert!(!overlay.shown_drawn, "nothing drawn since: nothing shown");
        assert_eq!(
            overlay.pixel(3, 4),
            Some([0; 4]),
            "and the canvas is cleared"
        );
    }

    #[test]
    fn a_drawing_call_after_a_display_starts_a_fresh_canvas() {
        let mut overlay = Overlay::default();
        overlay.prepare();
        overlay.blend(0, 0, RED);
        overlay.present(|_| [0; 3]);
        overlay.prepare();
        assert_eq!(overlay.pixel(0, 0), Some([0; 4]));
    }

    #[test]
    fn blending_matches_fceux() {
        // gui.getpixel after two gui.pixel calls on one spot, measured in FCEUX 2.6.5.
        for (first, second, expected) in [
            ([255, 0, 0, 128], [0, 0, 255, 64], [153, 0, 102, 160]),
            ([255, 0, 0, 128], [0, 0, 255, 128], [85, 0, 170, 192]),
            ([10, 20, 30, 1], [200, 100, 50, 254], [200, 100, 50, 254]),
            ([255, 255, 255, 200], [0, 0, 0, 100], [140, 140, 140, 222]),
            ([0, 0, 0, 0], [100, 100, 100, 100], [100, 100, 100, 100]),
            ([100, 100, 100, 100], [0, 0, 0, 0], [100, 100, 100, 100]),
            ([1, 2, 3, 77], [250, 251, 252, 33], [83, 84, 85, 100]),
        ] {
            let mut pixel = [0; 4];
            blend_into(&mut pixel, first);
            blend_into(&mut pixel, second);
            assert_eq!(pixel, expected, "{first:?} then {second:?}");
        }
    }

    /// The canvas rows `y0..y0 + h`, columns `x0..x0 + w`: `#` drawn (by `RED`), `.` empty.
    fn rows(overlay: &Overlay, x0: i64, y0: i64, w: i64, h: i64) -> Vec<String> {
        picture(overlay, x0, y0, w, h, RED, BLUE)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn lines_overflow_like_fceux_ints() {
        // Measured (gui_draw.lua): the doubled difference 2 * (2^31 - 4) wraps to -8, so y
        // becomes the major axis and x never moves.
        let mut vertical = Overlay::default();
        vertical.line(3, 1, i32::MAX, 5, RED, false);
        assert_eq!(
            rows(&vertical, 0, 0, 6, 7),
            ["......", "...#..", "...#..", "...#..", "...#..", "...#..", "......"]
        );
        let mut point = Overlay::default();
        point.line(3, 1, i32::MAX, 1, RED, false);
        assert_eq!(
            rows(&point, 0, 0, 8, 3),
            ["........", "...#....", "........"]
        );
        let mut sideways = Overlay::default();
        sideways.line(3, 1, 1, i32::MAX, RED, false);
        assert_eq!(rows(&sideways, 0, 0, 5, 3), [".....", ".###.", "....."]);
        let mut wrapped = Overlay::default();
        wrapped.line(3, 1, 1_410_065_408, 7, RED, false);
        assert_eq!(
            rows(&wrapped, 0, 0, 8, 9),
            [
                "........", "...#....", "...#....", "....#...", "....#...", "....#...", ".....#..",
                ".....#..", "........"
            ],
            "gui.line(3, 1, 1e10, 7)"
        );
    }

    #[test]
    fn huge_lines_and_boxes_are_cut_to_the_screen() {
        let started = std::time::Instant::now();
        let mut overlay = Overlay::default();
        // gui.line(0, 0, 1e6, 3): row 0 until x = 166666.
        overlay.line(0, 0, 1_000_000, 3, RED, false);
        assert_eq!(rows(&overlay, 250, 0, 6, 2), ["######", "......"]);
        // gui.line(0, 0, 1e12, 0) and (0, 0, 1e12, 1): 1e12 is -727379968 as an int.
        for y in [0, 1] {
            let mut overlay = Overlay::default();
            overlay.line(0, 0, -727_379_968, y, RED, false);
            assert_eq!(rows(&overlay, 0, 0, 3, 2), ["#..", "..."]);
        }
        let mut overlay = Overlay::default();
        overlay.line(-1_000_000, -3, 300, 200, RED, false);
        overlay.line(i32::MIN, i32::MAX, 100, 100, RED, false);
        overlay.line(i32::MAX - 5, 3, i32::MIN + 7, 4, RED, false);
        overlay.line(-2_000_000_000, 9, 2_000_000_000, 10, RED, false);
        overlay.rect(i32::MIN, i32::MIN, i32::MAX, i32::MAX, RED, RED);
        overlay.rect(-1_000_000_000, 0, 1_000_000_000, 5, RED, RED);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "FCEUX steps through every pixel; we only through those on the screen"
        );
    }

    #[test]
    fn boxes_spanning_2_to_the_31_have_no_fill() {
        // Measured: FCEUX checks the size with int arithmetic on the corners as given.
        let mut overlay = Overlay::default();
        overlay.rect(i32::MIN, i32::MIN, i32::MAX, i32::MAX, RED, BLUE);
        assert_eq!(overlay.pixel(5, 5), Some([0; 4]));
        overlay.rect(
            -1_000_000_000,
            -1_000_000_000,
            1_000_000_000,
            1_000_000_000,
            RED,
            BLUE,
        );
        assert_eq!(overlay.pixel(5, 5), Some(RED));
    }

    #[test]
    fn text_near_int_min_has_no_room() {
        // Measured: FCEUX's room left, 256 - x and 240 - y, overflows.
        let mut overlay = Overlay::default();
        assert_eq!(overlay.text(i32::MIN, 1, b"ab", RED, BLUE), i32::MIN);
        assert_eq!(
            overlay.text(i32::MIN + 256, 1, b"ab", RED, BLUE),
            i32::MIN + 256
        );
        assert_eq!(
            overlay.text(i32::MIN + 257, 1, b"ab", RED, BLUE),
            i32::MIN + 267
        );
        assert_eq!(
            overlay.text(i32::MIN, 1, b"\tab\t", RED, BLUE),
            i32::MIN + 128
        );
        assert_eq!(overlay.text(2, i32::MIN + 240, b"\nab", RED, BLUE), 2);
        assert_eq!(overlay.text(2, i32::MIN + 241, b"\nab", RED, BLUE), 12);
    }

    #[test]
    fn the_upper_left_colour_of_a_cell_decides_at_each_display() {
        // Measured (gui_opacity.lua): alone, (128, 0, 0) shows as itself and (159, 31, 31) as
        // (164, 30, 0); drawn on one frame, the upper left one decides for both.
        let mut overlay = Overlay::default();
        overlay.set_palette(&Palette::ntsc());
        overlay.prepare();
        overlay.blend(100, 100, [128, 0, 0, 255]);
        overlay.blend(0, 60, [159, 31, 31, 255]);
        overlay.present(|_| [0; 3]);
        assert_eq!(overlay.composite_pixel(100, 100), Some(([164, 30, 0], 214)));
        assert_eq!(overlay.composite_pixel(0, 60), Some(([164, 30, 0], 214)));
        // A display nobody reads fills the cache too: (31, 63, 223) alone is (32, 56, 239).
        overlay.prepare();
        overlay.blend(0, 80, [10, 40, 200, 255]);
        overlay.present(|_| [0; 3]);
        overlay.prepare();
        overlay.blend(0, 80, [31, 63, 223, 255]);
        overlay.present(|_| [0; 3]);
        assert_eq!(overlay.composite_pixel(0, 80), Some(([24, 42, 179], 210)));
        // Translucent pixels blend with the picture first: (96, 96, 96) over black.
        overlay.prepare();
        overlay.blend(10, 90, [192, 192, 192, 128]);
        overlay.present(|_| [0; 3]);
        assert_eq!(overlay.composite_pixel(10, 90), Some(([90, 90, 90], 237)));
    }

    #[test]
    fn palette_entries_are_fceuxs_for_the_default_palette() {
        // gui.parsecolor("P01") and ("P41") in FCEUX 2.6.5.
        let mut overlay = Overlay::default();
        overlay.set_palette(&Palette::ntsc());
        assert_eq!(overlay.palette_entry(0x81), Some([36, 24, 142]));
        assert_eq!(overlay.palette_entry(0xC1), Some([27, 18, 106]));
    }

    #[test]
    fn box_outline_then_fill() {
        let mut overlay = Overlay::default();
        overlay.rect(8, 6, 2, 2, BLUE, RED);
        assert_eq!(
            picture(&overlay, 1, 1, 9, 7, RED, BLUE),
            ".........\n.#######.\n.#ooooo#.\n.#ooooo#.\n.#ooooo#.\n.#######.\n.........\n"
        );
        let mut thin = Overlay::default();
        thin.rect(2, 2, 3, 4, BLUE, RED);
        assert_eq!(
            picture(&thin, 2, 2, 2, 3, RED, BLUE),
            "##\n##\n##\n",
            "no fill"
        );
    }

    #[test]
    fn lines_step_like_fceux() {
        // Measured in FCEUX 2.6.5 (gui_draw.lua draws the same lines).
        for ((x1, y1, x2, y2), rows) in [
            (
                (1, 1, 9, 4),
                [
                    ".##.........",
                    "...###......",
                    ".....###....",
                    "........##..",
                ],
            ),
            (
                (9, 4, 1, 1),
                [
                    ".##.........",
                    "...###......",
                    ".....###....",
                    "........##..",
                ],
            ),
        ] {
            let mut overlay = Overlay::default();
            overlay.line(x1, y1, x2, y2, RED, false);
            let expected: String = rows.iter().map(|row| format!("{row}\n")).collect();
            assert_eq!(picture(&overlay, 0, 1, 12, 4, RED, BLUE), expected);
        }
        let mut steep = Overlay::default();
        steep.line(1, 1, 3, 9, RED, false);
        assert_eq!(
            picture(&steep, 0, 1, 5, 9, RED, BLUE),
            ".#...\n.#...\n.##..\n..#..\n..#..\n..#..\n..##.\n...#.\n...#.\n"
        );
    }

    #[test]
    fn text_cells_halo_and_return_value() {
        let mut overlay = Overlay::default();
        assert_eq!(overlay.text(10, 10, b"Ag", RED, BLUE), 21);
        assert_eq!(
            picture(&overlay, 9, 9, 12, 9, RED, BLUE),
            "oooooooooooo\n\
             oo###ooooooo\n\
             o#ooo#oo###o\n\
             o#ooo#o#oo#o\n\
             o#####o#oo#o\n\
             o#ooo#oo###o\n\
             o#ooo#oooo#o\n\
             o#ooo#o###oo\n\
             oooooooooooo\n"
        );
        let mut edge = Overlay::default();
        assert_eq!(edge.text(256, 2, b"W\nb", RED, BLUE), 256);
        assert_eq!(
            edge.pixel(255, 9),
            Some(BLUE),
            "the zero-width glyph's halo"
        );
        assert_eq!(
            edge.pixel(255, 2),
            Some([0; 4]),
            "the first line draws nothing"
        );
        assert_eq!(Overlay::default().text(3, 3, b"x", [0; 4], [0; 4]), 3);
        assert_eq!(Overlay::default().text(2, 2, b"a\t\tb", RED, BLUE), 140);
    }

    #[test]
    fn compositing_blends_and_snaps_to_the_palette() {
        let mut overlay = Overlay::default();
        overlay.set_palette(&Palette::ntsc());
        overlay.prepare();
        overlay.blend(0, 0, [255, 0, 0, 128]);
        overlay.blend(1, 0, [27, 18, 105, 255]);
        overlay.present(|_| [0; 3]);
        let mut picture = vec![0u8; WIDTH * HEIGHT * 4];
        overlay.composite(&mut picture);
        assert_eq!(
            &picture[..3],
            &[128, 0, 0],
            "255 * 128 / 255 over black, an exact entry"
        );
        let expected = ColourTable::new(&Palette::ntsc()).snap([27, 18, 105]);
        assert_eq!(&picture[4..7], &expected);
    }
}
