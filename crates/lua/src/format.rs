//! FCEUX's `print`/`tostring` formatting: numbers as `%.12g`, tables by content.
//!
//! FCEUX 2.6.5 formats both through one converter, whose output was measured
//! (tests/fceux/lua/tostring.lua and its FCEUX log):
//! - the arguments are joined by one space; no argument gives the empty string;
//! - strings are C strings: each one ends at its first NUL byte;
//! - a table lists its entries in `next` order: while the keys run 1, 2, 3, ... only the values
//!   are written, after that every entry is `key=value`; a string key is written bare when its
//!   first byte is an ASCII letter or `_` (`{a b=1}`, `{it's=1}`), else as `['key']`; other keys
//!   as `[key]`; string values inside tables are quoted `'...'` without escapes;
//! - a table (or userdata) with `__tostring` shows that result, inside tables too;
//! - a table inside one of the tables around it is `table:parent`, or `table:parent^N` when it
//!   is the table N-1 levels further out;
//! - the whole text is at most 65,533 bytes: longer ones are cut to 65,530 and end in `...`.

use mlua::{Lua, Value};

/// The longest text one `print`/`tostring` produces (FCEUX's buffer).
const MAX_OUTPUT: usize = 65_533;
/// What ends a text cut at [`MAX_OUTPUT`].
const ELLIPSIS: &[u8] = b"...";

/// `%.12g`, as C's printf writes it.
pub(crate) fn format_number(value: f64) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_string();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    const PRECISION: i32 = 12;
    // Round to 12 significant digits first: the exponent is that of the rounded value.
    let scientific = format!("{:.*e}", (PRECISION - 1) as usize, value);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..PRECISION).contains(&exponent) {
        let mantissa = strip_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (PRECISION - 1 - exponent).max(0) as usize;
        strip_zeros(&format!("{value:.decimals$}")).to_string()
    }
}

fn strip_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// The text FCEUX's `tostring(...)` and `print(...)` make of `args` (bytes: Lua strings
/// need not be UTF-8).
pub(crate) fn format_args(lua: &Lua, args: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, value) in args.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        format_inner(lua, value, false, &mut Vec::new(), &mut out);
        if out.len() > MAX_OUTPUT {
            break;
        }
    }
    if out.len() > MAX_OUTPUT {
        out.truncate(MAX_OUTPUT - ELLIPSIS.len());
        out.extend_from_slice(ELLIPSIS);
    }
    out
}

/// A Lua string as a C string: up to its first NUL.
fn c_string(bytes: &[u8]) -> &[u8] {
    bytes.split(|&b| b == 0).next().unwrap_or_default()
}

/// Appends `value`. `parents` holds the tables being written around it, outermost first.
fn format_inner(
    lua: &Lua,
    value: &Value,
    in_table: bool,
    parents: &mut Vec<usize>,
    out: &mut Vec<u8>,
) {
    if out.len() > MAX_OUTPUT {
        return;
    }
    match value {
        Value::Nil => out.extend_from_slice(b"nil"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => out.extend_from_slice(format_number(*i as f64).as_bytes()),
        Value::Number(n) => out.extend_from_slice(format_number(*n).as_bytes()),
        Value::String(s) => {
            let bytes = s.as_bytes();
            if in_table {
                out.push(b'\'');
                out.extend_from_slice(c_string(&bytes));
                out.push(b'\'');
            } else {
                out.extend_from_slice(c_string(&bytes));
            }
        }
        Value::Table(table) => {
            if let Some(text) = custom_tostring(lua, value) {
                out.extend_from_slice(c_string(&text));
                return;
            }
            let id = value.to_pointer() as usize;
            if let Some(level) = parents.iter().rposition(|&parent| parent == id) {
                out.extend_from_slice(b"table:parent");
                let up = parents.len() - level;
                if up > 1 {
                    out.extend_from_slice(format!("^{up}").as_bytes());
                }
                return;
            }
            parents.push(id);
            out.push(b'{');
            // Values only while the keys run 1, 2, 3, ... in `next` order.
            let mut array_index = 0.0;
            let mut in_array = true;
            for (i, (key, item)) in table.pairs::<Value, Value>().flatten().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                if in_array {
                    array_index += 1.0;
                    in_array = match key {
                        Value::Integer(k) => k as f64 == array_index,
                        Value::Number(k) => k == array_index,
                        _ => false,
                    };
                }
                if !in_array {
                    match &key {
                        Value::String(s)
                            if s.as_bytes()
                                .first()
                                .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_') =>
                        {
                            out.extend_from_slice(c_string(&s.as_bytes()));
                        }
                        Value::String(s) => {
                            out.extend_from_slice(b"['");
                            out.extend_from_slice(c_string(&s.as_bytes()));
                            out.extend_from_slice(b"']");
                        }
                        _ => {
                            out.push(b'[');
                            format_inner(lua, &key, true, parents, out);
                            out.push(b']');
                        }
                    }
                    out.push(b'=');
                }
                format_inner(lua, &item, true, parents, out);
                if out.len() > MAX_OUTPUT {
                    break;
                }
            }
            out.push(b'}');
            parents.pop();
        }
        Value::UserData(_) | Value::LightUserData(_) => {
            if let Some(text) = custom_tostring(lua, value) {
                out.extend_from_slice(c_string(&text));
            } else {
                out.extend_from_slice(format!("userdata:{:p}", value.to_pointer()).as_bytes());
            }
        }
        Value::Function(_) => {
            out.extend_from_slice(format!("function:{:p}", value.to_pointer()).as_bytes())
        }
        Value::Thread(_) => {
            out.extend_from_slice(format!("thread:{:p}", value.to_pointer()).as_bytes())
        }
        other => out.extend_from_slice(other.type_name().as_bytes()),
    }
}

/// The result of a `__tostring` metamethod, if the value has one.
fn custom_tostring(lua: &Lua, value: &Value) -> Option<Vec<u8>> {
    let getmetatable: mlua::Function = lua.globals().get("getmetatable").ok()?;
    let metatable: Option<mlua::Table> = getmetatable.call(value.clone()).ok()?;
    let method: mlua::Function = metatable?.raw_get("__tostring").ok()?;
    let result: Value = method.call(value.clone()).ok()?;
    match result {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Number(n) => Some(format_number(n).into_bytes()),
        Value::Integer(i) => Some(format_number(i as f64).into_bytes()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{format_args, format_number};
    use mlua::{Lua, Value};

    #[test]
    fn numbers_print_like_percent_12g() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(format_number(1.0 / 3.0), "0.333333333333");
        assert_eq!(format_number(-42.0), "-42");
        assert_eq!(format_number(1e12), "1e+12");
        assert_eq!(format_number(123456789012.0), "123456789012");
        assert_eq!(format_number(0.0001), "0.0001");
        assert_eq!(format_number(0.00001), "1e-05");
        assert_eq!(format_number(2.5e-7), "2.5e-07");
        assert_eq!(format_number(65535.0), "65535");
    }

    fn formatted(lua: &Lua, chunk: &str) -> String {
        let values: mlua::MultiValue = lua.load(chunk).eval().unwrap();
        let values: Vec<Value> = values.into_iter().collect();
        String::from_utf8(format_args(lua, &values)).unwrap()
    }

    #[test]
    fn tables_as_fceux_writes_them() {
        let lua = Lua::new();
        assert_eq!(
            formatted(&lua, "return {1, 2, ['a b'] = 1}"),
            "{1, 2, a b=1}"
        );
        assert_eq!(
            formatted(&lua, "return {['1'] = 1, [''] = 2}").len(),
            "{['1']=1, ['']=2}".len()
        );
        assert_eq!(
            formatted(&lua, "return {'x', [true] = 1}"),
            "{'x', [true]=1}"
        );
        assert_eq!(
            formatted(&lua, "local t = {a = {b = {}}} t.a.b.up = t return t"),
            "{a={b={up=table:parent^3}}}"
        );
        assert_eq!(
            formatted(&lua, "local t = {} t[1] = t return t"),
            "{table:parent}"
        );
        assert_eq!(formatted(&lua, "return 'a\\0b', nil, 1.5"), "a nil 1.5");
        assert_eq!(formatted(&lua, "return"), "");
    }

    #[test]
    fn long_texts_are_cut_as_fceux_cuts_them() {
        let lua = Lua::new();
        assert_eq!(formatted(&lua, "return ('x'):rep(65533)").len(), 65_533);
        let cut = formatted(&lua, "return ('x'):rep(65534)");
        assert_eq!(cut.len(), 65_533);
        assert!(cut.ends_with("xx..."));
    }
}
