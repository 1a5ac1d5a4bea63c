//! Helpers shared by the workspace-level test suites and benchmarks: synthetic ROM images built
//! in code, so no commercial ROM is ever needed.

/// Builds an iNES 1.0 image with `prg` (a multiple of 16 KiB) and `chr` (a multiple of 8 KiB,
/// empty for CHR RAM) on `mapper`, vertical mirroring.
pub use nes_cartridge::ines_image;

/// A 32 KiB NROM program: `code` placed at $8000, with the reset vector pointing at it and
/// the NMI/IRQ vectors pointing at an RTI.
pub fn nrom_program(code: &[u8]) -> Vec<u8> {
    let mut prg = vec![0xEA; 0x8000];
    prg[..code.len()].copy_from_slice(code);
    // $FFF0: RTI, the target of NMI and IRQ.
    prg[0x7FF0] = 0x40;
    prg[0x7FFA..0x7FFC].copy_from_slice(&0xFFF0u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    prg[0x7FFE..0x8000].copy_from_slice(&0xFFF0u16.to_le_bytes());
    prg
}

/// The test-ROM manifest a workspace suite runs over, and the folder its paths are relative
/// to; or, when the suite cannot run, the exit code `main` should return. Without the test
/// ROMs the suite is skipped with a message, except under `CI`, where it reports one failing
/// trial (`SUITE::manifest`): CI must never pass vacuously.
pub fn suite_manifest(
    suite: &str,
    args: &libtest_mimic::Arguments,
) -> Result<(nes_headless::test_roms::Manifest, std::path::PathBuf), std::process::ExitCode> {
    use nes_headless::test_roms::{find_manifest, load_manifest, manifest_root};
    let manifest_path = match find_manifest(None) {
        Ok(path) => path,
        Err(error) => {
            if std::env::var_os("CI").is_some() {
                eprintln!("{suite} cannot run: {error}");
                let failing = libtest_mimic::Trial::test(format!("{suite}::manifest"), move || {
                    Err(format!("CI is set but the test ROMs are missing: {error}").into())
                });
                return Err(libtest_mimic::run(args, vec![failing]).exit_code());
            }
            eprintln!("{suite} skipped: {error}");
            return Err(std::process::ExitCode::SUCCESS);
        }
    };
    match load_manifest(&manifest_path) {
        Ok(manifest) => Ok((manifest, manifest_root(&manifest_path))),
        Err(error) => {
            eprintln!("{suite} cannot run: {error}");
            Err(std::process::ExitCode::FAILURE)
        }
    }
}
