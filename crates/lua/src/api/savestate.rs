//! `savestate`: numbered slots, anonymous states, and `registersave`/`registerload`.

use super::*;

/// A savestate object: an index into `Shared::states`.
#[derive(Debug, Clone, Copy)]
struct StateObject(usize);
impl mlua::UserData for StateObject {}

fn slot_path(shared: &Shared, slot: u8) -> std::path::PathBuf {
    shared
        .save_dir
        .join(format!("{}.state{slot}", shared.rom_stem))
}

/// The savestate object `function` was given, with FCEUX's message for anything else
/// ("Invalid savestate.save object").
fn state_object(lua: &Lua, value: &Value, function: &str) -> mlua::Result<usize> {
    match value {
        Value::UserData(ud) => match ud.borrow::<StateObject>() {
            Ok(object) => Ok(object.0),
            Err(_) => Err(fail(lua, format!("Invalid {function} object"))),
        },
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
                let mut shared = s.borrow_mut();
                let data = slot.and_then(|slot| std::fs::read(slot_path(&shared, slot)).ok());
                shared.states.push(StateSlot { data, slot });
                Ok(StateObject(shared.states.len() - 1))
            })?,
        )?;
    }
    let s = shared.clone();
    savestate.set(
        "save",
        lua.create_function(move |lua, object: Value| {
            let index = state_object(lua, &object, "savestate.save")?;
            let at = location(lua);
            let bytes: mlua::LuaString = with_machine(lua, move |lua, machine| {
                let nes = console(machine, &at, "savestate.save()")?;
                let bytes = crate::state::save(nes)
                    .map_err(|e| mlua::Error::runtime(format!("{at}savestate.save: {e}")))?;
                Ok(MultiValue::from_vec(vec![Value::String(
                    lua.create_string(bytes)?,
                )]))
            })?;
            s.borrow_mut().states[index].data = Some(bytes.as_bytes().to_vec());
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    savestate.set(
        "load",
        lua.create_function(move |lua, object: Value| {
            let index = state_object(lua, &object, "savestate.load")?;
            // An object never saved loads nothing, silently (FCEUX 2.6.5).
            let Some(data) = s.borrow().states[index].data.clone() else {
                return Ok(());
            };
            let at = location(lua);
            let s = s.clone();
            with_machine::<()>(lua, move |_, machine| {
                let nes = console(machine, &at, "savestate.load()")?;
                crate::state::load(nes, &data)
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
            let index = state_object(lua, &object, "savestate.persist")?;
            let shared = s.borrow();
            let state = &shared.states[index];
            let (Some(slot), Some(data)) = (state.slot, state.data.as_ref()) else {
                return Ok(());
            };
            let path = slot_path(&shared, slot);
            write_atomically(&path, data)
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
