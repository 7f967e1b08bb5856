-- wrk: GET /v1/verify cycling through the ID tokens of BENCH_TOKENS (one per line), each
-- thread starting at its own offset: more distinct tokens than the verified-token cache holds.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  tokens = {}
  for line in io.lines(os.getenv("BENCH_TOKENS")) do table.insert(tokens, line) end
  index = math.floor(#tokens * (id - 1) / tonumber(os.getenv("BENCH_THREADS")))
end

function request()
  index = index % #tokens + 1
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer " .. tokens[index] })
end
