-- memory.*: reads through the CPU map, words, ranges, writes, registers and every hook shape.
local function check(ok, what) if not ok then error(what or "check failed", 2) end end

-- PRG table at $9000: byte i = 3*i (i = 0..15), then $F0 $34 $12.
check(memory.readbyte(0x9005) == 15, "readbyte")
check(memory.readbyteunsigned(0x9010) == 0xF0, "readbyteunsigned")
check(memory.readbytesigned(0x9010) == -16, "readbytesigned")
check(memory.readword(0x9011) == 0x1234, "readword")
check(memory.readwordunsigned(0x9011, 0x9012) == 0x1234, "readwordunsigned lo, hi")
check(memory.readwordsigned(0x9012, 0x9010) == 0xF012 - 0x10000, "readwordsigned")
check(memory.readbyterange(0x9000, 4) == "\0\3\6\9", "readbyterange")

memory.writebyte(0x0200, 0x1FF)
check(memory.readbyte(0x0200) == 0xFF, "writebyte masks to 8 bits")
memory.writebyte(0x0A00, 7)
check(memory.readbyte(0x0200) == 7, "RAM mirrors")

check(type(memory.getregister("pc")) == "number", "getregister")
check(memory.getregister("PC") == memory.getregister("pc"), "register names in any case")
check(memory.getregister("q") == nil, "unknown register")
memory.setregister("q", 1)

-- Hooks on the test ROM's NMI handler: INC $10 (write), LDA $00 (read), CPX #$1D at $8123.
local writes, reads, execs, aliases = 0, 0, 0, 0
local seen_pc, seen_value
memory.register(0x10, function(addr, size, value)
  writes = writes + 1
  seen_value = value
  check(addr == 0x10 and size == 1 and memory.readbyte(0x10) == value, "write hook arguments")
end)
memory.registerread(0x00, function(addr, size, value) reads = reads + 1 end)
memory.registerexec(0x8123, function(addr)
  execs = execs + 1
  seen_pc = memory.getregister("pc")
end)
memory.registerexecute(0x8121, function() aliases = aliases + 1 end)
memory.registerrun(0x8125, function() aliases = aliases + 1 end)
memory.registerwrite(0x0380, 2, function() end)
memory.registerwrite(0x0380, 2, nil)
-- To frame 5's end: FCEUX's first frameadvance returns before frame 1, and NMIs (where the
-- hooked code runs) start in frame 3.
while emu.framecount() < 5 do emu.frameadvance() end
check(writes >= 2 and reads >= 2 and execs >= 2, "hooks fired")
check(seen_pc == 0x8123, "exec hooks see PC at the opcode")
check(seen_value == memory.readbyte(0x10), "the written value")
check(aliases == 2 * execs, "registerexecute / registerrun")
check(not pcall(memory.registerwrite, 0x10), "the function argument is required")
memory.registerwrite(0x10, nil)
memory.registerread(0x00, nil)
memory.registerexec(0x8121, 5, nil)
local before = writes
emu.frameadvance()
check(writes == before, "nil clears")
print("PASS")
