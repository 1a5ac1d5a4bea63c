-- rom: roms/black.nes
-- gui.line, gui.box, gui.pixel and gui.getpixel as FCEUX 2.6.5 draws them: lines of every
-- slope and direction, skipFirst, lines and boxes partly or far off the screen (coordinates up
-- to the C int limits, where FCEUX's int arithmetic overflows), box outline and fill colours,
-- thin boxes, and the argument errors. Drawings are read from the canvas with gui.getpixel:
-- with a translucent colour ("#FF000080") a pixel drawn once reads `1`, twice `2` (blended),
-- three times `3`; `.` is empty. Boxes use a translucent outline (`o`, twice `O`, three times
-- `P`, four times `Q`) and fill (`f`).
local log = assert(io.open("parity.log", "w"))
local function say(...)
  log:write(...)
  log:write("\n")
  log:flush()
end

local symbols = {
  ["00000000"] = ".",
  ["ff000080"] = "1", ["ff0000c0"] = "2", ["ff0000e0"] = "3", ["ff0000f0"] = "4",
  ["0000ff80"] = "o", ["0000ffc0"] = "O", ["0000ffe0"] = "P", ["0000fff0"] = "Q",
  ["00ff0080"] = "f", ["00ff00c0"] = "F", ["ff0000ff"] = "#", ["ffffffff"] = "W", ["ffffff3f"] = "w",
}
local LINE, OUTLINE, FILL = "#FF000080", "#0000FF80", "#00FF0080"

local function picture(label, x0, y0, w, h)
  say(label)
  for y = y0, y0 + h - 1 do
    local row, others = {}, {}
    for x = x0, x0 + w - 1 do
      local hex = string.format("%02x%02x%02x%02x", gui.getpixel(x, y))
      row[#row + 1] = symbols[hex] or "?"
      if not symbols[hex] then others[#others + 1] = x .. "=" .. hex end
    end
    say(table.concat(row), #others > 0 and (" " .. table.concat(others, " ")) or "")
  end
end

local function errmsg(message)
  return (tostring(message):gsub("^.-([%w_]+%.lua:%d+: )", "%1"))
end

-- Each drawing alone on a fresh canvas: a frame passes between them.
local function case(label, x0, y0, w, h, draw)
  emu.frameadvance()
  local ok, message = pcall(draw)
  picture(label .. (ok and "" or (" error " .. errmsg(message))), x0, y0, w, h)
end

-- FCEUX's first frames are not yet the ROM's black screen.
while emu.framecount() < 6 do emu.frameadvance() end

-- Every octant, both directions, the slopes where the error term hits 0.
for _, d in ipairs({
  { 8, 3 }, { 3, 8 }, { 8, 4 }, { 4, 8 }, { 6, 6 }, { 6, 2 }, { 2, 6 }, { 7, 1 }, { 1, 7 }, { 7, 0 },
  { 0, 7 }, { 5, 4 }, { 4, 5 }, { 8, 6 }, { 6, 8 },
}) do
  for _, s in ipairs({ { 1, 1 }, { -1, 1 }, { 1, -1 }, { -1, -1 } }) do
    local dx, dy = d[1] * s[1], d[2] * s[2]
    case(string.format("line 20,20 to %+d,%+d", dx, dy), 11, 11, 19, 19, function()
      gui.line(20, 20, 20 + dx, 20 + dy, LINE)
    end)
  end
end
case("line point", 0, 0, 5, 5, function() gui.line(2, 2, 2, 2, LINE) end)
case("line point skipFirst", 0, 0, 5, 5, function() gui.line(2, 2, 2, 2, LINE, true) end)
case("line skipFirst", 0, 0, 12, 6, function() gui.line(1, 1, 10, 4, LINE, true) end)
case("line skipFirst backwards", 0, 0, 12, 6, function() gui.line(10, 4, 1, 1, LINE, 1) end)
case("line skipFirst false", 0, 0, 12, 3, function() gui.line(1, 1, 10, 1, LINE, false) end)
case("line skipFirst nil", 0, 0, 12, 3, function() gui.line(1, 1, 10, 1, LINE, nil) end)
case("line skipFirst 0", 0, 0, 12, 3, function() gui.line(1, 1, 10, 1, LINE, 0) end)
case("line default colour", 0, 0, 6, 3, function() gui.line(1, 1, 4, 1) end)
case("line numeric strings", 0, 0, 6, 3, function() gui.line("1", "1.9", "4", "1", LINE) end)

-- Off the screen: the line's pixels are those of the whole line, cut at the edges.
case("line from the left", 0, 0, 40, 6, function() gui.line(-1000, 0, 30, 4, LINE) end)
case("line to the left", 0, 0, 40, 6, function() gui.line(30, 4, -1000, 0, LINE) end)
case("line from the top left", 0, 0, 25, 12, function() gui.line(-30, -10, 20, 10, LINE) end)
case("line from below", 0, 228, 10, 12, function() gui.line(5, 300, 2, 230, LINE) end)
case("line across the right edge", 246, 0, 10, 8, function() gui.line(250, 1, 270, 5, LINE) end)
case("line across the bottom right", 246, 228, 10, 12, function() gui.line(240, 225, 300, 260, LINE) end)
case("line off the screen", 0, 0, 4, 4, function() gui.line(-10, -10, -1, -5, LINE) end)
case("line vertical off the left", 0, 0, 4, 4, function() gui.line(-1, 0, -1, 10, LINE) end)
case("line row far both ways", 0, 0, 8, 3, function() gui.line(-100000, 1, 100000, 1, LINE) end)
case("line 0,0 to 1e6,3", 0, 0, 40, 5, function() gui.line(0, 0, 1000000, 3, LINE) end)
case("line 1e6,3 to 0,0", 250, 0, 6, 5, function() gui.line(1000000, 3, 0, 0, LINE) end)
case("line -1e6,-3 to 300,200", 0, 0, 20, 5, function() gui.line(-1000000, -3, 300, 200, LINE) end)
case("line 0,0 to 1e12,0", 0, 0, 8, 3, function() gui.line(0, 0, 1e12, 0, LINE) end)
case("line 0,0 to 1e12,1", 0, 0, 8, 3, function() gui.line(0, 0, 1e12, 1, LINE) end)
case("line 3,1 to 2^31-1,5", 0, 0, 8, 8, function() gui.line(3, 1, 2 ^ 31 - 1, 5, LINE) end)
case("line 3,1 to 2^31-1,1", 0, 0, 8, 3, function() gui.line(3, 1, 2 ^ 31 - 1, 1, LINE) end)
case("line 3,1 to -2^31,1", 0, 0, 8, 3, function() gui.line(3, 1, -2 ^ 31, 1, LINE) end)
case("line 3,1 to 2^30,1", 0, 0, 8, 3, function() gui.line(3, 1, 2 ^ 30, 1, LINE) end)
case("line 3,1 to 2^30-1,1", 0, 0, 8, 3, function() gui.line(3, 1, 2 ^ 30 - 1, 1, LINE) end)
case("line 3,1 to 1,2^31-1", 0, 0, 8, 8, function() gui.line(3, 1, 1, 2 ^ 31 - 1, LINE) end)
case("line 3,1 to 1e10,7", 0, 0, 8, 10, function() gui.line(3, 1, 1e10, 7, LINE) end)
case("line 100,100 to -2^31,2^31-1", 90, 90, 20, 20, function() gui.line(100, 100, -2 ^ 31, 2 ^ 31 - 1, LINE) end)
case("line 2^31-1,2 to 3,2", 248, 0, 8, 4, function() gui.line(2 ^ 31 - 1, 2, 3, 2, LINE) end)
case("line 1e9,2 to 3,2", 248, 0, 8, 4, function() gui.line(1e9, 2, 3, 2, LINE) end)
case("line inf", 0, 0, 8, 4, function() gui.line(2, 2, math.huge, 3, LINE) end)

-- Boxes: outline then fill, corners in any order.
case("box", 0, 0, 10, 8, function() gui.box(1, 1, 8, 6, FILL, OUTLINE) end)
case("box reversed corners", 0, 0, 10, 8, function() gui.box(8, 6, 1, 1, FILL, OUTLINE) end)
case("box mixed corners", 0, 0, 10, 8, function() gui.box(8, 1, 1, 6, FILL, OUTLINE) end)
for _, size in ipairs({ { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 }, { 2, 1 }, { 2, 2 }, { 3, 2 }, { 2, 3 } }) do
  case(string.format("box %dx%d", size[1], size[2]), 0, 0, 7, 7, function()
    gui.box(2, 2, 2 + size[1], 2 + size[2], FILL, OUTLINE)
  end)
end
case("box fill only", 0, 0, 8, 7, function() gui.box(1, 1, 6, 5, "#FF000080") end)
case("box default colours", 0, 0, 8, 7, function() gui.box(1, 1, 6, 5) end)
case("box clear fill", 0, 0, 8, 7, function() gui.box(1, 1, 6, 5, "clear", OUTLINE) end)
case("box clear outline", 0, 0, 8, 7, function() gui.box(1, 1, 6, 5, FILL, "clear") end)
case("drawbox", 0, 0, 6, 6, function() gui.drawbox(1, 1, 4, 4, FILL, OUTLINE) end)
case("rect", 0, 0, 6, 6, function() gui.rect(1, 1, 4, 4, FILL, OUTLINE) end)
case("drawrect", 0, 0, 6, 6, function() gui.drawrect(1, 1, 4, 4, FILL, OUTLINE) end)
case("box off the top left", 0, 0, 6, 6, function() gui.box(-3, -2, 3, 3, FILL, OUTLINE) end)
case("box off the bottom right", 250, 234, 6, 6, function() gui.box(252, 237, 300, 260, FILL, OUTLINE) end)
case("box one pixel off the left", 0, 0, 6, 6, function() gui.box(-1, 1, 3, 4, FILL, OUTLINE) end)
case("box off the screen", 0, 0, 4, 4, function() gui.box(-10, -10, -1, -1, FILL, OUTLINE) end)
case("box right of the screen", 252, 0, 4, 4, function() gui.box(256, 0, 270, 3, FILL, OUTLINE) end)
case("box around the screen", 0, 0, 4, 4, function() gui.box(-5, -5, 400, 400, FILL, OUTLINE) end)
case("box around the screen, bottom right", 252, 236, 4, 4, function() gui.box(-5, -5, 400, 400, FILL, OUTLINE) end)
case("box 1e12", 0, 0, 4, 4, function() gui.box(0, 0, 1e12, 1e12, FILL, OUTLINE) end)
case("box -1e9 to 1e9", 0, 0, 4, 4, function() gui.box(-1e9, -1e9, 1e9, 1e9, FILL, OUTLINE) end)
case("box -1e9 to 1e9, bottom right", 252, 236, 4, 4, function() gui.box(-1e9, -1e9, 1e9, 1e9, FILL, OUTLINE) end)
case("box int limits", 0, 0, 4, 4, function() gui.box(-2 ^ 31, -2 ^ 31, 2 ^ 31 - 1, 2 ^ 31 - 1, FILL, OUTLINE) end)
case("box int limits, bottom right", 252, 236, 4, 4, function() gui.box(-2 ^ 31, -2 ^ 31, 2 ^ 31 - 1, 2 ^ 31 - 1, FILL, OUTLINE) end)
case("box from -2^31", 0, 0, 8, 8, function() gui.box(-2 ^ 31, 1, 5, 5, FILL, OUTLINE) end)
case("box from -2^31+6", 0, 0, 8, 8, function() gui.box(-2 ^ 31 + 6, 1, 5, 5, FILL, OUTLINE) end)
case("box to 2^31-1", 248, 0, 8, 8, function() gui.box(250, 1, 2 ^ 31 - 1, 5, FILL, OUTLINE) end)
case("box 1e10", 0, 0, 8, 8, function() gui.box(1, 1, 1e10, 5, FILL, OUTLINE) end)

-- Pixels.
case("pixels", 0, 0, 6, 3, function()
  gui.pixel(1, 1, LINE)
  gui.drawpixel(2, 1, LINE)
  gui.setpixel(3, 1, LINE)
  gui.writepixel(4, 1, LINE)
  gui.pixel(4, 1, LINE)
end)
case("pixels off the screen", 0, 0, 3, 3, function()
  gui.pixel(-1, 0, LINE)
  gui.pixel(256, 0, LINE)
  gui.pixel(0, 240, LINE)
  gui.pixel(1e12, 1e12, LINE)
  gui.pixel(1, 1, LINE)
end)
case("pixel numeric strings", 0, 0, 3, 3, function() gui.pixel("1", "1.5", LINE) end)

say("getpixel")
emu.frameadvance()
gui.pixel(5, 6, "#11223344")
for _, xy in ipairs({ { 5, 6 }, { 5.9, 6.9 }, { "5", "6" }, { 0, 0 }, { 255, 239 } }) do
  say(tostring(xy[1]), ",", tostring(xy[2]), " ", table.concat({ gui.getpixel(xy[1], xy[2]) }, ","))
end
for _, xy in ipairs({ { -1, 0 }, { 256, 0 }, { 0, 240 }, { 0, -1 }, { 1e12, 0 } }) do
  local ok, message = pcall(gui.getpixel, xy[1], xy[2])
  say(tostring(xy[1]), ",", tostring(xy[2]), " ", tostring(ok), " ", errmsg(message))
end

say("errors")
local function errors(label, f)
  local ok, message = pcall(f)
  say(label, ": ", tostring(ok), " ", errmsg(message))
end
errors("line no arguments", function() gui.line() end)
errors("line 3 arguments", function() gui.line(1, 2, 3) end)
errors("line string", function() gui.line(1, 2, 3, "x") end)
errors("drawline", function() gui.drawline(1, 2, 3) end)
errors("box 3 arguments", function() gui.box(1, 2, 3) end)
errors("box table", function() gui.box(1, 2, 3, {}) end)
errors("drawbox", function() gui.drawbox(1) end)
errors("rect", function() gui.rect(1, 2) end)
errors("drawrect", function() gui.drawrect() end)
errors("pixel no colour", function() gui.pixel(1, 2) end)
errors("pixel no y", function() gui.pixel(1) end)
errors("setpixel", function() gui.setpixel() end)
errors("getpixel no y", function() gui.getpixel(1) end)
errors("getpixel string", function() gui.getpixel("a", 1) end)
errors("a local's name", function() local draw = gui.line draw(1, 2) end)
errors("pcall(gui.line)", function() assert(pcall(gui.line, 1)) end)
local ok, message = pcall(gui.line, 1)
say("pcall(gui.line, 1): ", tostring(ok), " ", errmsg(message))
say("returns ", tostring(select("#", gui.line(1, 1, 2, 2))), " ", tostring(select("#", gui.box(1, 1, 2, 2))),
  " ", tostring(select("#", gui.pixel(1, 1, "red"))))
say("done")
log:close()
emu.frameadvance()
emu.exit()
