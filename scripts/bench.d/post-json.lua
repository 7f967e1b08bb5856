-- wrk: POST a fixed JSON body (BENCH_BODY) to the URL's path.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("BENCH_BODY")
