//! The public test-ROM suites: one trial per entry of `shared/test-roms/MANIFEST.toml`, named
//! `group::path` (e.g. `cpu::instr_test-v5/rom_singles/01-basics`), judged by the same runner as
//! `nes test-roms`; then one per entry of `MANIFEST-pal.toml` (group `pal`, run as PAL consoles).
//!
//! ROMs listed in `tests/known_failures.toml` become ignored trials. Run them with
//! `cargo test --test rom_suites -- --ignored`; any that pass are listed at the end so the list
//! can be pruned. Set `NES_ROM_SUITES_VERBOSE=1` to print every verdict's detail.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use libtest_mimic::{Arguments, Failed, Trial};
use nes::{ControllerPorts, CpuRevision, PpuRevision};
use nes_headless::hardware::HardwareArgs;
use nes_headless::test_roms::{
    load_known_failures, load_manifest, manifest_root, run_entry, KnownFailures, Protocol, RomEntry,
};
use nes_workspace_tests::suite_manifest;

fn known_failures_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/known_failures.toml")
}

/// Set to print every trial's verdict and detail, passes included.
const VERBOSE_VAR: &str = "NES_ROM_SUITES_VERBOSE";

/// Run one entry; `Err` carries the runner's detail.
fn judge(entry: &RomEntry, root: &Path) -> Result<(), Failed> {
    let outcome = run_entry(entry, root);
    if std::env::var_os(VERBOSE_VAR).is_some() {
        let verdict = if outcome.passed { "PASS" } else { "FAIL" };
        eprintln!(
            "{verdict} {} ({} frames): {}",
            entry.path, outcome.frames, outcome.detail
        );
    }
    if outcome.passed {
        Ok(())
    } else {
        Err(format!(
            "{} after {} frames: {}",
            entry.path, outcome.frames, outcome.detail
        )
        .into())
    }
}

fn main() -> ExitCode {
    let args = Arguments::from_args();

    let (manifest, root) = match suite_manifest("rom_suites", &args) {
        Ok(found) => found,
        Err(exit) => return exit,
    };
    let known = match load_known_failures(&known_failures_path()) {
        Ok(known) => known,
        Err(error) => {
            eprintln!("cannot use the known-failure list: {error}");
            return ExitCode::FAILURE;
        }
    };
    warn_about_stale_entries(&known, &manifest.roms);

    let now_passing: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let mut trials: Vec<Trial> = manifest
        .roms
        .iter()
        .map(|entry| {
            let entry = entry.clone();
            let root = root.clone();
            match known.find(&entry.path) {
                None => Trial::test(entry.test_name(), move || judge(&entry, &root)),
                Some(known_failure) => {
                    let name = format!(
                        "{} (known failure, issue #{})",
                        entry.test_name(),
                        known_failure.issue
                    );
                    let now_passing = Arc::clone(&now_passing);
                    let label = format!("{} (issue #{})", entry.path, known_failure.issue);
                    Trial::test(name, move || {
                        judge(&entry, &root)?;
                        now_passing
                            .lock()
                            .unwrap_or_else(|poison| poison.into_inner())
                            .push(label);
                        Ok(())
                    })
                    .with_ignored_flag(true)
                }
            }
        })
        .collect();
    trials.extend(accuracycoin_on_other_consoles(&manifest.roms, &root));
    trials.extend(pal_manifest_trials(&root));

    let conclusion = libtest_mimic::run(&args, trials);

    let mut passing = now_passing
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .clone();
    if !passing.is_empty() {
        passing.sort();
        println!(
            "\n{} known failure(s) now pass; remove them from tests/known_failures.toml:",
            passing.len()
        );
        for label in &passing {
            println!("    {label}");
        }
    }
    conclusion.exit_code()
}

/// The PAL suite, `MANIFEST-pal.toml` beside the main manifest (group `pal`, each entry on
/// the region its `region` key names). Missing, it is one failing trial under CI (the
/// shared folder is incomplete) and a loud skip elsewhere.
fn pal_manifest_trials(root: &Path) -> Vec<Trial> {
    let path = root.join("MANIFEST-pal.toml");
    if !path.is_file() {
        if std::env::var_os("CI").is_some() {
            let message = format!("{} is missing", path.display());
            return vec![Trial::test("pal::manifest", move || Err(message.into()))];
        }
        eprintln!(
            "rom_suites: {} missing: the PAL suite is skipped",
            path.display()
        );
        return Vec::new();
    }
    let manifest = match load_manifest(&path) {
        Ok(manifest) => manifest,
        Err(error) => {
            let message = format!("{}: {error}", path.display());
            return vec![Trial::test("pal::manifest", move || Err(message.into()))];
        }
    };
    let pal_root = manifest_root(&path);
    manifest
        .roms
        .into_iter()
        .map(|entry| {
            let root = pal_root.clone();
            Trial::test(entry.test_name(), move || judge(&entry, &root))
        })
        .collect()
}

/// AccuracyCoin on each other console it tells apart: each must pass with that console's
/// own behaviour codes (see `nes_headless::test_roms::accuracycoin_behaviours`); the manifest entry
/// itself runs on the reference console.
fn accuracycoin_on_other_consoles(roms: &[RomEntry], root: &Path) -> Vec<Trial> {
    let Some(entry) = roms
        .iter()
        .find(|entry| matches!(entry.protocol, Protocol::AccuracyCoin(_)))
    else {
        return Vec::new();
    };
    let consoles = [
        (
            "late-g-cpu",
            HardwareArgs {
                cpu: Some(CpuRevision::LateG),
                ..Default::default()
            },
        ),
        (
            "pre-g-ppu",
            HardwareArgs {
                ppu: Some(PpuRevision::PreG),
                ..Default::default()
            },
        ),
        (
            "famicom-ports",
            HardwareArgs {
                ports: Some(ControllerPorts::Famicom),
                ..Default::default()
            },
        ),
        (
            "top-loader-ports",
            HardwareArgs {
                ports: Some(ControllerPorts::TopLoader),
                ..Default::default()
            },
        ),
    ];
    consoles
        .into_iter()
        .map(|(console, hardware)| {
            let mut entry = entry.clone();
            entry.override_hardware(&hardware);
            let root = root.to_path_buf();
            Trial::test(format!("{}::on-{console}", entry.test_name()), move || {
                judge(&entry, &root)
            })
        })
        .collect()
}

/// Known failures that name no manifest entry are probably typos or renamed ROMs.
fn warn_about_stale_entries(known: &KnownFailures, roms: &[RomEntry]) {
    for stale in known
        .roms
        .iter()
        .filter(|known| !roms.iter().any(|entry| entry.path == known.path))
    {
        eprintln!(
            "warning: tests/known_failures.toml lists {:?}, which is not in the manifest",
            stale.path
        );
    }
}
