-- rom: roms/black.nes
-- gui.text as FCEUX 2.6.5 draws it: every printable character, other bytes, line breaks,
-- tabs, the screen edges, colours with alpha and the default colours, the return value and
-- the argument errors. The composited picture is read back with emu.getscreenpixel (opaque
-- red ink on opaque blue, shown as # and o; . is the black screen) and the canvas with
-- gui.getpixel (as hex RGBA) where translucent colours blend. Rows 205-225 are never read:
-- FCEUX shows a message there for the first ~3 seconds.
local log = assert(io.open("parity.log", "w"))
local INK, PAPER = "#FF0000", "#0000FF"
local symbols = { ["000000"] = ".", ["ff0000"] = "#", ["0000ff"] = "o", ["ffffff"] = "W" }

-- One line per row of the composited picture; colours other than the four above are listed.
local function screen(label, x0, y0, w, h)
  log:write(label, "\n")
  for y = y0, y0 + h - 1 do
    local row, others = {}, {}
    for x = x0, x0 + w - 1 do
      local r, g, b = emu.getscreenpixel(x, y, false)
      local hex = string.format("%02x%02x%02x", r, g, b)
      row[#row + 1] = symbols[hex] or "?"
      if not symbols[hex] then others[#others + 1] = x .. "=" .. hex end
    end
    log:write(table.concat(row), #others > 0 and (" " .. table.concat(others, " ")) or "", "\n")
  end
end

-- One line per row of the canvas, RGBA hex.
local function canvas(label, x0, y0, w, h)
  log:write(label, "\n")
  for y = y0, y0 + h - 1 do
    local row = {}
    for x = x0, x0 + w - 1 do
      row[#row + 1] = string.format("%02x%02x%02x%02x", gui.getpixel(x, y))
    end
    log:write(table.concat(row, " "), "\n")
  end
end

-- Draw, show it on the next frame, dump it.
local function case(label, x0, y0, w, h, draw)
  local result = { draw() }
  for i = 1, #result do result[i] = tostring(result[i]) end
  emu.frameadvance()
  screen(label .. " -> " .. table.concat(result, ","), x0, y0, w, h)
end

local function errors(label, f)
  local ok, message = pcall(f)
  log:write(label, ": ", tostring(ok), " ", (tostring(message):gsub("^.-([%w_]+%.lua:%d+: )", "%1")), "\n")
end

-- FCEUX's first frames are not yet the ROM's black screen.
while emu.framecount() < 6 do emu.frameadvance() end

local printable = {}
for c = 32, 126 do printable[#printable + 1] = string.char(c) end
printable = table.concat(printable)
case("printable 32-63", 0, 0, 200, 10, function() return gui.text(2, 1, printable:sub(1, 32), INK, PAPER) end)
case("printable 64-95", 0, 0, 200, 10, function() return gui.text(2, 1, printable:sub(33, 64), INK, PAPER) end)
case("printable 96-126", 0, 0, 200, 10, function() return gui.text(2, 1, printable:sub(65), INK, PAPER) end)
case("lines of printables", 0, 0, 250, 34, function()
  return gui.text(1, 1, printable:sub(1, 40) .. "\n" .. printable:sub(41, 80) .. "\n" .. printable:sub(81) .. "\nend", INK, PAPER)
end)
local controls = {}
for c = 1, 31 do if c ~= 9 and c ~= 10 then controls[#controls + 1] = string.char(c) end end
case("control bytes", 0, 0, 200, 10, function() return gui.text(2, 1, "a" .. table.concat(controls, "", 1, 12) .. "b", INK, PAPER) end)
case("bytes 127-131", 0, 0, 60, 10, function() return gui.text(2, 1, "a\127b\128c\129d\130e\131f", INK, PAPER) end)
case("bytes 200 255 and utf-8", 0, 0, 60, 10, function() return gui.text(2, 1, "a\200b\255c\195\169d", INK, PAPER) end)
case("nul ends the text", 0, 0, 30, 10, function() return gui.text(2, 1, "ab\0cd", INK, PAPER) end)
case("zero width first", 0, 0, 20, 10, function() return gui.text(2, 1, "\127A", INK, PAPER) end)
case("empty", 0, 0, 20, 10, function() return gui.text(2, 1, "", INK, PAPER) end)
case("space", 0, 0, 20, 10, function() return gui.text(2, 1, " ", INK, PAPER) end)
case("number", 0, 0, 40, 10, function() return gui.text(2, 1, 12.5, INK, PAPER) end)
case("newlines", 0, 0, 40, 42, function() return gui.text(2, 1, "AAAA\ni\n\nWW\n", INK, PAPER) end)
case("leading newline", 0, 0, 20, 18, function() return gui.text(2, 1, "\nab", INK, PAPER) end)
case("tabs", 0, 0, 160, 18, function() return gui.text(2, 1, "x\ty\t\tz\nabcdefgh\tij", INK, PAPER) end)
case("tab first", 60, 0, 20, 10, function() return gui.text(2, 1, "\tx", INK, PAPER) end)
case("tab at 30", 20, 0, 90, 10, function() return gui.text(30, 1, "ab\tcd", INK, PAPER) end)
for _, x in ipairs({ -3, -7, 250, 252, 255, 256, 257, 300 }) do
  local x0 = x < 100 and 0 or 238
  case("x " .. x, x0, 0, 18, 20, function() return gui.text(x, 2, "WAg\nbc", INK, PAPER) end)
end
case("long line runs off the right", 200, 0, 56, 18, function() return gui.text(200, 1, "abcdefghijklmnopq\nrs", INK, PAPER) end)
for _, y in ipairs({ -3, -8, -10, 226, 230, 233, 234, 236, 239, 240 }) do
  local y0 = y < 100 and 0 or 226
  case("y " .. y, 0, y0, 14, 14, function() return gui.text(2, y, "Ag\nBj", INK, PAPER) end)
end
case("both colours clear", 0, 0, 12, 10, function() return gui.text(2, 1, "A", "clear", "clear") end)
case("clear background", 0, 0, 12, 10, function() return gui.text(2, 1, "A", INK, "clear") end)
case("clear ink", 0, 0, 12, 10, function() return gui.text(2, 1, "A", "#FF000000", PAPER) end)
case("unknown colours use the defaults", 0, 0, 12, 10, function() return gui.text(2, 1, "A", "nocolour", "#0000FF") end)
case("white on blue", 0, 0, 12, 10, function() return gui.text(2, 1, "A", "white", "blue") end)

case("carriage return and vertical tab", 0, 0, 40, 10, function() return gui.text(2, 1, "a\rb\vc\fd", INK, PAPER) end)
case("tab after a newline", 0, 0, 80, 18, function() return gui.text(2, 1, "ab\n\tc", INK, PAPER) end)
case("x 1e12", 0, 0, 10, 10, function() return gui.text(1e12, 1, "ab", INK, PAPER) end)
case("x -2^31", 0, 0, 10, 10, function() return gui.text(-2 ^ 31, 1, "ab", INK, PAPER) end)
case("x 2^31-1", 0, 0, 10, 10, function() return gui.text(2 ^ 31 - 1, 1, "ab\ncd", INK, PAPER) end)
case("x -2^31+256", 0, 0, 10, 10, function() return gui.text(-2 ^ 31 + 256, 1, "ab", INK, PAPER) end)
case("x -2^31+257", 0, 0, 10, 10, function() return gui.text(-2 ^ 31 + 257, 1, "ab", INK, PAPER) end)
case("x -2^31 with a tab", 0, 0, 10, 10, function() return gui.text(-2 ^ 31, 1, "\tab\t", INK, PAPER) end)
case("tab past the right edge", 240, 0, 16, 10, function() return gui.text(300, 1, "\tab", INK, PAPER) end)
case("tab at the right edge", 240, 0, 16, 10, function() return gui.text(250, 1, "W\tab", INK, PAPER) end)
case("tab to the right edge", 240, 0, 16, 10, function() return gui.text(200, 1, "\tab", INK, PAPER) end)
case("y 1e12", 0, 0, 10, 10, function() return gui.text(2, 1e12, "ab\ncd", INK, PAPER) end)
case("y -2^31", 0, 0, 10, 10, function() return gui.text(2, -2 ^ 31, "ab\ncd", INK, PAPER) end)
case("y -2^31+240", 0, 0, 10, 10, function() return gui.text(2, -2 ^ 31 + 240, "\nab", INK, PAPER) end)
case("y -2^31+241", 0, 0, 10, 10, function() return gui.text(2, -2 ^ 31 + 241, "\nab", INK, PAPER) end)
case("lines into the screen from above", 0, 0, 20, 10, function() return gui.text(2, -20, "a\nb\nc\nd\ne", INK, PAPER) end)
case("a long line", 240, 0, 16, 10, function() return gui.text(2, 1, string.rep("W", 100000), INK, PAPER) end)
case("many lines", 0, 226, 16, 14, function() return gui.text(2, 1, string.rep("ab\n", 100000), INK, PAPER) end)
case("many lines from far above", 0, 0, 16, 10, function() return gui.text(2, -799990, string.rep("ab\n", 100000), INK, PAPER) end)

-- Translucent colours, in the canvas.
gui.text(2, 1, "AB", "#FF000080", "#0000FF80")
canvas("translucent AB", 0, 0, 16, 10)
gui.text(2, 20, "\127A\nB", "#FF000080", "#0000FF40")
canvas("translucent zero width and second line", 0, 19, 10, 18)
emu.frameadvance()
gui.text(2, 1, "Ab")
canvas("default colours", 0, 0, 14, 10)
emu.frameadvance()
gui.opacity(0.5)
gui.text(2, 1, "i", "#FF0000", "#0000FF")
canvas("opacity 0.5", 0, 0, 6, 10)
gui.opacity(1)
emu.frameadvance()

errors("no arguments", function() gui.text() end)
errors("no text", function() gui.text(1, 2) end)
errors("nil text", function() gui.text(1, 2, nil) end)
errors("table text", function() gui.text(1, 2, {}) end)
errors("boolean text", function() gui.text(1, 2, true) end)
errors("string x", function() gui.text("a", 2, "x") end)
errors("drawtext", function() gui.drawtext(1) end)
errors("a local's name", function() local write = gui.text write(1, 2) end)
errors("function colour", function() gui.text(1, 2, "x", print) end)
errors("bad palette colour", function() gui.text(1, 2, "x", "white", "PZZ") end)
log:write("numeric strings: ", gui.text("3", "2.9", "x", "clear", "clear"), "\n")
emu.frameadvance()
log:close()
emu.frameadvance()
emu.exit()
