//! `movie`: where the playing or recording movie stands.

use super::*;

pub(super) fn movie_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
    let movie = lua.create_table()?;
    // FCEUX counts a finished movie as playing (and so as active).
    set_getter(lua, &movie, "active", shared, |s| s.movie.active())?;
    set_getter(lua, &movie, "recording", shared, |s| {
        s.movie.mode == MovieMode::Record
    })?;
    set_getter(lua, &movie, "playing", shared, |s| {
        matches!(s.movie.mode, MovieMode::Playback | MovieMode::Finished)
    })?;
    set_getter(lua, &movie, "mode", shared, |s| match s.movie.mode {
        MovieMode::Inactive => None,
        MovieMode::Playback => Some("playback"),
        MovieMode::Record => Some("record"),
        MovieMode::Finished => Some("finished"),
    })?;
    set_getter(lua, &movie, "framecount", shared, |s| s.frame_count)?;
    let loaded = |s: &SharedRef, lua: &Lua| -> mlua::Result<()> {
        if s.borrow().movie.active() {
            Ok(())
        } else {
            Err(fail(lua, "No movie loaded."))
        }
    };
    let s = shared.clone();
    movie.set(
        "length",
        lua.create_function(move |lua, ()| {
            loaded(&s, lua)?;
            Ok(s.borrow().movie.length)
        })?,
    )?;
    let s = shared.clone();
    movie.set(
        "rerecordcount",
        lua.create_function(move |lua, ()| {
            loaded(&s, lua)?;
            Ok(s.borrow().movie.rerecords)
        })?,
    )?;
    let s = shared.clone();
    let name = lua.create_function(move |lua, ()| {
        loaded(&s, lua)?;
        Ok(s.borrow().movie.name.clone())
    })?;
    set_all(&movie, &["name", "getname", "filename"], &name)?;
    movie.set("readonly", lua.create_function(|_, ()| Ok(true))?)?;
    movie.set("getreadonly", lua.create_function(|_, ()| Ok(true))?)?;
    movie.set(
        "setreadonly",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    movie.set("replay", lua.create_function(|_, _: MultiValue| Ok(false))?)?;
    movie.set("stop", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    movie.set("close", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    movie.set("play", lua.create_function(|_, _: MultiValue| Ok(false))?)?;
    movie.set(
        "playbeginning",
        lua.create_function(|_, _: MultiValue| Ok(false))?,
    )?;
    movie.set(
        "rerecordcounting",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    Ok(movie)
}
