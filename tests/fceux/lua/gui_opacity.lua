-- rom: roms/black.nes
-- gui.opacity and gui.transparency as FCEUX 2.6.5 applies them (each drawing call scales its
-- colours' alpha when it reads them), translucent pixels blending into the canvas
-- (gui.getpixel), and the composited picture (emu.getscreenpixel, whose 4th value is the
-- palette entry): translucent colours over the black screen, every colour snapped to FCEUX's
-- 8-bit palette, and its colour cache (the first colour of a cell on a display decides the
-- entry of later colours of that cell, reading the display top row first, left to right).
local log = assert(io.open("parity.log", "w"))
local function say(...)
  log:write(...)
  log:write("\n")
  log:flush()
end

local function errmsg(message)
  return (tostring(message):gsub("^.-([%w_]+%.lua:%d+: )", "%1"))
end

local function canvas(x, y)
  return string.format("%d,%d,%d,%d", gui.getpixel(x, y))
end

local function screen(x, y)
  return string.format("%d,%d,%d,%d", emu.getscreenpixel(x, y, false))
end

-- FCEUX's first frames are not yet the ROM's black screen.
while emu.framecount() < 6 do emu.frameadvance() end

-- The colour cache, first (the colours below fill cells of it): on a display the upper left
-- colour of a cell decides, whichever was drawn first.
emu.frameadvance()
gui.pixel(100, 100, { 128, 0, 0 })
gui.pixel(0, 60, { 159, 31, 31 })
emu.frameadvance()
say("cache upper left decides ", screen(100, 100), " ", screen(0, 60))
gui.pixel(100, 70, { 0, 128, 0 })
gui.pixel(3, 70, { 31, 159, 31 })
emu.frameadvance()
say("cache left decides ", screen(100, 70), " ", screen(3, 70))
-- A drawing nobody reads fills the cache too.
gui.pixel(0, 80, { 10, 40, 200 })
emu.frameadvance()
gui.pixel(0, 80, { 31, 63, 223 })
emu.frameadvance()
say("cache filled unread ", screen(0, 80))
-- A translucent pixel's cell is that of its blend with the picture.
gui.pixel(10, 90, { 192, 192, 192, 128 })
emu.frameadvance()
local blend = screen(10, 90)
gui.pixel(10, 91, { 127, 127, 127 })
emu.frameadvance()
say("cache of a blend ", blend, " ", screen(10, 91))

say("opacity")
for _, value in ipairs({ 1, 0.5, 0.25, 0, 0.1, 0.999, 1.5, 2, 10, -1, "0.5", 1e10, -1e10 }) do
  emu.frameadvance()
  local ok, message = pcall(gui.opacity, value)
  gui.pixel(1, 1, "#FF0000FF")
  gui.pixel(2, 1, "#00FF0080")
  gui.pixel(3, 1, "#0000FF01")
  gui.line(4, 1, 4, 1, "#FFFFFFC0")
  gui.box(5, 1, 5, 1, "#FF00FF40", "#00FFFF40")
  gui.text(10, 1, "i", "#FFFF00FF", "#FF000080")
  say(tostring(value), " ", ok and "ok" or errmsg(message), " pixel ", canvas(1, 1), " ", canvas(2, 1),
    " ", canvas(3, 1), " line ", canvas(4, 1), " box ", canvas(5, 1), " text ", canvas(10, 1),
    " ", canvas(10, 2))
end
gui.opacity(1)

say("transparency")
for _, value in ipairs({ 0, 1, 2, 3, 4, 5, 0.5, 3.99, -1, -4, 100, "2" }) do
  emu.frameadvance()
  local ok, message = pcall(gui.transparency, value)
  gui.pixel(1, 1, "#FF0000FF")
  gui.pixel(2, 1, "#00FF0080")
  say(tostring(value), " ", ok and "ok" or errmsg(message), " ", canvas(1, 1), " ", canvas(2, 1))
end
gui.transparency(0)

say("opacity is read when drawing")
emu.frameadvance()
gui.opacity(0.5)
gui.pixel(1, 1, "white")
gui.opacity(1)
gui.pixel(2, 1, "white")
say(canvas(1, 1), " ", canvas(2, 1))
emu.frameadvance()
say("shown ", screen(1, 1), " ", screen(2, 1))

say("errors")
for _, f in ipairs({
  function() gui.opacity() end,
  function() gui.opacity("x") end,
  function() gui.opacity({}) end,
  function() gui.transparency() end,
  function() gui.transparency(nil) end,
}) do
  local ok, message = pcall(f)
  say(tostring(ok), " ", errmsg(message))
end
gui.opacity(1)

say("blending")
for _, pair in ipairs({
  { "#FF000080", "#0000FF40" }, { "#FF000080", "#0000FF80" }, { "#0A141E01", "#C86432FE" },
  { "#FFFFFFC8", "#00000064" }, { "clear", "#64646464" }, { "#64646464", "clear" },
  { "#0102034D", "#FAFBFC21" }, { "#FF0000FF", "#00FF00FF" }, { "#FF000080", "#00FF00FF" },
  { "#FF0000FF", "#00FF0001" }, { "#80808080", "#80808080" },
}) do
  emu.frameadvance()
  gui.pixel(7, 7, pair[1])
  gui.pixel(7, 7, pair[2])
  say(pair[1], " then ", pair[2], " ", canvas(7, 7))
end

-- Composited over the black screen, each colour in a cell of its own where it can be.
say("composited")
local colours = {
  "#FF000080", "#00FF0080", "#0000FF80", "#FFFFFF80", "#FFFFFF40", "#FFFFFF01", "#FFFFFFFE",
  "#80808080", "#FF800080", "#20406080", "#C0C0C0C0", "#FFFF00FF", "#00FFFFFF", "#123456FF",
  "#654321FF", "#ABCDEFFF", "#FEDCBAFF", "#E0E0E0FF", "#A0A0A0FF", "#606060FF", "#202020FF",
  "#FF7F7FFF", "#7FFF7FFF", "#7F7FFFFF", "#3F003FFF", "#003F3FFF",
}
for i, colour in ipairs(colours) do gui.pixel(i * 2, 30, colour) end
emu.frameadvance()
for i, colour in ipairs(colours) do say(colour, " ", screen(i * 2, 30), " canvas ", canvas(i * 2, 30)) end

-- What one display showed stays until the next display.
gui.pixel(20, 100, "#FF0000FF")
emu.frameadvance()
say("shown ", screen(20, 100))
emu.frameadvance()
say("then gone ", screen(20, 100))
say("done")
log:close()
emu.frameadvance()
emu.exit()
