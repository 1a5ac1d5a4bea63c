//! The PAL visual demos in `shared/test-roms/pal`, judged as the test-ROM README's "PAL and
//! Dendy" section describes them (they have no machine-readable verdict):
//!
//! - `nmi_sync/demo_pal`: a `$2002`-synchronised greyscale write draws the middle of three
//!   lines (scanline 121); it must start between the two marker sprites above and below it
//!   (x = 82 and 84), never left of the top one, alternating between two positions from frame
//!   to frame (the PAL odd/even jitter), and never wander;
//! - the colour-window demos: the band starts on its documented scanline near the right end
//!   and the picture cycles between two frames (four for `window_old_pal`), never drifting.

use std::collections::BTreeSet;
use std::path::PathBuf;

use nes::{ClockAlignment, Nes, Region, SCREEN_WIDTH};

/// The PAL folder, or `None` (with a message; a panic under CI) when the ROMs are missing.
fn pal_folder() -> Option<PathBuf> {
    let root = std::env::var_os("NES_TEST_ROMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/test-roms"));
    let folder = root.join("pal");
    if folder.is_dir() {
        return Some(folder);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but {} is missing",
        folder.display()
    );
    eprintln!("pal_demos skipped: {} is missing", folder.display());
    None
}

/// The pictures of frames `first..=last` of `rom` on a PAL console.
fn pal_frames(path: &std::path::Path, first: u64, last: u64) -> Vec<Vec<u16>> {
    let bytes = std::fs::read(path).unwrap();
    let mut nes = Nes::from_ines(&bytes).unwrap();
    nes.set_region(Region::Pal, ClockAlignment::default());
    let mut frames = Vec::new();
    while nes.frame_count() < last {
        nes.run_frame();
        if nes.frame_count() >= first {
            frames.push(nes.frame_buffer().to_vec());
        }
    }
    frames
}

/// The first x on scanline `y` whose pixel differs from the picture's top-left one.
fn first_drawn(picture: &[u16], y: usize) -> Option<usize> {
    let background = picture[0];
    picture[y * SCREEN_WIDTH..(y + 1) * SCREEN_WIDTH]
        .iter()
        .position(|&pixel| pixel != background)
}

#[test]
fn demo_pal_draws_the_timed_line_between_its_markers() {
    let Some(folder) = pal_folder() else { return };
    let frames = pal_frames(&folder.join("nmi_sync/demo_pal.nes"), 600, 640);
    let mut starts = Vec::new();
    for picture in &frames {
        assert_eq!(first_drawn(picture, 119), Some(82), "top marker");
        assert_eq!(first_drawn(picture, 123), Some(84), "bottom marker");
        starts.push(first_drawn(picture, 121).expect("the timed line"));
    }
    let positions: BTreeSet<usize> = starts.iter().copied().collect();
    assert!(
        positions.iter().all(|x| (82..=84).contains(x)) && positions.len() <= 2,
        "the timed line starts at {starts:?}"
    );
    // Alternating from frame to frame, as on hardware.
    assert!(
        starts.windows(2).all(|pair| pair[0] != pair[1]),
        "{starts:?}"
    );
}

#[test]
fn colour_windows_stay_in_place() {
    let Some(folder) = pal_folder() else { return };
    for (rom, band_line, cycle) in [
        ("window5/colorwin_pal.nes", 127, 2),
        ("other/window2_pal.nes", 79, 2),
        ("other/window_old_pal.nes", 127, 4),
    ] {
        let frames = pal_frames(&folder.join(rom), 600, 700);
        for (index, picture) in frames.iter().enumerate() {
            let first_line = (0..240).find(|&y| first_drawn(picture, y).is_some());
            assert_eq!(first_line, Some(band_line), "{rom} frame {}", 600 + index);
            assert!(
                first_drawn(picture, band_line).unwrap() > 200,
                "{rom}: the band begins near the right end of its line"
            );
            assert_eq!(
                picture,
                &frames[index % cycle],
                "{rom}: a {cycle}-frame cycle"
            );
        }
        let distinct: BTreeSet<&Vec<u16>> = frames.iter().collect();
        assert_eq!(distinct.len(), cycle, "{rom}");
    }
}
