//! The `gui.*` overlay: a 256x240 RGBA layer drawn over the picture.
//!
//! Scripts draw into the pending layer; at step 5 of a frame (after `gui.register`) it becomes
//! the shown layer and a fresh pending layer starts. So drawing from the main loop, hooks or
//! `registerafter` shows on the next picture, and drawing inside `gui.register` on this one.

const WIDTH: usize = 256;
const HEIGHT: usize = 240;

/// An RGBA colour, straight alpha.
pub(crate) type Rgba = [u8; 4];

/// The overlay layers.
#[derive(Clone)]
pub struct Overlay {
    pending: Vec<u8>,
    shown: Vec<u8>,
    pending_drawn: bool,
    shown_drawn: bool,
    /// `gui.opacity`: scales the alpha of later drawing.
    pub(crate) opacity: f64,
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlay")
            .field("pending_drawn", &self.pending_drawn)
            .field("shown_drawn", &self.shown_drawn)
            .finish_non_exhaustive()
    }
}

impl Default for Overlay {
    fn default() -> Self {
        Overlay {
            pending: vec![0; WIDTH * HEIGHT * 4],
            shown: vec![0; WIDTH * HEIGHT * 4],
            pending_drawn: false,
            shown_drawn: false,
            opacity: 1.0,
        }
    }
}

impl Overlay {
    /// The pending layer becomes the shown one; drawing starts afresh.
    pub(crate) fn present(&mut self) {
        std::mem::swap(&mut self.pending, &mut self.shown);
        let old_shown_drawn = self.shown_drawn;
        self.shown_drawn = self.pending_drawn;
        self.pending_drawn = false;
        // The old shown layer is the new pending one: clear it if it had anything (most
        // frames of most scripts draw nothing, and then this costs nothing).
        if old_shown_drawn {
            self.pending.fill(0);
        }
    }

    pub(crate) fn clear_pending(&mut self) {
        if self.pending_drawn {
            self.pending.fill(0);
            self.pending_drawn = false;
        }
    }

    pub(crate) fn shown(&self) -> &[u8] {
        &self.shown
    }

    /// Blend the shown layer over a 256x240 RGBA picture.
    pub(crate) fn composite(&self, rgba: &mut [u8]) {
        if !self.shown_drawn {
            return;
        }
        for (dst, src) in rgba.chunks_exact_mut(4).zip(self.shown.chunks_exact(4)) {
            let alpha = u32::from(src[3]);
            if alpha == 0 {
                continue;
            }
            for c in 0..3 {
                dst[c] = ((u32::from(src[c]) * alpha + u32::from(dst[c]) * (255 - alpha) + 127)
                    / 255) as u8;
            }
        }
    }

    /// The pending layer's pixel (what `gui.getpixel` sees).
    pub(crate) fn pixel(&self, x: i64, y: i64) -> Rgba {
        if !(0..WIDTH as i64).contains(&x) || !(0..HEIGHT as i64).contains(&y) {
            return [0; 4];
        }
        let i = (y as usize * WIDTH + x as usize) * 4;
        [
            self.pending[i],
            self.pending[i + 1],
            self.pending[i + 2],
            self.pending[i + 3],
        ]
    }

    /// Blend `color` (its alpha scaled by the opacity) into the pending layer at (x, y).
    pub(crate) fn blend(&mut self, x: i64, y: i64, color: Rgba) {
        if !(0..WIDTH as i64).contains(&x) || !(0..HEIGHT as i64).contains(&y) {
            return;
        }
        let alpha = f64::from(color[3]) / 255.0 * self.opacity.clamp(0.0, 1.0);
        if alpha <= 0.0 {
            return;
        }
        self.pending_drawn = true;
        let i = (y as usize * WIDTH + x as usize) * 4;
        let dst = &mut self.pending[i..i + 4];
        let dst_alpha = f64::from(dst[3]) / 255.0;
        let out_alpha = alpha + dst_alpha * (1.0 - alpha);
        for c in 0..3 {
            let value = (f64::from(color[c]) * alpha
                + f64::from(dst[c]) * dst_alpha * (1.0 - alpha))
                / out_alpha;
            dst[c] = value.round().clamp(0.0, 255.0) as u8;
        }
        dst[3] = (out_alpha * 255.0).round().clamp(0.0, 255.0) as u8;
    }

    pub(crate) fn line(
        &mut self,
        x1: i64,
        y1: i64,
        x2: i64,
        y2: i64,
        color: Rgba,
        skip_first: bool,
    ) {
        let (dx, dy) = ((x2 - x1).abs(), -(y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x1, y1, dx + dy);
        let mut first = true;
        loop {
            if !(first && skip_first) {
                self.blend(x, y, color);
            }
            first = false;
            if x == x2 && y == y2 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// A box with corners in any order: `fill` inside, `outline` on the border.
    pub(crate) fn rect(&mut self, x1: i64, y1: i64, x2: i64, y2: i64, fill: Rgba, outline: Rgba) {
        let (left, right) = (x1.min(x2), x1.max(x2));
        let (top, bottom) = (y1.min(y2), y1.max(y2));
        // Clip so huge boxes cost no more than the screen.
        let (cl, cr) = (left.max(-1), right.min(WIDTH as i64));
        let (ct, cb) = (top.max(-1), bottom.min(HEIGHT as i64));
        for y in ct..=cb {
            for x in cl..=cr {
                let border = x == left || x == right || y == top || y == bottom;
                self.blend(x, y, if border { outline } else { fill });
            }
        }
    }

    /// Text in the built-in 3x5 font (4x6 cells), on a background box.
    pub(crate) fn text(&mut self, x: i64, y: i64, text: &str, fg: Rgba, bg: Rgba) {
        let lines: Vec<&str> = text.split('\n').collect();
        let columns = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as i64;
        if columns > 0 {
            let width = columns * 4 + 1;
            let height = lines.len() as i64 * 6 + 1;
            for by in y - 1..y + height {
                for bx in x - 1..x + width {
                    self.blend(bx, by, bg);
                }
            }
        }
        for (row, line) in lines.iter().enumerate() {
            for (col, ch) in line.chars().enumerate() {
                let glyph = glyph(ch);
                let (cx, cy) = (x + col as i64 * 4, y + row as i64 * 6);
                for (gy, bits) in glyph.iter().enumerate() {
                    for gx in 0..3 {
                        if bits & (4 >> gx) != 0 {
                            self.blend(cx + gx, cy + gy as i64, fg);
                        }
                    }
                }
            }
        }
    }
}

/// Rows (top first) of a 3x5 glyph, bit 2 = left column.
fn glyph(ch: char) -> [u8; 5] {
    let ch = ch.to_ascii_uppercase();
    match ch {
        ' ' => [0, 0, 0, 0, 0],
        '!' => [2, 2, 2, 0, 2],
        '"' => [5, 5, 0, 0, 0],
        '#' => [5, 7, 5, 7, 5],
        '$' => [3, 6, 2, 3, 6],
        '%' => [5, 1, 2, 4, 5],
        '&' => [2, 5, 2, 5, 3],
        '\'' => [2, 2, 0, 0, 0],
        '(' => [1, 2, 2, 2, 1],
        ')' => [4, 2, 2, 2, 4],
        '*' => [0, 5, 2, 5, 0],
        '+' => [0, 2, 7, 2, 0],
        ',' => [0, 0, 0, 2, 4],
        '-' => [0, 0, 7, 0, 0],
        '.' => [0, 0, 0, 0, 2],
        '/' => [1, 1, 2, 4, 4],
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 3, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 2, 2],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        ':' => [0, 2, 0, 2, 0],
        ';' => [0, 2, 0, 2, 4],
        '<' => [1, 2, 4, 2, 1],
        '=' => [0, 7, 0, 7, 0],
        '>' => [4, 2, 1, 2, 4],
        '?' => [7, 1, 3, 0, 2],
        '@' => [7, 5, 7, 4, 7],
        'A' => [2, 5, 7, 5, 5],
        'B' => [6, 5, 6, 5, 6],
        'C' => [3, 4, 4, 4, 3],
        'D' => [6, 5, 5, 5, 6],
        'E' => [7, 4, 6, 4, 7],
        'F' => [7, 4, 6, 4, 4],
        'G' => [3, 4, 5, 5, 3],
        'H' => [5, 5, 7, 5, 5],
        'I' => [7, 2, 2, 2, 7],
        'J' => [1, 1, 1, 5, 2],
        'K' => [5, 5, 6, 5, 5],
        'L' => [4, 4, 4, 4, 7],
        'M' => [5, 7, 7, 5, 5],
        'N' => [6, 5, 5, 5, 5],
        'O' => [2, 5, 5, 5, 2],
        'P' => [6, 5, 6, 4, 4],
        'Q' => [2, 5, 5, 6, 3],
        'R' => [6, 5, 6, 5, 5],
        'S' => [3, 4, 2, 1, 6],
        'T' => [7, 2, 2, 2, 2],
        'U' => [5, 5, 5, 5, 7],
        'V' => [5, 5, 5, 5, 2],
        'W' => [5, 5, 7, 7, 5],
        'X' => [5, 5, 2, 5, 5],
        'Y' => [5, 5, 2, 2, 2],
        'Z' => [7, 1, 2, 4, 7],
        '[' => [6, 4, 4, 4, 6],
        '\\' => [4, 4, 2, 1, 1],
        ']' => [3, 1, 1, 1, 3],
        '^' => [2, 5, 0, 0, 0],
        '_' => [0, 0, 0, 0, 7],
        '`' => [4, 2, 0, 0, 0],
        '{' => [3, 2, 6, 2, 3],
        '|' => [2, 2, 2, 2, 2],
        '}' => [6, 2, 3, 2, 6],
        '~' => [0, 3, 6, 0, 0],
        _ => [7, 7, 7, 7, 7],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawing_shows_after_present_and_clears_a_frame_later() {
        let mut overlay = Overlay::default();
        overlay.blend(3, 4, [255, 0, 0, 255]);
        assert_eq!(overlay.pixel(3, 4), [255, 0, 0, 255]);
        overlay.present();
        let i = (4 * WIDTH + 3) * 4;
        assert_eq!(&overlay.shown()[i..i + 4], &[255, 0, 0, 255]);
        assert_eq!(overlay.pixel(3, 4), [0; 4], "a fresh pending layer");
        overlay.present();
        assert_eq!(&overlay.shown()[i..i + 4], &[0; 4], "no drawing: cleared");
    }

    #[test]
    fn half_opacity_blends_over_the_picture() {
        let mut overlay = Overlay {
            opacity: 0.5,
            ..Overlay::default()
        };
        overlay.blend(0, 0, [255, 255, 255, 255]);
        overlay.present();
        let mut picture = vec![0u8; WIDTH * HEIGHT * 4];
        overlay.composite(&mut picture);
        assert!((127..=129).contains(&picture[0]), "{}", picture[0]);
    }

    #[test]
    fn box_outline_and_fill_differ() {
        let mut overlay = Overlay::default();
        overlay.rect(5, 5, 1, 1, [0, 0, 255, 255], [255, 0, 0, 255]);
        assert_eq!(overlay.pixel(1, 1), [255, 0, 0, 255]);
        assert_eq!(overlay.pixel(3, 3), [0, 0, 255, 255]);
        assert_eq!(overlay.pixel(6, 6), [0; 4]);
    }
}
