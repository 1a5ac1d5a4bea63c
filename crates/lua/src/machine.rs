//! Lending the machine to Lua, safely.
//!
//! Lua code runs only inside host entry points (the boundary slice, the frame callbacks and
//! the memory hooks). Each entry lends the machine it has (the whole [`Nes`] at a frame
//! boundary, the CPU and bus mid-instruction inside a memory hook) through `Lua::scope`: one
//! scoped function, kept in the Lua state's app data for the duration of the entry, performs
//! every machine operation the API needs. When the entry returns the scope invalidates the
//! function and the slot is cleared, so no reference outlives the loan and no `unsafe` is
//! needed. The operation travels to that function through another app-data slot rather than
//! as a Lua value: an API call costs no Lua allocation and leaves no garbage (a userdata per
//! `memory.readbyte` was a tenth of a search-heavy script's time, mostly in the collector).

use std::cell::RefCell;

use mlua::{Function, Lua, MultiValue};
use nes::{HookMachine, Inspect, Nes};

/// What a host entry can lend: everything [`Inspect`] offers, plus the whole console at frame
/// boundaries and FCEUX's cycle count where the script runs.
pub(crate) trait Machine: Inspect {
    /// The whole console: only at frame boundaries, never inside a memory hook.
    fn console(&mut self) -> Option<&mut Nes>;
    /// The CPU cycle count FCEUX's debugger has here (`debugger.getcyclescount`, before the
    /// script's base is taken off): [`HookMachine::fceux_cycles`] inside a hook.
    fn cycles(&self) -> u64;
}

impl Machine for Nes {
    fn console(&mut self) -> Option<&mut Nes> {
        Some(self)
    }
    fn cycles(&self) -> u64 {
        self.cpu_cycles()
    }
}

impl Machine for HookMachine<'_> {
    fn console(&mut self) -> Option<&mut Nes> {
        None
    }
    fn cycles(&self) -> u64 {
        self.fceux_cycles()
    }
}

/// A machine operation, passed through the scoped function.
pub(crate) type MachineOp = Box<dyn FnOnce(&Lua, &mut dyn Machine) -> mlua::Result<MultiValue>>;

/// The scoped function of the current loan (none outside host entries).
struct Access(Option<Function>);

/// The operation the next call of the scoped function performs.
struct PendingOp(RefCell<Option<MachineOp>>);

/// Run `body` with `machine` lent to the API functions.
pub(crate) fn lend<R>(
    lua: &Lua,
    machine: &mut dyn Machine,
    body: impl FnOnce() -> mlua::Result<R>,
) -> mlua::Result<R> {
    lua.scope(|scope| {
        let access = scope.create_function_mut(|lua, ()| {
            let op = lua
                .app_data_ref::<PendingOp>()
                .and_then(|pending| pending.0.borrow_mut().take());
            let op = op.ok_or_else(|| mlua::Error::runtime("no machine operation is pending"))?;
            op(lua, &mut *machine)
        })?;
        // A loan inside a loan (a host entry from inside a hook) puts the outer one back.
        let outer = lua.set_app_data(Access(Some(access)));
        let result = body();
        match outer {
            Some(outer) => lua.set_app_data(outer),
            None => lua.remove_app_data::<Access>(),
        };
        result
    })
}

/// Run `op` on the lent machine. Outside a host entry (impossible for script code, which only
/// runs inside one) this is a Lua error.
pub(crate) fn with_machine<R: mlua::FromLuaMulti>(
    lua: &Lua,
    op: impl FnOnce(&Lua, &mut dyn Machine) -> mlua::Result<MultiValue> + 'static,
) -> mlua::Result<R> {
    let access = lua
        .app_data_ref::<Access>()
        .and_then(|access| access.0.clone())
        .ok_or_else(|| mlua::Error::runtime("no machine is attached"))?;
    match lua.app_data_ref::<PendingOp>() {
        Some(pending) => *pending.0.borrow_mut() = Some(Box::new(op)),
        None => {
            lua.set_app_data(PendingOp(RefCell::new(Some(Box::new(op)))));
        }
    }
    access.call(())
}
