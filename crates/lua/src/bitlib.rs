//! A LuaBitOp-compatible `bit` library, for builds whose Lua has none (PUC Lua 5.1; LuaJIT
//! brings its own). Operands are numbers taken modulo 2^32; results are signed 32-bit.

use mlua::{Lua, MultiValue, Table};

use crate::api::check_number;

/// LuaBitOp's normalisation: round to an integer, keep the low 32 bits, read them as signed.
pub(crate) fn to_bit(value: f64) -> i32 {
    if !value.is_finite() {
        return 0;
    }
    value.round_ties_even().rem_euclid(4_294_967_296.0) as u32 as i32
}

/// Argument `position` (1-based) as LuaBitOp's `barg` takes it: `luaL_checknumber` (so the
/// errors are Lua's "bad argument #N to 'band' (number expected, got string)"), normalised.
fn bit_arg(lua: &Lua, values: &MultiValue, position: usize) -> mlua::Result<i32> {
    Ok(to_bit(check_number(lua, values, position)?))
}

/// `band`, `bor`, `bxor`: LuaBitOp checks the first argument, then the others from the last
/// one down, which decides which bad argument an error names.
fn fold(lua: &Lua, op: fn(i32, i32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |lua, values: MultiValue| {
        let mut result = bit_arg(lua, &values, 1)?;
        for position in (2..=values.len()).rev() {
            result = op(result, bit_arg(lua, &values, position)?);
        }
        Ok(result)
    })
}

fn shift(lua: &Lua, op: fn(i32, u32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |lua, values: MultiValue| {
        let value = bit_arg(lua, &values, 1)?;
        let count = bit_arg(lua, &values, 2)?;
        Ok(op(value, (count & 31) as u32))
    })
}

fn unary(lua: &Lua, op: fn(i32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |lua, values: MultiValue| Ok(op(bit_arg(lua, &values, 1)?)))
}

/// Build the `bit` table.
pub(crate) fn create(lua: &Lua) -> mlua::Result<Table> {
    let bit = lua.create_table()?;
    bit.set("tobit", unary(lua, |a| a)?)?;
    bit.set("bnot", unary(lua, |a| !a)?)?;
    bit.set("bswap", unary(lua, i32::swap_bytes)?)?;
    bit.set("band", fold(lua, |a, b| a & b)?)?;
    bit.set("bor", fold(lua, |a, b| a | b)?)?;
    bit.set("bxor", fold(lua, |a, b| a ^ b)?)?;
    bit.set("lshift", shift(lua, |a, n| ((a as u32) << n) as i32)?)?;
    bit.set("rshift", shift(lua, |a, n| ((a as u32) >> n) as i32)?)?;
    bit.set("arshift", shift(lua, |a, n| a >> n)?)?;
    bit.set("rol", shift(lua, |a, n| (a as u32).rotate_left(n) as i32)?)?;
    bit.set("ror", shift(lua, |a, n| (a as u32).rotate_right(n) as i32)?)?;
    bit.set(
        "tohex",
        lua.create_function(|lua, values: MultiValue| {
            let value = bit_arg(lua, &values, 1)? as u32;
            // A missing count is 8 digits; `nil` is a bad argument (`lua_isnone`).
            let count = if values.len() < 2 {
                8
            } else {
                bit_arg(lua, &values, 2)?
            };
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
