//! `nes-fuzz`: the stable-toolchain side of the fuzz targets (see `scripts/fuzz.sh`).
//!
//! ```text
//! nes-fuzz corpus DIR [TARGET...]   write each target's seeds() into DIR/TARGET/
//! nes-fuzz replay TARGET FILE...    run the target's body on each file, as libFuzzer did
//! nes-fuzz max-len TARGET           print the target's -max_len
//! nes-fuzz list                     print the targets' names
//! ```

use std::path::Path;
use std::process::ExitCode;

use nes_fuzzing::mutate::input_hash;
use nes_fuzzing::{target, Target, TARGETS};

const USAGE: &str = "usage: nes-fuzz corpus DIR [TARGET...] | replay TARGET FILE... | \
                     max-len TARGET | list";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("corpus") if args.len() >= 2 => write_corpora(Path::new(&args[1]), &args[2..]),
        Some("replay") if args.len() >= 3 => replay(&args[1], &args[2..]),
        Some("max-len") if args.len() == 2 => named(&args[1]).map(|t| println!("{}", t.max_len)),
        Some("list") if args.len() == 1 => {
            TARGETS.iter().for_each(|t| println!("{}", t.name));
            Ok(())
        }
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("nes-fuzz: {message}");
            ExitCode::FAILURE
        }
    }
}

fn named(name: &str) -> Result<&'static Target, String> {
    target(name).ok_or_else(|| {
        let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        format!("no target `{name}` (targets: {})", names.join(", "))
    })
}

/// Writes each seed as `seed-HASH` (a hash of its bytes, so writing again is idempotent and
/// never duplicates what libFuzzer added to the folder).
fn write_corpora(dir: &Path, names: &[String]) -> Result<(), String> {
    let targets: Vec<&Target> = if names.is_empty() {
        TARGETS.iter().collect()
    } else {
        names
            .iter()
            .map(|name| named(name))
            .collect::<Result<_, _>>()?
    };
    for target in targets {
        let folder = dir.join(target.name);
        std::fs::create_dir_all(&folder)
            .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        let seeds = (target.seeds)();
        let mut written = 0;
        for seed in seeds.iter().filter(|seed| seed.len() <= target.max_len) {
            let path = folder.join(format!("seed-{:016x}", input_hash(seed)));
            std::fs::write(&path, seed)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            written += 1;
        }
        println!(
            "{}: {written} seeds in {} ({} over -max_len {} left out)",
            target.name,
            folder.display(),
            seeds.len() - written,
            target.max_len
        );
    }
    Ok(())
}

/// Runs `target` on each file; a panic propagates (with the target's message), so the exit
/// status says whether the input still fails.
fn replay(name: &str, files: &[String]) -> Result<(), String> {
    let target = named(name)?;
    for file in files {
        let data = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
        eprintln!("{}: {file} ({} bytes)", target.name, data.len());
        (target.run)(&data);
        eprintln!("{}: {file}: no failure", target.name);
    }
    Ok(())
}
