-- wrk: POST a fixed JSON body (BENCH_BODY) to the URL's path, each connection waiting
-- BENCH_DELAY_MS milliseconds before each request (a paced load: connections × 1000 / delay
-- requests a second at most, whatever the answers' speed).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("BENCH_BODY")
local pause = tonumber(os.getenv("BENCH_DELAY_MS"))

function delay()
    return pause
end
