-- wrk: POST a fixed JSON body (BENCH_BODY) to the URL's path, with BENCH_AUTHORIZATION as
-- the Authorization header when it is set.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Authorization"] = os.getenv("BENCH_AUTHORIZATION")
