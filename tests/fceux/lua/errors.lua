-- rom: roms/probe.nes
-- The errors the API raises for bad calls, from every namespace, as FCEUX 2.6.5 words them.
-- Each call runs twice: as a chunk of its own (so the message has its position and the
-- function's name, "chunk:1: bad argument #1 to 'readbyte' (...)") and straight from pcall
-- (no position, and '?' for the name). Chunk names of files are absolute paths in FCEUX and
-- here: the log keeps the file name.
local log = assert(io.open("parity.log", "w"))
local function w(...)
  local t = {}
  for i = 1, select("#", ...) do t[#t + 1] = tostring((select(i, ...))) end
  log:write((table.concat(t, " "):gsub("[^%s]*/([^/%s]+%.lua:)", "%1")), "\n")
  log:flush()
end
local calls = {
  'emu.speedmode("bogus")', "emu.speedmode()", "emu.message()", "emu.getscreenpixel()",
  "emu.registerbefore(5)", "emu.registerafter({})", "emu.registerexit(true)",
  "memory.readbyte()", 'memory.readbyte("x")', "memory.readbytesigned()",
  "memory.writebyte(1)", "memory.readword()", "memory.readwordsigned()",
  "memory.readbyterange()", "memory.readbyterange(0)",
  'memory.registerwrite("x", print)', "memory.registerwrite(0, 5)",
  "memory.registerexec(0, 1, 1)",
  'memory.getregister("q")', "memory.getregister()", 'memory.setregister("a")',
  "joypad.set(0, {})", "joypad.set(1, 5)", "joypad.set()", "joypad.get(9)", "joypad.get()",
  "joypad.read(0)", "joypad.write(5, {})", "joypad.getdown(0)", "joypad.getup()",
  "gui.text(1, 1)", "gui.text()", 'gui.box(0, 0, 1, 1, "notacolour")', "gui.pixel()",
  "gui.line(0, 0)", "gui.register(5)", 'gui.box(0, 0, 1, 1, { r = "x" })',
  "gui.opacity()", "gui.transparency()", "gui.getpixel()", "gui.parsecolor()",
  "savestate.save(5)", "savestate.load(nil)", "savestate.create(99)", "savestate.object(11)",
  "savestate.registersave(1)",
  "rom.readbyte()", "rom.readbytesigned()", "rom.writebyte(1)", "rom.writebyte(20)",
  "movie.length()", "movie.rerecordcount()", "movie.name()", "movie.getname()",
  "movie.playbeginning()", 'movie.play("/nonexistent/none.fm2")',
  "sound.get(1).x", "debugger.getcyclescount('x') + nil",
  'bit.band("x")', "bit.tohex({})", "bit.lshift()", "bit.bor(1, nil)",
  'string.format("%d", "x")', 'string.rep()', "tostring()", "setmetatable(1)",
}
emu.frameadvance()
for _, code in ipairs(calls) do
  local chunk = assert(loadstring("local r = " .. code .. " return r", code))
  w(code, pcall(chunk))
end
local function field(path)
  local value = _G
  for name in path:gmatch("[^.]+") do value = value[name] end
  return value
end
for _, code in ipairs(calls) do
  local name, args = code:match("^([%w.]+)(%b())")
  if name then
    local f = field(name)
    local arguments = assert(loadstring("return " .. args:sub(2, -2)))
    w("pcall " .. name, pcall(f, arguments()))
  end
end
w("error table", pcall(error, { 1 }))
w("error level 2", pcall(function() error("lvl", 2) end))
w("error level 1", pcall(function() error("lvl") end))
w("error nil", pcall(error))
w("arith nil", pcall(function() return nil + 1 end))
w("call nil", pcall(function() local t = {} t.f() end))
w("index nil", pcall(function() local t t.x = 1 end))
w("concat table", pcall(function() return "a" .. {} end))
w("compare", pcall(function() return {} < 1 end))
w("end")
log:close()
emu.exit()
