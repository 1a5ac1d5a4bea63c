//! Lending the machine to Lua, safely.
//!
//! Lua code runs only inside host entry points (the boundary slice, the frame callbacks and
//! the memory hooks). Each entry lends the machine it has (the whole [`Nes`] at a frame
//! boundary, the CPU and bus mid-instruction inside a memory hook) through `Lua::scope`: one
//! scoped function, kept in the registry for the duration of the entry, performs every
//! machine operation the API needs. When the entry returns the scope invalidates the function
//! and the registry slot is cleared, so no reference outlives the loan and no `unsafe` is
//! needed.

use mlua::{Function, Lua, MultiValue, Value};
use nes::{CpuRegisters, HookMachine, Nes};

const MACHINE_KEY: &str = "nes.machine";

/// What a host entry can lend.
pub(crate) trait Machine {
    fn peek(&self, addr: u16) -> u8;
    fn poke(&mut self, addr: u16, value: u8);
    fn registers(&self) -> CpuRegisters;
    fn set_registers(&mut self, regs: CpuRegisters);
    /// FCEUX's lag flag, live (`emu.lagged`, `emu.setlagflag`).
    fn lagged(&self) -> bool;
    fn set_lagged(&mut self, lagged: bool);
    /// The whole console: only at frame boundaries, never inside a memory hook.
    fn console(&mut self) -> Option<&mut Nes>;
}

impl Machine for Nes {
    fn peek(&self, addr: u16) -> u8 {
        Nes::peek(self, addr)
    }
    fn poke(&mut self, addr: u16, value: u8) {
        Nes::poke(self, addr, value)
    }
    fn registers(&self) -> CpuRegisters {
        self.cpu_registers()
    }
    fn set_registers(&mut self, regs: CpuRegisters) {
        self.set_cpu_registers(regs)
    }
    fn lagged(&self) -> bool {
        Nes::lagged(self)
    }
    fn set_lagged(&mut self, lagged: bool) {
        Nes::set_lagged(self, lagged)
    }
    fn console(&mut self) -> Option<&mut Nes> {
        Some(self)
    }
}

impl Machine for HookMachine<'_> {
    fn peek(&self, addr: u16) -> u8 {
        HookMachine::peek(self, addr)
    }
    fn poke(&mut self, addr: u16, value: u8) {
        HookMachine::poke(self, addr, value)
    }
    fn registers(&self) -> CpuRegisters {
        self.cpu_registers()
    }
    fn set_registers(&mut self, regs: CpuRegisters) {
        self.set_cpu_registers(regs)
    }
    fn lagged(&self) -> bool {
        HookMachine::lagged(self)
    }
    fn set_lagged(&mut self, lagged: bool) {
        HookMachine::set_lagged(self, lagged)
    }
    fn console(&mut self) -> Option<&mut Nes> {
        None
    }
}

/// A machine operation, passed through the scoped function.
pub(crate) type MachineOp = Box<dyn FnOnce(&Lua, &mut dyn Machine) -> mlua::Result<MultiValue>>;

/// Run `body` with `machine` lent to the API functions.
pub(crate) fn lend<R>(
    lua: &Lua,
    machine: &mut dyn Machine,
    body: impl FnOnce() -> mlua::Result<R>,
) -> mlua::Result<R> {
    lua.scope(|scope| {
        let access = scope.create_function_mut(|lua, op: mlua::AnyUserData| {
            let op = op.take::<OpBox>()?;
            (op.0)(lua, &mut *machine)
        })?;
        lua.set_named_registry_value(MACHINE_KEY, access)?;
        let result = body();
        lua.set_named_registry_value(MACHINE_KEY, Value::Nil)?;
        result
    })
}

/// The operation travels to the scoped function as a userdata (Lua values only cross there).
struct OpBox(MachineOp);
impl mlua::UserData for OpBox {}

/// Run `op` on the lent machine. Outside a host entry (impossible for script code, which only
/// runs inside one) this is a Lua error.
pub(crate) fn with_machine<R: mlua::FromLuaMulti>(
    lua: &Lua,
    op: impl FnOnce(&Lua, &mut dyn Machine) -> mlua::Result<MultiValue> + 'static,
) -> mlua::Result<R> {
    let access: Option<Function> = lua.named_registry_value(MACHINE_KEY)?;
    let access = access.ok_or_else(|| mlua::Error::runtime("no machine is attached"))?;
    let op = lua.create_userdata(OpBox(Box::new(op)))?;
    access.call(op)
}
