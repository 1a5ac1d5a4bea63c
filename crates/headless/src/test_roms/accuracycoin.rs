//! The `accuracycoin` protocol: boot AccuracyCoin to its menu, press Start once to run every
//! test, wait for the run to end and read one result byte per test.

use nes::{Buttons, Hardware};
use serde::Serialize;

use super::accuracycoin_behaviours::{expected, multi_code_test, variant_of, Expected};
use super::machine::{truncate, Machine};
use super::manifest::{AccuracyCoinSpec, AccuracyCoinTest};
use super::protocols::ProtocolOutcome;

/// What one test's result byte says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TestVerdict {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    #[serde(rename = "not run")]
    NotRun,
    #[serde(rename = "skipped")]
    Skipped,
}

/// One AccuracyCoin test's result, as written to the JSON report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccuracyCoinTestResult {
    pub index: u32,
    pub name: String,
    pub result_addr: u16,
    pub result: TestVerdict,
    /// Pass: the variant code (0 = plain pass); fail: the error code. `None` otherwise.
    pub code: Option<u8>,
    /// The result byte as read.
    pub raw: u8,
    /// For a test with several passing behaviours: the hardware the code stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<&'static str>,
    /// Whether the result is the one the emulated console must give (see
    /// `accuracycoin_behaviours`): the expected code, or a skip where the ROM skips.
    pub as_expected: bool,
}

/// Decode a result byte: the skipped and not-run markers first, then the low two bits
/// (pass/fail) with the code in bits 7-2.
pub fn decode_result(byte: u8, spec: &AccuracyCoinSpec) -> (TestVerdict, Option<u8>) {
    if byte == spec.skipped_value {
        (TestVerdict::Skipped, None)
    } else if byte == spec.not_run_value {
        (TestVerdict::NotRun, None)
    } else if byte & spec.pass_mask == spec.pass_value {
        (TestVerdict::Pass, Some(byte >> 2))
    } else {
        // `fail_value`, or a pattern the ROM never writes as a final result: either way the
        // test did not pass.
        (TestVerdict::Fail, Some(byte >> 2))
    }
}

/// A test's menu name with its runs of spaces (column alignment) collapsed.
fn short_name(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An error code as AccuracyCoin prints it: 0-9, then A = 10, B = 11, ...
pub fn code_label(code: u8) -> String {
    match code {
        0..=9 => code.to_string(),
        10..=35 => char::from(b'A' + (code - 10)).to_string(),
        _ => code.to_string(),
    }
}

/// Frames without a change of the running test number after which a test counts as hung.
pub const HANG_FRAMES: u64 = 1200;
/// Longest wait for the menu; the reference emulator reached it in about 32 frames.
pub const BOOT_LIMIT_FRAMES: u64 = 1200;
/// After this many frames a menu-ready value seen at the first sample is trusted even if no
/// earlier boot stage was observed (power-on RAM could hold the ready value by chance).
const BOOT_TRUST_FRAMES: u64 = 60;
/// Frames to wait for the running flag after releasing Start, and how often to try.
const START_WAIT_FRAMES: u64 = 30;
const START_ATTEMPTS: u32 = 3;
/// Frames to wait after the run for the ROM's own tally ($0038 = tests passed).
const TALLY_WAIT_FRAMES: u64 = 20;
/// The detail lists every multi-behaviour test's code, so it is longer than other protocols'.
const DETAIL_LIMIT: usize = 1600;

fn button_for(name: &str) -> Option<Buttons> {
    Some(match name.to_ascii_lowercase().as_str() {
        "start" => Buttons::START,
        "select" => Buttons::SELECT,
        "a" => Buttons::A,
        "b" => Buttons::B,
        _ => return None,
    })
}

/// How the run ended.
enum RunEnd {
    Finished,
    Hung { test: u8 },
    Timeout { test: u8 },
    Jammed { pc: u16, test: u8 },
}

/// Run AccuracyCoin's "run every test" mode and judge it: every counted test must give what
/// `hardware` gives (a pass with that console's behaviour code, or a skip where the ROM skips
/// on it), and the ROM's own tally must agree with the decoded results.
pub fn run_accuracycoin<M: Machine>(
    machine: &mut M,
    spec: &AccuracyCoinSpec,
    tests: &[AccuracyCoinTest],
    hardware: &Hardware,
    max_frames: u64,
) -> ProtocolOutcome {
    if tests.len() != spec.total_tests {
        return ProtocolOutcome::fail(format!(
            "results table lists {} tests, manifest says {}",
            tests.len(),
            spec.total_tests
        ));
    }
    let Some(button) = button_for(&spec.press) else {
        return ProtocolOutcome::fail(format!("manifest: unknown button {:?}", spec.press));
    };

    // 1. Boot to the menu.
    let boot_limit = max_frames.min(BOOT_LIMIT_FRAMES);
    let mut earlier_stage_seen = false;
    loop {
        if machine.frame_count() >= boot_limit {
            return ProtocolOutcome::fail(format!(
                "menu never appeared: ${:04X} = ${:02X} after {boot_limit} frames",
                spec.menu_ready_addr,
                machine.peek(spec.menu_ready_addr)
            ));
        }
        machine.run_frame();
        if let Some(pc) = machine.jammed_at() {
            return ProtocolOutcome::fail(format!(
                "CPU jammed at ${pc:04X} during boot (${:04X} = ${:02X})",
                spec.menu_ready_addr,
                machine.peek(spec.menu_ready_addr)
            ));
        }
        let progress = machine.peek(spec.menu_ready_addr);
        if progress != spec.menu_ready_value {
            earlier_stage_seen = true;
        } else if earlier_stage_seen || machine.frame_count() >= BOOT_TRUST_FRAMES {
            break;
        }
    }

    // 2. Press the button for `press_frames` frames; the NMI handler acts on new presses only,
    //    so release it afterwards and confirm the run started.
    let mut started = false;
    for _ in 0..START_ATTEMPTS {
        machine.set_buttons(0, button);
        for _ in 0..spec.press_frames.max(1) {
            machine.run_frame();
        }
        machine.set_buttons(0, Buttons::empty());
        for _ in 0..START_WAIT_FRAMES {
            if machine.peek(spec.running_flag_addr) != 0 {
                started = true;
                break;
            }
            machine.run_frame();
        }
        if started || machine.peek(spec.running_flag_addr) != 0 {
            started = true;
            break;
        }
    }
    if !started {
        return ProtocolOutcome::fail(format!(
            "pressing {} did not start the run (${:04X} stayed 0)",
            spec.press, spec.running_flag_addr
        ));
    }

    // 3. Wait for the running flag to drop, watching the running test number for hangs.
    let current_test_addr = spec.tally_total_addr;
    let mut current_test = machine.peek(current_test_addr);
    let mut last_change = machine.frame_count();
    let end = loop {
        if machine.peek(spec.running_flag_addr) == 0 {
            break RunEnd::Finished;
        }
        if machine.frame_count() >= max_frames {
            break RunEnd::Timeout { test: current_test };
        }
        machine.run_frame();
        if let Some(pc) = machine.jammed_at() {
            break RunEnd::Jammed {
                pc,
                test: machine.peek(current_test_addr),
            };
        }
        let test = machine.peek(current_test_addr);
        if test != current_test {
            current_test = test;
            last_change = machine.frame_count();
        } else if machine.frame_count().saturating_sub(last_change) > HANG_FRAMES {
            break RunEnd::Hung { test };
        }
    };

    // A few frames after the run the ROM draws its grid and stores its own tally; read it as a
    // cross-check of the decoding below. $0037 already equals the test count while the last
    // test runs, so it cannot tell when the tally is ready: wait a fixed number of frames.
    let mut rom_tally = None;
    if matches!(end, RunEnd::Finished) {
        for _ in 0..TALLY_WAIT_FRAMES {
            if machine.frame_count() >= max_frames {
                break;
            }
            machine.run_frame();
        }
        if usize::from(machine.peek(spec.tally_total_addr)) == spec.total_tests {
            rom_tally = Some(machine.peek(spec.tally_pass_addr));
        }
    }

    // 4. Read every result byte (final once the flag is 0; partial after a hang).
    let results: Vec<AccuracyCoinTestResult> = tests
        .iter()
        .map(|test| {
            let raw = machine.peek(test.result_addr);
            let (result, code) = decode_result(raw, spec);
            let as_expected = match expected(test.result_addr, hardware) {
                Expected::Pass(wanted) => result == TestVerdict::Pass && code == Some(wanted),
                Expected::Skipped => result == TestVerdict::Skipped,
            };
            let variant = match (result, code) {
                (TestVerdict::Pass, Some(code)) => variant_of(test.result_addr, code),
                _ => None,
            };
            AccuracyCoinTestResult {
                index: test.index,
                name: test.name.clone(),
                result_addr: test.result_addr,
                result,
                code,
                raw,
                variant,
                as_expected,
            }
        })
        .collect();

    let count = |verdict: TestVerdict| results.iter().filter(|r| r.result == verdict).count();
    let passes = count(TestVerdict::Pass);
    let mut detail = format!(
        "{passes}/{} passed; {} failed, {} not run, {} skipped",
        spec.total_tests,
        count(TestVerdict::Fail),
        count(TestVerdict::NotRun),
        count(TestVerdict::Skipped)
    );
    let test_name = |number: u8| {
        tests
            .iter()
            .find(|test| test.index == u32::from(number))
            .map_or_else(|| "?".to_string(), |test| test.name.clone())
    };
    let tally_agrees = rom_tally.is_some_and(|tally| usize::from(tally) == passes);
    match rom_tally {
        Some(tally) if !tally_agrees => {
            detail.push_str(&format!("; the ROM's own tally says {tally} passed"))
        }
        None if matches!(end, RunEnd::Finished) => detail.push_str(&format!(
            "; the ROM's tally never counted {} tests (${:04X})",
            spec.total_tests, spec.tally_total_addr
        )),
        _ => {}
    }
    match end {
        RunEnd::Finished => {}
        RunEnd::Hung { test } => detail.push_str(&format!(
            "; hang: test #{test} ({}) ran > {HANG_FRAMES} frames",
            test_name(test)
        )),
        RunEnd::Timeout { test } => detail.push_str(&format!(
            "; timeout after {max_frames} frames in test #{test} ({})",
            test_name(test)
        )),
        RunEnd::Jammed { pc, test } => detail.push_str(&format!(
            "; CPU jammed at ${pc:04X} in test #{test} ({})",
            test_name(test)
        )),
    }
    let failures: Vec<String> = results
        .iter()
        .filter(|r| r.result == TestVerdict::Fail)
        .map(|r| format!("{} ({})", r.name, code_label(r.code.unwrap_or(0))))
        .collect();
    if !failures.is_empty() {
        detail.push_str("; failed: ");
        detail.push_str(&failures.join(", "));
    }
    let unexpected: Vec<String> = results
        .iter()
        .filter(|r| !r.as_expected && matches!(r.result, TestVerdict::Pass | TestVerdict::Skipped))
        .map(|r| {
            let wanted = match expected(r.result_addr, hardware) {
                Expected::Pass(code) => format!("pass {}", code_label(code)),
                Expected::Skipped => "a skip".to_string(),
            };
            let got = match (r.result, r.code) {
                (TestVerdict::Pass, Some(code)) => format!("pass {}", code_label(code)),
                _ => "a skip".to_string(),
            };
            format!(
                "{} gave {got}, this console gives {wanted}",
                short_name(&r.name)
            )
        })
        .collect();
    if !unexpected.is_empty() {
        detail.push_str("; not this console's behaviour: ");
        detail.push_str(&unexpected.join(", "));
    }
    let behaviours: Vec<String> = results
        .iter()
        .filter(|r| multi_code_test(r.result_addr).is_some())
        .map(|r| {
            let code = r.code.map_or_else(|| "-".to_string(), code_label);
            match r.variant {
                Some(variant) => format!("{} {code} ({variant})", short_name(&r.name)),
                None => format!("{} {code} ({:?})", short_name(&r.name), r.result),
            }
        })
        .collect();
    if !behaviours.is_empty() {
        detail.push_str(&format!(
            "; behaviours on {hardware}: {}",
            behaviours.join(", ")
        ));
    }
    let finished = matches!(end, RunEnd::Finished);
    let all_as_expected = results.iter().all(|r| r.as_expected);
    ProtocolOutcome {
        passed: finished && all_as_expected && tally_agrees,
        detail: truncate(&detail, DETAIL_LIMIT),
        tests: Some(results),
    }
}

#[cfg(test)]
mod tests {
    use super::super::machine::fake::{FakeMachine, FakeState};
    use super::*;

    fn spec(total_tests: usize) -> AccuracyCoinSpec {
        AccuracyCoinSpec {
            menu_ready_addr: 0x00EC,
            menu_ready_value: 0x0A,
            press: "start".into(),
            press_frames: 1,
            running_flag_addr: 0x0035,
            results_first: 0x0400,
            results_last: 0x0492,
            results_table: "misc/AccuracyCoin/accuracycoin_tests.toml".into(),
            tally_total_addr: 0x0037,
            tally_pass_addr: 0x0038,
            tally_skipped_addr: 0x003F,
            total_tests,
            pass_mask: 3,
            pass_value: 1,
            fail_value: 2,
            not_run_value: 0,
            skipped_value: 0xFF,
        }
    }

    fn table() -> Vec<AccuracyCoinTest> {
        vec![
            AccuracyCoinTest {
                index: 1,
                name: "ROM is not writable".into(),
                result_addr: 0x0405,
            },
            // A test with several passing behaviours: code 1 is the composite 2C02's.
            AccuracyCoinTest {
                index: 2,
                name: "Sprites  On Scanline 0".into(),
                result_addr: 0x0484,
            },
            AccuracyCoinTest {
                index: 3,
                name: "PC Wraparound".into(),
                result_addr: 0x044D,
            },
        ]
    }

    #[test]
    fn decodes_result_bytes() {
        let spec = spec(141);
        assert_eq!(decode_result(0x00, &spec), (TestVerdict::NotRun, None));
        assert_eq!(decode_result(0xFF, &spec), (TestVerdict::Skipped, None));
        assert_eq!(decode_result(0x01, &spec), (TestVerdict::Pass, Some(0)));
        assert_eq!(decode_result(0x05, &spec), (TestVerdict::Pass, Some(1)));
        assert_eq!(decode_result(0x0A, &spec), (TestVerdict::Fail, Some(2)));
        assert_eq!(decode_result(0x2A, &spec), (TestVerdict::Fail, Some(10)));
        assert_eq!(code_label(10), "A");
        assert_eq!(code_label(11), "B");
        assert_eq!(code_label(7), "7");
    }

    /// A fake AccuracyCoin: boot stages 1..$0A over the first frames, then waits for Start;
    /// runs one test per `frames_per_test` frames writing `results[i]`, then clears $0035.
    fn fake_rom(results: Vec<u8>, frames_per_test: u64, hang_in: Option<u8>) -> FakeMachine {
        let tally_passes = u8::try_from(results.iter().filter(|&&b| b & 3 == 1).count()).unwrap();
        fake_rom_with_tally(results, frames_per_test, hang_in, tally_passes)
    }

    fn fake_rom_with_tally(
        results: Vec<u8>,
        frames_per_test: u64,
        hang_in: Option<u8>,
        tally_passes: u8,
    ) -> FakeMachine {
        let addrs: Vec<u16> = table().iter().map(|t| t.result_addr).collect();
        let mut run_started_at: Option<u64> = None;
        let mut previous_buttons = Buttons::empty();
        let mut stuck = false;
        FakeMachine::new(move |state: &mut FakeState| {
            let frame = state.frame;
            if stuck {
                return;
            }
            if frame <= 10 {
                state.cpu_memory[0xEC] = u8::try_from(frame).unwrap();
                return;
            }
            // The NMI handler acts only on newly pressed buttons.
            let newly = state.buttons - previous_buttons;
            previous_buttons = state.buttons;
            if run_started_at.is_none() && newly.contains(Buttons::START) {
                run_started_at = Some(frame);
                state.cpu_memory[0x35] = 1;
            }
            let Some(start) = run_started_at else { return };
            let elapsed = frame - start;
            let test = usize::try_from(elapsed / frames_per_test).unwrap();
            if test >= results.len() {
                state.cpu_memory[0x35] = 0;
                // The grid (and the tally) appears a couple of frames after the flag drops.
                if elapsed >= frames_per_test * u64::try_from(results.len()).unwrap() + 2 {
                    state.cpu_memory[0x37] = u8::try_from(results.len()).unwrap();
                    state.cpu_memory[0x38] = tally_passes;
                }
                return;
            }
            let number = u8::try_from(test + 1).unwrap();
            state.cpu_memory[0x37] = number;
            if hang_in == Some(number) {
                stuck = true;
                return;
            }
            if elapsed % frames_per_test == frames_per_test - 1 {
                state.cpu_memory[usize::from(addrs[test])] = results[test];
            }
        })
    }

    #[test]
    fn all_tests_pass() {
        let mut machine = fake_rom(vec![0x01, 0x05, 0x01], 20, None);
        let outcome =
            run_accuracycoin(&mut machine, &spec(3), &table(), &Hardware::default(), 6000);
        assert!(outcome.passed, "{outcome:?}");
        assert_eq!(
            outcome.detail,
            "3/3 passed; 0 failed, 0 not run, 0 skipped; behaviours on CPU early-g, PPU g, ports \
             front-loader: Sprites On Scanline 0 1 (composite 2C02 (odd-frame dot skip))"
        );
        let tests = outcome.tests.unwrap();
        assert_eq!(tests[1].result, TestVerdict::Pass);
        assert_eq!(tests[1].code, Some(1));
        // Start was held for exactly one frame, then released.
        let log = &machine.state.button_log;
        assert_eq!(log.len(), 2);
        assert_eq!(log[0].1, Buttons::START);
        assert_eq!(log[1].1, Buttons::empty());
        assert_eq!(log[1].0 - log[0].0, 1);
        // Start was pressed only once the menu was up ($EC reached $0A at frame 10).
        assert_eq!(log[0].0, 10);
    }

    #[test]
    fn disagreeing_rom_tally_is_shown() {
        let mut machine = fake_rom_with_tally(vec![0x01, 0x05, 0x02], 5, None, 1);
        let outcome =
            run_accuracycoin(&mut machine, &spec(3), &table(), &Hardware::default(), 6000);
        assert!(!outcome.passed);
        assert!(
            outcome.detail.starts_with(
                "2/3 passed; 1 failed, 0 not run, 0 skipped; the ROM's own tally says 1 passed"
            ),
            "{}",
            outcome.detail
        );
    }

    #[test]
    fn failures_and_skips_are_reported_per_test() {
        let mut machine = fake_rom(vec![0x2A, 0x09, 0xFF], 5, None);
        let outcome =
            run_accuracycoin(&mut machine, &spec(3), &table(), &Hardware::default(), 6000);
        assert!(!outcome.passed);
        assert_eq!(
            outcome.detail,
            "1/3 passed; 1 failed, 0 not run, 1 skipped; failed: ROM is not writable (A); not \
             this console's behaviour: Sprites On Scanline 0 gave pass 2, this console gives \
             pass 1, PC Wraparound gave a skip, this console gives pass 0; behaviours on CPU \
             early-g, PPU g, ports front-loader: Sprites On Scanline 0 2 (RGB 2C03/2C04/2C05 \
             (not emulated))"
        );
        let tests = outcome.tests.unwrap();
        assert_eq!(tests[0].result, TestVerdict::Fail);
        assert_eq!(tests[0].code, Some(10));
        assert_eq!(tests[2].result, TestVerdict::Skipped);
        assert_eq!(tests[2].code, None);
    }

    #[test]
    fn a_test_stuck_for_more_than_1200_frames_is_a_hang() {
        let mut machine = fake_rom(vec![0x01, 0x01, 0x01], 10, Some(2));
        let outcome =
            run_accuracycoin(&mut machine, &spec(3), &table(), &Hardware::default(), 6000);
        assert!(!outcome.passed);
        assert!(
            outcome.detail.starts_with(
                "1/3 passed; 0 failed, 2 not run, 0 skipped; hang: test #2 (Sprites  On Scanline 0)"
            ),
            "{}",
            outcome.detail
        );
        // Stopped soon after the hang limit, long before max_frames.
        assert!(machine.frame_count() < 10 + 20 + HANG_FRAMES + 5);
        let tests = outcome.tests.unwrap();
        assert_eq!(tests[2].result, TestVerdict::NotRun);
    }

    #[test]
    fn menu_that_never_appears_fails_with_boot_stage() {
        let mut machine = FakeMachine::new(|state| state.cpu_memory[0xEC] = 4);
        let outcome =
            run_accuracycoin(&mut machine, &spec(3), &table(), &Hardware::default(), 6000);
        assert!(!outcome.passed);
        assert_eq!(
            outcome.detail,
            format!("menu never appeared: $00EC = $04 after {BOOT_LIMIT_FRAMES} frames")
        );
    }

    #[test]
    fn ignored_start_press_is_reported() {
        let mut machine = FakeMachine::new(|state| {
            state.cpu_memory[0xEC] = if state.frame < 3 { 1 } else { 0x0A };
        });
        let outcome =
            run_accuracycoin(&mut machine, &spec(3), &table(), &Hardware::default(), 6000);
        assert!(!outcome.passed);
        assert!(outcome
            .detail
            .starts_with("pressing start did not start the run"));
        // Retried a few times, each press released again.
        let presses = machine
            .state
            .button_log
            .iter()
            .filter(|(_, buttons)| buttons.contains(Buttons::START))
            .count();
        assert_eq!(presses, 3);
    }

    #[test]
    fn table_size_must_match_manifest() {
        let mut machine = FakeMachine::new(|_| {});
        let outcome = run_accuracycoin(
            &mut machine,
            &spec(141),
            &table(),
            &Hardware::default(),
            6000,
        );
        assert!(!outcome.passed);
        assert_eq!(
            outcome.detail,
            "results table lists 3 tests, manifest says 141"
        );
    }

    #[test]
    fn json_shape_of_a_test_result() {
        let result = AccuracyCoinTestResult {
            index: 1,
            name: "ROM is not writable".into(),
            result_addr: 0x0405,
            result: TestVerdict::NotRun,
            code: None,
            raw: 0,
            variant: None,
            as_expected: false,
        };
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(json["result"], "not run");
        assert_eq!(json["result_addr"], 0x0405);
        assert!(json["code"].is_null());
        assert_eq!(json["as_expected"], false);
        let sprites = AccuracyCoinTestResult {
            result_addr: 0x0484,
            result: TestVerdict::Pass,
            code: Some(1),
            raw: 0x05,
            variant: variant_of(0x0484, 1),
            as_expected: true,
            ..result
        };
        let json = serde_json::to_value(&sprites).unwrap();
        assert_eq!(json["variant"], "composite 2C02 (odd-frame dot skip)");
    }
}
