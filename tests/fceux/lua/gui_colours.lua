-- rom: roms/black.nes
-- FCEUX 2.6.5's colour forms, through gui.parsecolor (RGBA, or the error) and drawn with
-- gui.pixel (read back from the canvas with gui.getpixel and composited with
-- emu.getscreenpixel): names in any case (purple included, whose `p` is not a palette entry),
-- "#..." of every length, numbers 0xRRGGBBAA (and ones that are not 32-bit integers), tables
-- {r, g, b, a} / {r=, g=, b=, a=}, "P00"-"P7F" palette entries and malformed ones, `rand`,
-- and values that are no colour, as parsecolor and as the optional colours of gui.text,
-- gui.box and gui.line. Not here: "#" followed by no hex digit (e.g. "#GG"), where FCEUX reads
-- an uninitialised variable (0 mostly, but also leftovers such as 0x20 or 0x23456789).
local log = assert(io.open("parity.log", "w"))
local function say(...)
  log:write(...)
  log:write("\n")
  log:flush()
end

local function show(value)
  if type(value) == "string" then return string.format("%q", value) end
  if type(value) == "table" then
    local parts = {}
    for k, v in pairs(value) do parts[#parts + 1] = tostring(k) .. "=" .. tostring(v) end
    table.sort(parts)
    return "{" .. table.concat(parts, ",") .. "}"
  end
  if type(value) == "function" then return "function" end
  if type(value) == "thread" then return "thread" end
  return tostring(value)
end

local function errmsg(message)
  return (tostring(message):gsub("^.-([%w_]+%.lua:%d+: )", "%1"))
end

local function parse(value)
  local results = { pcall(gui.parsecolor, value) }
  if not results[1] then return "error " .. errmsg(results[2]) end
  return string.format("%d,%d,%d,%d", results[2], results[3], results[4], results[5])
end

-- FCEUX's first frames are not yet the ROM's black screen.
while emu.framecount() < 6 do emu.frameadvance() end

say("names")
for _, name in ipairs({
  "white", "black", "clear", "gray", "grey", "red", "orange", "yellow", "chartreuse", "green",
  "teal", "cyan", "blue", "purple", "magenta",
  "WHITE", "White", "wHiTe", "PURPLE", "Purple", "pURPLE", "pink", "violet", "brown", "silver",
  "darkgray", "lightblue", "transparent", "none", "", " white", "white ", "whitex", "whit",
  "red\0x", "rand", "random", "RAND", "Rand", "ran",
}) do
  say(show(name), " ", parse(name))
end

say("hash")
for _, text in ipairs({
  "#FF0000", "#00ff00", "#0000FF80", "#12345678", "#123", "#1", "#", "#FF", "#FFFF",
  "#FFFFF", "#1234567", "#123456789", "#12GG", "# 10", "#-1", "#+1", "#0x10",
  "#FFFFFFFF", "#00000000", "#fFfFfF", "#abcdefAB",
}) do
  say(show(text), " ", parse(text))
end

say("numbers")
for _, number in ipairs({
  0xFF0000FF, 0x00FF0080, 0, 1, 255, 256, -1, -256, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
  0x100000000, 0x1FF0000FF, 2 ^ 40 + 0x11223344, 1.5, 255.9, -0.5, -1.5, 1e15, 1e20, -1e20,
  math.huge, -math.huge,
}) do
  say(show(number), " ", parse(number))
end
say("nan ", parse(0 / 0))

say("tables")
for _, t in ipairs({
  {}, { 1 }, { 1, 2 }, { 1, 2, 3 }, { 1, 2, 3, 4 }, { 1, 2, 3, 4, 5 }, { r = 10, g = 20, b = 30 },
  { r = 10, g = 20, b = 30, a = 40 }, { red = 5, green = 6, blue = 7, alpha = 8 },
  { R = 1, G = 2, B = 3, A = 4 }, { a = 0 }, { 300, -5, 1000, 999 }, { 1.7, 2.2, 3.9, 4.5 },
  { "7", "8", " 9", "0x10" }, { true, false, {}, "x" }, { [5] = 9, [0] = 3 }, { x = 1, y = 2 },
  { r = 1, [1] = 2 }, { 255, 255, 255, 0 }, { a = 128, 0, 0, 255 },
}) do
  say(show(t), " ", parse(t))
end

say("palette")
for i = 0, 127 do
  local name = string.format("P%02X", i)
  say(name, " ", parse(name))
end
for _, name in ipairs({
  "P0", "P7", "PA", "Pa", "P7f", "P80", "PFF", "P", "P123", "PZZ", "P0G", "PG", "P 1", "P-1",
  "p12", "p00", "Px", "PP",
}) do
  say(show(name), " ", parse(name))
end

say("not colours")
for _, value in ipairs({ true, false, print, coroutine.create(function() end) }) do
  say(show(value), " ", parse(value))
end
say("nil ", parse(nil))
do
  local results = { pcall(function() return gui.parsecolor() end) }
  say("no argument ", tostring(results[1]), " ", errmsg(results[2]), " ", tostring(results[3]), " ", tostring(results[4]), " ", tostring(results[5]))
end

-- Drawn: the canvas (RGBA) and the composited picture (RGB) of one pixel per colour form.
say("drawn")
local forms = {
  "white", "purple", "Purple", "teal", "chartreuse", "orange", "gray", "#102030", "#10203080",
  0x405060FF, 0x40506080, { 200, 100, 50 }, { r = 200, g = 100, b = 50, a = 100 }, "P01", "P16",
  "P2A", "P41", "P7F", "#123",
}
for i, form in ipairs(forms) do
  local x, y = (i - 1) * 3, 5
  local ok, message = pcall(gui.pixel, x, y, form)
  local r, g, b, a = gui.getpixel(x, y)
  say(show(form), " pixel ", ok and "ok" or errmsg(message), " canvas ", r, ",", g, ",", b, ",", a)
end
emu.frameadvance()
for i, form in ipairs(forms) do
  local r, g, b = emu.getscreenpixel((i - 1) * 3, 5, false)
  say(show(form), " screen ", r, ",", g, ",", b)
end

-- Optional colours: unknown and non-colour values fall back to the defaults, or raise.
say("optional colours")
local function try(label, f)
  local ok, message = pcall(f)
  local r, g, b, a = gui.getpixel(2, 30)
  say(label, ": ", ok and "ok" or errmsg(message), " ", r, ",", g, ",", b, ",", a)
  emu.frameadvance()
end
for _, value in ipairs({ "nocolour", true, {}, "PZZ", "P80", "Purple", "P", print }) do
  try("line " .. show(value), function() gui.line(0, 30, 5, 30, value) end)
  try("box fill " .. show(value), function() gui.box(1, 29, 5, 33, value, "red") end)
  try("box outline " .. show(value), function() gui.box(2, 30, 6, 34, "red", value) end)
  try("text ink " .. show(value), function() gui.text(1, 30, "#", value, "blue") end)
end
try("pixel unknown", function() gui.pixel(2, 30, "nocolour") end)
try("pixel nil", function() gui.pixel(2, 30) end)
try("pixel boolean", function() gui.pixel(2, 30, true) end)
say("done")
log:close()
emu.frameadvance()
emu.exit()
