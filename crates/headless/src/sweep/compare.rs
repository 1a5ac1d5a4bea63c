//! `--compare OLD_OUT`: which captures differ from an earlier sweep, by how many pixels, with a
//! diff image of each change.
//!
//! Captures are matched by ROM (its key) and frame number. Equal raw hashes mean an unchanged
//! picture; otherwise both raw9 files are read and compared pixel by pixel, so palettes and
//! PNG encoding never count as changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nes::{Palette, SCREEN_HEIGHT, SCREEN_WIDTH};
use serde::{Deserialize, Serialize};

use crate::capture::{self, parse_raw9};
use crate::output;

use super::report::{RomRecord, SweepReport, Verdict};

/// One capture whose picture differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureChange {
    pub rom: String,
    pub frame: u64,
    pub changed_pixels: usize,
    /// Bounding box of the changed pixels, `[left, top, right, bottom]` inclusive.
    pub changed_area: Option<[usize; 4]>,
    pub old_sha256: String,
    pub new_sha256: String,
    /// The old PNG, relative to the old output folder.
    pub old_png: String,
    /// The new PNG, relative to the new output folder.
    pub new_png: String,
    /// The diff image (changed pixels highlighted), relative to the new output folder.
    pub diff_png: Option<String>,
    /// Why the pixels could not be compared (a raw9 file missing or damaged).
    pub error: Option<String>,
}

/// A capture present in one sweep only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingCapture {
    pub rom: String,
    pub frame: u64,
    /// True: only the old sweep has it; false: only the new one.
    pub only_in_old: bool,
}

/// A ROM whose verdict changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictChange {
    pub rom: String,
    pub old: Verdict,
    pub new: Verdict,
}

/// The `compare` section of `sweep.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompareReport {
    /// The `--compare` folder as given.
    pub old_dir: String,
    pub changed: Vec<CaptureChange>,
    pub missing: Vec<MissingCapture>,
    pub verdicts: Vec<VerdictChange>,
    /// Captures present in both sweeps with the same picture.
    pub unchanged: usize,
}

impl CompareReport {
    /// True when some capture changed, appeared or disappeared.
    pub fn has_changes(&self) -> bool {
        !self.changed.is_empty() || !self.missing.is_empty()
    }
}

/// Read an earlier sweep's `sweep.json`.
pub fn load_report(old_dir: &Path) -> Result<SweepReport, crate::Error> {
    let path = old_dir.join("sweep.json");
    let text = crate::limits::read_text_limited(&path, &crate::limits::SWEEP_REPORT)?;
    serde_json::from_str(&text).map_err(|source| crate::Error::NotASweepReport { path, source })
}

fn read_raw9(dir: &Path, relative: &str) -> Result<Vec<u16>, String> {
    let path = dir.join(relative);
    let bytes = crate::limits::read_limited(&path, &crate::limits::RAW9)
        .map_err(|error| error.to_string())?;
    parse_raw9(&bytes).map_err(|error| format!("{}: {error}", path.display()))
}

/// Compare `new` (written to `new_dir`) with `old` (in `old_dir`), writing a diff PNG for each
/// changed capture to `new_dir/diffs/`.
pub fn compare(
    old: &SweepReport,
    old_dir: &Path,
    new: &[RomRecord],
    new_dir: &Path,
    palette: &Palette,
) -> CompareReport {
    let old_roms: HashMap<&str, &RomRecord> = old
        .roms
        .iter()
        .map(|record| (record.rom.as_str(), record))
        .collect();
    let mut report = CompareReport {
        old_dir: old_dir.display().to_string(),
        changed: Vec::new(),
        missing: Vec::new(),
        verdicts: Vec::new(),
        unchanged: 0,
    };
    for record in new {
        let Some(old_record) = old_roms.get(record.rom.as_str()) else {
            for capture in &record.captures {
                report.missing.push(MissingCapture {
                    rom: record.rom.clone(),
                    frame: capture.frame,
                    only_in_old: false,
                });
            }
            continue;
        };
        if old_record.verdict != record.verdict {
            report.verdicts.push(VerdictChange {
                rom: record.rom.clone(),
                old: old_record.verdict,
                new: record.verdict,
            });
        }
        for capture in &record.captures {
            let Some(before) = old_record
                .captures
                .iter()
                .find(|before| before.frame == capture.frame)
            else {
                report.missing.push(MissingCapture {
                    rom: record.rom.clone(),
                    frame: capture.frame,
                    only_in_old: false,
                });
                continue;
            };
            if before.sha256 == capture.sha256 {
                report.unchanged += 1;
                continue;
            }
            let mut change = CaptureChange {
                rom: record.rom.clone(),
                frame: capture.frame,
                changed_pixels: 0,
                changed_area: None,
                old_sha256: before.sha256.clone(),
                new_sha256: capture.sha256.clone(),
                old_png: before.png.clone(),
                new_png: capture.png.clone(),
                diff_png: None,
                error: None,
            };
            let pixels = read_raw9(old_dir, &before.raw9)
                .and_then(|old_pixels| Ok((old_pixels, read_raw9(new_dir, &capture.raw9)?)));
            match pixels {
                Ok((old_pixels, new_pixels)) => {
                    let (diff, rgba) = capture::diff_frames(&old_pixels, &new_pixels, palette);
                    change.changed_pixels = diff.changed_pixels;
                    change.changed_area = diff.changed_area;
                    let relative = diff_path(&capture.png);
                    let path = new_dir.join(&relative);
                    let written = path
                        .parent()
                        .map_or(Ok(()), std::fs::create_dir_all)
                        .map_err(|error| format!("cannot create {}: {error}", path.display()))
                        .and_then(|()| {
                            output::save_png(
                                &path,
                                &rgba,
                                SCREEN_WIDTH as u32,
                                SCREEN_HEIGHT as u32,
                            )
                            .map_err(|error| error.to_string())
                        });
                    match written {
                        Ok(()) => change.diff_png = Some(relative),
                        Err(error) => change.error = Some(error),
                    }
                }
                Err(error) => change.error = Some(error),
            }
            report.changed.push(change);
        }
        for before in &old_record.captures {
            if !record.captures.iter().any(|now| now.frame == before.frame) {
                report.missing.push(MissingCapture {
                    rom: record.rom.clone(),
                    frame: before.frame,
                    only_in_old: true,
                });
            }
        }
    }
    let new_roms: Vec<&str> = new.iter().map(|record| record.rom.as_str()).collect();
    for old_record in &old.roms {
        if !new_roms.contains(&old_record.rom.as_str()) {
            for capture in &old_record.captures {
                report.missing.push(MissingCapture {
                    rom: old_record.rom.clone(),
                    frame: capture.frame,
                    only_in_old: true,
                });
            }
        }
    }
    report
}

/// `captures/dir/name_f60.png` -> `diffs/dir/name_f60.png`.
fn diff_path(capture_png: &str) -> String {
    let inside = capture_png.strip_prefix("captures/").unwrap_or(capture_png);
    format!("diffs/{inside}")
}

/// How `from_dir` reaches `to_dir` by a relative link (`../old/`), when both exist; used by the
/// contact sheet to show the old pictures next to the new ones.
pub fn relative_dir(from_dir: &Path, to_dir: &Path) -> Option<String> {
    let from = from_dir.canonicalize().ok()?;
    let to = to_dir.canonicalize().ok()?;
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut relative = PathBuf::new();
    for _ in from.components().skip(common) {
        relative.push("..");
    }
    for component in to.components().skip(common) {
        relative.push(component);
    }
    let mut text = relative.to_string_lossy().replace('\\', "/");
    if !text.is_empty() {
        text.push('/');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_images_go_under_diffs() {
        assert_eq!(
            diff_path("captures/cpu/nestest/nestest_f60.png"),
            "diffs/cpu/nestest/nestest_f60.png"
        );
    }

    #[test]
    fn relative_dir_walks_up_and_down() {
        let root = tempfile::tempdir().unwrap();
        let new = root.path().join("runs/new");
        let old = root.path().join("old");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::create_dir_all(&old).unwrap();
        assert_eq!(relative_dir(&new, &old).unwrap(), "../../old/");
        assert_eq!(relative_dir(&new, &new).unwrap(), "");
        assert!(relative_dir(&new, &root.path().join("missing")).is_none());
    }
}
