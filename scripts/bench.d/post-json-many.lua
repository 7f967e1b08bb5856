-- wrk: POST the JSON bodies of BENCH_BODIES (one per line) to the URL's path, each
-- thread cycling through its share (BENCH_THREADS threads), so the requests spread over
-- many users as pgbench's random rows do.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  bodies = {}
  local total = tonumber(os.getenv("BENCH_THREADS"))
  local index = 0
  for line in io.lines(os.getenv("BENCH_BODIES")) do
    if index % total == id - 1 then table.insert(bodies, line) end
    index = index + 1
  end
  position = 0
end

function request()
  position = position % #bodies + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, bodies[position])
end
