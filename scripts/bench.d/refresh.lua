-- wrk: POST /v1/token with refresh tokens from BENCH_TOKENS (one per line), each
-- thread taking its share; every answer's new refresh token goes to the back of the
-- queue, so a thread cycles through all of its sessions (as pgbench's random rows do)
-- rather than refreshing the same few over and over.
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

function init(args)
  tokens = {}
  local total = tonumber(os.getenv("BENCH_THREADS"))
  local index = 0
  for line in io.lines(os.getenv("BENCH_TOKENS")) do
    if index % total == id - 1 then table.insert(tokens, line) end
    index = index + 1
  end
  starved = 0
end

function request()
  local token = table.remove(tokens, 1)
  if token == nil then
    -- Every token is in flight or was lost: a request that refreshes nothing, counted so
    -- the bench can refuse a rate it inflated.
    starved = starved + 1
    return wrk.format("GET", "/healthz")
  end
  return wrk.format("POST", nil, { ["Content-Type"] = "application/x-www-form-urlencoded" },
    "grant_type=refresh_token&refresh_token=" .. token)
end

function response(status, headers, body)
  local token = string.match(body, '"refresh_token":"([^"]+)"')
  if token then table.insert(tokens, token) end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("starved") end
  io.write(string.format("Requests without a token: %d\n", total))
end
