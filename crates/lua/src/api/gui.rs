//! `gui`: FCEUX's colour forms and the drawing functions onto the overlay.

use super::*;

const NAMED_COLOURS: [(&str, u32); 15] = [
    ("white", 0xFFFF_FFFF),
    ("black", 0x0000_00FF),
    ("clear", 0x0000_0000),
    ("gray", 0x7F7F_7FFF),
    ("grey", 0x7F7F_7FFF),
    ("red", 0xFF00_00FF),
    ("orange", 0xFF7F_00FF),
    ("yellow", 0xFFFF_00FF),
    ("chartreuse", 0x7FFF_00FF),
    ("green", 0x00FF_00FF),
    ("teal", 0x00FF_7FFF),
    ("cyan", 0x00FF_FFFF),
    ("blue", 0x0000_FFFF),
    ("purple", 0x7F00_FFFF),
    ("magenta", 0xFF00_FFFF),
];

/// Any of FCEUX's colour forms; `None` when it is not a colour.
pub(crate) fn parse_color(shared: &Shared, value: &Value) -> Option<Rgba> {
    match value {
        Value::Integer(i) => Some((*i as u32).to_be_bytes()),
        Value::Number(n) => Some((bitlib::to_bit(*n) as u32).to_be_bytes()),
        Value::String(s) => {
            let text = s.to_string_lossy();
            let lower = text.to_ascii_lowercase();
            if let Some(hex) = lower.strip_prefix('#') {
                let digits = u32::from_str_radix(hex, 16).ok()?;
                return match hex.len() {
                    6 => Some(((digits << 8) | 0xFF).to_be_bytes()),
                    8 => Some(digits.to_be_bytes()),
                    _ => None,
                };
            }
            if let Some(index) = lower.strip_prefix('p') {
                let index = u16::from_str_radix(index, 16).ok()?;
                if index < 0x40 && lower.len() == 3 {
                    let [r, g, b] = shared.palette.as_ref()?.rgb(index);
                    return Some([r, g, b, 0xFF]);
                }
                return None;
            }
            NAMED_COLOURS
                .iter()
                .find(|(name, _)| *name == lower)
                .map(|(_, rgba)| rgba.to_be_bytes())
        }
        Value::Table(table) => {
            let component = |name: &str, index: i64, default: u8| -> u8 {
                let value: Value = table
                    .get(name)
                    .ok()
                    .filter(|v: &Value| !v.is_nil())
                    .or_else(|| table.get(index).ok())
                    .unwrap_or(Value::Nil);
                match value {
                    Value::Integer(i) => i.clamp(0, 255) as u8,
                    Value::Number(n) => n.clamp(0.0, 255.0) as u8,
                    _ => default,
                }
            };
            Some([
                component("r", 1, 0),
                component("g", 2, 0),
                component("b", 3, 0),
                component("a", 4, 255),
            ])
        }
        _ => None,
    }
}

/// An optional colour argument: missing or unknown gives `default`.
fn optional_color(shared: &Shared, value: &Value, default: Rgba) -> Rgba {
    if value.is_nil() {
        return default;
    }
    parse_color(shared, value).unwrap_or(default)
}

fn required_color(lua: &Lua, shared: &Shared, value: &Value, function: &str) -> mlua::Result<Rgba> {
    parse_color(shared, value).ok_or_else(|| fail(lua, format!("{function}: invalid colour")))
}

pub(super) fn gui_table(
    lua: &Lua,
    shared: &SharedRef,
    registries: &Registries,
) -> mlua::Result<Table> {
    let gui = lua.create_table()?;
    let s = shared.clone();
    let text = lua.create_function(move |lua, args: MultiValue| {
        let x = integer(lua, &arg(&args, 0), 1, "gui.text")?;
        let y = integer(lua, &arg(&args, 1), 2, "gui.text")?;
        let mut message = String::new();
        format_value(lua, &arg(&args, 2), false, &mut message);
        let mut shared = s.borrow_mut();
        let fg = optional_color(&shared, &arg(&args, 3), [255, 255, 255, 255]);
        let bg = optional_color(&shared, &arg(&args, 4), [27, 18, 105, 255]);
        shared.overlay.text(x, y, &message, fg, bg);
        Ok(())
    })?;
    set_all(&gui, &["text", "drawtext"], &text)?;
    let s = shared.clone();
    let rect = lua.create_function(move |lua, args: MultiValue| {
        let mut corners = [0i64; 4];
        for (i, c) in corners.iter_mut().enumerate() {
            *c = integer(lua, &arg(&args, i), i + 1, "gui.box")?;
        }
        let mut shared = s.borrow_mut();
        let fill = optional_color(&shared, &arg(&args, 4), [255, 255, 255, 63]);
        let outline = optional_color(&shared, &arg(&args, 5), [fill[0], fill[1], fill[2], 255]);
        shared.overlay.rect(
            corners[0], corners[1], corners[2], corners[3], fill, outline,
        );
        Ok(())
    })?;
    set_all(&gui, &["box", "drawbox", "rect", "drawrect"], &rect)?;
    let s = shared.clone();
    let line = lua.create_function(move |lua, args: MultiValue| {
        let mut ends = [0i64; 4];
        for (i, c) in ends.iter_mut().enumerate() {
            *c = integer(lua, &arg(&args, i), i + 1, "gui.line")?;
        }
        let mut shared = s.borrow_mut();
        let color = optional_color(&shared, &arg(&args, 4), [255, 255, 255, 255]);
        let skip_first = !matches!(arg(&args, 5), Value::Nil | Value::Boolean(false));
        shared
            .overlay
            .line(ends[0], ends[1], ends[2], ends[3], color, skip_first);
        Ok(())
    })?;
    set_all(&gui, &["line", "drawline"], &line)?;
    let s = shared.clone();
    let pixel = lua.create_function(move |lua, args: MultiValue| {
        let x = integer(lua, &arg(&args, 0), 1, "gui.pixel")?;
        let y = integer(lua, &arg(&args, 1), 2, "gui.pixel")?;
        let mut shared = s.borrow_mut();
        let color = required_color(lua, &shared, &arg(&args, 2), "gui.pixel")?;
        shared.overlay.blend(x, y, color);
        Ok(())
    })?;
    set_all(
        &gui,
        &["pixel", "drawpixel", "setpixel", "writepixel"],
        &pixel,
    )?;
    let s = shared.clone();
    gui.set(
        "getpixel",
        lua.create_function(move |lua, (x, y): (Value, Value)| {
            let x = integer(lua, &x, 1, "gui.getpixel")?;
            let y = integer(lua, &y, 2, "gui.getpixel")?;
            let [r, g, b, a] = s.borrow().overlay.pixel(x, y);
            Ok((r, g, b, a))
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "parsecolor",
        lua.create_function(move |lua, value: Value| {
            let [r, g, b, a] = required_color(lua, &s.borrow(), &value, "gui.parsecolor")?;
            Ok((r, g, b, a))
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "opacity",
        lua.create_function(move |lua, value: Value| {
            let value = number(lua, &value, 1, "gui.opacity")?;
            s.borrow_mut().overlay.opacity = value.clamp(0.0, 1.0);
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "transparency",
        lua.create_function(move |lua, value: Value| {
            let value = number(lua, &value, 1, "gui.transparency")?;
            s.borrow_mut().overlay.opacity = (1.0 - value / 4.0).clamp(0.0, 1.0);
            Ok(())
        })?,
    )?;
    gui.set(
        "register",
        callback_setter(lua, registries, "gui", "gui.register")?,
    )?;
    gui.set("popup", lua.create_function(|_, _: MultiValue| Ok("ok"))?)?;
    gui.set(
        "savescreenshot",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    gui.set(
        "gdscreenshot",
        lua.create_function(|_, _: MultiValue| Ok(""))?,
    )?;
    gui.set("gdoverlay", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    Ok(gui)
}
