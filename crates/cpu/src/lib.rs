//! A cycle-exact MOS 6502 as found in the Ricoh 2A03 (no decimal mode), generic over a [`Bus`].
//!
//! Public surface:
//! - [`Bus`]: what the CPU is wired to; one `read` or `write` call per CPU cycle.
//! - [`Cpu`]: registers and the instruction/interrupt engine; `power_on`, `reset`, `step`.
//! - [`Status`]: the P register flags.
//! - [`describe`]: an opcode's mnemonic, [`AddressingMode`] and documented status, for
//!   disassemblers.
//!
//! Module map: `cpu.rs` holds the registers, the per-cycle bus primitives, interrupt polling
//! and the reset/interrupt sequences; `opcode.rs` is the opcode table (operation, addressing
//! mode, documented or not), from which both `instructions.rs`'s cycle-by-cycle execution of
//! the 256 opcodes and [`describe`] are expanded; `dma.rs` is the 2A03 DMA unit (OAM and DMC
//! DMA) that halts the CPU.

mod bus;
mod cpu;
mod dma;
mod idle;
mod instructions;
mod opcode;

#[cfg(test)]
mod test_bus;

pub use bus::{Bus, DmaKind, Fetch};
pub use cpu::{Cpu, Status};
pub use dma::DMA_GET_CYCLE_PARITY;
pub use opcode::{describe, AddressingMode, Instruction, Operand};
