//! `gui`: FCEUX 2.6.5's colour forms and the drawing functions onto the overlay.
//!
//! Argument handling follows FCEUX's (measured with `pcall`, `tests/fceux/lua/gui_draw.lua`):
//! coordinates are Lua integers (numbers or numeric strings, truncated toward zero, then to a C
//! `int`), errors are `file:line: message` of the calling line, and bad arguments read
//! `bad argument #N to 'NAME' (number expected, got no value)` with NAME as the call site spells
//! the function (`text`, `drawtext`, a local's name, `?` through `pcall(gui.text, ...)`).

use super::*;
use crate::gui::Overlay;

/// FCEUX's colour names (matched ignoring case).
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

const WHITE: Rgba = [255, 255, 255, 255];
/// `gui.text`'s default background: on screen it is the nearest palette colour, (27, 18, 106).
const TEXT_BACKGROUND: Rgba = [27, 18, 105, 255];
/// `gui.box`'s default fill.
const BOX_FILL: Rgba = [255, 255, 255, 63];

/// The arguments of one `gui` call, for FCEUX's argument checks.
struct Args<'a> {
    lua: &'a Lua,
    values: &'a MultiValue,
}

impl Args<'_> {
    fn get(&self, index: usize) -> Value {
        arg(self.values, index)
    }

    /// `luaL_typerror` for argument `index` (0-based).
    fn type_error(&self, index: usize, expected: &str) -> mlua::Error {
        type_error(self.lua, self.values.get(index), index + 1, expected)
    }

    /// `luaL_checknumber`.
    fn number(&self, index: usize) -> mlua::Result<f64> {
        check_number(self.lua, self.values, index + 1)
    }

    /// `luaL_checkinteger` stored in a C `int`, as FCEUX's coordinates are.
    fn int(&self, index: usize) -> mlua::Result<i32> {
        Ok(c_int(self.number(index)?))
    }

    /// `luaL_checklstring`: a string, or a number in Lua's `%.14g`.
    fn bytes(&self, index: usize) -> mlua::Result<Vec<u8>> {
        match self.get(index) {
            value @ (Value::String(_) | Value::Integer(_) | Value::Number(_)) => {
                match self.lua.coerce_string(value) {
                    Ok(Some(text)) => Ok(text.as_bytes().to_vec()),
                    _ => Err(self.type_error(index, "string")),
                }
            }
            _ => Err(self.type_error(index, "string")),
        }
    }
}

/// A Lua number as FCEUX's C code stores it in an `int`: truncated toward zero to 64 bits
/// (out of range: the x86 "indefinite" value), then the low 32 bits.
fn c_int(number: f64) -> i32 {
    c_integer(number) as i32
}

fn c_integer(number: f64) -> i64 {
    if number.is_finite() && number.abs() < 9.2e18 {
        number.trunc() as i64
    } else {
        i64::MIN
    }
}

/// `0xRRGGBBAA` as RGBA.
fn rgba(value: u32) -> Rgba {
    value.to_be_bytes()
}

/// FCEUX's `#...` form: the hex number `sscanf("%X")` reads after `#` (leading spaces, a sign
/// and `0x` allowed; nothing readable gives 0), shifted left by 4 bits per character missing
/// from 8; with 6 or fewer characters the alpha is 255. So `#RRGGBB` and `#RRGGBBAA` are what
/// they look like, `#F` is (240, 0, 0, 255) and `#12GG` (0, 18, 0, 255) (measured).
fn hash_colour(text: &[u8]) -> u32 {
    let mut rest = text;
    while let [b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C, tail @ ..] = rest {
        rest = tail;
    }
    let negative = rest.first() == Some(&b'-');
    if let [b'+' | b'-', tail @ ..] = rest {
        rest = tail;
    }
    if let [b'0', b'x' | b'X', next, ..] = rest {
        if next.is_ascii_hexdigit() {
            rest = &rest[2..];
        }
    }
    let mut value: u64 = 0;
    for digit in rest.iter().map_while(|c| (*c as char).to_digit(16)) {
        // strtoul saturates; the int keeps the low 32 bits.
        value = value
            .checked_mul(16)
            .and_then(|v| v.checked_add(u64::from(digit)))
            .unwrap_or(u64::MAX);
    }
    let mut colour = if negative {
        value.wrapping_neg() as u32
    } else {
        value as u32
    };
    let missing = 8usize.saturating_sub(text.len());
    colour = colour.checked_shl(missing as u32 * 4).unwrap_or(0);
    if missing >= 2 {
        colour |= 0xFF;
    }
    colour
}

/// Why a value is not a colour, with FCEUX's messages.
enum ColourError {
    /// A string FCEUX does not know: `unknown colour NAME` (a default applies instead).
    Unknown(String),
    /// Not a colour type: `invalid colour` (a default applies instead, but not to functions).
    Invalid,
    /// A malformed `P` colour: raised even where a default would apply.
    Palette(&'static str),
}

/// FCEUX's colour forms: `0xRRGGBBAA` numbers, `#...` strings, `P00`-`P7F` (upper-case `P`, one
/// or two hex digits: 8-bit palette entries 128-255), names, `rand...` and `{r, g, b, a}` tables.
fn parse_colour(lua: &Lua, overlay: &Overlay, value: &Value) -> Result<u32, ColourError> {
    match value {
        Value::Integer(i) => Ok(*i as u32),
        // FCEUX converts the number's text (%.14g) back with strtod, then to a uint32.
        Value::Number(n) => Ok(c_integer(format!("{n:.13e}").parse().unwrap_or(*n)) as u32),
        Value::String(s) => {
            let bytes = s.as_bytes();
            let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
            match text {
                [b'#', hex @ ..] => Ok(hash_colour(hex)),
                [b'P', digits @ ..] => {
                    let hex = |c: u8| {
                        (c as char)
                            .to_digit(16)
                            .ok_or(ColourError::Palette("invalid hex in colour"))
                    };
                    let index = match *digits {
                        [high, low] => hex(high)? * 16 + hex(low)?,
                        [low] => hex(low)?,
                        _ => {
                            return Err(ColourError::Palette(
                                "palettes are defined with P## hex notion",
                            ))
                        }
                    };
                    if index > 0x7F {
                        return Err(ColourError::Palette("palettes range from P00 to P7F"));
                    }
                    let [r, g, b] = overlay
                        .palette_entry(0x80 + index as usize)
                        .unwrap_or_default();
                    Ok(u32::from_be_bytes([r, g, b, 0xFF]))
                }
                // FCEUX's random colour overflows its arithmetic and comes out opaque black
                // (measured, five times in a row).
                _ if text.len() >= 4 && text[..4].eq_ignore_ascii_case(b"rand") => Ok(0xFF),
                _ => NAMED_COLOURS
                    .iter()
                    .find(|(name, _)| name.as_bytes().eq_ignore_ascii_case(text))
                    .map(|(_, colour)| *colour)
                    .ok_or_else(|| ColourError::Unknown(String::from_utf8_lossy(text).into())),
            }
        }
        Value::Table(table) => {
            // Entries in `next` order; each value (an integer 0-255 after clamping, 0 if not a
            // number) is OR-ed into its channel, except alpha, which replaces the 255 start.
            let mut colour: u32 = 0xFF;
            for (key, value) in table.pairs::<Value, Value>().flatten() {
                let channel = match &key {
                    Value::String(s) => s.as_bytes().first().map_or(0, |c| c.to_ascii_lowercase()),
                    Value::Integer(i) => (*i).clamp(0, 255) as u8,
                    Value::Number(n) => c_integer(*n).clamp(0, 255) as u8,
                    _ => 0,
                };
                let amount = match value {
                    Value::Integer(i) => i,
                    Value::Number(n) => c_integer(n),
                    // lua_tointeger: Lua's own string conversion, so "0x10" is 16.
                    value @ Value::String(_) => {
                        lua.coerce_number(value).ok().flatten().map_or(0, c_integer)
                    }
                    _ => 0,
                }
                .clamp(0, 255) as u32;
                match channel {
                    1 | b'r' => colour |= amount << 24,
                    2 | b'g' => colour |= amount << 16,
                    3 | b'b' => colour |= amount << 8,
                    4 | b'a' => colour = (colour & !0xFF) | amount,
                    _ => {}
                }
            }
            Ok(colour)
        }
        _ => Err(ColourError::Invalid),
    }
}

/// The colour at argument `index` (`default` when it is missing or unknown), its alpha scaled
/// by `gui.opacity`: `gui_getcolour`/`gui_optcolour`.
fn colour_arg(
    args: &Args<'_>,
    overlay: &Overlay,
    index: usize,
    default: Option<Rgba>,
) -> mlua::Result<Rgba> {
    let value = args.get(index);
    let colour = match (parse_colour(args.lua, overlay, &value), default) {
        (Ok(colour), _) => rgba(colour),
        (Err(ColourError::Palette(message)), _) => return Err(fail(args.lua, message)),
        (Err(ColourError::Invalid), Some(default)) if !matches!(value, Value::Function(_)) => {
            default
        }
        (Err(ColourError::Unknown(_)), Some(default)) => default,
        (Err(ColourError::Unknown(name)), None) => {
            return Err(fail(args.lua, format!("unknown colour {name}")))
        }
        (Err(_), _) => return Err(fail(args.lua, "invalid colour")),
    };
    let [r, g, b, a] = colour;
    let alpha = (i64::from(a) * i64::from(overlay.alpha_scale) / 255).min(255) as u8;
    Ok([r, g, b, alpha])
}

/// `gui.opacity`'s and `gui.transparency`'s value as FCEUX's int (never below 0): a double
/// converted straight to an int, so out of the int range it is INT_MIN, then 0 (measured:
/// `gui.opacity(1e10)` and `gui.opacity(-1e10)` both make colours invisible).
fn alpha_scale(value: f64) -> i32 {
    if value.is_finite() && value > f64::from(i32::MIN) - 1.0 && value < f64::from(i32::MAX) + 1.0 {
        (value.trunc() as i32).max(0)
    } else {
        0
    }
}

pub(super) fn gui_table(
    lua: &Lua,
    shared: &SharedRef,
    registries: &Registries,
) -> mlua::Result<Table> {
    {
        let mut shared = shared.borrow_mut();
        if let Some(palette) = shared.palette.clone() {
            shared.overlay.set_palette(&palette);
        }
    }
    let gui = lua.create_table()?;
    let s = shared.clone();
    let text = lua.create_function(move |lua, values: MultiValue| {
        let args = Args {
            lua,
            values: &values,
        };
        let (x, y) = (args.int(0)?, args.int(1)?);
        let message = args.bytes(2)?;
        let mut shared = s.borrow_mut();
        let fg = colour_arg(&args, &shared.overlay, 3, Some(WHITE))?;
        let bg = colour_arg(&args, &shared.overlay, 4, Some(TEXT_BACKGROUND))?;
        shared.overlay.prepare();
        Ok(shared.overlay.text(x, y, &message, fg, bg))
    })?;
    set_all(&gui, &["text", "drawtext"], &text)?;
    let s = shared.clone();
    let rect = lua.create_function(move |lua, values: MultiValue| {
        let args = Args {
            lua,
            values: &values,
        };
        let (x1, y1, x2, y2) = (args.int(0)?, args.int(1)?, args.int(2)?, args.int(3)?);
        let mut shared = s.borrow_mut();
        let fill = colour_arg(&args, &shared.overlay, 4, Some(BOX_FILL))?;
        let [r, g, b, _] = fill;
        let outline = colour_arg(&args, &shared.overlay, 5, Some([r, g, b, 255]))?;
        shared.overlay.prepare();
        shared.overlay.rect(x1, y1, x2, y2, fill, outline);
        Ok(())
    })?;
    set_all(&gui, &["box", "drawbox", "rect", "drawrect"], &rect)?;
    let s = shared.clone();
    let line = lua.create_function(move |lua, values: MultiValue| {
        let args = Args {
            lua,
            values: &values,
        };
        let (x1, y1, x2, y2) = (args.int(0)?, args.int(1)?, args.int(2)?, args.int(3)?);
        let mut shared = s.borrow_mut();
        let colour = colour_arg(&args, &shared.overlay, 4, Some(WHITE))?;
        let skip_first = !matches!(args.get(5), Value::Nil | Value::Boolean(false));
        shared.overlay.prepare();
        shared.overlay.line(x1, y1, x2, y2, colour, skip_first);
        Ok(())
    })?;
    set_all(&gui, &["line", "drawline"], &line)?;
    let s = shared.clone();
    let pixel = lua.create_function(move |lua, values: MultiValue| {
        let args = Args {
            lua,
            values: &values,
        };
        let (x, y) = (args.int(0)?, args.int(1)?);
        let mut shared = s.borrow_mut();
        let colour = colour_arg(&args, &shared.overlay, 2, None)?;
        shared.overlay.prepare();
        shared.overlay.blend(i64::from(x), i64::from(y), colour);
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
        lua.create_function(move |lua, values: MultiValue| {
            let args = Args {
                lua,
                values: &values,
            };
            let (x, y) = (args.int(0)?, args.int(1)?);
            let [r, g, b, a] = s
                .borrow()
                .overlay
                .pixel(i64::from(x), i64::from(y))
                .ok_or_else(|| fail(lua, "bad coordinates. Use 0-255 x 0-239"))?;
            Ok((r, g, b, a))
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "parsecolor",
        lua.create_function(move |lua, values: MultiValue| {
            let args = Args {
                lua,
                values: &values,
            };
            let [r, g, b, a] = colour_arg(&args, &s.borrow().overlay, 0, None)?;
            Ok((r, g, b, a))
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "opacity",
        lua.create_function(move |lua, values: MultiValue| {
            let args = Args {
                lua,
                values: &values,
            };
            let opacity = args.number(0)?;
            s.borrow_mut().overlay.alpha_scale = alpha_scale(opacity * 255.0);
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "transparency",
        lua.create_function(move |lua, values: MultiValue| {
            let args = Args {
                lua,
                values: &values,
            };
            let transparency = args.number(0)?;
            s.borrow_mut().overlay.alpha_scale = alpha_scale((4.0 - transparency) / 4.0 * 255.0);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_colours_read_like_sscanf() {
        // Measured with gui.parsecolor in FCEUX 2.6.5.
        for (text, colour) in [
            ("", 0x0000_00FF),
            ("F", 0xF000_00FF),
            ("FF", 0xFF00_00FF),
            ("FFF", 0xFFF0_00FF),
            ("12345", 0x1234_50FF),
            ("1234567", 0x1234_5670),
            ("123456789", 0x2345_6789),
            ("GG0000", 0x0000_00FF),
            ("12GG", 0x0012_00FF),
            ("0x10", 0x0010_00FF),
            (" 10", 0x0100_00FF),
        ] {
            assert_eq!(hash_colour(text.as_bytes()), colour, "#{text}");
        }
    }

    /// `gui.parsecolor(value)` as `0xRRGGBBAA`, or the error's message.
    fn parse(lua: &Lua, value: Value) -> Result<u32, String> {
        let mut overlay = Overlay::default();
        overlay.set_palette(&nes::Palette::ntsc());
        parse_colour(lua, &overlay, &value).map_err(|error| match error {
            ColourError::Unknown(name) => format!("unknown colour {name}"),
            ColourError::Invalid => "invalid colour".to_owned(),
            ColourError::Palette(message) => message.to_owned(),
        })
    }

    #[test]
    fn names_starting_with_p_are_names_unless_the_p_is_upper_case() {
        // Measured with gui.parsecolor in FCEUX 2.6.5: only an upper-case P starts a palette
        // entry, so "Purple" is a malformed one and "pURPLE" purple.
        let lua = Lua::new();
        let text = |text: &str| Value::String(lua.create_string(text).unwrap());
        assert_eq!(parse(&lua, text("purple")), Ok(0x7F00_FFFF));
        assert_eq!(parse(&lua, text("pURPLE")), Ok(0x7F00_FFFF));
        assert_eq!(
            parse(&lua, text("Purple")),
            Err("palettes are defined with P## hex notion".to_owned())
        );
        assert_eq!(
            parse(&lua, text("p12")),
            Err("unknown colour p12".to_owned())
        );
        assert_eq!(parse(&lua, text("P7f")), Ok(0x0000_00FF));
        assert_eq!(parse(&lua, text("P41")), Ok(0x1B12_6AFF));
        assert_eq!(
            parse(&lua, text("P80")),
            Err("palettes range from P00 to P7F".to_owned())
        );
        assert_eq!(
            parse(&lua, text("P-1")),
            Err("invalid hex in colour".to_owned())
        );
    }

    #[test]
    fn table_channels_convert_strings_as_lua_does() {
        // gui.parsecolor({"7", "8", " 9", "0x10"}) is (7, 8, 9, 16) in FCEUX 2.6.5.
        let lua = Lua::new();
        let table = lua
            .load(r#"return {"7", "8", " 9", "0x10"}"#)
            .eval()
            .unwrap();
        assert_eq!(parse(&lua, table), Ok(0x0708_0910));
    }

    #[test]
    fn opacity_out_of_the_int_range_is_invisible() {
        // gui.opacity(1e10) and gui.opacity(-1e10): colours get alpha 0 in FCEUX 2.6.5.
        assert_eq!(alpha_scale(1e10 * 255.0), 0);
        assert_eq!(alpha_scale(-1e10 * 255.0), 0);
        assert_eq!(alpha_scale(2.0 * 255.0), 510);
        assert_eq!(alpha_scale(-255.0), 0);
    }

    #[test]
    fn numbers_become_c_ints() {
        assert_eq!(c_int(3.7), 3);
        assert_eq!(c_int(-3.7), -3);
        assert_eq!(c_int(4_294_967_296.0 + 5.0), 5);
        assert_eq!(c_int(f64::NAN), 0);
        assert_eq!(c_integer(-1.0) as u32, 0xFFFF_FFFF);
    }
}
