-- rom.*, input, zapper, movie (none loaded), bit, the extra globals, debugger and stubs.
local function check(ok, what) if not ok then error(what or "check failed", 2) end end
check(rom.readbyte(0) == 0x4E and rom.readbyte(3) == 0x1A, "rom offsets include the header")
check(rom.readbytesigned(16 + 0x1010) == -16, "rom.readbytesigned")
local hash = rom.gethash("md5")
check(#hash == 32 and hash:match("^[0-9a-f]+$"), "md5")
rom.writebyte(16, 0x12)
check(rom.readbyte(16) == 0x12, "rom.writebyte")
check(rom.getfilename() == "scripts", "rom.getfilename")

local mouse = input.get()
check(mouse.xmouse == 0 and mouse.ymouse == 0 and mouse.click == 0, "input.get")
local gun = zapper.read()
check(gun.x == 0 and gun.y == 0 and gun.fire == 0, "zapper.read")

check(movie.active() == false and movie.recording() == false and movie.playing() == false,
  "no movie")
check(movie.mode() == nil, "movie.mode")
check(movie.framecount() == emu.framecount(), "movie.framecount")
for _, name in ipairs({"length", "rerecordcount", "name"}) do
  local ok, err = pcall(function() return movie[name]() end)
  check(not ok and err:find("No movie loaded.", 1, true), "movie." .. name)
end

check(bit.tobit(0xFFFFFFFF) == -1, "tobit")
check(bit.bnot(0) == -1, "bnot")
check(bit.band(0xF0, 0x3C, 0xFF) == 0x30, "band is variadic")
check(bit.bor(1, 2, 4) == 7 and bit.bxor(5, 1) == 4, "bor / bxor")
check(bit.lshift(1, 31) == -2147483648, "results are signed")
check(bit.rshift(-1, 28) == 15 and bit.arshift(-16, 2) == -4, "rshift / arshift")
check(bit.rol(0x80000000, 1) == 1 and bit.ror(1, 1) == -2147483648, "rol / ror")
check(bit.bswap(0x12345678) == 0x78563412, "bswap")
check(bit.tohex(255) == "000000ff" and bit.tohex(255, -2) == "FF", "tohex")
check(AND(12, 10) == 8 and OR(12, 10) == 14 and XOR(12, 10) == 6, "AND OR XOR")
check(SHIFT(16, 2) == 4 and SHIFT(1, -3) == 8, "SHIFT")
check(BIT(0, 2) == 5, "BIT")
check(tobitstring(5) == "0000 0101", "tobitstring")
local original = {1, x = 2}
local copy = copytable(original)
check(copy ~= original and copy[1] == 1 and copy.x == 2, "copytable")
check(type(addressof(original)) == "number", "addressof")
check(type(arg) == "string", "arg")

check(debugger.getcyclescount() > 0, "cycles since power-on")
debugger.resetcyclescount()
check(debugger.getcyclescount() == 0, "resetcyclescount")
check(type(debugger.getinstructionscount()) == "number", "getinstructionscount")
check(type(sound.get()) == "table", "sound.get")
check(taseditor.engaged() == false, "taseditor")
check(type(debug.traceback) == "function", "the debug library is open")
check(tostring(1.5) == "1.5" and tostring(nil) == "nil", "tostring")
check(string.format("%02X ", 10) == "0A ", "string.format")
print("PASS")
