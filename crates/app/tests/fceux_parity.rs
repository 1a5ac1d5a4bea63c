//! FCEUX parity (tests/fceux/README.md): for every case of `tests/fceux/cases.toml`,
//! `nes run ROM --movie MOVIE --lua parity.lua`, with no other flag (as a user runs FCEUX
//! material), must write the log FCEUX 2.6.5 wrote for it (`tests/fceux/logs/`) byte for
//! byte: frame and lag counts, the lag flag, the movie's mode and all of CPU RAM at every
//! frame boundary. One trial per case; cases on the public test ROMs are skipped (with a
//! message) without them, and fail under CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(Debug, Clone, Deserialize)]
struct Case {
    name: String,
    /// A ROM under tests/fceux.
    rom: Option<String>,
    /// A public test ROM, relative to the shared test-ROM folder.
    test_rom: Option<String>,
    /// A recorded movie.
    movie: Option<String>,
    /// The number of lines of the generated movie `movies/NAME.fm2`.
    lines: Option<u32>,
    /// The script, when it is not `parity.lua`.
    script: Option<String>,
}

impl Case {
    /// The case's movie: a recorded one, the generated one, or none.
    fn movie(&self) -> Option<PathBuf> {
        match (&self.movie, self.lines) {
            (Some(movie), _) => Some(suite().join(movie)),
            (None, Some(_)) => Some(suite().join(format!("movies/{}.fm2", self.name))),
            (None, None) => None,
        }
    }
}

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fceux")
}

fn test_rom_folder() -> Result<PathBuf, String> {
    nes_headless::test_roms::find_manifest(None)
        .map(|manifest| nes_headless::test_roms::manifest_root(&manifest))
        .map_err(|e| e.to_string())
}

/// The differences between two parity logs, as a reader wants them: the first differing
/// line, its frame, and the RAM bytes that differ there (the logs hold RAM as changes, so
/// both are replayed up to that line).
fn describe_difference(expected: &str, actual: &str) -> String {
    let mut ram_expected = [None::<u8>; 0x800];
    let mut ram_actual = [None::<u8>; 0x800];
    let apply = |ram: &mut [Option<u8>; 0x800], line: &str| {
        for run in line.split(' ').skip(5) {
            let Some((addr, bytes)) = run.split_once(':') else {
                continue;
            };
            let Ok(start) = usize::from_str_radix(addr, 16) else {
                continue;
            };
            for (offset, pair) in bytes.as_bytes().chunks(2).enumerate() {
                let value = std::str::from_utf8(pair)
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                if let Some(slot) = ram.get_mut(start + offset) {
                    *slot = value;
                }
            }
        }
    };
    let mut expected_lines = expected.lines();
    let mut actual_lines = actual.lines();
    for number in 1.. {
        let (e, a) = (expected_lines.next(), actual_lines.next());
        match (e, a) {
            (None, None) => return "the logs are equal".to_owned(),
            (Some(e), Some(a)) => {
                apply(&mut ram_expected, e);
                apply(&mut ram_actual, a);
                if e == a {
                    continue;
                }
                let head = |line: &str| line.split(' ').take(5).collect::<Vec<_>>().join(" ");
                let bytes: Vec<String> = (0..0x800)
                    .filter(|&addr| ram_expected[addr] != ram_actual[addr])
                    .take(24)
                    .map(|addr| {
                        let show =
                            |v: Option<u8>| v.map_or("--".to_owned(), |v| format!("{v:02x}"));
                        format!(
                            "${addr:04X} {} here {}",
                            show(ram_expected[addr]),
                            show(ram_actual[addr])
                        )
                    })
                    .collect();
                return format!(
                    "line {number} differs: FCEUX `{}`, here `{}`; RAM (FCEUX / here): {}",
                    head(e),
                    head(a),
                    if bytes.is_empty() {
                        "the same".to_owned()
                    } else {
                        bytes.join(", ")
                    }
                );
            }
            (Some(e), None) => return format!("the log ends at line {number}; FCEUX has `{e}`"),
            (None, Some(a)) => return format!("line {number} is extra: `{a}`"),
        }
    }
    unreachable!()
}

/// The first line where a script's log differs from FCEUX's (logs other than parity.lua's
/// are plain text).
fn first_difference(expected: &str, actual: &str) -> String {
    let mut expected_lines = expected.lines();
    let mut actual_lines = actual.lines();
    for number in 1.. {
        match (expected_lines.next(), actual_lines.next()) {
            (None, None) => break,
            (Some(e), Some(a)) if e == a => {}
            (Some(e), Some(a)) => {
                return format!("line {number} differs:\n  FCEUX: {e}\n  here:  {a}")
            }
            (Some(e), None) => return format!("the log ends at line {number}; FCEUX has `{e}`"),
            (None, Some(a)) => return format!("line {number} is extra: `{a}`"),
        }
    }
    "the logs differ in their line ends".to_owned()
}

fn run_case(case: &Case, rom: &Path) -> Result<(), Failed> {
    let suite = suite();
    let expected = std::fs::read_to_string(suite.join("logs").join(format!("{}.log", case.name)))
        .map_err(|e| format!("no FCEUX log for {}: {e}", case.name))?;
    // The script writes parity.log in its own folder, as FCEUX has it.
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let script_path = case.script.as_deref().unwrap_or("parity.lua");
    let script_name = Path::new(script_path).file_name().unwrap_or_default();
    let script = work.path().join(script_name);
    std::fs::copy(suite.join(script_path), &script).map_err(|e| e.to_string())?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_nes"));
    command.arg("run").arg(rom);
    if let Some(movie) = case.movie() {
        command.arg("--movie").arg(movie);
    }
    let output = command
        .arg("--lua")
        .arg(&script)
        .output()
        .map_err(|e| format!("cannot run nes: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("nes run failed: {stderr}").into());
    }
    if stderr.contains("lua error") || stderr.contains("warning") {
        return Err(format!("nes run complained: {stderr}").into());
    }
    let actual = std::fs::read_to_string(work.path().join("parity.log"))
        .map_err(|e| format!("the script wrote no log: {e}; stderr: {stderr}"))?;
    if actual == expected {
        Ok(())
    } else if case.script.is_some() {
        Err(first_difference(&expected, &actual).into())
    } else {
        Err(describe_difference(&expected, &actual).into())
    }
}

/// `movies/probe-recorded-here.fm2` is what `nes run --record` writes for `record.lua`: the
/// movie FCEUX replayed for its log is the one this build records.
fn recording_is_reproducible() -> Result<(), Failed> {
    let suite = suite();
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let recorded = work.path().join("recorded.fm2");
    let output = Command::new(env!("CARGO_BIN_EXE_nes"))
        .arg("run")
        .arg(suite.join("roms/probe.nes"))
        .arg("--lua")
        .arg(suite.join("record.lua"))
        .arg("--record")
        .arg(&recorded)
        .args(["--frames", "300"])
        .output()
        .map_err(|e| format!("cannot run nes: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned().into());
    }
    // Everything but the recording's own identity (guid) and the program's version.
    let lines = |path: &Path| -> Result<Vec<String>, Failed> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        Ok(text
            .lines()
            .filter(|line| !line.starts_with("guid ") && !line.starts_with("emuVersion "))
            .map(str::to_owned)
            .collect())
    };
    let expected = lines(&suite.join("movies/probe-recorded-here.fm2"))?;
    let actual = lines(&recorded)?;
    match expected.iter().zip(&actual).position(|(e, a)| e != a) {
        _ if expected == actual => Ok(()),
        Some(at) => Err(format!(
            "line {}: committed `{}`, recorded `{}`",
            at + 1,
            expected[at],
            actual[at]
        )
        .into()),
        None => Err(format!(
            "{} lines committed, {} recorded",
            expected.len(),
            actual.len()
        )
        .into()),
    }
}

/// The Lua API parity scripts, `tests/fceux/lua/NAME.lua`: case `lua-NAME`, on the ROM its
/// first line names (`-- rom: PATH` under tests/fceux, or `-- test_rom: PATH` under the
/// test-ROM folder), with the movie a `-- movie: PATH` line after it names (under tests/fceux).
fn lua_cases() -> Vec<Case> {
    let folder = suite().join("lua");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("tests/fceux/lua")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "lua"))
        .collect();
    scripts.sort();
    scripts
        .into_iter()
        .map(|path| {
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let text = std::fs::read_to_string(&path).expect("a parity script");
            let mut lines = text.lines();
            let first = lines.next().unwrap_or_default();
            let movie = lines
                .next()
                .and_then(|line| line.strip_prefix("-- movie: "))
                .map(|movie| movie.trim().to_owned());
            let mut case = Case {
                name: format!("lua-{stem}"),
                rom: None,
                test_rom: None,
                movie,
                lines: None,
                script: Some(format!("lua/{file}")),
            };
            if let Some(rom) = first.strip_prefix("-- rom: ") {
                case.rom = Some(rom.trim().to_owned());
            } else if let Some(rom) = first.strip_prefix("-- test_rom: ") {
                case.test_rom = Some(rom.trim().to_owned());
            } else {
                panic!(
                    "{} must start with `-- rom: PATH` or `-- test_rom: PATH`",
                    path.display()
                );
            }
            case
        })
        .collect()
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let text = std::fs::read_to_string(suite().join("cases.toml")).expect("tests/fceux/cases.toml");
    let mut cases: Cases = toml::from_str(&text).expect("cases.toml parses");
    cases.case.extend(lua_cases());
    let roms = test_rom_folder();
    let mut trials = vec![Trial::test(
        "fceux_parity::recording_is_reproducible",
        recording_is_reproducible,
    )];
    // Every reference log belongs to a case (a renamed case leaves none behind).
    let names: Vec<String> = cases.case.iter().map(|case| case.name.clone()).collect();
    trials.push(Trial::test(
        "fceux_parity::every_log_has_a_case",
        move || {
            let logs = std::fs::read_dir(suite().join("logs")).map_err(|e| e.to_string())?;
            for entry in logs {
                let path = entry.map_err(|e| e.to_string())?.path();
                let stem = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                if !names.contains(&stem) {
                    return Err(format!("{} belongs to no case", path.display()).into());
                }
            }
            Ok(())
        },
    ));
    for case in cases.case {
        let name = format!("fceux_parity::{}", case.name);
        let rom = match (&case.rom, &case.test_rom, &roms) {
            (Some(rom), _, _) => Ok(suite().join(rom)),
            (None, Some(test_rom), Ok(folder)) => Ok(folder.join(test_rom)),
            (None, Some(_), Err(error)) => Err(error.clone()),
            (None, None, _) => panic!("case {} has neither rom nor test_rom", case.name),
        };
        trials.push(match rom {
            Ok(rom) => Trial::test(name, move || run_case(&case, &rom)),
            Err(error) if std::env::var_os("CI").is_some() => Trial::test(name, move || {
                Err(format!("CI is set but the test ROMs are missing: {error}").into())
            }),
            Err(error) => {
                eprintln!("{name} skipped: {error}");
                Trial::test(name, || Ok(())).with_ignored_flag(true)
            }
        });
    }
    libtest_mimic::run(&args, trials).exit_code()
}
