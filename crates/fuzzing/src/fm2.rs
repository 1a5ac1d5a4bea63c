//! Fuzz target: an FM2 movie (FCEUX's text format), parsed and played.
//!
//! The bytes are read as `nes run --movie` reads a file: lossy UTF-8 (old movies carry 8-bit
//! text in comments and file names), then `Movie::parse`. A movie that parses must survive its
//! writer: `to_fm2` and parsing again give the same movie. It is then played the way
//! `nes run --movie` plays one without a script: FCEUX's start-up with the RAM fill its header
//! names, and per line the reset and power commands, both pads, one frame; for at most
//! [`MAX_FRAMES`] lines, which bounds the work (a movie's frames are all alike to the console).

use nes::{Nes, PowerOn, PowerOnRam};
use nes_movie::fm2::{Movie, MovieFrame};

/// libFuzzer's `-max_len`: 64 KiB holds the longest movie in `tests/fceux/movies` (44 KB).
pub const MAX_LEN: usize = 64 * 1024;

/// Input lines played per movie.
pub const MAX_FRAMES: usize = 4;

/// One fuzz input.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let movie = match Movie::parse(&text) {
        Ok(movie) => movie,
        Err(error) => {
            assert!(error.line >= 1, "error lines count from 1: {error}");
            return;
        }
    };
    let written = movie.to_fm2();
    match Movie::parse(&written) {
        Ok(again) => assert!(
            again == movie,
            "a written movie must read back the same:\n{written}"
        ),
        Err(error) => panic!("a written movie must parse: {error}\n{written}"),
    }
    play(&movie);
}

/// `nes run --movie`'s loop, without a script, for the first [`MAX_FRAMES`] lines.
fn play(movie: &Movie) {
    let header = &movie.header;
    let ram = PowerOnRam::from_fceux_option(
        header.ram_init_option.unwrap_or(0),
        header.ram_init_seed.unwrap_or(0),
    );
    let mut nes = Nes::with_power_on(
        crate::corpus::console().1.clone(),
        PowerOn {
            ram,
            ..PowerOn::FCEUX
        },
    );
    // Power commands after the start fill RAM as configured, as FCEUX's do.
    nes.set_power_on_ram(PowerOn::FCEUX.ram);
    for line in movie.frames.iter().take(MAX_FRAMES) {
        let MovieFrame { command, pads } = *line;
        command.apply(&mut nes);
        nes.set_buttons(0, pads[0]);
        nes.set_buttons(1, pads[1]);
        nes.run_frame();
    }
}

/// Synthetic movies covering the format: every header key, comments and subtitles, every
/// command bit, both ports (and a port without a device), spaces and CRLF, and the inputs the
/// parser must refuse (Four Score, Zapper, expansion devices, savestate-anchored and binary
/// movies, bad lines).
const SYNTHETIC: &[&str] = &[
    "version 3\n\
     emuVersion 20605\n\
     rerecordCount 7\n\
     palFlag 0\n\
     romFilename probe\n\
     romChecksum base64:lpTZyUZh3EB/zqMFUdjPMg==\n\
     guid 36C3FFC3-3924-B00E-F838-5A578D21EB8C\n\
     fourscore 0\n\
     microphone 0\n\
     port0 1\n\
     port1 1\n\
     port2 0\n\
     FDS 0\n\
     NewPPU 0\n\
     RAMInitOption 3\n\
     RAMInitSeed -1917259585\n\
     length 6\n\
     comment author fuzz seeds\n\
     subtitle 2 Hello\n\
     subtitle 4 \n\
     |0|........|........||\n\
     |1|R......A|........||\n\
     |2|...UT.B.|.L...S..||\n\
     |3|RLDUTSBA|RLDUTSBA||\n\
     |4|........|........||\n\
     |24|xxxxxxxx|        ||\n",
    "version 3\nRAMInitOption 1\n|0|.......A|........||\n|2|........|.......A||\n",
    "version 3\nRAMInitOption 2\nport1 0\n|0|...U....|||\n|1|T.......|||\n",
    "version 3\nport0 0\nport1 0\n|2||||\n|1||||\n",
    "version 3\r\nport0 1\r\nport1 1\r\n|0|R      A|        ||\r\n|8|        |        ||\r\n",
    "version 3\nRAMInitOption 0\nRAMInitSeed 4294967295\n|16|........|........||\n\
     |96|........|........||\n",
    // The fm2 fuzz target's first find: values ending in carriage returns.
    "version 3\nsubtin 3\r\r\r\r\r\r\r\r\ncomment x\r\r",
    "version 3\npalFlag 1\nNewPPU 1\nFDS 1\nmicrophone 1\nbinary 0\n|0|........|........||\n",
    "version 3\n",
    // Refused.
    "version 3\nfourscore 1\n|0|........|........|........|........||\n",
    "version 3\nport0 2\n|0|0 0 0|........||\n",
    "version 3\nport2 1\n|0|........|........||\n",
    "version 3\nsavestate 0123456789abcdef\n|0|........|........||\n",
    "version 3\nbinary 1\n",
    "version 2\n|0|........|........||\n",
    "|0|........|........||\n",
    "version 3\n|0|........|........||\nhello\n",
    "version 3\n|256|........|........||\n",
    "version 3\nromChecksum base64:Zm9v\n",
    "version 3\nsubtitle soon text\n",
    "",
];

/// The seed inputs: the synthetic movies, then the repository's FCEUX parity movies
/// (`tests/fceux/movies/*.fm2`, ours).
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = SYNTHETIC
        .iter()
        .map(|text| text.as_bytes().to_vec())
        .collect();
    seeds.extend(repository_movies());
    seeds
}

/// The movies in `tests/fceux/movies`, sorted by name; empty if the folder is missing.
fn repository_movies() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fceux/movies");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "fm2"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| std::fs::read(path).ok())
        .filter(|bytes| bytes.len() <= MAX_LEN)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke() {
        assert!(
            repository_movies().len() >= 10,
            "the parity movies in tests/fceux/movies are seeds"
        );
        let seeds = seeds();
        let ran = crate::mutate::smoke(&seeds, 3000, 0xF3_2F00D, MAX_LEN, run);
        assert_eq!(ran, seeds.len() + 3000);
    }

    #[test]
    fn the_synthetic_movies_parse_or_fail_as_meant() {
        let parsed = SYNTHETIC
            .iter()
            .filter(|text| Movie::parse(text).is_ok())
            .count();
        assert_eq!(parsed, 9, "the first nine parse, the rest are refused");
        let movie = Movie::parse(SYNTHETIC[0]).unwrap();
        assert_eq!(movie.frames.len(), 6);
        assert_eq!(movie.header.subtitles.len(), 2);
    }
}
