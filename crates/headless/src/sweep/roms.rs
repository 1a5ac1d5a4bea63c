//! Which ROMs a sweep runs (`--roms DIR|LIST`) and the scripted input each gets
//! (`--input-file SPEC`).

use std::collections::{BTreeMap, HashSet};
use std::path::{Component, Path, PathBuf};

use nes_movie::input_schedule::{PressError, ScheduledPress};
use serde::Deserialize;

use crate::Error;

/// A ROM found for the sweep: its report key and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundRom {
    /// Path relative to the folder (or to the list file's folder), `/` separators, never
    /// containing `..`: it also places the captures inside the output folder.
    pub key: String,
    pub path: PathBuf,
}

fn is_nes_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("nes"))
}

fn key_of(relative: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `--roms`: every `*.nes` file under a folder (recursively, sorted by path), or the files a
/// list names (one path per line, relative to the list's folder; `#` comments and blank lines
/// allowed). A list entry outside the list's folder is keyed by its file name, made unique.
pub fn find_roms(source: &Path) -> Result<Vec<FoundRom>, Error> {
    let metadata = std::fs::metadata(source).map_err(cannot_read(source))?;
    let roms = if metadata.is_dir() {
        let mut roms = Vec::new();
        walk(source, source, &mut roms)?;
        roms.sort_by(|a, b| a.key.cmp(&b.key));
        roms
    } else {
        read_list(source)?
    };
    if roms.is_empty() {
        return Err(Error::NoRoms(source.to_path_buf()));
    }
    Ok(roms)
}

/// The error for a folder or file the ROM search could not read.
fn cannot_read(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Folder {
        action: "read",
        path: path.to_path_buf(),
        source,
    }
}

fn walk(root: &Path, dir: &Path, roms: &mut Vec<FoundRom>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(cannot_read(dir))?;
    for entry in entries {
        let entry = entry.map_err(cannot_read(dir))?;
        let path = entry.path();
        // Follow symbolic links to files, but do not descend into linked folders (no cycles).
        let file_type = entry.file_type().map_err(cannot_read(&path))?;
        if file_type.is_dir() {
            walk(root, &path, roms)?;
        } else if is_nes_file(&path) {
            if let Some(key) = path.strip_prefix(root).ok().and_then(key_of) {
                roms.push(FoundRom { key, path });
            }
        }
    }
    Ok(())
}

fn read_list(list: &Path) -> Result<Vec<FoundRom>, Error> {
    let text = crate::limits::read_text_limited(list, &crate::limits::ROM_LIST)?;
    let base = list.parent().unwrap_or(Path::new(""));
    let mut roms = Vec::new();
    let mut keys = HashSet::new();
    for line in text.lines() {
        let entry = line.split('#').next().unwrap_or_default().trim();
        if entry.is_empty() {
            continue;
        }
        let written = Path::new(entry);
        let path = base.join(written);
        let key = if written.is_relative() {
            key_of(written)
        } else {
            None
        };
        let key = key.unwrap_or_else(|| {
            written.file_name().map_or_else(
                || entry.to_owned(),
                |name| name.to_string_lossy().into_owned(),
            )
        });
        // Two entries with one file name from different places: number the later ones.
        let mut unique = key.clone();
        let mut copy = 2;
        while !keys.insert(unique.clone()) {
            unique = format!("{copy}-{key}");
            copy += 1;
        }
        roms.push(FoundRom { key: unique, path });
    }
    Ok(roms)
}

/// `--input-file`: per-ROM press schedules. A TOML file:
///
/// ```toml
/// # for every ROM without an entry of its own
/// default = ["120:S"]
///
/// [roms]
/// # key: the ROM's path relative to --roms (as in sweep.json), or just its file name
/// "games/Tetris.nes" = ["100:S", "160:S:2", "200:A+B:30"]
/// "nestest.nes" = []
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputSpec {
    pub default: Vec<ScheduledPress>,
    pub roms: BTreeMap<String, Vec<ScheduledPress>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InputSpecFile {
    #[serde(default)]
    default: Vec<String>,
    #[serde(default)]
    roms: BTreeMap<String, Vec<String>>,
}

/// Why a sweep's input specification (`--input-file`) is refused.
#[derive(Debug, thiserror::Error)]
pub enum InputSpecError {
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// An entry of `place` (`default`, or `roms."KEY"`) is not a press.
    #[error("{place}: {source}")]
    Press { place: String, source: PressError },
}

fn parse_presses(entries: &[String], place: &str) -> Result<Vec<ScheduledPress>, InputSpecError> {
    entries
        .iter()
        .map(|entry| {
            ScheduledPress::parse(entry).map_err(|source| InputSpecError::Press {
                place: place.to_owned(),
                source,
            })
        })
        .collect()
}

impl InputSpec {
    pub fn parse(text: &str) -> Result<InputSpec, InputSpecError> {
        let file: InputSpecFile = toml::from_str(text)?;
        let default = parse_presses(&file.default, "default")?;
        let mut roms = BTreeMap::new();
        for (key, entries) in &file.roms {
            roms.insert(
                key.clone(),
                parse_presses(entries, &format!("roms.\"{key}\""))?,
            );
        }
        Ok(InputSpec { default, roms })
    }

    pub fn load(path: &Path) -> Result<InputSpec, Error> {
        let text = crate::limits::read_text_limited(path, &crate::limits::SWEEP_INPUT_SPEC)?;
        InputSpec::parse(&text).map_err(|source| Error::SweepInput {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The presses for the ROM `key`: its own entry (by key, else by file name), else the
    /// default.
    pub fn presses_for(&self, key: &str) -> &[ScheduledPress] {
        let file_name = key.rsplit('/').next().unwrap_or(key);
        self.roms
            .get(key)
            .or_else(|| self.roms.get(file_name))
            .unwrap_or(&self.default)
    }

    /// Entries that match none of `roms` (probably misspelt).
    pub fn unused_entries<'a>(&'a self, roms: &[FoundRom]) -> Vec<&'a str> {
        self.roms
            .keys()
            .filter(|entry| {
                !roms.iter().any(|rom| {
                    rom.key == **entry || rom.key.rsplit('/').next() == Some(entry.as_str())
                })
            })
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nes::Buttons;

    #[test]
    fn folders_are_searched_recursively_and_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("b/deep")).unwrap();
        for name in ["z.nes", "b/deep/a.NES", "b/readme.txt", "a.nes"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let roms = find_roms(dir.path()).unwrap();
        let keys: Vec<&str> = roms.iter().map(|rom| rom.key.as_str()).collect();
        assert_eq!(keys, ["a.nes", "b/deep/a.NES", "z.nes"]);
        assert_eq!(roms[1].path, dir.path().join("b/deep/a.NES"));
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(find_roms(empty.path()), Err(Error::NoRoms(_))));
        assert!(find_roms(empty.path())
            .unwrap_err()
            .to_string()
            .contains("no ROMs"));
        let missing = find_roms(&empty.path().join("missing")).unwrap_err();
        assert!(matches!(missing, Error::Folder { action: "read", .. }));
        assert!(missing.to_string().contains("cannot read"));
    }

    #[test]
    fn lists_resolve_against_their_folder_and_keep_keys_unique() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("list.txt");
        std::fs::write(
            &list,
            "# my library\ngames/a.nes\n\n./b.nes  # comment\n/abs/elsewhere/a.nes\n../up/a.nes\n",
        )
        .unwrap();
        let roms = find_roms(&list).unwrap();
        let keys: Vec<&str> = roms.iter().map(|rom| rom.key.as_str()).collect();
        assert_eq!(keys, ["games/a.nes", "b.nes", "a.nes", "2-a.nes"]);
        assert_eq!(roms[0].path, dir.path().join("games/a.nes"));
        assert_eq!(roms[2].path, Path::new("/abs/elsewhere/a.nes"));
    }

    #[test]
    fn input_spec_by_key_then_file_name_then_default() {
        let spec = InputSpec::parse(
            "default = [\"120:S\"]\n[roms]\n\"games/Tetris.nes\" = [\"100:S\", \"200:A+B:30\"]\n\
             \"nestest.nes\" = []\n",
        )
        .unwrap();
        let tetris = spec.presses_for("games/Tetris.nes");
        assert_eq!(tetris.len(), 2);
        assert_eq!(tetris[1].buttons, Buttons::A | Buttons::B);
        assert!(spec.presses_for("cpu/nestest/nestest.nes").is_empty());
        assert_eq!(spec.presses_for("other.nes")[0].first_frame, 120);
        let roms = [FoundRom {
            key: "cpu/nestest/nestest.nes".into(),
            path: "x".into(),
        }];
        assert_eq!(spec.unused_entries(&roms), ["games/Tetris.nes"]);
    }

    #[test]
    fn input_spec_errors_name_the_entry() {
        let error = InputSpec::parse("[roms]\n\"a.nes\" = [\"0:S\"]\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("roms.\"a.nes\""), "{error}");
        assert!(error.contains("counted from 1"), "{error}");
        assert!(InputSpec::parse("defaults = []").is_err(), "unknown keys");
    }
}
