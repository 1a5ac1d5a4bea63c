//! Running manifest entries: one entry on one thread from power-on to verdict, many entries in
//! parallel, and the table / JSON reports.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use nes::Cartridge;

use crate::hardware::HardwareChoice;
use serde::Serialize;

use super::accuracycoin::{run_accuracycoin, AccuracyCoinTestResult};
use super::machine::Machine;
use super::manifest::{load_accuracycoin_table, AccuracyCoinTest, Protocol, RomEntry};
use super::protocols::{run_blargg_6000, run_nestest, run_ram_byte, run_screen, ProtocolOutcome};

/// The verdict for one manifest entry; serialised as one record of the `--json` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RomOutcome {
    pub path: String,
    pub group: String,
    pub protocol: String,
    pub passed: bool,
    /// Frames emulated from power-on until the verdict.
    pub frames: u64,
    pub detail: String,
    /// AccuracyCoin only: one record per test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<AccuracyCoinTestResult>>,
}

impl RomOutcome {
    fn new(entry: &RomEntry, frames: u64, outcome: ProtocolOutcome) -> RomOutcome {
        RomOutcome {
            path: entry.path.clone(),
            group: entry.group.clone(),
            protocol: entry.protocol.name().to_string(),
            passed: outcome.passed,
            frames,
            detail: outcome.detail,
            tests: outcome.tests,
        }
    }

    fn failed(entry: &RomEntry, detail: String) -> RomOutcome {
        RomOutcome::new(entry, 0, ProtocolOutcome::fail(detail))
    }
}

/// Files a protocol needs besides the ROM image, loaded before the console is powered on.
#[derive(Debug, Clone)]
pub enum ProtocolAssets {
    None,
    NestestLog(String),
    AccuracyCoinTests(Vec<AccuracyCoinTest>),
}

/// The protocol's files for `entry` (paths relative to `root`, the manifest's folder).
pub fn load_assets(entry: &RomEntry, root: &Path) -> Result<ProtocolAssets, String> {
    match &entry.protocol {
        Protocol::NestestLog(spec) => {
            let path = root.join(&spec.log);
            crate::limits::read_text_limited(&path, &crate::limits::NESTEST_LOG)
                .map(ProtocolAssets::NestestLog)
                .map_err(|error| format!("log: {error}"))
        }
        Protocol::AccuracyCoin(spec) => load_accuracycoin_table(&root.join(&spec.results_table))
            .map(|table| ProtocolAssets::AccuracyCoinTests(table.counted_tests()))
            .map_err(|error| error.to_string()),
        _ => Ok(ProtocolAssets::None),
    }
}

/// Drive a freshly powered-on machine through the entry's protocol.
pub fn run_protocol<M: Machine>(
    machine: &mut M,
    entry: &RomEntry,
    assets: &ProtocolAssets,
) -> RomOutcome {
    let max_frames = entry.max_frames;
    let outcome = match (&entry.protocol, assets) {
        (Protocol::Blargg6000(spec), _) => run_blargg_6000(machine, spec, max_frames),
        (Protocol::RamByte(spec), _) => run_ram_byte(machine, spec, max_frames),
        (Protocol::Screen(spec), _) => run_screen(machine, spec, max_frames),
        (Protocol::NestestLog(spec), ProtocolAssets::NestestLog(log)) => {
            run_nestest(machine, spec, log, max_frames)
        }
        (Protocol::AccuracyCoin(spec), ProtocolAssets::AccuracyCoinTests(tests)) => {
            match entry.hardware() {
                Ok(choice) => run_accuracycoin(machine, spec, tests, &choice.hardware, max_frames),
                Err(detail) => ProtocolOutcome::fail(detail),
            }
        }
        (protocol, _) => {
            ProtocolOutcome::fail(format!("internal: {} assets missing", protocol.name()))
        }
    };
    RomOutcome::new(entry, machine.frame_count(), outcome)
}

/// Run one manifest entry from a cold power-on to its verdict. `root` is the manifest's folder.
/// Never panics: a missing file, a load error or an emulator panic is a FAIL with the reason.
/// (Catching the panic needs panic = "unwind", which the release profile keeps for this and
/// for the Lua host: see the workspace Cargo.toml and the test below that checks it.)
pub fn run_entry(entry: &RomEntry, root: &Path) -> RomOutcome {
    run_entry_on(entry, root, &|cart, hardware| {
        hardware.power_on(cart, nes::PowerOn::HARDWARE)
    })
}

/// [`run_entry`] on the machine `power_on` makes of the cartridge and the entry's console
/// (tests inject fakes).
fn run_entry_on<M: Machine>(
    entry: &RomEntry,
    root: &Path,
    power_on: &dyn Fn(Cartridge, &HardwareChoice) -> M,
) -> RomOutcome {
    let assets = match load_assets(entry, root) {
        Ok(assets) => assets,
        Err(detail) => return RomOutcome::failed(entry, detail),
    };
    let rom_path = root.join(&entry.path);
    let bytes = match crate::limits::read_limited(&rom_path, &crate::limits::ROM) {
        Ok(bytes) => bytes,
        Err(error) => return RomOutcome::failed(entry, error.to_string()),
    };
    let hardware = match entry.hardware() {
        Ok(hardware) => hardware,
        Err(detail) => return RomOutcome::failed(entry, detail),
    };
    let run = catch_unwind(AssertUnwindSafe(|| match hardware.cartridge(&bytes) {
        Ok(cart) => run_protocol(&mut power_on(cart, &hardware), entry, &assets),
        Err(error) => RomOutcome::failed(entry, format!("load error: {error}")),
    }));
    run.unwrap_or_else(|payload| {
        RomOutcome::failed(
            entry,
            format!(
                "emulator panicked: {}",
                crate::panic_message(payload.as_ref())
            ),
        )
    })
}

/// Run `entries` on `jobs` threads (each entry on one thread) and return the outcomes in the
/// order of `entries`. `on_done(finished_count, outcome)` is called as each entry finishes.
pub fn run_entries(
    entries: &[RomEntry],
    root: &Path,
    jobs: usize,
    on_done: &(dyn Fn(usize, &RomOutcome) + Sync),
) -> Vec<RomOutcome> {
    run_entries_with(entries, jobs, on_done, &|entry| run_entry(entry, root))
}

/// [`run_entries`] with `run` running each entry (tests inject fakes).
fn run_entries_with(
    entries: &[RomEntry],
    jobs: usize,
    on_done: &(dyn Fn(usize, &RomOutcome) + Sync),
    run: &(dyn Fn(&RomEntry) -> RomOutcome + Sync),
) -> Vec<RomOutcome> {
    // Longest runs first, so one slow ROM does not start last and leave the other threads idle.
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&index| {
        let entry = &entries[index];
        std::cmp::Reverse(entry.measured_frames.unwrap_or(entry.max_frames))
    });
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<RomOutcome>>> = Mutex::new(vec![None; entries.len()]);
    let threads = jobs.clamp(1, entries.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let slot = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = order.get(slot) else { break };
                let Some(entry) = entries.get(index) else {
                    break;
                };
                let outcome = run(entry);
                let count = finished.fetch_add(1, Ordering::Relaxed) + 1;
                on_done(count, &outcome);
                let mut guard = results.lock().unwrap_or_else(|poison| poison.into_inner());
                if let Some(cell) = guard.get_mut(index) {
                    *cell = Some(outcome);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner());
    results
        .into_iter()
        .zip(entries)
        .map(|(outcome, entry)| {
            outcome.unwrap_or_else(|| RomOutcome::failed(entry, "runner thread died".into()))
        })
        .collect()
}

/// The result table: one row per outcome in the given order, then `N passed, N failed`.
pub fn format_table(outcomes: &[RomOutcome]) -> String {
    let rom_width = outcomes
        .iter()
        .map(|outcome| outcome.path.len())
        .chain(std::iter::once("ROM".len()))
        .max()
        .unwrap_or(3);
    let mut table = format!(
        "{:<rom_width$}  {:<6}  {:>6}  DETAIL\n",
        "ROM", "RESULT", "FRAMES"
    );
    for outcome in outcomes {
        let verdict = if outcome.passed { "PASS" } else { "FAIL" };
        table.push_str(&format!(
            "{:<rom_width$}  {:<6}  {:>6}  {}\n",
            outcome.path, verdict, outcome.frames, outcome.detail
        ));
    }
    table.push_str(&summary_line(outcomes));
    table.push('\n');
    table
}

/// `N passed, N failed`.
pub fn summary_line(outcomes: &[RomOutcome]) -> String {
    let passed = outcomes.iter().filter(|outcome| outcome.passed).count();
    format!("{passed} passed, {} failed", outcomes.len() - passed)
}

#[cfg(test)]
mod tests {
    use super::super::machine::fake::FakeMachine;
    use super::super::manifest::parse_manifest;
    use super::*;
    use crate::hardware::{HardwareArgs, HardwareChoice};
    use nes::Mmc3Revision;

    fn entries() -> Vec<RomEntry> {
        let text = r#"
schema_version = 1
[[rom]]
path = "cpu/missing_a.nes"
group = "cpu"
protocol = "ram-byte"
region = "ntsc"
max_frames = 600
measured_frames = 10
result_addr = 0xF8
pass_value = 1
done = "jmp-self"

[[rom]]
path = "beyond/missing_b.nes"
group = "beyond"
protocol = "ram-byte"
region = "ntsc"
max_frames = 600
measured_frames = 500
mmc3_revision = "A"
result_addr = 0xF8
pass_value = 1
done = "jmp-self"

[[rom]]
path = "misc/AccuracyCoin.nes"
group = "misc"
protocol = "accuracycoin"
region = "ntsc"
max_frames = 6000
menu_ready_addr = 0xEC
menu_ready_value = 0x0A
press = "start"
press_frames = 1
running_flag_addr = 0x35
results_first = 0x0400
results_last = 0x0492
results_table = "misc/missing_tests.toml"
tally_total_addr = 0x37
tally_pass_addr = 0x38
tally_skipped_addr = 0x3F
total_tests = 141
pass_mask = 3
pass_value = 1
fail_value = 2
not_run_value = 0
skipped_value = 0xFF
"#;
        parse_manifest(Path::new("test"), text).unwrap().roms
    }

    #[test]
    fn missing_rom_file_is_a_failure_not_an_abort() {
        let entry = &entries()[0];
        let outcome = run_entry(entry, Path::new("/nonexistent-root"));
        assert!(!outcome.passed);
        assert_eq!(outcome.frames, 0);
        assert!(
            outcome
                .detail
                .starts_with("cannot read /nonexistent-root/cpu/missing_a.nes"),
            "{}",
            outcome.detail
        );
        assert_eq!(outcome.protocol, "ram-byte");
    }

    #[test]
    fn missing_accuracycoin_table_is_a_failure() {
        let entry = &entries()[2];
        let outcome = run_entry(entry, Path::new("/nonexistent-root"));
        assert!(!outcome.passed);
        assert!(
            outcome.detail.contains("missing_tests.toml"),
            "{}",
            outcome.detail
        );
    }

    #[test]
    fn parallel_run_keeps_manifest_order() {
        let entries = entries();
        let seen = Mutex::new(Vec::new());
        let outcomes = run_entries(
            &entries,
            Path::new("/nonexistent-root"),
            4,
            &|count, outcome| {
                seen.lock().unwrap().push((count, outcome.path.clone()));
            },
        );
        let paths: Vec<&str> = outcomes.iter().map(|o| o.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "cpu/missing_a.nes",
                "beyond/missing_b.nes",
                "misc/AccuracyCoin.nes"
            ]
        );
        let mut counts: Vec<usize> = seen.into_inner().unwrap().iter().map(|s| s.0).collect();
        counts.sort_unstable();
        assert_eq!(counts, [1, 2, 3]);
    }

    /// A ROM file for each entry of [`entries`] (its content does not matter: the machine is
    /// a fake).
    fn rom_files(entries: &[RomEntry]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let image = nes::ines_image(0, &[0xEA; 0x8000], &[0; 0x2000]);
        for entry in entries {
            let path = dir.path().join(&entry.path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &image).unwrap();
        }
        dir
    }

    /// A fake console that passes the ram-byte protocol in 20 frames, or, for `boom` ROMs,
    /// panics at frame 3 as an emulator bug would.
    fn machine_for(cart: &Cartridge) -> FakeMachine {
        let boom = cart.info().prg_rom_len == 0x4000;
        FakeMachine::new(move |state| {
            if boom && state.frame == 3 {
                panic!("mapper exploded at frame {}", state.frame);
            }
            state.cpu_memory[0xF8] = 1;
            if state.frame >= 20 {
                state.park_at(0xC000);
            }
        })
    }

    #[test]
    fn a_panic_in_one_rom_is_its_failure_and_the_others_still_run() {
        let mut entries: Vec<RomEntry> = entries().into_iter().take(2).collect();
        let mut boom = entries[0].clone();
        boom.path = "cpu/boom.nes".into();
        entries.insert(1, boom);
        let dir = rom_files(&entries);
        // The panicking ROM: a 16 KiB image, which `machine_for` recognises.
        std::fs::write(
            dir.path().join("cpu/boom.nes"),
            nes::ines_image(0, &[0xEA; 0x4000], &[0; 0x2000]),
        )
        .unwrap();
        let root = dir.path();
        for jobs in [1, 3] {
            let outcomes = run_entries_with(&entries, jobs, &|_, _| {}, &|entry| {
                run_entry_on(entry, root, &|cart, _| machine_for(&cart))
            });
            let verdicts: Vec<(&str, bool, &str)> = outcomes
                .iter()
                .map(|o| (o.path.as_str(), o.passed, o.detail.as_str()))
                .collect();
            assert_eq!(
                verdicts,
                [
                    ("cpu/missing_a.nes", true, "$F8 = $01"),
                    (
                        "cpu/boom.nes",
                        false,
                        "emulator panicked: mapper exploded at frame 3"
                    ),
                    ("beyond/missing_b.nes", true, "$F8 = $01"),
                ],
                "{jobs} jobs"
            );
        }
    }

    #[test]
    fn panics_unwind_in_the_builds_that_catch_them() {
        // This test's own build...
        const { assert!(cfg!(panic = "unwind")) };
        // ...and the release build, which `nes test-roms` users run: the workspace profile
        // must not turn panics into aborts, or one ROM's panic would end the whole run.
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let text = std::fs::read_to_string(manifest).unwrap();
        let cargo: toml::Table = toml::from_str(&text).unwrap();
        for profile in ["release", "dev", "test", "bench"] {
            let panic = cargo
                .get("profile")
                .and_then(|profiles| profiles.get(profile))
                .and_then(|settings| settings.get("panic"))
                .and_then(|panic| panic.as_str());
            assert!(
                matches!(panic, None | Some("unwind")),
                "profile.{profile}.panic is {panic:?}: `nes test-roms` needs panics to unwind"
            );
        }
    }

    #[test]
    fn run_protocol_counts_frames() {
        let entries = entries();
        let mut machine = FakeMachine::new(|state| {
            state.cpu_memory[0xF8] = 1;
            if state.frame >= 20 {
                state.park_at(0xC000);
            }
        });
        let outcome = run_protocol(&mut machine, &entries[1], &ProtocolAssets::None);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(outcome.frames, machine.frame_count());
        assert_eq!(outcome.group, "beyond");
    }

    #[test]
    fn hardware_keys_select_the_console_and_bad_ones_are_reported() {
        let mut entry = entries()[0].clone();
        assert_eq!(
            entry.hardware(),
            Ok(HardwareChoice {
                region: Some(nes::Region::Ntsc),
                ..HardwareChoice::default()
            })
        );
        entry.region = "pal".into();
        assert_eq!(entry.hardware().unwrap().region, Some(nes::Region::Pal));
        entry.region = "secam".into();
        assert!(entry
            .hardware()
            .unwrap_err()
            .contains("manifest key `region`: unknown region `secam`"));
        entry.region = "ntsc".into();
        entry.mmc3_revision = Some("A".into());
        entry.cpu = Some("late-g".into());
        entry.ports = Some("famicom".into());
        let choice = entry.hardware().unwrap();
        assert_eq!(choice.mmc3, Some(Mmc3Revision::A));
        assert_eq!(choice.hardware.cpu, nes::CpuRevision::LateG);
        assert_eq!(choice.hardware.ports, nes::ControllerPorts::Famicom);
        entry.mmc3_revision = Some("C".into());
        assert!(entry
            .hardware()
            .unwrap_err()
            .contains("manifest key `mmc3_revision`: unknown MMC3 revision `C`"));
        let outcome = run_entry(&entry, Path::new("/nonexistent-root"));
        assert!(!outcome.passed);
    }

    #[test]
    fn command_line_hardware_replaces_the_entry_keys() {
        let mut entry = entries()[1].clone();
        entry.ppu = Some("g".into());
        entry.override_hardware(&HardwareArgs {
            ppu: Some(nes::PpuRevision::PreG),
            ..HardwareArgs::default()
        });
        assert_eq!(entry.ppu.as_deref(), Some("pre-g"));
        assert_eq!(
            entry.hardware().unwrap().hardware.ppu,
            nes::PpuRevision::PreG
        );
    }

    #[test]
    fn table_ends_with_summary_line() {
        let outcomes = vec![
            RomOutcome {
                path: "cpu/a.nes".into(),
                group: "cpu".into(),
                protocol: "blargg-6000".into(),
                passed: true,
                frames: 20,
                detail: "Passed".into(),
                tests: None,
            },
            RomOutcome {
                path: "ppu/longer_name.nes".into(),
                group: "ppu".into(),
                protocol: "ram-byte".into(),
                passed: false,
                frames: 600,
                detail: "code 2".into(),
                tests: None,
            },
        ];
        let table = format_table(&outcomes);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("ROM                  RESULT  FRAMES  DETAIL"));
        assert_eq!(lines[1], "cpu/a.nes            PASS        20  Passed");
        assert_eq!(lines[2], "ppu/longer_name.nes  FAIL       600  code 2");
        assert_eq!(lines[3], "1 passed, 1 failed");

        let json = serde_json::to_value(&outcomes).unwrap();
        assert_eq!(json[1]["passed"], false);
        assert_eq!(json[1]["frames"], 600);
        assert!(json[0].get("tests").is_none());
    }
}
