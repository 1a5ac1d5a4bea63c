//! A LuaBitOp-compatible `bit` library, for builds whose Lua has none (PUC Lua 5.1; LuaJIT
//! brings its own). Operands are numbers taken modulo 2^32; results are signed 32-bit.

use mlua::{Lua, MultiValue, Table, Value};

/// LuaBitOp's normalisation: round to an integer, keep the low 32 bits, read them as signed.
pub(crate) fn to_bit(value: f64) -> i32 {
    if !value.is_finite() {
        return 0;
    }
    value.round_ties_even().rem_euclid(4_294_967_296.0) as u32 as i32
}

fn arg_number(value: &Value, position: usize, name: &str) -> mlua::Result<f64> {
    match value {
        Value::Integer(i) => Ok(*i as f64),
        Value::Number(n) => Ok(*n),
        Value::String(s) => s
            .to_string_lossy()
            .trim()
            .parse::<f64>()
            .map_err(|_| bad_argument(position, name)),
        _ => Err(bad_argument(position, name)),
    }
}

fn bad_argument(position: usize, name: &str) -> mlua::Error {
    mlua::Error::runtime(format!(
        "bad argument #{position} to '{name}' (number expected)"
    ))
}

fn args(values: &MultiValue, name: &str, at_least: usize) -> mlua::Result<Vec<i32>> {
    if values.len() < at_least {
        return Err(bad_argument(values.len() + 1, name));
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| arg_number(v, i + 1, name).map(to_bit))
        .collect()
}

fn fold(lua: &Lua, name: &'static str, op: fn(i32, i32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, values: MultiValue| {
        let numbers = args(&values, name, 1)?;
        Ok(numbers.into_iter().reduce(op).unwrap_or(0))
    })
}

fn shift(lua: &Lua, name: &'static str, op: fn(i32, u32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, values: MultiValue| {
        let numbers = args(&values, name, 2)?;
        Ok(op(numbers[0], (numbers[1] & 31) as u32))
    })
}

/// Build the `bit` table.
pub(crate) fn create(lua: &Lua) -> mlua::Result<Table> {
    let bit = lua.create_table()?;
    bit.set(
        "tobit",
        lua.create_function(|_, values: MultiValue| Ok(args(&values, "tobit", 1)?[0]))?,
    )?;
    bit.set(
        "bnot",
        lua.create_function(|_, values: MultiValue| Ok(!args(&values, "bnot", 1)?[0]))?,
    )?;
    bit.set("band", fold(lua, "band", |a, b| a & b)?)?;
    bit.set("bor", fold(lua, "bor", |a, b| a | b)?)?;
    bit.set("bxor", fold(lua, "bxor", |a, b| a ^ b)?)?;
    bit.set(
        "lshift",
        shift(lua, "lshift", |a, n| ((a as u32) << n) as i32)?,
    )?;
    bit.set(
        "rshift",
        shift(lua, "rshift", |a, n| ((a as u32) >> n) as i32)?,
    )?;
    bit.set("arshift", shift(lua, "arshift", |a, n| a >> n)?)?;
    bit.set(
        "rol",
        shift(lua, "rol", |a, n| (a as u32).rotate_left(n) as i32)?,
    )?;
    bit.set(
        "ror",
        shift(lua, "ror", |a, n| (a as u32).rotate_right(n) as i32)?,
    )?;
    bit.set(
        "bswap",
        lua.create_function(
            |_, values: MultiValue| Ok(args(&values, "bswap", 1)?[0].swap_bytes()),
        )?,
    )?;
    bit.set(
        "tohex",
        lua.create_function(|_, values: MultiValue| {
            let numbers = args(&values, "tohex", 1)?;
            let value = numbers[0] as u32;
            let count = numbers.get(1).copied().unwrap_or(8);
            let upper = count < 0;
            let digits = count.unsigned_abs().min(8) as usize;
            let masked = if digits == 8 {
                value
            } else {
                value & ((1u32 << (4 * digits)) - 1)
            };
            let text = if upper {
                format!("{masked:0digits$X}")
            } else {
                format!("{masked:0digits$x}")
            };
            Ok(text)
        })?,
    )?;
    Ok(bit)
}

#[cfg(test)]
mod tests {
    use super::to_bit;

    #[test]
    fn normalisation_wraps_modulo_2_32_to_signed() {
        assert_eq!(to_bit(0xFFFF_FFFFu32 as f64), -1);
        assert_eq!(to_bit(4_294_967_296.0 + 5.0), 5);
        assert_eq!(to_bit(-1.0), -1);
        assert_eq!(to_bit(2_147_483_648.0), i32::MIN);
        assert_eq!(to_bit(2.5), 2, "round half to even, like LuaBitOp");
    }
}
