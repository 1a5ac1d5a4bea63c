//! `--lua`: starting the FCEUX-compatible script host for a run and passing its output on.

use std::path::Path;

use nes::Palette;
use nes_lua::LuaHost;

use super::RunLua;
use crate::Error;

/// Start the Lua host for `--lua`, with slot files where battery saves go. `None` without
/// `--lua`.
pub fn start(
    lua: &RunLua,
    rom: &Path,
    rom_info: &nes::RomInfo,
    save_dir: Option<&Path>,
    palette: &Palette,
) -> Result<Option<LuaHost>, Error> {
    let Some(script) = &lua.lua else {
        return Ok(None);
    };
    let save_dir = match save_dir {
        Some(dir) => dir.to_path_buf(),
        None => rom.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let options = nes_lua::HostOptions {
        save_dir: std::path::absolute(&save_dir).unwrap_or(save_dir),
        rom_stem: rom
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default(),
        rom: rom_info.clone(),
        arg: lua.lua_arg.clone(),
        palette: palette.clone(),
    };
    let mut host = LuaHost::load(script, options)?;
    host.set_watchdog(nes_lua::watchdog_limit(lua.lua_watchdog.unwrap_or(0.0))?);
    // Each line as it is printed: a script that prints and then hangs or quits loses nothing.
    host.set_print_sink(|line| {
        let mut text = Vec::with_capacity(line.len() + 1);
        text.extend_from_slice(line);
        text.push(b'\n');
        crate::stdout::write_bytes(&text);
        crate::stdout::flush();
    });
    Ok(Some(host))
}

/// Pass the script's output on: errors and messages to stderr (`print` went to stdout as it
/// was printed).
pub fn drain(host: &mut LuaHost) {
    for message in host.take_messages() {
        eprintln!("lua message: {message}");
    }
    for error in host.take_errors() {
        eprintln!("lua error: {error}");
    }
}
