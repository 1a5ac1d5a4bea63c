//! A script cannot make the host leak, hang, overflow or read without bound.

use std::time::{Duration, Instant};

use super::*;

/// The watchdog's limit in these tests: long enough for any honest slice on a loaded machine.
const LIMIT: Duration = Duration::from_millis(200);

/// LuaJIT has one profiler per process, which the watchdog needs there: the tests that use
/// the watchdog take turns.
static PROFILER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn take_profiler() -> std::sync::MutexGuard<'static, ()> {
    PROFILER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Rig {
    /// [`Rig::new`] with the watchdog set before the script starts.
    fn watched(rom: &[u8], script: &str, limit: Option<Duration>) -> Rig {
        Rig::watched_holding(rom, script, limit, take_profiler())
    }

    fn watched_holding(
        rom: &[u8],
        script: &str,
        limit: Option<Duration>,
        profiler: std::sync::MutexGuard<'static, ()>,
    ) -> Rig {
        let cart = nes::Cartridge::from_ines(rom).expect("valid test ROM");
        let mut nes = Nes::with_power_on(cart, nes::PowerOn::FCEUX);
        let save_dir = tempfile::tempdir().unwrap();
        let mut host =
            LuaHost::load_source("test.lua", script.as_bytes(), options(rom, save_dir.path()))
                .unwrap_or_else(|e| panic!("load: {e}"));
        host.set_watchdog(limit);
        host.start(&mut nes);
        Rig {
            nes,
            host,
            _profiler: Some(profiler),
            save_dir,
        }
    }
}

// ----- savestate objects ----------------------------------------------------------------------

#[test]
fn savestate_objects_are_freed_when_lua_collects_them() {
    // One anonymous object a frame, saved into: FCEUX frees each when Lua collects it.
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "while true do\n\
           local s = savestate.object()\n\
           savestate.save(s)\n\
           emu.frameadvance()\n\
         end",
    );
    let state_len = rig.nes.save_state().len();
    rig.frames(100);
    let early = rig.host.memory_used();
    let mut late = 0;
    for _ in 0..30 {
        rig.frames(100);
        late = late.max(rig.host.memory_used());
    }
    assert!(rig.host.take_errors().is_empty());
    // Holding them all would take 3,000 states; the collector's pacing keeps a few hundred
    // (measured: between 140 and 400, with PUC Lua's default pause of 200%).
    assert!(
        late < early + 1000 * state_len,
        "memory went from {early} to {late} bytes ({state_len} a state)"
    );
}

#[test]
fn a_kept_savestate_object_still_loads_after_many_collections() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "local keep = savestate.object()\n\
         savestate.save(keep)\n\
         local at = emu.framecount()\n\
         for i = 1, 50 do savestate.save(savestate.object()) collectgarbage() emu.frameadvance() end\n\
         savestate.load(keep)\n\
         print(emu.framecount() == at)",
    );
    assert_eq!(rig.frames(60), ["true"]);
    assert!(rig.host.take_errors().is_empty());
}

// ----- the watchdog ---------------------------------------------------------------------------

/// An endless loop that LuaJIT compiles to machine code (which calls no count hook).
const SPIN: &str = "while true do end";

/// Run `script` with the watchdog for `frames` frames: its output, its errors, the frames the
/// console ran, and whether the script still runs.
fn watched_run(script: &str, frames: usize) -> (Vec<String>, Vec<String>, u64, bool) {
    // loop: STA $10; JMP loop (stores all frame long).
    let rom = nrom(&[0x85, 0x10, 0x4C, 0x00, 0x80], &[]);
    let profiler = take_profiler();
    let started = Instant::now();
    let mut rig = Rig::watched_holding(&rom, script, Some(LIMIT), profiler);
    let out = rig.frames(frames);
    assert!(
        started.elapsed() < LIMIT * 10,
        "took {:?}",
        started.elapsed()
    );
    let running = rig.host.running();
    (out, rig.host.take_errors(), rig.nes.frame_count(), running)
}

/// The watchdog's message at `line` of test.lua.
fn stopped_at(errors: &[String], line: u32) {
    assert_eq!(errors.len(), 1, "{errors:?}");
    let expected = format!("test.lua:{line}: stopped by the watchdog: the script ran for 0.2 s");
    assert!(errors[0].starts_with(&expected), "{errors:?}");
}

#[test]
fn the_watchdog_stops_an_endless_main_chunk_and_the_emulator_goes_on() {
    let (out, errors, frames, running) = watched_run(
        &format!("emu.registerexit(function() print('exit') end)\n{SPIN}"),
        5,
    );
    stopped_at(&errors, 2);
    assert_eq!(out, ["exit"], "registerexit runs, on its own clock");
    assert!(!running);
    assert_eq!(frames, 5, "the emulator ran to the last frame");
}

#[test]
fn the_watchdog_stops_an_endless_memory_hook() {
    let (out, errors, frames, running) = watched_run(
        &format!(
            "memory.registerwrite(0x10, function()\n{SPIN}\nend)\n\
             emu.registerafter(function() print('after') end)"
        ),
        5,
    );
    stopped_at(&errors, 2);
    assert!(out.is_empty(), "stopped during frame 1: {out:?}");
    assert!(!running);
    assert_eq!(frames, 5);
}

#[test]
fn the_watchdog_stops_an_endless_registerbefore() {
    let (_, errors, frames, running) = watched_run(
        &format!("emu.registerbefore(function()\nlocal n = 0\n{SPIN}\nend)"),
        4,
    );
    stopped_at(&errors, 3);
    assert!(!running);
    assert_eq!(frames, 4);
}

#[test]
fn the_watchdog_stops_a_gui_callback_for_good() {
    // A failing gui.register callback is dropped and the script kept (FCEUX); the watchdog
    // stops the script.
    let (_, errors, frames, running) = watched_run(
        &format!("gui.register(function() {SPIN} end)\nwhile true do emu.frameadvance() end"),
        4,
    );
    stopped_at(&errors, 1);
    assert!(!running);
    assert_eq!(frames, 4);
}

#[test]
fn pcall_cannot_catch_the_watchdog() {
    let (_, errors, _, running) = watched_run(
        &format!(
            "while true do\n\
               pcall(function() {SPIN} end)\n\
               xpcall(function() {SPIN} end, print)\n\
               coroutine.resume(coroutine.create(function() {SPIN} end))\n\
             end"
        ),
        2,
    );
    stopped_at(&errors, 2);
    assert!(!running);
}

#[test]
fn the_watchdog_stops_loops_in_coroutines_of_the_script() {
    let (_, errors, _, running) = watched_run(
        &format!("local co = coroutine.wrap(function()\n{SPIN}\nend)\nco()"),
        2,
    );
    stopped_at(&errors, 2);
    assert!(!running);
}

#[test]
fn the_watchdog_stops_api_loops_over_c_functions() {
    // No Lua instruction runs while emu.exec_count calls a C function.
    for call in [
        "emu.exec_count(2^53, emu.framecount)",
        "emu.exec_time(1e308, emu.framecount)",
    ] {
        let (_, errors, _, running) = watched_run(&format!("\n{call}"), 2);
        stopped_at(&errors, 2);
        assert!(!running);
    }
}

#[test]
fn a_script_that_yields_in_time_is_never_stopped() {
    // Busy for half the limit every frame, for longer than the limit in all.
    let (out, errors, frames, running) = watched_run(
        "emu.registerbefore(function()\n\
           local t = os.clock() while os.clock() - t < 0.01 do end\n\
         end)\n\
         for i = 1, 30 do\n\
           local t = os.clock() while os.clock() - t < 0.01 do end\n\
           emu.frameadvance()\n\
         end\n\
         print('done')",
        32,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(out, ["done"]);
    assert!(running);
    assert_eq!(frames, 32);
}

#[test]
fn the_watchdog_stops_interpreted_and_compiled_loops() {
    // A loop LuaJIT 2.1 cannot compile (it makes a closure), one it compiles, and a compiled
    // loop that calls a C function: under LuaJIT the first reaches the count hook, the others
    // only through the profiler.
    for spin in [
        "while true do local f = function() end end",
        "local n = 0 while true do n = n + 1 end",
        "while true do local t = os.clock() end",
    ] {
        let (_, errors, _, running) = watched_run(&format!("\n{spin}"), 2);
        stopped_at(&errors, 2);
        assert!(!running);
    }
}

#[test]
fn without_the_watchdog_a_long_slice_runs_to_its_end() {
    // FCEUX's behaviour, the host's default: no limit.
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "local t = os.clock() while os.clock() - t < 0.5 do end\n\
         print('done')",
    );
    assert_eq!(rig.frames(1), ["done"]);
    assert!(rig.host.take_errors().is_empty());
    let mut rig = Rig::watched(
        &rom,
        "local t = os.clock() while os.clock() - t < 0.5 do end\n\
         print('done')",
        Some(Duration::ZERO),
    );
    assert_eq!(rig.frames(1), ["done"], "a zero limit is no limit");
}

#[test]
fn the_watchdog_stops_a_slot_callback_and_the_script() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::watched(
        &rom,
        &format!("savestate.registersave(function()\n{SPIN}\nend)"),
        Some(LIMIT),
    );
    rig.frames(1);
    rig.host.user_saved_slot(&mut rig.nes, 1);
    stopped_at(&rig.host.take_errors(), 2);
    assert!(!rig.host.running());
}

// ----- drawing with extreme coordinates -------------------------------------------------------

/// Numbers a script may pass: huge, negative, not a number, infinite, at the int edges.
const EXTREME_NUMBERS: &str = "{0, -1, 1, 255, 256, 2^31 - 1, 2^31, -2^31, -2^31 - 1, 2^32, \
     2^53, -2^63, 1e12, -1e12, 1e308, -1e308, 0/0, math.huge, -math.huge, 1e-300, 3.7, -3.7}";

/// Run `calls` (Lua, with the list `v` of [`EXTREME_NUMBERS`]) in the main chunk of a fresh
/// script and in its gui.register callback; every call must return within `budget`.
fn draws_quickly(calls: &str, budget: Duration) {
    let rom = nrom(&[], &[]);
    let script = format!(
        "local v = {EXTREME_NUMBERS}\n\
         local function draw()\n\
           {calls}\n\
         end\n\
         gui.register(draw)\n\
         draw()\n\
         emu.frameadvance()\n\
         print('done')"
    );
    let started = Instant::now();
    let mut rig = Rig::new(&rom, &script);
    let out = rig.frames(2);
    assert!(
        started.elapsed() < budget,
        "{calls}: {:?}",
        started.elapsed()
    );
    assert_eq!(rig.host.take_errors(), Vec::<String>::new(), "{calls}");
    assert_eq!(out, ["done"], "{calls}");
}

#[test]
fn lines_return_quickly_for_any_coordinates() {
    // Every pair of corners from the extreme numbers, both ways.
    draws_quickly(
        "for _, a in ipairs(v) do for _, b in ipairs(v) do\n\
           gui.line(a, b, b, a) gui.line(0, 0, a, b) gui.line(a, 0, b, 239)\n\
           gui.drawline(a, b, 100, 100, 'red', true)\n\
         end end",
        Duration::from_secs(10),
    );
}

#[test]
fn boxes_return_quickly_for_any_coordinates() {
    draws_quickly(
        "for _, a in ipairs(v) do for _, b in ipairs(v) do\n\
           gui.box(a, b, b, a) gui.drawbox(0, 0, a, b, 'red', 'blue')\n\
           gui.rect(a, 0, b, 239) gui.drawrect(-a, -b, a, b)\n\
         end end",
        Duration::from_secs(10),
    );
}

#[test]
fn pixels_return_quickly_for_any_coordinates() {
    draws_quickly(
        "for _, a in ipairs(v) do for _, b in ipairs(v) do\n\
           gui.pixel(a, b, 'red') gui.drawpixel(b, a, 0xFF0000FF)\n\
           gui.setpixel(a, a, {255, 0, 0}) gui.writepixel(b, b, '#FF0000')\n\
           pcall(gui.getpixel, a, b)\n\
         end end",
        Duration::from_secs(10),
    );
}

#[test]
fn text_returns_quickly_for_any_coordinates_and_length() {
    draws_quickly(
        "local long = ('W\\t\\n'):rep(100000)\n\
         for _, a in ipairs(v) do for _, b in ipairs(v) do\n\
           gui.text(a, b, 'x\\ty\\nz') gui.drawtext(b, a, a)\n\
         end end\n\
         for _, a in ipairs(v) do gui.text(a, 0, long) gui.text(0, a, long) end",
        Duration::from_secs(10),
    );
}

#[test]
fn colours_opacity_and_stubs_take_any_number() {
    draws_quickly(
        "for _, a in ipairs(v) do\n\
           gui.opacity(a) gui.transparency(a)\n\
           gui.parsecolor(a) gui.parsecolor({a, a, a, a}) gui.parsecolor({r = a, a = a})\n\
           gui.pixel(0, 0, a) gui.box(0, 0, 9, 9, a, {a})\n\
           gui.gdoverlay(a, a, a) gui.gdoverlay(a, a, '', a, a, a, a, a)\n\
           gui.gdscreenshot(a) gui.savescreenshot(a) gui.popup(a)\n\
         end\n\
         gui.opacity(1)",
        Duration::from_secs(10),
    );
}

// ----- arithmetic on script numbers -----------------------------------------------------------

#[test]
fn every_api_function_takes_extreme_numbers() {
    // In the test profile (overflow checks on) any unchecked arithmetic on a script's numbers
    // panics. Each function gets each extreme number in every argument position up to 4 (and
    // a function as the next one, for the register* functions).
    let rom = nrom(&[], &[]);
    let script = format!(
        "local v = {EXTREME_NUMBERS}\n\
         local skip = {{frameadvance = true, exec_time = true, pause = true}}\n\
         local f = function() end\n\
         for _, ns in ipairs({{'emu', 'FCEU', 'memory', 'joypad', 'gui', 'savestate', 'rom',\n\
                               'movie', 'sound', 'input', 'zapper', 'debugger', 'bit',\n\
                               'taseditor'}}) do\n\
           for name, fn in pairs(_G[ns]) do\n\
             if type(fn) == 'function' and not skip[name] then\n\
               for _, a in ipairs(v) do\n\
                 pcall(fn, a) pcall(fn, a, a) pcall(fn, a, a, f) pcall(fn, a, a, a, a)\n\
                 pcall(fn, 0, a, f) pcall(fn, a, 'sub', f) pcall(fn, 'x', a)\n\
               end\n\
             end\n\
           end\n\
         end\n\
         for _, name in ipairs({{'AND', 'OR', 'XOR', 'SHIFT', 'BIT', 'tobitstring'}}) do\n\
           for _, a in ipairs(v) do for _, b in ipairs(v) do pcall(_G[name], a, b) end end\n\
         end\n\
         for _, a in ipairs(v) do\n\
           pcall(emu.exec_time, a <= 0 and a or 0, f) pcall(emu.exec_count, a < 5 and a or 5, f)\n\
         end\n\
         print('done')"
    );
    let mut rig = Rig::watched(&rom, &script, Some(Duration::from_secs(20)));
    let out = rig.frames(3);
    assert_eq!(rig.host.take_errors(), Vec::<String>::new());
    assert!(out.contains(&"done".to_owned()), "{out:?}");
}

#[test]
fn exec_time_with_a_time_past_what_an_instant_holds_runs_until_stopped() {
    // Instant + 1e308 ms overflowed (a panic); now it is "for ever", here until the watchdog.
    let (_, errors, _, _) = watched_run(
        "local n = 0\n\
         emu.exec_time(1e308, function() n = n + 1 end)",
        1,
    );
    stopped_at(&errors, 2);
}

// ----- file sizes -----------------------------------------------------------------------------

#[test]
fn a_script_larger_than_the_limit_is_refused_unread() {
    let rom = nrom(&[], &[]);
    let dir = tempfile::tempdir().unwrap();
    // An endless file: only the limit and one byte are read.
    if Path::new("/dev/zero").exists() {
        let started = Instant::now();
        let error = LuaHost::load(Path::new("/dev/zero"), options(&rom, dir.path())).unwrap_err();
        assert!(
            error.to_string().contains("script too large (over 64 MiB)"),
            "{error}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    let path = dir.path().join("big.lua");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(MAX_SCRIPT_BYTES + 1).unwrap();
    let error = LuaHost::load(&path, options(&rom, dir.path())).unwrap_err();
    assert!(matches!(error, LoadError::TooLarge(_)), "{error}");
    // At the limit it is read (and fails to compile: NUL bytes).
    file.set_len(MAX_SCRIPT_BYTES).unwrap();
    let error = LuaHost::load(&path, options(&rom, dir.path())).unwrap_err();
    assert!(matches!(error, LoadError::Lua(_)), "{error}");
}

#[test]
fn a_slot_file_too_large_for_a_state_is_not_read() {
    let rom = nrom(&[], &[]);
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("test.state1")).unwrap();
    file.set_len(17 << 20).unwrap();
    let opts = options(&rom, dir.path());
    let cart = nes::Cartridge::from_ines(&rom).unwrap();
    let mut nes = Nes::with_power_on(cart, nes::PowerOn::FCEUX);
    let mut host = LuaHost::load_source(
        "test.lua",
        b"local s = savestate.object(1)\n\
          local at = emu.framecount()\n\
          savestate.load(s)\n\
          print(emu.framecount() == at)",
        opts,
    )
    .unwrap();
    host.start(&mut nes);
    assert_eq!(host.take_output(), ["true"], "nothing loaded");
    assert!(host.take_errors().is_empty());
}

#[test]
fn re_registering_a_range_within_one_slice_holds_one_change_per_address() {
    let rom = nrom(&[], &[]);
    let rig = Rig::new(&rom, "");
    // Outside a host entry the changes wait for the next sync, as within a long slice.
    rig.host
        .lua
        .load(
            "local f = function() end\n\
             for i = 1, 50 do memory.registerwrite(0, 0x10000, f) memory.registerexec(0, 0x10000, nil) end",
        )
        .exec()
        .unwrap();
    let pending = rig.host.shared.borrow().hook_changes.pending();
    assert!(pending <= 2 << 16, "{pending} changes held");
}
