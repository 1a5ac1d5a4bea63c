//! Fuzz target: the Lua host's FCEUX API, called with extreme arguments.
//!
//! The bytes become a short Lua program ([`program`]): calls to the functions the host
//! registers (found at run time by walking its namespaces, so a new function is fuzzed without
//! a change here), each through `pcall`, with arguments from [`EXPRESSIONS`] (nil, booleans,
//! numbers at the int, double and Instant edges, NaN and infinities, short, long and binary
//! strings, tables, functions, savestate objects and the results of earlier calls); some
//! `emu.frameadvance()`s; and a few callbacks, made of such calls too, that the program
//! registers as memory hooks, frame callbacks and save callbacks (or passes anywhere a value
//! goes). It runs on the synthetic console ([`crate::corpus::console_image`]) for at most
//! [`MAX_FRAMES`] frames, with user slot saves and loads, a movie status and host input
//! from the bytes too.
//!
//! Lua errors are expected (that is what `pcall` is for) and so is the script being stopped;
//! a panic (mlua carries one out of Lua) or an abort is a bug. Time is bounded three ways: the
//! host's watchdog ([`WATCHDOG`]) stops any one entry that runs too long (loops in
//! `emu.exec_count`/`emu.exec_time` included); the program checks a CPU-time budget
//! ([`BUDGET_SECONDS`]) before each statement; and the callbacks stop doing anything after
//! [`MAX_CALLBACK_RUNS`] runs (a memory hook fires hundreds of times a frame).

use std::fmt::Write;
use std::time::Duration;

use nes::{Buttons, Nes, Palette, PowerOn};
use nes_lua::{FrameInput, HostInput, HostOptions, LuaHost, MovieMode, MovieStatus};

/// libFuzzer's `-max_len`: more statements than [`MAX_STATEMENTS`] are never read.
pub const MAX_LEN: usize = 512;

/// Frames run after the script's first slice.
pub const MAX_FRAMES: u8 = 4;

/// Statements of the main chunk.
const MAX_STATEMENTS: usize = 48;

/// Callbacks the program defines (`C[1]` ... ), and statements in each.
const CALLBACKS: usize = 3;
const CALLBACK_STATEMENTS: u8 = 4;

/// Runs of all callbacks together before they stop doing anything.
const MAX_CALLBACK_RUNS: usize = 300;

/// The host's watchdog: far below libFuzzer's `-timeout`.
const WATCHDOG: Duration = Duration::from_millis(100);

/// CPU seconds after which the program's statements and callbacks return at once.
const BUDGET_SECONDS: f64 = 1.0;

/// Argument values, as Lua expressions (`C[n]` are the callbacks, `r(n)` the first result of
/// an earlier call).
const EXPRESSIONS: &[&str] = &[
    "nil",
    "true",
    "false",
    "0",
    "1",
    "-1",
    "2",
    "10",
    "255",
    "256",
    "0x8000",
    "0xFF1F",
    "65535",
    "65536",
    "-65536",
    "2^31 - 1",
    "2^31",
    "-2^31",
    "2^32",
    "2^53",
    "-2^63",
    "2^63",
    "1e12",
    "-1e12",
    "1e308",
    "-1e308",
    "0/0",
    "math.huge",
    "-math.huge",
    "0.5",
    "-3.7",
    "1e-300",
    "''",
    "'a'",
    "'red'",
    "'#FF00007F'",
    "'P41'",
    "'rand'",
    "'sub'",
    "'turbo'",
    "'0x10'",
    "' 12 '",
    "'md5'",
    "LONG",
    "'\\0\\1\\255\\n\\t'",
    "{}",
    "{1, 2, 3}",
    "{r = 255, g = 1, b = 1e308, a = -1}",
    "{A = true, B = false, up = 1, start = 'x', select = {}}",
    "DEEP",
    "C[1]",
    "C[2]",
    "C[3]",
    "print",
    "error",
    "function() end",
    "savestate.object()",
    "savestate.object(1)",
    "savestate.create(2)",
    "r(0)",
    "r(1)",
    "r(2)",
    "r(3)",
    "r(4)",
    "r(5)",
    "r(6)",
    "r(7)",
];

/// The functions a `register` statement picks, with the arguments before the callback.
const REGISTERS: &[&str] = &[
    "memory.registerwrite, E, E",
    "memory.registerexec, E, E",
    "memory.registerread, E, E",
    "memory.register, E",
    "memory.registerexec, 0xFF1F",
    "memory.registerwrite, 0, 0x800",
    "memory.registerread, 0x4016, 2",
    "emu.registerbefore",
    "emu.registerafter",
    "emu.registerexit",
    "gui.register",
    "savestate.registersave",
    "savestate.registerload",
];

/// Fixed definitions every program starts with: the API functions by index (`f(i)`), `call`,
/// the results `r(i)`, the budget and the values `LONG` and `DEEP`.
const PRELUDE: &str = r#"local pcall, type, pairs, ipairs, clock = pcall, type, pairs, ipairs, os.clock
local t0 = clock()
local function over() return clock() - t0 > BUDGET end
local names = {}
for _, ns in ipairs({'emu', 'FCEU', 'memory', 'joypad', 'gui', 'savestate', 'rom', 'movie',
                     'sound', 'input', 'zapper', 'debugger', 'bit', 'taseditor'}) do
  local t = _G[ns]
  if type(t) == 'table' then
    for k, v in pairs(t) do
      if type(v) == 'function' then names[#names + 1] = {ns .. '.' .. k, v} end
    end
  end
end
for _, g in ipairs({'AND', 'OR', 'XOR', 'SHIFT', 'BIT', 'tobitstring', 'copytable',
                    'addressof', 'print', 'tostring'}) do
  if type(_G[g]) == 'function' then names[#names + 1] = {g, _G[g]} end
end
names[#names + 1] = {'os.exit', os.exit}
table.sort(names, function(a, b) return a[1] < b[1] end)
local F = {}
for i, entry in ipairs(names) do F[i] = entry[2] end
local function f(i) return F[i % #F + 1] end
local R = {}
local function r(i) local t = R[i] return t and t[2] end
local function call(k, fn, ...) if not over() then R[k] = {pcall(fn, ...)} end end
local runs = 0
local function live() runs = runs + 1 return runs <= RUNS and not over() end
local LONG = ('x'):rep(300)
local DEEP = {} DEEP.self = DEEP DEEP[1] = {DEEP, {LONG}}
local C = {}
"#;

/// The bytes, read one at a time (zeros once they run out).
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let byte = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn done(&self) -> bool {
        self.at >= self.data.len()
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[usize::from(self.next()) % from.len()]
    }

    fn expression(&mut self) -> &'static str {
        self.pick(EXPRESSIONS)
    }
}

/// One statement: an API call, a registration, or (in the main chunk only) a frame advance.
fn statement(bytes: &mut Bytes<'_>, out: &mut String, main_chunk: bool) {
    let op = bytes.next();
    let slot = op >> 5; // which result slot the call fills
    match op % 8 {
        0..=4 => {
            let function = bytes.next();
            let _ = write!(out, "call({slot}, f({function})");
            for _ in 0..bytes.next() % 5 {
                let _ = write!(out, ", {}", bytes.expression());
            }
            out.push_str(")\n");
        }
        5 => {
            let register = bytes.pick(REGISTERS);
            let mut args = String::new();
            for part in register.split(", ") {
                if !args.is_empty() {
                    args.push_str(", ");
                }
                args.push_str(if part == "E" {
                    bytes.expression()
                } else {
                    part
                });
            }
            let callback = 1 + usize::from(bytes.next()) % CALLBACKS;
            let _ = writeln!(out, "call({slot}, {args}, C[{callback}])");
        }
        6 if main_chunk => out.push_str("if over() then return end emu.frameadvance()\n"),
        _ => {
            // A value kept for later calls, or frameadvance where it is an error.
            let _ = writeln!(
                out,
                "call({slot}, emu.frameadvance, {})",
                bytes.expression()
            );
        }
    }
}

/// The Lua program the bytes describe (after the first two, which [`run`] reads).
pub fn program(data: &[u8]) -> String {
    let mut bytes = Bytes { data, at: 0 };
    let mut out = PRELUDE
        .replace("BUDGET", &BUDGET_SECONDS.to_string())
        .replace("RUNS", &MAX_CALLBACK_RUNS.to_string());
    for callback in 1..=CALLBACKS {
        let _ = writeln!(
            out,
            "C[{callback}] = function(...) if not live() then return end"
        );
        for _ in 0..bytes.next() % (CALLBACK_STATEMENTS + 1) {
            statement(&mut bytes, &mut out, false);
        }
        out.push_str("end\n");
    }
    for _ in 0..MAX_STATEMENTS {
        if bytes.done() {
            break;
        }
        statement(&mut bytes, &mut out, true);
    }
    out
}

/// Where the program's `savestate.persist` writes slot files (and `savestate.object(n)` reads
/// them): a new empty folder for each input, removed with everything in it when the input is
/// done (or its run panics), so one input's slot files can never be read by another (an input
/// runs the same alone as after any others) and nothing is left behind.
fn save_dir() -> tempfile::TempDir {
    // Named, so a folder left by a run that aborts (libFuzzer stops at the first panic) is
    // recognisable.
    tempfile::Builder::new()
        .prefix("nes-fuzz-lua-api-")
        .tempdir()
        .expect("a temporary folder for the Lua program's slot files")
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    let (setup, rest) = match data {
        [a, b, rest @ ..] => ([*a, *b], rest),
        _ => ([0, 0], data),
    };
    let source = program(rest);
    let (_, cart) = crate::corpus::console();
    let mut nes = Nes::with_power_on(cart.clone(), PowerOn::FCEUX);
    // Declared before the host, so it is dropped (and removed) after it.
    let save_dir = save_dir();
    let options = HostOptions {
        save_dir: save_dir.path().to_path_buf(),
        rom_stem: "fuzz".into(),
        rom: cart.info().clone(),
        arg: Some("fuzz".into()),
        palette: Palette::ntsc(),
    };
    let mut host = match LuaHost::load_source("fuzz.lua", source.as_bytes(), options) {
        Ok(host) => host,
        Err(error) => panic!("the generated program must compile: {error}\n{source}"),
    };
    host.set_watchdog(Some(WATCHDOG));
    let mode = [
        MovieMode::Inactive,
        MovieMode::Playback,
        MovieMode::Record,
        MovieMode::Finished,
    ][usize::from(setup[0] & 3)];
    host.set_movie_status(MovieStatus {
        mode,
        length: u64::from(setup[0]) << 40,
        name: "fuzz.fm2".into(),
        rerecords: u64::MAX,
    });
    let extreme = [0, -1, 255, 256, i32::MIN, i32::MAX][usize::from(setup[0] >> 2) % 6];
    host.set_host_input(HostInput {
        keys: vec!["A", "shift", "leftclick"],
        mouse_x: extreme,
        mouse_y: extreme.wrapping_neg().wrapping_sub(1),
        buttons: setup[0] >> 5,
    });
    host.start(&mut nes);
    let frames = 1 + setup[1] % MAX_FRAMES;
    let slot = setup[1] >> 4;
    let mut rgba = vec![0; 256 * 240 * 4];
    for frame in 0..frames {
        let pads = [Buttons::from_bits_retain(setup[1]), Buttons::all()];
        host.set_paused(frame == 3 && setup[0] & 0x80 != 0);
        host.run_frame(
            &mut nes,
            FrameInput {
                user: pads,
                movie: None,
            },
        );
        match frame {
            1 => host.user_saved_slot(&mut nes, slot),
            2 => host.user_loaded_slot(&mut nes, slot),
            _ => {}
        }
        host.composite_overlay(&mut rgba);
        let _ = (host.take_output(), host.take_errors(), host.take_messages());
        if host.exit_requested() {
            break;
        }
    }
    host.stop(&mut nes);
}

/// The seed inputs: programs of every kind of statement, built from simple byte patterns.
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for step in [1u8, 3, 7, 13, 29, 71, 101, 151] {
        let len = 96 + usize::from(step);
        seeds.push(
            (0..len)
                .map(|i| (i as u8).wrapping_mul(step).wrapping_add(step))
                .collect(),
        );
    }
    // Registrations of each callback first (op 5), then calls.
    let mut hooks = vec![0x40, 0x05];
    for callback in 0..CALLBACKS as u8 {
        hooks.extend([
            4, 0, 17, 2, 10, 12, 1, 40, 2, 50, 51, 3, 90, 1, 26, 4, 120, 0,
        ]);
        hooks[2 + usize::from(callback) * 18] = 4 - callback;
    }
    for register in 0..REGISTERS.len() as u8 {
        hooks.extend([5, register, 11, 23, register]);
        hooks.extend([6, 0, 9, 3, 27, 24, 44]);
    }
    seeds.push(hooks);
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_compile_for_every_seed_and_the_empty_input() {
        let lua_check = |data: &[u8]| {
            let source = program(data);
            assert!(source.contains("call("), "{source}");
        };
        for seed in seeds() {
            lua_check(&seed[2..]);
        }
        run(&[]);
        run(&[0]);
    }

    #[test]
    fn smoke() {
        // Some 15 ms an input in the test profile (a frame takes 3 ms there): 1,000 inputs.
        let ran = crate::mutate::smoke(&seeds(), 1000, 0x11a_a91, MAX_LEN, run);
        assert_eq!(ran, seeds().len() + 1000);
    }
}
