-- rom: roms/probe.nes
-- rom.*: the image rom.readbyte indexes (header, PRG, CHR RAM on this board), and patches by
-- rom.writebyte, which the CPU and the PPU see at once, as FCEUX 2.6.5 has them. probe.nes is
-- NROM-128 (16 KiB of PRG at $8000 and again at $C000) with CHR RAM. Test programs run from
-- CPU RAM with NMI, rendering and the APU frame IRQ off. One line per observation into
-- parity.log.
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
      v = string.format("%q", (v:gsub("^[^\n]-([%w_]+%.lua:)", "%1")))
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
local function err(label, f)
  line("%s -> %s", label, show(pcall(f)))
end
local function bytes(read, from, to)
  local t = {}
  for i = from, to do
    t[#t + 1] = string.format("%02X", read(i))
  end
  return table.concat(t, " ")
end

-- Let the ROM boot, then park the CPU in RAM with NMI, rendering and the frame IRQ off.
emu.frameadvance()
emu.frameadvance()
local function load(origin, code)
  for i, byte in ipairs(code) do
    memory.writebyte(origin + i - 1, byte)
  end
end
local PARK = 0x0711
load(0x0700, { 0xA9, 0x00, 0x8D, 0x00, 0x20, 0x8D, 0x01, 0x20, -- LDA #0; STA $2000; STA $2001
  0xA9, 0x40, 0x8D, 0x17, 0x40, 0xAD, 0x15, 0x40, 0x78, -- LDA #$40; STA $4017; LDA $4015; SEI
  0x4C, PARK % 256, math.floor(PARK / 256) }) -- PARK: JMP PARK
memory.setregister("pc", 0x0700)
emu.frameadvance()
local function run(code)
  code[#code + 1] = 0x4C
  code[#code + 1] = PARK % 256
  code[#code + 1] = math.floor(PARK / 256)
  load(0x0400, code)
  memory.setregister("pc", 0x0400)
  emu.frameadvance()
end

-- 1. Reading: the header, PRG (its vectors at the end), what lies past the image.
local PRG, CHR = 16, 16 + 0x4000
line("header: %s", bytes(rom.readbyte, 0, 15))
line("prg start: %s", bytes(rom.readbyte, PRG, PRG + 15))
line("vectors: %s", bytes(rom.readbyte, PRG + 0x3FFA, PRG + 0x3FFF))
line("cpu FFFA: %s", bytes(memory.readbyte, 0xFFFA, 0xFFFF))
try("readbytesigned vector", rom.readbytesigned, PRG + 0x3FFB)
try("readbytesigned header 0", rom.readbytesigned, 0)
try("readbyteunsigned vector", rom.readbyteunsigned, PRG + 0x3FFB)
try("readbyte past the end", rom.readbyte, CHR + 0x2000)
try("readbyte -1", rom.readbyte, -1)
try("readbyte 0x100000004", rom.readbyte, 0x100000004)
try("readbyte '20'", rom.readbyte, "20")
try("readbyte 20.9", rom.readbyte, 20.9)
err("readbyte nil", function() return rom.readbyte() end)
err("readbyte {}", function() return rom.readbyte({}) end)

-- 2. rom.writebyte's arguments and what it returns (its last argument).
err("writebyte header", function() return rom.writebyte(4, 1) end)
err("writebyte 15", function() return rom.writebyte(15, 1) end)
err("writebyte -1", function() return rom.writebyte(-1, 1) end)
err("writebyte no value", function() return rom.writebyte(PRG + 0x3000) end)
try("writebyte returns", rom.writebyte, PRG + 0x3000, 0xEA)
try("writebyte returns the last", rom.writebyte, PRG + 0x3000, 0xEA, "x", 7)
try("writebyte '234'", rom.writebyte, PRG + 0x3000, "234")
try("writebyte past the end", rom.writebyte, CHR + 0x2000, 1)
try("readbyte past the end", rom.readbyte, CHR + 0x2000)
rom.writebyte(PRG + 0x3001, 0x1EA)
rom.writebyte(PRG + 0x3002, -0x16)
line("0x1EA, -0x16: %s", bytes(rom.readbyte, PRG + 0x3001, PRG + 0x3002))

-- 3. A routine patched into PRG runs: at $F000 (and $B000, the same byte),
-- LDA #$42; STA $0300; RTS.
local ROUTINE = PRG + 0x3000
local routine = { 0xA9, 0x42, 0x8D, 0x00, 0x03, 0x60 }
for i, byte in ipairs(routine) do
  rom.writebyte(ROUTINE + i - 1, byte)
end
line("rom: %s", bytes(rom.readbyte, ROUTINE, ROUTINE + 5))
line("cpu F000: %s", bytes(memory.readbyte, 0xF000, 0xF005))
line("cpu B000: %s", bytes(memory.readbyte, 0xB000, 0xB005))
memory.writebyte(0x0300, 0)
run({ 0x20, 0x00, 0xF0 }) -- JSR $F000
line("JSR F000: 0300=%02X", memory.readbyte(0x0300))
rom.writebyte(ROUTINE + 1, 0x43)
rom.writebyte(ROUTINE + 3, 0x01)
run({ 0x20, 0x00, 0xB0 }) -- JSR $B000
line("patched again, JSR B000: 0300=%02X 0301=%02X", memory.readbyte(0x0300), memory.readbyte(0x0301))

-- 4. A patch in an exec hook, between two calls in one frame.
memory.writebyte(0x0301, 0)
memory.writebyte(0x0310, 0)
memory.registerexec(0x0403, function()
  rom.writebyte(ROUTINE + 1, 0x44)
  line("exec 0403: 0301=%02X, patched", memory.readbyte(0x0301))
end)
run({ 0x20, 0x00, 0xF0, -- JSR $F000
  0xAD, 0x01, 0x03, 0x8D, 0x10, 0x03, -- LDA $0301; STA $0310
  0x20, 0x00, 0xF0 }) -- JSR $F000
memory.registerexec(0x0403, nil)
line("first call %02X, second %02X", memory.readbyte(0x0310), memory.readbyte(0x0301))

-- 5. CHR RAM is the image's CHR part: a patch is what the PPU reads ($2007), and the PPU's
-- writes are what rom.readbyte reads.
rom.writebyte(CHR + 0x0005, 0x3C)
rom.writebyte(CHR + 0x1FFF, 0xC3)
line("chr patched: %02X %02X", rom.readbyte(CHR + 0x0005), rom.readbyte(CHR + 0x1FFF))
run({ 0xAD, 0x02, 0x20, -- LDA $2002
  0xA9, 0x00, 0x8D, 0x06, 0x20, 0xA9, 0x05, 0x8D, 0x06, 0x20, -- $2006 = $0005
  0xAD, 0x07, 0x20, 0xAD, 0x07, 0x20, 0x8D, 0x20, 0x03, -- LDA $2007 (buffer); LDA $2007; STA $0320
  0xA9, 0x1F, 0x8D, 0x06, 0x20, 0xA9, 0xFF, 0x8D, 0x06, 0x20, -- $2006 = $1FFF
  0xAD, 0x07, 0x20, 0xAD, 0x07, 0x20, 0x8D, 0x21, 0x03, -- STA $0321
  0xA9, 0x00, 0x8D, 0x06, 0x20, 0xA9, 0x10, 0x8D, 0x06, 0x20, -- $2006 = $0010
  0xA9, 0x77, 0x8D, 0x07, 0x20, 0xA9, 0x78, 0x8D, 0x07, 0x20 }) -- $2007 = $77, $78
line("ppu read 0005=%02X 1FFF=%02X", memory.readbyte(0x0320), memory.readbyte(0x0321))
line("ppu wrote: %s", bytes(rom.readbyte, CHR + 0x0010, CHR + 0x0011))

-- 6. Patches last: through a state load (states hold no ROM; CHR RAM is in them), a reset
-- and a power cycle. The hash stays the file's.
local state = savestate.create()
savestate.save(state)
rom.writebyte(ROUTINE + 1, 0x45)
rom.writebyte(CHR + 0x0010, 0x99)
savestate.load(state)
line("after the load: F001=%02X rom %02X, chr %02X", memory.readbyte(0xF001),
  rom.readbyte(ROUTINE + 1), rom.readbyte(CHR + 0x0010))
emu.softreset()
emu.frameadvance()
line("after a reset: F001=%02X rom %02X", memory.readbyte(0xF001), rom.readbyte(ROUTINE + 1))
emu.poweron()
emu.frameadvance()
emu.frameadvance()
line("after a power cycle: F001=%02X rom %02X", memory.readbyte(0xF001), rom.readbyte(ROUTINE + 1))
line("md5 %s, file %s", rom.gethash("md5"), rom.getfilename())

emu.frameadvance()
line("end")
log:close()
emu.exit()
