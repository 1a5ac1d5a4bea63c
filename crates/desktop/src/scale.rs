//! Scaling the 256x240 picture for the window: whole multiples vertically, and horizontally
//! the same multiple times the pixel aspect (1 or 8:7), with area sampling where a screen
//! column straddles two NES pixels so every NES pixel gets the same visible width.

use nes::{SCREEN_HEIGHT, SCREEN_WIDTH};

use super::config::PixelAspect;

/// One output column: the NES column it starts in and how much of the next one it takes
/// (0-256ths).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Column {
    source: usize,
    next_weight: u16,
}

/// A picture size on screen and the column plan to produce it.
#[derive(Debug, Clone)]
pub struct Scaler {
    pub width: u32,
    pub height: u32,
    scale: usize,
    columns: Vec<Column>,
}

impl Scaler {
    /// The largest whole scale that fits `window` (at least 1), for this pixel aspect.
    pub fn fit(window_width: u32, window_height: u32, aspect: PixelAspect) -> Scaler {
        let by_width = f64::from(window_width) / (SCREEN_WIDTH as f64 * aspect.ratio());
        let by_height = f64::from(window_height) / SCREEN_HEIGHT as f64;
        let scale = by_width.min(by_height).floor().max(1.0) as u32;
        Scaler::new(scale, aspect)
    }

    pub fn new(scale: u32, aspect: PixelAspect) -> Scaler {
        let scale = scale.max(1);
        let width = (SCREEN_WIDTH as f64 * aspect.ratio() * f64::from(scale)).round() as u32;
        let height = SCREEN_HEIGHT as u32 * scale;
        // Output column x covers source interval [x, x + 1) * step.
        let step = SCREEN_WIDTH as f64 / f64::from(width);
        let columns = (0..width)
            .map(|x| {
                let start = f64::from(x) * step;
                let end = start + step;
                let source = (start as usize).min(SCREEN_WIDTH - 1);
                let boundary = (source + 1) as f64;
                let next_weight = if end > boundary && source + 1 < SCREEN_WIDTH {
                    (((end - boundary) / step) * 256.0).round() as u16
                } else {
                    0
                };
                Column {
                    source,
                    next_weight,
                }
            })
            .collect();
        Scaler {
            width,
            height,
            scale: scale as usize,
            columns,
        }
    }

    /// Scale a 256x240 RGBA picture into `out` (width x height x 4).
    pub fn scale(&self, picture: &[u8], out: &mut [u8]) {
        let row_bytes = self.width as usize * 4;
        for (y, source_row) in picture.chunks_exact(SCREEN_WIDTH * 4).enumerate() {
            let first = y * self.scale;
            let (head, tail) = out[first * row_bytes..].split_at_mut(row_bytes);
            for (pixel, column) in head.chunks_exact_mut(4).zip(&self.columns) {
                let left = &source_row[column.source * 4..column.source * 4 + 4];
                if column.next_weight == 0 {
                    pixel.copy_from_slice(left);
                } else {
                    let right = &source_row[column.source * 4 + 4..column.source * 4 + 8];
                    let w = u32::from(column.next_weight);
                    for channel in 0..4 {
                        let mixed = (u32::from(left[channel]) * (256 - w)
                            + u32::from(right[channel]) * w
                            + 128)
                            >> 8;
                        pixel[channel] = mixed as u8;
                    }
                }
            }
            for copy in 0..self.scale - 1 {
                tail[copy * row_bytes..(copy + 1) * row_bytes].copy_from_slice(head);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture() -> Vec<u8> {
        (0..SCREEN_WIDTH * SCREEN_HEIGHT)
            .flat_map(|i| {
                let (x, y) = (i % SCREEN_WIDTH, i / SCREEN_WIDTH);
                [x as u8, y as u8, ((x + y) % 2 * 255) as u8, 255]
            })
            .collect()
    }

    #[test]
    fn whole_scales_fit_the_window() {
        let square = Scaler::fit(1920, 1080, PixelAspect::Square);
        assert_eq!((square.width, square.height), (1024, 960));
        let ntsc = Scaler::fit(1920, 1080, PixelAspect::Ntsc);
        assert_eq!((ntsc.width, ntsc.height), (1170, 960));
        let tiny = Scaler::fit(100, 100, PixelAspect::Square);
        assert_eq!((tiny.width, tiny.height), (256, 240));
        // 8:7 at 3x: 256 * 3 * 8 / 7 = 877.7 columns.
        assert_eq!(Scaler::new(3, PixelAspect::Ntsc).width, 878);
    }

    #[test]
    fn square_pixels_are_exact_copies() {
        let scaler = Scaler::new(2, PixelAspect::Square);
        let source = picture();
        let mut out = vec![0; 512 * 480 * 4];
        scaler.scale(&source, &mut out);
        for (x, y) in [(0, 0), (255, 239), (17, 100)] {
            let src = &source[(y * 256 + x) * 4..][..4];
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let at = ((y * 2 + dy) * 512 + x * 2 + dx) * 4;
                assert_eq!(&out[at..at + 4], src);
            }
        }
    }

    #[test]
    fn ntsc_pixels_are_eight_sevenths_wide_on_average() {
        let scaler = Scaler::new(7, PixelAspect::Ntsc);
        // At 7x every NES pixel is exactly 8 screen columns wide: no blending needed.
        assert_eq!(scaler.width, 2048);
        assert!(scaler.columns.iter().all(|c| c.next_weight == 0));
        for (x, column) in scaler.columns.iter().enumerate() {
            assert_eq!(column.source, x / 8);
        }
        // At 3x the blended columns' weights add up to the right total coverage per pixel.
        let scaler = Scaler::new(3, PixelAspect::Ntsc);
        let mut coverage = vec![0.0f64; SCREEN_WIDTH];
        for column in &scaler.columns {
            let w = f64::from(column.next_weight) / 256.0;
            coverage[column.source] += 1.0 - w;
            if w > 0.0 {
                coverage[column.source + 1] += w;
            }
        }
        let expected = f64::from(scaler.width) / SCREEN_WIDTH as f64;
        assert!(
            coverage.iter().all(|c| (c - expected).abs() < 0.05),
            "{coverage:?}"
        );
    }
}
