//! `savestate`: numbered slots, anonymous states, and `registersave`/`registerload`.

use super::*;

/// The largest slot file `savestate.object(n)` reads: above any state this emulator writes
/// (the console's few KiB plus the cartridge's writable memory, at most four NES 2.0 RAM chips
/// of 2 MiB each), so a bigger file is not a state and is not read into memory.
const MAX_SLOT_FILE_BYTES: u64 = 16 << 20;

/// A savestate object. It owns its state, so the state goes when Lua collects the object
/// (FCEUX frees it then too): a script may make one a frame.
#[derive(Debug)]
struct StateObject {
    /// The saved state, as a Lua string rather than a Rust buffer: Lua's collector paces itself
    /// by the memory Lua allocated, and a buffer it cannot see (some 130 KiB an object) would
    /// let garbage objects pile up between its rare cycles.
    data: Option<mlua::LuaString>,
    /// The numbered slot (0-9) it belongs to, if any.
    slot: Option<u8>,
}
impl mlua::UserData for StateObject {}

fn slot_path(shared: &Shared, slot: u8) -> std::path::PathBuf {
    shared
        .save_dir
        .join(format!("{}.state{slot}", shared.rom_stem))
}

/// The savestate object `function` was given, with FCEUX's message for anything else
/// ("Invalid savestate.save object").
fn state_object(lua: &Lua, value: &Value, function: &str) -> mlua::Result<mlua::AnyUserData> {
    match value {
        Value::UserData(ud) if ud.is::<StateObject>() => Ok(ud.clone()),
        _ => Err(fail(lua, format!("Invalid {function} object"))),
    }
}

pub(super) fn savestate_table(
    lua: &Lua,
    shared: &SharedRef,
    registries: &Registries,
) -> mlua::Result<Table> {
    let savestate = lua.create_table()?;
    // create: old numbering (1 = slot 0, 2-10 = slots 1-9); object: new (1-9, 10 = slot 0).
    for (name, old_numbering) in [("create", true), ("object", false)] {
        let s = shared.clone();
        savestate.set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                let slot = match args.front() {
                    None | Some(Value::Nil) => None,
                    Some(_) => {
                        let n = check_integer(lua, &args, 1)?;
                        let slot = match (old_numbering, n) {
                            (true, 1) => 0,
                            (true, 2..=10) => n - 1,
                            (false, 1..=9) => n,
                            (false, 10) => 0,
                            _ => return Err(fail(lua, format!("invalid player's savestate {n}"))),
                        };
                        Some(slot as u8)
                    }
                };
                // A slot file that cannot be read (or is too large to be a state) leaves the
                // object empty, as a missing one does.
                let bytes = slot.and_then(|slot| {
                    let path = slot_path(&s.borrow(), slot);
                    crate::read_bounded(&path, MAX_SLOT_FILE_BYTES)
                        .ok()
                        .flatten()
                });
                let data = bytes.map(|bytes| lua.create_string(bytes)).transpose()?;
                Ok(StateObject { data, slot })
            })?,
        )?;
    }
    savestate.set(
        "save",
        lua.create_function(move |lua, object: Value| {
            let object = state_object(lua, &object, "savestate.save")?;
            let at = location(lua);
            let bytes: mlua::LuaString = with_machine(lua, move |lua, machine| {
                let nes = console(machine, &at, "savestate.save()")?;
                let bytes = crate::state::save(nes)
                    .map_err(|e| mlua::Error::runtime(format!("{at}savestate.save: {e}")))?;
                Ok(MultiValue::from_vec(vec![Value::String(
                    lua.create_string(bytes)?,
                )]))
            })?;
            object.borrow_mut::<StateObject>()?.data = Some(bytes);
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    savestate.set(
        "load",
        lua.create_function(move |lua, object: Value| {
            let object = state_object(lua, &object, "savestate.load")?;
            // An object never saved loads nothing, silently (FCEUX 2.6.5).
            let Some(data) = object.borrow::<StateObject>()?.data.clone() else {
                return Ok(());
            };
            let at = location(lua);
            let s = s.clone();
            with_machine::<()>(lua, move |_, machine| {
                let nes = console(machine, &at, "savestate.load()")?;
                crate::state::load(nes, &data.as_bytes())
                    .map_err(|e| mlua::Error::runtime(format!("{at}savestate.load: {e}")))?;
                // The state brings its frame and lag counts (FCEUX restores both).
                s.borrow_mut().sync_counts(nes);
                Ok(MultiValue::new())
            })
        })?,
    )?;
    let s = shared.clone();
    savestate.set(
        "persist",
        lua.create_function(move |lua, object: Value| {
            let object = state_object(lua, &object, "savestate.persist")?;
            let state = object.borrow::<StateObject>()?;
            let (Some(slot), Some(data)) = (state.slot, state.data.as_ref()) else {
                return Ok(());
            };
            let path = slot_path(&s.borrow(), slot);
            write_atomically(&path, &data.as_bytes())
                .map_err(|e| fail(lua, format!("cannot write {}: {e}", path.display())))
        })?,
    )?;
    savestate.set(
        "registersave",
        callback_setter(lua, registries, "save", "savestate.registersave")?,
    )?;
    savestate.set(
        "registerload",
        callback_setter(lua, registries, "load", "savestate.registerload")?,
    )?;
    savestate.set(
        "loadscriptdata",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    Ok(savestate)
}

/// Write through a temporary file and rename it over the target.
fn write_atomically(path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = std::path::PathBuf::from(temporary);
    std::fs::write(&temporary, data)?;
    std::fs::rename(&temporary, path)
}
