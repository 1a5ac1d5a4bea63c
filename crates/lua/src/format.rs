//! FCEUX's `print`/`tostring` formatting: numbers as `%.12g`, tables by content.

use mlua::{Lua, Value};

/// The longest text one `print`/`tostring` produces (FCEUX cuts its buffer there).
pub(crate) const MAX_OUTPUT: usize = 64 * 1024;

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

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One value as FCEUX's `tostring` shows it. `parents` holds the tables being printed
/// around this one (a table inside itself prints as `table:parent`).
pub(crate) fn format_value(lua: &Lua, value: &Value, in_table: bool, out: &mut String) {
    let mut parents = Vec::new();
    format_inner(lua, value, in_table, &mut parents, out);
}

fn format_inner(
    lua: &Lua,
    value: &Value,
    in_table: bool,
    parents: &mut Vec<usize>,
    out: &mut String,
) {
    if out.len() >= MAX_OUTPUT {
        return;
    }
    match value {
        Value::Nil => out.push_str("nil"),
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Integer(i) => out.push_str(&format_number(*i as f64)),
        Value::Number(n) => out.push_str(&format_number(*n)),
        Value::String(s) => {
            let text = s.to_string_lossy();
            if in_table {
                out.push('\'');
                out.push_str(&text);
                out.push('\'');
            } else {
                out.push_str(&text);
            }
        }
        Value::Table(table) => {
            if let Some(text) = custom_tostring(lua, value) {
                out.push_str(&text);
                return;
            }
            let id = value.to_pointer() as usize;
            if parents.contains(&id) {
                out.push_str("table:parent");
                return;
            }
            parents.push(id);
            out.push('{');
            let mut first = true;
            let mut array_len = 0i64;
            loop {
                let item: Value = table.raw_get(array_len + 1).unwrap_or(Value::Nil);
                if item.is_nil() {
                    break;
                }
                if !first {
                    out.push_str(", ");
                }
                first = false;
                format_inner(lua, &item, true, parents, out);
                array_len += 1;
            }
            for (key, item) in table.pairs::<Value, Value>().flatten() {
                let in_array = match key {
                    Value::Integer(i) => (1..=array_len).contains(&i),
                    Value::Number(n) => n.fract() == 0.0 && n >= 1.0 && n <= array_len as f64,
                    _ => false,
                };
                if in_array {
                    continue;
                }
                if !first {
                    out.push_str(", ");
                }
                first = false;
                match &key {
                    Value::String(s) if is_identifier(&s.to_string_lossy()) => {
                        out.push_str(&s.to_string_lossy())
                    }
                    _ => {
                        out.push('[');
                        format_inner(lua, &key, true, parents, out);
                        out.push(']');
                    }
                }
                out.push('=');
                format_inner(lua, &item, true, parents, out);
                if out.len() >= MAX_OUTPUT {
                    break;
                }
            }
            out.push('}');
            parents.pop();
        }
        Value::UserData(_) => {
            if let Some(text) = custom_tostring(lua, value) {
                out.push_str(&text);
            } else {
                out.push_str(&format!("userdata:{:p}", value.to_pointer()));
            }
        }
        Value::Function(_) => out.push_str(&format!("function:{:p}", value.to_pointer())),
        Value::Thread(_) => out.push_str(&format!("thread:{:p}", value.to_pointer())),
        Value::LightUserData(_) => out.push_str(&format!("userdata:{:p}", value.to_pointer())),
        other => out.push_str(other.type_name()),
    }
}

/// The result of a `__tostring` metamethod, if the value has one.
fn custom_tostring(lua: &Lua, value: &Value) -> Option<String> {
    let getmetatable: mlua::Function = lua.globals().get("getmetatable").ok()?;
    let metatable: Option<mlua::Table> = getmetatable.call(value.clone()).ok()?;
    let method: mlua::Function = metatable?.raw_get("__tostring").ok()?;
    let result: Value = method.call(value.clone()).ok()?;
    match result {
        Value::String(s) => Some(s.to_string_lossy()),
        Value::Number(n) => Some(format_number(n)),
        Value::Integer(i) => Some(format_number(i as f64)),
        _ => None,
    }
}

/// The arguments of one `print` call: joined by a space, cut at [`MAX_OUTPUT`].
pub(crate) fn format_args(lua: &Lua, args: &[Value]) -> String {
    let mut out = String::new();
    for (i, value) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        format_value(lua, value, false, &mut out);
    }
    truncate(&mut out);
    out
}

pub(crate) fn truncate(text: &mut String) {
    if text.len() > MAX_OUTPUT {
        let mut cut = MAX_OUTPUT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
}

#[cfg(test)]
mod tests {
    use super::format_number;

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
}
