//! `nes test-roms`: run the public test ROMs of `shared/test-roms/MANIFEST.toml` headlessly and
//! judge each by its result protocol (see that folder's README.md).
//!
//! The workspace suite (`tests/rom_suites.rs`) reuses [`run_entry`] per manifest entry.

pub mod accuracycoin;
pub mod accuracycoin_behaviours;
pub mod machine;
pub mod manifest;
pub mod protocols;
pub mod runner;

use std::io::Write;
use std::path::{Path, PathBuf};

pub use accuracycoin::{AccuracyCoinTestResult, TestVerdict};
pub use machine::Machine;
pub use manifest::{
    find_manifest, load_known_failures, load_manifest, manifest_candidates, KnownFailure,
    KnownFailures, Manifest, Protocol, RomEntry,
};
pub use runner::{
    format_table, load_assets, run_entries, run_entry, run_protocol, summary_line, ProtocolAssets,
    RomOutcome,
};

/// Errors that stop `nes test-roms` before or after the runs (a failing ROM is not an error).
#[derive(Debug, thiserror::Error)]
pub enum TestRomError {
    #[error(
        "test-ROM manifest not found; looked for {}. Set NES_TEST_ROMS to the folder holding \
         MANIFEST.toml or pass --manifest PATH",
        display_paths(.searched)
    )]
    ManifestNotFound { searched: Vec<PathBuf> },
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot parse {}: {message}", .path.display())]
    Parse { path: PathBuf, message: String },
    #[error("unknown group {group:?}; the manifest has: {}", .known.join(", "))]
    UnknownGroup { group: String, known: Vec<String> },
    #[error("no manifest entry matches the selection (groups {groups:?}, filter {filter:?})")]
    NothingSelected {
        groups: Vec<String>,
        filter: Option<String>,
    },
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode the JSON report: {0}")]
    Json(#[from] serde_json::Error),
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Options of `nes test-roms`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TestRomsArgs {
    /// Manifest to run [default: $NES_TEST_ROMS/MANIFEST.toml, else ../shared/test-roms/MANIFEST.toml
    /// from the current directory, else from the workspace root]
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,
    /// Run only this group (cpu, ppu, apu, dma_interrupts, mapper, beyond, misc); repeatable
    #[arg(long = "group", value_name = "NAME")]
    pub groups: Vec<String>,
    /// Run only ROMs whose path contains this text
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// ROMs run at the same time [default: available cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Also write one JSON record per ROM to this file
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Run every selected ROM on this console instead of the one its manifest entry names
    /// (each option given replaces the entry's `cpu`, `ppu`, `ports` or `mmc3_revision` key)
    #[command(flatten)]
    pub hardware: crate::hardware::HardwareArgs,
}

/// The entries `groups` and `filter` select, in manifest order.
pub fn select_entries<'a>(
    manifest: &'a Manifest,
    groups: &[String],
    filter: Option<&str>,
) -> Result<Vec<&'a RomEntry>, TestRomError> {
    let mut known: Vec<String> = Vec::new();
    for entry in &manifest.roms {
        if !known.contains(&entry.group) {
            known.push(entry.group.clone());
        }
    }
    if let Some(group) = groups.iter().find(|group| !known.contains(group)) {
        return Err(TestRomError::UnknownGroup {
            group: group.clone(),
            known,
        });
    }
    let selected: Vec<&RomEntry> = manifest
        .roms
        .iter()
        .filter(|entry| groups.is_empty() || groups.contains(&entry.group))
        .filter(|entry| filter.is_none_or(|text| entry.path.contains(text)))
        .collect();
    if selected.is_empty() {
        return Err(TestRomError::NothingSelected {
            groups: groups.to_vec(),
            filter: filter.map(str::to_string),
        });
    }
    Ok(selected)
}

/// The folder manifest paths are relative to.
pub fn manifest_root(manifest_path: &Path) -> PathBuf {
    manifest_path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// `nes test-roms`: run the selected ROMs, print the table (last line `N passed, N failed`) and
/// optionally write the JSON report. Returns `Ok(true)` when every selected ROM passed.
pub fn run(args: &TestRomsArgs, out: &mut dyn Write) -> Result<bool, TestRomError> {
    let manifest_path = find_manifest(args.manifest.as_deref())?;
    let manifest = load_manifest(&manifest_path)?;
    let root = manifest_root(&manifest_path);
    let selected: Vec<RomEntry> = select_entries(&manifest, &args.groups, args.filter.as_deref())?
        .into_iter()
        .map(|entry| {
            let mut entry = entry.clone();
            entry.override_hardware(&args.hardware);
            entry
        })
        .collect();
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |cores| cores.get()))
        .max(1);

    let total = selected.len();
    eprintln!(
        "running {total} ROMs from {} on {jobs} threads",
        manifest_path.display()
    );
    let progress = |finished: usize, outcome: &RomOutcome| {
        let verdict = if outcome.passed { "PASS" } else { "FAIL" };
        eprintln!("[{finished}/{total}] {verdict} {}", outcome.path);
    };
    let outcomes = run_entries(&selected, &root, jobs, &progress);

    let table = format_table(&outcomes);
    // A closed stdout (e.g. piped into `head`) must not turn results into an error.
    let _ = out.write_all(table.as_bytes());
    let _ = out.flush();

    if let Some(json_path) = &args.json {
        write_json(json_path, &outcomes)?;
    }
    Ok(outcomes.iter().all(|outcome| outcome.passed))
}

/// Write the JSON report: an array with one record per ROM.
pub fn write_json(path: &Path, outcomes: &[RomOutcome]) -> Result<(), TestRomError> {
    let mut text = serde_json::to_string_pretty(outcomes)?;
    text.push('\n');
    crate::output::write_atomically(path, text.as_bytes()).map_err(|error| TestRomError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(error.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
schema_version = 1
[[rom]]
path = "cpu/one.nes"
group = "cpu"
protocol = "ram-byte"
region = "ntsc"
max_frames = 600
result_addr = 0xF8
pass_value = 1
done = "jmp-self"

[[rom]]
path = "ppu/two.nes"
group = "ppu"
protocol = "ram-byte"
region = "ntsc"
max_frames = 600
result_addr = 0xF8
pass_value = 1
done = "jmp-self"
"#;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: TestRomsArgs,
    }

    #[test]
    fn command_line_options() {
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "nes",
            "--group",
            "cpu",
            "--group",
            "ppu",
            "--filter",
            "instr",
            "--jobs",
            "3",
            "--json",
            "out.json",
            "--manifest",
            "m.toml",
        ])
        .unwrap();
        assert_eq!(cli.args.groups, ["cpu", "ppu"]);
        assert_eq!(cli.args.filter.as_deref(), Some("instr"));
        assert_eq!(cli.args.jobs, Some(3));
        assert_eq!(cli.args.json, Some(PathBuf::from("out.json")));
        assert_eq!(cli.args.manifest, Some(PathBuf::from("m.toml")));
        let defaults = Cli::try_parse_from(["nes"]).unwrap();
        assert!(defaults.args.groups.is_empty() && defaults.args.jobs.is_none());
    }

    #[test]
    fn selection_by_group_and_filter() {
        let manifest = manifest::parse_manifest(Path::new("m"), MANIFEST).unwrap();
        let all = select_entries(&manifest, &[], None).unwrap();
        assert_eq!(all.len(), 2);
        let ppu = select_entries(&manifest, &["ppu".into()], None).unwrap();
        assert_eq!(ppu[0].path, "ppu/two.nes");
        let filtered = select_entries(&manifest, &[], Some("one")).unwrap();
        assert_eq!(filtered[0].path, "cpu/one.nes");
        assert!(matches!(
            select_entries(&manifest, &["gpu".into()], None),
            Err(TestRomError::UnknownGroup { .. })
        ));
        assert!(matches!(
            select_entries(&manifest, &["cpu".into()], Some("two")),
            Err(TestRomError::NothingSelected { .. })
        ));
    }

    #[test]
    fn run_reports_unloadable_roms_as_failures_and_writes_json() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let manifest_path = dir.join("MANIFEST.toml");
        std::fs::write(&manifest_path, MANIFEST).unwrap();
        let json_path = dir.join("report.json");
        let args = TestRomsArgs {
            manifest: Some(manifest_path),
            groups: Vec::new(),
            filter: None,
            jobs: Some(2),
            json: Some(json_path.clone()),
            hardware: Default::default(),
        };
        let mut table = Vec::new();
        let all_passed = run(&args, &mut table).unwrap();
        assert!(!all_passed);
        let table = String::from_utf8(table).unwrap();
        assert!(table.ends_with("0 passed, 2 failed\n"), "{table}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        let records = report.as_array().unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0]["path"], "cpu/one.nes");
        assert_eq!(records[0]["group"], "cpu");
        assert_eq!(records[0]["protocol"], "ram-byte");
        assert_eq!(records[0]["passed"], false);
        assert_eq!(records[0]["frames"], 0);
        assert!(records[0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("cannot read"));
    }

    #[test]
    fn missing_manifest_error_names_where_it_looked() {
        let error = find_manifest(Some(Path::new("/no/such/MANIFEST.toml"))).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("/no/such/MANIFEST.toml"), "{message}");
        assert!(message.contains("NES_TEST_ROMS"), "{message}");
    }

    #[test]
    fn default_candidates_end_with_the_workspace_copy() {
        if std::env::var_os("NES_TEST_ROMS").is_some() {
            return; // then the variable's folder is the only candidate
        }
        let candidates = manifest_candidates();
        let last = candidates.last().unwrap();
        assert!(last.ends_with("shared/test-roms/MANIFEST.toml"));
        assert!(last.starts_with(env!("CARGO_MANIFEST_DIR")));
    }
}
