-- wrk: GET accounts:batchGet?maxResults=1000 for pages all over the tenant, cycling through the
-- page tokens of BENCH_PAGES (one per line; an empty line is the first page), with the admin
-- key BENCH_ADMIN. Each thread starts at its own offset.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  pages = {}
  for line in io.lines(os.getenv("BENCH_PAGES")) do table.insert(pages, line) end
  index = math.floor(#pages * (id - 1) / tonumber(os.getenv("BENCH_THREADS")))
end

function request()
  index = index % #pages + 1
  local path = wrk.path .. "?maxResults=1000"
  if pages[index] ~= "" then path = path .. "&nextPageToken=" .. pages[index] end
  return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. os.getenv("BENCH_ADMIN") })
end
