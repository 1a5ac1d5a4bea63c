-- Benchmark (d): the shape of a Tetris-playing AI. Every frame it reads a 10x20 playfield
-- from RAM with memory.readbyte (200 API calls, as NintendoTetrisAI.lua reads $0400-$04C7),
-- then tries every column and rotation of the frame's piece (the seven in turn, up to 34
-- placements), drops each one, and scores the board it leaves by height, holes, bumpiness
-- and full rows: a search of pure Lua table work, as the AI's is.
local W, H = 10, 20
local PIECES = {
  { { 0, 0, 1, 0, 2, 0, 3, 0 }, { 0, 0, 0, 1, 0, 2, 0, 3 } },
  { { 0, 0, 1, 0, 0, 1, 1, 1 } },
  { { 0, 0, 1, 0, 2, 0, 1, 1 }, { 0, 0, 0, 1, 0, 2, 1, 1 }, { 1, 0, 0, 1, 1, 1, 2, 1 }, { 1, 0, 1, 1, 1, 2, 0, 1 } },
  { { 0, 0, 1, 0, 1, 1, 2, 1 }, { 1, 0, 1, 1, 0, 1, 0, 2 } },
  { { 1, 0, 2, 0, 0, 1, 1, 1 }, { 0, 0, 0, 1, 1, 1, 1, 2 } },
  { { 0, 0, 1, 0, 2, 0, 0, 1 }, { 0, 0, 1, 0, 1, 1, 1, 2 }, { 2, 0, 0, 1, 1, 1, 2, 1 }, { 0, 0, 0, 1, 0, 2, 1, 2 } },
  { { 0, 0, 1, 0, 2, 0, 2, 1 }, { 1, 0, 1, 1, 1, 2, 0, 2 }, { 0, 0, 0, 1, 1, 1, 2, 1 }, { 0, 0, 1, 0, 0, 1, 0, 2 } },
}
local board = {}
for i = 0, W * H - 1 do board[i] = false end

local function fits(cells, px, py)
  for i = 1, 8, 2 do
    local x, y = px + cells[i], py + cells[i + 1]
    if x < 0 or x >= W or y >= H or board[y * W + x] then return false end
  end
  return true
end

local function score()
  local total, previous = 0, nil
  for x = 0, W - 1 do
    local height, holes = 0, 0
    for y = 0, H - 1 do
      if board[y * W + x] then
        if height == 0 then height = H - y end
      elseif height > 0 then
        holes = holes + 1
      end
    end
    total = total - height * 0.5 - holes * 3.5
    if previous then total = total - math.abs(height - previous) * 0.2 end
    previous = height
  end
  for y = 0, H - 1 do
    local full = true
    for x = 0, W - 1 do
      if not board[y * W + x] then full = false break end
    end
    if full then total = total + 8 end
  end
  return total
end

local best_total, searched = 0, 0
local function search(rotations)
  local best = -math.huge
  do
    for _, cells in ipairs(rotations) do
      for px = 0, W - 1 do
        if fits(cells, px, 0) then
          local py = 0
          while fits(cells, px, py + 1) do py = py + 1 end
          for i = 1, 8, 2 do board[(py + cells[i + 1]) * W + px + cells[i]] = true end
          local s = score()
          for i = 1, 8, 2 do board[(py + cells[i + 1]) * W + px + cells[i]] = false end
          searched = searched + 1
          if s > best then best = s end
        end
      end
    end
  end
  return best
end

emu.registerexit(function()
  print(string.format("placements: %d in %d frames (best %.1f)", searched, emu.framecount(), best_total))
end)
while true do
  for i = 0, W * H - 1 do
    -- Low RAM holds whatever the game keeps there: bit 0 decides each cell.
    board[i] = memory.readbyte(0x0400 + i) % 2 == 1 and i >= 100
  end
  best_total = best_total + search(PIECES[emu.framecount() % #PIECES + 1])
  emu.frameadvance()
end
