-- rom: roms/probe.nes
-- memory.*: reads, writes, registers, and the write/read/exec hooks as FCEUX 2.6.5 has them:
-- the range a size covers (positive, negative, zero, past $FFFF and below $0000), what a
-- hook is called with, one hook per address (a new one replaces the old), removal with nil.
-- Test programs run from CPU RAM with NMI and the APU frame IRQ off. One line per
-- observation into parity.log.
local log = assert(io.open("parity.log", "w"))
local function line(...)
  log:write(string.format(...), "\n")
  log:flush()
end
-- Values as `count:v1,v2,...`, strings quoted, error positions without the script's folder
-- (FCEUX names the script by its full path).
local function show(...)
  local parts = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "string" then
      v = string.format("%q", (v:gsub("^[^\n]-([%w_]+%.lua:)", "%1"))):gsub("[\128-\255]", function(c)
        return "\\" .. c:byte()
      end)
    else
      v = tostring(v)
    end
    parts[#parts + 1] = v
  end
  return select("#", ...) .. ":" .. table.concat(parts, ",")
end
local function try(label, f, ...)
  line("%s -> %s", label, show(pcall(f, ...)))
end
-- Errors: `f` calls the function by its field name, as scripts do (Lua names a function in
-- an argument error as its caller spells it, and gives no position when pcall calls it).
local function err(label, f)
  line("%s -> %s", label, show(pcall(f)))
end

-- Let the ROM boot, then park the CPU in RAM with NMI and the frame IRQ off.
emu.frameadvance()
emu.frameadvance()
local QUIET = { 0xA9, 0x00, 0x8D, 0x00, 0x20, 0xA9, 0x40, 0x8D, 0x17, 0x40, 0xAD, 0x15, 0x40, 0x78 }
local function load(origin, code)
  for i, byte in ipairs(code) do
    memory.writebyte(origin + i - 1, byte)
  end
end
local park = {}
for _, b in ipairs(QUIET) do park[#park + 1] = b end
park[#park + 1] = 0x4C
park[#park + 1] = (0x0700 + #QUIET) % 256
park[#park + 1] = 0x07
load(0x0700, park)
memory.setregister("pc", 0x0700)
emu.frameadvance()

-- 1. Reads and writes.
for i = 0, 15 do
  memory.writebyte(0x0010 + i, i * 17 + 1)
end
memory.writebyte(0x0000, 0xA0)
memory.writebyte(0x0001, 0xA1)
memory.writebyte(0x0020, 0x80)
memory.writebyte(0x0021, 0xFF)
try("readbyte 10", memory.readbyte, 0x10)
try("readbyte 1F", memory.readbyte, 0x1F)
try("readbyte 81F mirror", memory.readbyte, 0x081F)
try("readbyteunsigned 20", memory.readbyteunsigned, 0x20)
try("readbytesigned 20", memory.readbytesigned, 0x20)
try("readbytesigned 21", memory.readbytesigned, 0x21)
try("readbytesigned 1F", memory.readbytesigned, 0x1F)
try("readbyte 10010", memory.readbyte, 0x10010)
try("readbyte -1", memory.readbyte, -1)
try("readbyte '16'", memory.readbyte, "16")
try("readbyte 16.9", memory.readbyte, 16.9)
err("readbyte nil", function() return memory.readbyte() end)
err("readbyte {}", function() return memory.readbyte({}) end)
try("readword 10", memory.readword, 0x10)
try("readword 10 1F", memory.readword, 0x10, 0x1F)
try("readword 10 nil", memory.readword, 0x10, nil)
try("readwordunsigned 20", memory.readwordunsigned, 0x20)
try("readwordsigned 20", memory.readwordsigned, 0x20)
try("readwordsigned 1F 20", memory.readwordsigned, 0x1F, 0x20)
try("readwordsigned 21 1F", memory.readwordsigned, 0x21, 0x1F)
try("readword 10010", memory.readword, 0x10010)
try("readword FFFF", memory.readword, 0xFFFF)
try("readword -1", memory.readword, -1)
try("readbyterange 10 4", memory.readbyterange, 0x10, 4)
try("readbyterange 81E 4", memory.readbyterange, 0x081E, 4)
try("readbyterange 10 0", memory.readbyterange, 0x10, 0)
try("readbyterange 10 -1", memory.readbyterange, 0x10, -1)
try("readbyterange FFFE 4", memory.readbyterange, 0xFFFE, 4)
try("readbyterange -2 4", memory.readbyterange, -2, 4)
err("readbyterange 10", function() return memory.readbyterange(0x10) end)
memory.writebyte(0x0830, 0x5A)
try("writebyte 830, read 30", memory.readbyte, 0x30)
memory.writebyte(0x0031, 0x1234)
try("writebyte 1234, read 31", memory.readbyte, 0x31)
memory.writebyte(0x0032, -2)
try("writebyte -2, read 32", memory.readbyte, 0x32)
try("writebyte returns", memory.writebyte, 0x33, 7)
err("writebyte nil value", function() return memory.writebyte(0x34) end)
memory.writebyte(0x6000, 0x42)
try("writebyte 6000, read 6000", memory.readbyte, 0x6000)

-- 2. Registers (the CPU is parked in its loop).
for _, name in ipairs({ "pc", "a", "x", "y", "s", "PC", "A", "Pc", "sp", "q", "", "5" }) do
  try("getregister " .. name, memory.getregister, name)
end
-- P without bits 4 and 5, which have no storage in a 6502: FCEUX keeps whatever PLP, RTI or
-- setregister last put there (0 from its power-on), where the CPU here keeps both set.
line("getregister p, bits 4-5 off -> %d", bit.band(memory.getregister("p"), 0xCF))
err("getregister nil", function() return memory.getregister() end)
try("getregister 5", memory.getregister, 5)
err("getregister {}", function() return memory.getregister({}) end)
local saved = {}
for _, name in ipairs({ "a", "x", "y", "s", "p" }) do
  saved[name] = memory.getregister(name)
end
try("setregister a 0x1FF", memory.setregister, "a", 0x1FF)
try("getregister a", memory.getregister, "a")
try("setregister X -1", memory.setregister, "X", -1)
try("getregister x", memory.getregister, "x")
try("setregister y '33'", memory.setregister, "y", "33")
try("getregister y", memory.getregister, "y")
try("setregister q 1", memory.setregister, "q", 1)
err("setregister a nil", function() return memory.setregister("a") end)
err("setregister nil 1", function() return memory.setregister(nil, 1) end)
try("setregister pc 0x10705", memory.setregister, "pc", 0x10000 + 0x0700 + #QUIET)
try("getregister pc", memory.getregister, "pc")
for name, value in pairs(saved) do
  memory.setregister(name, value)
end
emu.frameadvance()

-- 3. Hooks. A program at $0400 stores to a list of addresses, reads a list, runs a string
-- of NOPs, then parks.
local function hook_logger(kind)
  return function(...)
    line("%s hook %s pc=%04X", kind, show(...), memory.getregister("pc"))
  end
end
local STORES = { 0x01FE, 0x01FF, 0x0200, 0x0201, 0x02FE, 0x02FF, 0x0300, 0x0000, 0x0001,
  0x0004, 0x0005, 0x0006, 0x0007, 0x07FF, 0x0800, 0x0FFF, 0x0600, 0x0601, 0x0602, 0x0603 }
local READS = { 0x0610, 0x0611, 0x0612, 0x0613, 0x0614, 0x0615, 0x0616, 0x0617, 0x0618 }
local NOPS = 0x0480
local function program(value)
  local code = {}
  local function emit(...)
    for _, b in ipairs({ ... }) do code[#code + 1] = b end
  end
  emit(0xA9, value) -- LDA #value
  for _, a in ipairs(STORES) do
    emit(0x8D, a % 256, math.floor(a / 256)) -- STA a
  end
  for _, a in ipairs(READS) do
    emit(0xAD, a % 256, math.floor(a / 256)) -- LDA a
  end
  while 0x0400 + #code < NOPS do emit(0xEA) end
  for _ = 1, 16 do emit(0xEA) end
  emit(0x4C, (0x0700 + #QUIET) % 256, 0x07) -- JMP to the park loop
  return code
end
local runs = 0
local function run(label)
  runs = runs + 1
  line("-- %s", label)
  load(0x0400, program(runs))
  memory.setregister("pc", 0x0400)
  emu.frameadvance()
end

memory.registerwrite(0x0200, hook_logger("write 0200"))
run("one address, default size")
memory.registerwrite(0x0200, nil)
memory.registerwrite(0x02FF, -0x100, hook_logger("write 02FF,-100"))
run("negative size -0x100 at 02FF")
memory.registerwrite(0x02FF, -0x100, nil)
run("removed with (addr, -size, nil)")
memory.registerwrite(0x0300, -1, hook_logger("write 0300,-1"))
run("size -1 at 0300")
memory.registerwrite(0x0300, -1, nil)
memory.registerwrite(0x0200, 0, hook_logger("write 0200,0"))
run("size 0 at 0200")
memory.registerwrite(0x0005, -0x10, hook_logger("write 0005,-10"))
run("size -0x10 at 0005 (below 0000)")
memory.registerwrite(0x0005, -0x10, nil)
memory.registerwrite(0xFFFC, 8, hook_logger("write FFFC,8"))
run("size 8 at FFFC (past FFFF)")
memory.registerwrite(0xFFFC, 8, nil)
memory.registerwrite(-1, 3, hook_logger("write -1,3"))
run("address -1 size 3")
memory.registerwrite(-1, 3, nil)
memory.registerwrite(0x10006, hook_logger("write 10006"))
run("address 10006")
memory.registerwrite(0x10006, nil)
memory.registerwrite(0x07FF, 2, hook_logger("write 07FF,2"))
run("07FF size 2 (no mirrors)")
memory.registerwrite(0x07FF, 2, nil)
memory.registerwrite(0x0600, 4, hook_logger("write 0600,4 first"))
memory.registerwrite(0x0602, hook_logger("write 0602 second"))
run("two hooks on 0602: the second replaces the first")
memory.registerwrite(0x0601, nil)
run("0601 removed with (addr, nil)")
memory.registerwrite(0x0600, 4, nil)
memory.register(0x0603, hook_logger("register 0603"))
run("memory.register alias")
memory.register(0x0603, nil)
memory.registerwrite(0x0601, function(address, size, value)
  line("write 0601 sees %02X at 0601 (value %s)", memory.readbyte(0x0601), tostring(value))
end)
run("value in memory during the hook")
memory.registerwrite(0x0601, nil)
memory.registerwrite(0x0601, 1, "sub", hook_logger("write 0601 sub"))
run("cpu name 'sub'")
memory.registerwrite(0x0601, 1, "sub", nil)
memory.registerwrite(0x0602, "main", 1, hook_logger("write 0602 'main', 1"))
run("cpu name before size")
memory.registerwrite(0x0602, nil)
err("registerwrite no function", function() return memory.registerwrite(0x0602) end)
err("registerwrite size, no function", function() return memory.registerwrite(0x0602, 2) end)
err("registerwrite table", function() return memory.registerwrite(0x0602, {}) end)
try("registerwrite returns", memory.registerwrite, 0x0602, nil)
err("registerexec string only", function() return memory.registerexec(0x0602, "sub") end)
err("registerexec no address", function() return memory.registerexec() end)
err("registerexec size nil", function() return memory.registerexec(0x0602, 1, 2) end)

-- A hook on key -1 (0xFFFFFFFF, which a range below $0000 covers) empties FCEUX's hooked
-- region: no hook of that kind fires until it is removed.
memory.registerwrite(0x0200, hook_logger("write 0200"))
memory.registerwrite(0x0002, -0x3, hook_logger("write 0002,-3"))
run("0200 and 0002,-3 (FFFFFFFF..0001)")
memory.registerwrite(0x0002, -0x3, nil)
run("0002,-3 removed")
memory.registerwrite(0xFFFFFFFF, hook_logger("write FFFFFFFF"))
run("FFFFFFFF")
memory.registerwrite(0xFFFFFFFF, nil)
memory.registerwrite(-2, 4, hook_logger("write -2,4"))
run("-2,4")
memory.registerwrite(-2, 4, nil)
memory.registerwrite(0x100000001, hook_logger("write 100000001"))
run("100000001")
memory.registerwrite(0x100000001, nil)
memory.registerwrite(0x0200, nil)
memory.registerwrite(0x0200, nil, hook_logger("write 0200 nil f"))
run("(0200, nil, f) clears")
memory.registerwrite(0x0200, "2", hook_logger("write 0200 '2'"))
run("size '2'")
memory.registerwrite(0x0200, 2, nil)
memory.registerwrite(0x0200, 2.7, hook_logger("write 0200 2.7"))
run("size 2.7")
memory.registerwrite(0x0200, 2, nil)
memory.registerwrite(0x0201, -1.5, hook_logger("write 0201 -1.5"))
run("size -1.5")
memory.registerwrite(0x0200, 2, nil)
memory.registerwrite(0x0600, function(address, size, value)
  line("write 0600 %s: sets x, writes 0601, unhooks 0600, hooks 0602", show(address, size, value))
  memory.setregister("x", 0x77)
  memory.writebyte(0x0602, 0x99)
  memory.registerwrite(0x0600, nil)
  memory.registerwrite(0x0602, hook_logger("write 0602 from a hook"))
end)
memory.registerwrite(0x0601, function()
  line("write 0601: x=%02X, 0602=%02X", memory.getregister("x"), memory.readbyte(0x0602))
end)
run("hooks change hooks")
memory.registerwrite(0x0600, 4, nil)

memory.registerexec(NOPS + 4, -3, hook_logger("exec +4,-3"))
memory.registerexec(NOPS + 7, 0, hook_logger("exec +7,0"))
run("exec hooks: size -3")
memory.registerexec(NOPS + 4, -3, nil)
memory.registerexec(NOPS + 8, 2, hook_logger("exec +8,2"))
memory.registerexecute(NOPS + 12, hook_logger("registerexecute +12"))
memory.registerrun(NOPS + 14, -1, hook_logger("registerrun +14,-1"))
run("exec aliases")
memory.registerexec(NOPS + 8, 2, nil)
memory.registerexecute(NOPS + 12, nil)
memory.registerrun(NOPS + 14, -1, nil)
run("all removed")
memory.registerexec(NOPS + 2, function(...)
  line("exec +2 %s: pc=%04X; sets pc to +9", show(...), memory.getregister("pc"))
  memory.setregister("pc", NOPS + 9)
end)
memory.registerexec(NOPS + 9, hook_logger("exec +9"))
memory.registerexec(NOPS + 10, hook_logger("exec +10"))
memory.registerexec(NOPS + 11, hook_logger("exec +11"))
run("exec hook moves pc")
memory.registerexec(NOPS, 16, nil)
memory.registerexec(0xFFFF, -2, hook_logger("exec FFFF,-2"))
memory.registerexec(NOPS + 1, 1, "sub", hook_logger("exec sub"))
run("exec far away and sub")
memory.registerexec(0xFFFF, -2, nil)
emu.frameadvance()
line("end")
log:close()
emu.exit()
