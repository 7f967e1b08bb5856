-- wrk: POST accounts:signUp with a new email every request (BENCH_TENANT, BENCH_PREFIX).
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

local counter = 0
function request()
  counter = counter + 1
  local body = string.format('{"email":"u%s-%d-%d@example.com","password":"correct horse","tenantId":"%s"}',
    os.getenv("BENCH_PREFIX"), id, counter, os.getenv("BENCH_TENANT"))
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
